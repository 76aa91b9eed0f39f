"""Reading JSON lines that may be hostile or damaged: one bad line is a reason, never an exception that
loses the rest of the file.

Lines are read as bytes and decoded one by one, so invalid UTF-8 spoils only its own line. A line that cannot
be parsed (not UTF-8, not JSON, NaN/Infinity, a number that overflows to infinity, an integer too long to
convert, nesting too deep) raises :class:`BadLine` with a one-line reason.

JSON another party wrote for mua to act on (an endpoint's reply, a model's tool-call arguments) is read by
:func:`loads_untrusted`: the same reader, and then the value itself must be safe to pass on, nested at most
``MAX_DEPTH`` deep (code further on re-encodes and re-parses it, near Python's recursion limit), every number
finite and every text valid Unicode (a ``"\\ud800"`` escape decodes to a lone surrogate, which cannot be
encoded as UTF-8: not in a request body, nor by a tokenizer).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Iterator, Optional

MAX_DEPTH = 100  # nesting of untrusted JSON; no reply or tool call of a real model comes near it
_SURROGATE = re.compile("[\ud800-\udfff]")  # after decoding, only a lone one can remain in a str
# where a decoded value can hold one: an escape in the text, or (text given as str) the character itself
_SURROGATE_SOURCE = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_SURROGATE_SOURCE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")  # UTF-8 cannot encode a surrogate itself


class BadLine(ValueError):
    """A line that is not one valid JSON value; ``str()`` is the reason. ``syntax``: the text is not JSON at
    all (as opposed to JSON whose values cannot be used safely)."""

    def __init__(self, reason: str, syntax: bool = False):
        super().__init__(reason)
        self.syntax = syntax

    def about(self, subject: str) -> str:
        """The reason said of ``subject`` instead of "line" (``"it"``, ``"the reply"``)."""
        text = str(self)
        return subject + text[4:] if text.startswith("line ") else text


def _reject_constant(name: str) -> Any:
    raise BadLine(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e309 parses to infinity, which no reader of a score or a count can use
        raise BadLine(f"number {text[:40]} is too large to represent")
    return value


def loads_line(raw: bytes | str, *, strict: bool = True) -> Any:
    """One JSON value from one line, or BadLine with the reason. ``strict=False`` lets NaN and Infinity
    through (as floats), for readers that report them as bad values with more context."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadLine(f"line is not valid UTF-8 (byte {e.start})") from None
    try:
        if strict:
            return json.loads(raw, parse_constant=_reject_constant, parse_float=_finite_float)
        return json.loads(raw)
    except BadLine:
        raise
    except RecursionError:
        raise BadLine("line is nested too deeply to read") from None
    except json.JSONDecodeError as e:
        raise BadLine(f"line is not valid JSON: {e}", syntax=True) from None
    except ValueError as e:  # e.g. an integer of thousands of digits
        raise BadLine(f"line cannot be read: {e}") from None


def check_untrusted(value: Any, max_depth: int = MAX_DEPTH, *, finite: bool = True) -> None:
    """BadLine unless a decoded value is nested at most ``max_depth`` deep, holds only finite numbers (unless
    ``finite`` is False) and only valid Unicode text (keys included). Walks without recursion, so any depth is
    reported, never raised."""
    _walk(value, max_depth, text=True, numbers=finite)


def _walk(value: Any, max_depth: int, *, text: bool, numbers: bool) -> None:
    """check_untrusted's walk, one nesting level at a time; ``text``/``numbers``: also check strings/floats
    (a reader that knows none can be bad skips them: this runs on every endpoint reply)."""
    frontier, level = [value], 0
    while frontier:
        deeper: list = []
        nested = False
        for item in frontier:
            if isinstance(item, dict):
                nested = True
                if text:
                    deeper.extend(item)
                deeper.extend(item.values())
            elif isinstance(item, list):
                nested = True
                deeper.extend(item)
            elif text or numbers:
                _check_scalar(item, text, numbers)
        if nested:
            level += 1
            if level > max_depth:
                raise BadLine(f"line is nested deeper than {max_depth} levels")
        frontier = deeper


def _check_scalar(item: Any, text: bool, numbers: bool) -> None:
    if text and isinstance(item, str) and _SURROGATE.search(item):
        raise BadLine("line holds text that is not valid Unicode (a lone surrogate)")
    if numbers and isinstance(item, float) and not math.isfinite(item):
        raise BadLine(f"line holds the number {item}, which is not finite")


def loads_untrusted(raw: bytes | str, max_depth: int = MAX_DEPTH, *, finite: bool = True) -> Any:
    """One JSON value another party wrote (see the module's docstring), or BadLine with the reason.
    ``finite=False`` reads NaN, Infinity and 1e309 as json.loads does."""
    value = loads_line(raw, strict=finite)
    # Decoded JSON holds a lone surrogate only where its text could put one, and a non-finite number only when
    # read with finite=False: the walk looks at strings only then, and never at numbers.
    source = (_SURROGATE_SOURCE_BYTES.search(raw) if isinstance(raw, bytes) else _SURROGATE_SOURCE.search(raw))
    # Each container opens with one bracket, so a text holding at most max_depth of them (strings' included)
    # cannot nest deeper: the walk, a tenth of a millisecond per endpoint reply, is left out then.
    brackets = raw.count(b"{") + raw.count(b"[") if isinstance(raw, bytes) else raw.count("{") + raw.count("[")
    if source is not None or brackets > max_depth:
        _walk(value, max_depth, text=source is not None, numbers=False)
    return value


def unsafe_json(text: str, max_depth: int = MAX_DEPTH) -> Optional[BadLine]:
    """Why JSON text a model wrote (tool-call arguments) cannot be handed on, or None. The text is for the
    environment to judge, as the official benchmarks do with json.loads (which takes NaN and Infinity, and
    answers text that is no JSON at all): only what would crash that reading (nesting, an integer past the
    digit limit) or what no UTF-8 can carry (a lone surrogate) is refused."""
    try:
        loads_untrusted(text, max_depth, finite=False)
    except BadLine as e:
        return None if e.syntax else e
    return None


def iter_raw_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes without the newline, complete) for each non-blank line; ``complete`` is False only
    for a last line with no newline (a write cut short)."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            complete = raw.endswith(b"\n")
            body = raw.rstrip(b"\r\n")
            if body.strip():
                yield lineno, body, complete
