"""Reading a whole JSON file (or text file) that may be hostile or damaged: every failure is a DataError whose
one-line message names the file and what is wrong with it, never a traceback.

The per-value rules are those of :mod:`harness.io.jsonl` (undecodable bytes, NaN/Infinity, numbers that overflow
to infinity, integers of thousands of digits, nesting too deep); this module adds the file (missing, a
folder, unreadable) and the shape (the top-level value and a record's fields must have the expected type).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Optional, TypeVar

from ..errors import DataError
from .jsonl import BadLine, loads_line

T = TypeVar("T")

_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
               bool: "true or false"}


def read_bytes(path: Path | str, *, what: str = "file") -> bytes:
    """The file's bytes, or DataError naming it (missing, a folder, no permission)."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{what} {p} does not exist") from None
    except IsADirectoryError:
        raise DataError(f"{what} {p} is a folder, not a file") from None
    except OSError as e:
        raise DataError(f"cannot read {what} {p}: {e.strerror or e}") from None


def read_text(path: Path | str, *, what: str = "file") -> str:
    """The file as UTF-8 text, or DataError naming the file and the first undecodable byte."""
    raw = read_bytes(path, what=what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{what} {path} is not valid UTF-8 text (byte {e.start})") from None


def parse_json(text: bytes | str, *, where: str) -> Any:
    """One JSON document, or DataError ``{where}: {reason}``. Multi-line documents are fine: the rules of
    :func:`harness.io.jsonl.loads_line` do not depend on line breaks."""
    try:
        return loads_line(text)
    except BadLine as e:
        raise DataError(f"{where}: {e.about('it')}") from None


def read_json(path: Path | str, *, what: str = "JSON file", expect: Optional[type] = None) -> Any:
    """A whole JSON file. ``expect`` (dict or list) checks the top-level value's type."""
    value = parse_json(read_bytes(path, what=what), where=f"{what} {path}")
    if expect is not None and not _is_a(value, expect):
        raise DataError(f"{what} {path}: expected {_TYPE_NAMES.get(expect, expect.__name__)} at the top, "
                        f"found {type_name(value)}")
    return value


def parse_yaml(text: str, *, where: str) -> Any:
    """One YAML document under the limits JSON values have here (nesting depth, integer digits, finite
    numbers), or DataError ``{where}: {reason}``."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise DataError(f"{where}: not valid YAML ({str(e).splitlines()[0]})") from None
    except RecursionError:
        raise DataError(f"{where}: it is nested too deeply to read") from None
    except (ValueError, OverflowError) as e:  # an integer of thousands of digits
        raise DataError(f"{where}: it cannot be read: {str(e).split(';')[0][:120]}") from None
    _check_finite(value, where, set())
    return value


def _check_finite(value: Any, where: str, seen: set[int], at: str = "") -> None:
    # YAML writes .inf and .nan; JSON readers here refuse them. ``seen``: aliases share a value, walk it once.
    if isinstance(value, float) and not math.isfinite(value):
        raise DataError(f"{where}: {at or 'the value'}: {value} is not a finite number")
    if isinstance(value, (dict, list)) and id(value) not in seen:
        seen.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            _check_finite(key, where, seen, at)
            _check_finite(item, where, seen, f"{at}.{key}" if isinstance(value, dict) and at else
                          str(key) if isinstance(value, dict) else f"{at}[{key}]")


def type_name(value: Any) -> str:
    """How a JSON value's type reads in a message."""
    if value is None:
        return "null"
    for t in (bool, int, float, str, list, dict):
        if isinstance(value, t):
            return _TYPE_NAMES[t]
    return type(value).__name__


def _is_a(value: Any, expected: type | tuple[type, ...]) -> bool:
    types = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in types:
        return False  # JSON true is not a number
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, types)


def field(record: Mapping[str, Any], name: str, expected: type | tuple[type, ...], *, where: str,
          default: Any = ..., nullable: bool = False) -> Any:
    """``record[name]`` checked against ``expected``; DataError naming ``where`` and the field otherwise.
    Without ``default`` the field is required."""
    if name not in record:
        if default is ...:
            raise DataError(f"{where}: field {name!r} is missing")
        return default
    value = record[name]
    if value is None and nullable:
        return None
    if not _is_a(value, expected):
        want = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in
                           (expected if isinstance(expected, tuple) else (expected,)))
        raise DataError(f"{where}: field {name!r} should be {want}, found {type_name(value)}")
    return value
