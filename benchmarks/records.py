"""Shape checks for benchmark data: a malformed file fails at load time with a DataError that names the file,
the record and what is wrong, instead of a KeyError or TypeError deep inside an adapter or an episode."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Union

from mua.harness.errors import DataError
from mua.harness.io.datafiles import FIX_HINT

Kind = Union[type, tuple[type, ...]]
NUMBER = (int, float)

_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
          bool: "a boolean", type(None): "null"}


def json_type(value: Any) -> str:
    """How a parsed JSON/TOML value is described in messages ("a list", "a string", ...)."""
    return _NAMES.get(type(value), type(value).__name__)


def _kind_name(kind: Kind) -> str:
    if kind == NUMBER:
        return "a number"
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_NAMES.get(k, k.__name__) for k in kinds)


def fail(where: str, what: str) -> DataError:
    return DataError(f"data file {where}: {what}. {FIX_HINT}")


def record_label(relpath: str, number: int, record: Any) -> str:
    """``file, record N (id X)``: N counts records from 1 (a line of a JSON Lines file when it has no blank lines)."""
    ident = record.get("id") if isinstance(record, dict) else None
    return f"{relpath}, record {number}" + (f" (id {ident!r})" if isinstance(ident, (str, int)) else "")


def check_object(value: Any, where: str, required: Mapping[str, Kind],
                 optional: Optional[Mapping[str, Kind]] = None) -> dict:
    """``value`` is an object with every ``required`` key of its kind, and each ``optional`` key present (not
    null) of its kind; returns it."""
    if not isinstance(value, dict):
        raise fail(where, f"expected an object, found {json_type(value)}")
    for key, kind in required.items():
        if key not in value:
            raise fail(where, f"missing key {key!r}")
        check_kind(value[key], kind, where, key)
    for key, kind in (optional or {}).items():
        if value.get(key) is not None:
            check_kind(value[key], kind, where, key)
    return value


def check_kind(value: Any, kind: Kind, where: str, key: str) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # JSON true/false are Python bools, which are ints: never accept them where a number is required
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds and object not in kinds):
        raise fail(where, f"'{key}' should be {_kind_name(kind)}, found {json_type(value)}")
    return value


def check_items(values: list, kind: Kind, where: str, key: str) -> list:
    """Every element of the list ``values`` (the value of ``key``) is of ``kind``."""
    for i, value in enumerate(values):
        check_kind(value, kind, where, f"{key}[{i}]")
    return values


def build_record(make: Callable[[dict], Any], record: Any, where: str) -> Any:
    """``make(record)`` for one database record; a record lacking a field or holding a wrong value type is a
    DataError naming it (normalisers index fields directly, as the official pydantic models require them)."""
    check_object(record, where, {})
    try:
        return make(record)
    except KeyError as e:
        raise fail(where, f"missing key {e}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise fail(where, f"malformed record ({type(e).__name__}: {e})") from None
