"""One episode's API instances and the official execution semantics for a single call.

Dispatch is by name over the public methods of the involved instances (a later class in ``involved_classes``
wins a name clash, as upstream). Nothing is evaluated: arguments are Python values already. The result text
follows multi_turn_utils.execute_multi_turn_func_call: str as is, dict as json.dumps (str() if that fails),
anything else str(); an exception becomes "Error during execution: <message>" (Python's own binding messages
for missing or unexpected arguments, since our classes and signatures match upstream's).
"""
from __future__ import annotations

import copy
import json
import keyword
import math
from typing import Any, Mapping, Optional, Sequence

from .apis import SUITES, ApiSuite, Extensions

ERROR_PREFIX = "Error during execution: "
FORBIDDEN = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")


def format_result(value: Any) -> str:
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            return str(value)
    return str(value)


def _is_name(text: Any) -> bool:
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def _first_non_finite(value: Any) -> str | None:
    """What Python would fail to resolve if a JSON value were written out with repr() and evaluated, as the
    official FC path does (``nan``/``inf`` are not names in scope)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf"
    if isinstance(value, dict):
        items = [x for kv in value.items() for x in kv]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return None
    for item in items:
        if (bad := _first_non_finite(item)) is not None:
            return bad
    return None


class ApiWorld:
    """Fresh instances of a task's involved classes, loaded from a deep copy of its initial_config."""

    def __init__(self, involved: Sequence[str], initial_config: Mapping[str, Any], long_context: bool,
                 extensions: Extensions, suites: Optional[Mapping[str, type[ApiSuite]]] = None):
        self.instances: dict[str, ApiSuite] = {}
        self.methods: dict[str, ApiSuite] = {}
        for cls_name in involved:
            suite = (suites or SUITES)[cls_name]()
            if not suite.stateless:
                scenario = copy.deepcopy(initial_config.get(cls_name, {}))
                suite._setup(scenario, long_context, extensions)
            self.instances[cls_name] = suite
            for attr in type(suite)._api_methods():
                self.methods[attr] = suite

    def call(self, name: str, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None) -> str:
        """Run one call and return its result text; never raises for bad input."""
        kwargs = dict(kwargs or {})
        short = name.split(".")[1] if "." in name else name
        if short in FORBIDDEN:
            return f"{ERROR_PREFIX}Function call {short} is not allowed."
        if not _is_name(name) or any(not _is_name(k) for k in kwargs):
            return f"{ERROR_PREFIX}invalid syntax (<string>, line 1)"
        owner = self.methods.get(name)  # Python resolves the function name before the arguments
        if owner is None:
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        for value in list(args) + list(kwargs.values()):
            if (bad := _first_non_finite(value)) is not None:
                return f"{ERROR_PREFIX}name '{bad}' is not defined"
        try:
            return format_result(getattr(owner, name)(*args, **kwargs))
        except RecursionError:
            return f"{ERROR_PREFIX}maximum recursion depth exceeded"
        except Exception as e:  # any failure inside a call is the agent's problem, reported in-episode
            return f"{ERROR_PREFIX}{e}"

    def state(self) -> dict[str, dict]:
        return {name: inst._state() for name, inst in self.instances.items()}
