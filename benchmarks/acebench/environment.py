"""The ACEBench environment: the involved scenario instances of one record, driven by structured tool calls.

Execution follows upstream's ``execute_agent_func_call`` for one agent message:
- instances are built on the first executed message (constructor state, then ``_load_scenario`` with the class's
  own config and then with the ``BaseApi`` config, as upstream);
- a call runs on EVERY involved instance that has a public method of that name (``turn_on_wifi`` on each phone
  class); the last result is kept;
- an unknown name runs nothing and repeats the previous result of the same message, or fails when it is first;
- multi_turn: the first exception ends the message; the whole message's answer is the literal text
  ``Error during execution: {str(e)}`` (upstream forgot the f-prefix), and no state is recorded from it;
- multi_step: each failing call answers ``Error during execution: <str(e)>`` and the next calls still run.
Results are shown as upstream serialises them: strings as is, dicts as JSON (non-ASCII kept), others via str().

The runner executes calls one at a time, so a live episode treats each call as its own message; scoring replays
whole messages (:meth:`AceExecutor.run_message`). The two differ only for a failing call inside a parallel call
list in multi_turn.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Optional

from mua.harness.interfaces import Environment, ToolOutcome
from mua.harness.types import ToolCall, ToolSpec

from .apis import SCENARIO_CLASSES
from .data import World

MULTI_TURN_ERROR = "Error during execution: {str(e)}"  # verbatim: upstream's string has no f-prefix
STEP_ERROR_PREFIX = "Error during execution: "
# what Python 3.11+ says when upstream reads its result variable before any call assigned it
_UNASSIGNED = "cannot access local variable 'func_call_result' where it is not associated with a value"
_NOTHING = object()
NOT_EXECUTED = "Please do not ask me any questions, use the known conditions to solve the problem"


def executable(calls: list[ToolCall]) -> bool:
    """False when a call has a dict-valued argument: upstream re-renders a dict argument as a nested call and
    fails to decode the message, so it never executes it (multi_turn hands it to the user, multi_step answers
    the decode-failure text). Such calls can only reach helper methods; no declared tool takes a dict."""
    for call in calls:
        try:
            args = call.parsed_arguments()
        except ValueError:
            continue
        if any(isinstance(v, dict) for v in args.values()):
            return False
    return True


@dataclass
class CallOutcome:
    content: str
    error: bool = False


def format_result(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


class AceExecutor:
    """The involved instances of one record and upstream's per-message execution rules."""

    def __init__(self, world: World):
        self.world = world
        self.instances: Optional[dict[str, Any]] = None
        self.methods: dict[str, list[Any]] = {}
        self.recorded = False  # whether upstream would save the final state (see saved_state)

    def _build(self) -> None:
        config = self.world.initial_config
        self.instances = {}
        for name in self.world.involved_classes:
            obj = SCENARIO_CLASSES[name]._create(self.world.lang, copy.deepcopy(self.world.defaults[name]))
            obj._load_scenario(copy.deepcopy(config.get(name, {})))
            obj._load_scenario(copy.deepcopy(config.get("BaseApi", {})))
            self.instances[name] = obj
            for method in type(obj)._public_methods(self.world.lang):
                self.methods.setdefault(method, []).append(obj)

    def run_message(self, calls: list[ToolCall]) -> list[CallOutcome]:
        """Execute the calls of one agent message; one outcome per call."""
        if self.instances is None:
            self._build()
        if not executable(calls):
            return [CallOutcome(NOT_EXECUTED) for _ in calls]
        multi_turn = self.world.category == "multi_turn"
        results: list[tuple[Any, bool]] = []
        last: Any = _NOTHING
        for call in calls:
            try:
                last = self._run(call, last)
                results.append((last, False))
            except Exception as e:  # noqa: BLE001 -- any error in scenario code goes back to the agent
                if multi_turn:
                    return [CallOutcome(MULTI_TURN_ERROR, error=True) for _ in calls]
                results.append((STEP_ERROR_PREFIX + str(e), True))
        self.recorded = True
        # formatted only now, as upstream: a result that references live state shows the message's final state
        return [CallOutcome(format_result(value), error) for value, error in results]

    def _run(self, call: ToolCall, last: Any) -> Any:
        args = call.parsed_arguments()
        for obj in self.methods.get(call.name, []):
            last = getattr(obj, call.name)(**args)
        if last is _NOTHING:
            raise UnboundLocalError(_UNASSIGNED)
        return last

    def saved_state(self) -> list[dict]:
        """What upstream writes to its result file: one {class: {saved attributes}} per involved class, after a
        JSON round trip (int keys become strings); empty when upstream would have recorded no instances."""
        if not self.recorded or self.instances is None:
            return []
        state = [{name: {attr: value for attr, value in vars(obj).items()
                         if attr in self.world.saved_attributes[name]}}
                 for name, obj in self.instances.items()]
        return json.loads(json.dumps(state, ensure_ascii=False, default=str))


class AceEnvironment(Environment):
    def __init__(self, world: World):
        self.world = world
        self.executor = AceExecutor(world)

    def agent_tools(self, turn: int = 0) -> list[ToolSpec]:
        return list(self.world.tools)

    def execute(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        outcome = self.executor.run_message([call])[0]
        return ToolOutcome(content=outcome.content, error=outcome.error)

    def state(self) -> list[dict]:
        return self.executor.saved_state()
