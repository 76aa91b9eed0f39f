"""Test helpers for tau2 telecom."""
from __future__ import annotations

from typing import Any


def check_env_assertion(domain: Any, state: Any, assertion: dict) -> bool:
    """One env_assertion as upstream's ``run_env_assertion`` in raising mode (the scorer,
    ``scoring.env_assertions_check``, counts a raising check as not met instead): the function must return a
    bool; it passes when that equals ``assert_value`` (default True)."""
    result = domain.run_env_function(state, assertion.get("env_type", "assistant"), assertion["func_name"],
                                     assertion.get("arguments") or {})
    if not isinstance(result, bool):
        raise ValueError(f"Function {assertion['func_name']} returned {type(result)} instead of bool")
    return result == assertion.get("assert_value", True)
