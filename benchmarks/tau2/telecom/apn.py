"""``APNSettings(**arguments)`` as pydantic (lax mode) validates it in ``set_apn_settings``: the coerced settings,
or a ValueError whose text is pydantic's ValidationError rendering (the agent-visible "Error: ..." message).
The documentation URL names pydantic 2.14, the version the official scorer ran with (the text varies with the
installed pydantic upstream; mua fixes it)."""
from __future__ import annotations

from typing import Any

from ..domain import Record
from . import data_model as dm

PYDANTIC_DOCS = "https://errors.pydantic.dev/2.14/v/"
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


class _Invalid(Exception):
    def __init__(self, code: str, text: str):
        super().__init__(text)
        self.code, self.text = code, text


def _input_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 50 else text[:25] + "..." + text[-24:]


def _enum(value: Any) -> str:
    if isinstance(value, str) and value in ("internet", "broken"):
        return value
    raise _Invalid("enum", "Input should be 'internet' or 'broken'")


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, (int, float, str)):
        raise _Invalid("bool_parsing", "Input should be a valid boolean, unable to interpret input")
    raise _Invalid("bool_type", "Input should be a valid boolean")


def _optional_str(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    raise _Invalid("string_type", "Input should be a valid string")


def _optional_int(value: Any) -> Any:
    if value is None or isinstance(value, int):  # bool is an int: True -> 1, as pydantic's lax mode
        return None if value is None else int(value)
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise _Invalid("int_from_float", "Input should be a valid integer, got a number with a fractional part")
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise _Invalid(
                "int_parsing", "Input should be a valid integer, unable to parse string as an integer") from None
    raise _Invalid("int_type", "Input should be a valid integer")


FIELDS = (("apn_name", _enum), ("reset_at_reboot", _bool), ("mms_apn", _optional_str),
          ("mmsc_url", _optional_str), ("mms_proxy", _optional_str), ("mms_port", _optional_int))


def validate(arguments: dict) -> Record:
    settings, errors = dm.apn_settings(), []
    for name, check in FIELDS:
        if name in arguments:
            try:
                settings[name] = check(arguments[name])
            except _Invalid as e:
                errors.append((name, e.code, e.text, arguments[name]))
    known = {name for name, _ in FIELDS}
    errors += [(k, "extra_forbidden", "Extra inputs are not permitted", v) for k, v in arguments.items()
               if k not in known]
    if errors:
        lines = [f"{name}\n  {text} [type={code}, input_value={_input_repr(value)}, "
                 f"input_type={type(value).__name__}]\n    For further information visit {PYDANTIC_DOCS}{code}"
                 for name, code, text, value in errors]
        noun = "error" if len(errors) == 1 else "errors"
        raise ValueError(f"{len(errors)} validation {noun} for APNSettings\n" + "\n".join(lines))
    return settings
