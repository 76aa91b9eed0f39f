"""Pydantic-style validation messages for the places where tau2 builds a model from agent arguments (an address,
a passenger...): a wrong type there fails with pydantic's ValidationError text, which the agent sees.

The text names the pydantic documentation version; mua fixes it to the one the official scorer was run with
(pydantic 2.14), since the upstream text varies with the installed version."""
from __future__ import annotations

from typing import Any, Union

PYDANTIC_DOCS = "https://errors.pydantic.dev/2.14/v/"
_KINDS = {"string": ("string_type", "Input should be a valid string", (str,)),
          "integer": ("int_type", "Input should be a valid integer", (int,)),
          "number": ("float_type", "Input should be a valid number", (int, float))}


class ModelValidationError(ValueError):
    """Raised with the message pydantic's ValidationError would render."""


def _input_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 50 else text[:25] + "..." + text[-24:]


def check_fields(model: str, fields: list[tuple[str, Any, Union[str, tuple[str, ...]]]]) -> None:
    """``fields`` are (name, value, kind) in model order; kind is "string", "integer" (pydantic's lax mode:
    "3" and 3.0 pass) or a tuple of allowed strings (a Literal)."""
    errors = []
    for name, value, kind in fields:
        if isinstance(kind, tuple):  # a Literal of strings
            if isinstance(value, str) and value in kind:
                continue
            options = [repr(k) for k in kind]
            code, text = "literal_error", "Input should be " + (
                " or ".join(options) if len(options) < 3 else ", ".join(options[:-1]) + " or " + options[-1])
        else:
            code, text, types = _KINDS[kind]
            if kind == "integer" and isinstance(value, float) and not value.is_integer():
                code, text = "int_from_float", "Input should be a valid integer, got a number with a fractional part"
            elif kind == "integer" and _lax_int(value) is not None:
                continue
            elif kind == "string" and isinstance(value, str):
                continue
            elif kind == "number" and _lax_float(value):
                continue
        errors.append(f"{name}\n  {text} [type={code}, input_value={_input_repr(value)}, "
                      f"input_type={type(value).__name__}]\n    For further information visit {PYDANTIC_DOCS}{code}")
    if errors:
        noun = "error" if len(errors) == 1 else "errors"
        raise ModelValidationError(f"{len(errors)} validation {noun} for {model}\n" + "\n".join(errors))


def _lax_int(value: Any):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _lax_float(value: Any) -> bool:
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value.strip())
            return True
        except ValueError:
            return False
    return False
