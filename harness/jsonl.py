"""Reading JSON lines that may be hostile or damaged: one bad line is a reason, never an exception that
loses the rest of the file.

Lines are read as bytes and decoded one by one, so invalid UTF-8 spoils only its own line. A line that cannot
be parsed (not UTF-8, not JSON, NaN/Infinity, a number that overflows to infinity, an integer too long to
convert, nesting too deep) raises :class:`BadLine` with a one-line reason.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterator


class BadLine(ValueError):
    """A line that is not one valid JSON value; ``str()`` is the reason."""


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
        raise BadLine(f"line is not valid JSON: {e}") from None
    except ValueError as e:  # e.g. an integer of thousands of digits
        raise BadLine(f"line cannot be read: {e}") from None


def iter_raw_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes without the newline, complete) for each non-blank line; ``complete`` is False only
    for a last line with no newline (a write cut short)."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            complete = raw.endswith(b"\n")
            body = raw.rstrip(b"\r\n")
            if body.strip():
                yield lineno, body, complete
