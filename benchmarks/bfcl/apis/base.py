"""What every BFCL API suite shares: loading a scenario over defaults, and the state the checker compares.

Each suite mirrors one upstream class of ``bfcl_eval/eval_checker/multi_turn_eval/func_source_code`` (same class
name, public method names, signatures, return values and error texts), because the official execution reports
Python's own binding errors (``TravelAPI.book_flight() missing 1 required positional argument: ...``) and those
texts name the class. Attributes starting with ``_`` are private: the state checker ignores them, and methods
starting with ``_`` are not callable by the agent.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping


class ApiSuite:
    """Base of the eight suites. ``_setup`` takes the task's initial_config section for this class."""

    stateless = False  # MathAPI: upstream never calls _load_scenario on it
    # Inherited public methods that this version of the class does not have (a v4 suite subclasses its v3
    # suite): they are not tools, and calling one fails as a call to an unknown name.
    _retired: frozenset = frozenset()

    @classmethod
    def _api_methods(cls) -> list[str]:
        """The names an agent can call, sorted."""
        return [name for name in dir(cls) if not name.startswith("_") and callable(getattr(cls, name))
                and name not in cls._retired]

    def _setup(self, scenario: Mapping[str, Any], long_context: bool, extensions: "Extensions") -> None:
        raise NotImplementedError

    def _state(self) -> dict:
        """The attributes the official state checker compares (``vars()`` minus names starting with '_')."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class Extensions:
    """The long-context filler constants (``long_context_constants.json``), read-only. Suites copy what they
    store in their own state, so one episode can never change another's starting data."""

    def __init__(self, constants: Mapping[str, Any]):
        self._constants = dict(constants)

    def get(self, name: str) -> Any:
        """A private deep copy of one constant."""
        return copy.deepcopy(self._constants[name])

    def view(self, name: str) -> Any:
        """The shared value itself, for callers that only read it."""
        return self._constants[name]


def pick(scenario: Mapping[str, Any], key: str, default: Any) -> Any:
    """Scenario value for ``key`` or a fresh copy of the default (upstream deep-copies its DEFAULT_STATE)."""
    return scenario[key] if key in scenario else copy.deepcopy(default)
