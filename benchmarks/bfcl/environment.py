"""The BFCL episode environment: the task's API world behind structured tool calls."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from mua.harness.interfaces import Environment, ToolOutcome
from mua.harness.types import Task, ToolCall, ToolSpec

from . import data
from .apis import suites_for
from .schema import tool_spec
from .world import ERROR_PREFIX, ApiWorld

# Upstream never executes a step whose arguments do not decode (it ends the turn without a reply); inside an
# episode the agent gets this text instead, and the scorer drops such steps as upstream does.
BAD_JSON = ERROR_PREFIX + "could not decode the arguments of {name}: {reason}"


def decode_arguments(raw: str) -> dict:
    """Arguments as the official FC decoder reads them: json.loads, and the result must be a dict."""
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    return value


def new_world(task: Task, data_dir: Path) -> ApiWorld:
    """Fresh instances of the task's classes, as its data release (v3 or v4) executes them."""
    raw = task.raw or {}
    return ApiWorld(raw.get("involved_classes", []), task.initial_state or {}, data.is_long_context(task.id),
                    data.extensions(data_dir), suites_for(data.version_of(task).name))


class OfferedTools:
    """The tools a task offers the agent, turn by turn: all docs of the involved classes, minus miss_func
    functions whose turn has not come yet (read without building the task's world)."""

    def __init__(self, task: Task, data_dir: Path):
        self._docs = [d for cls in (task.raw or {}).get("involved_classes", [])
                      for d in data.func_docs(data_dir, data.version_of(task))[cls]]
        self._hint = data.protocol(data_dir)["PYTHON_FUNCTION_DOC_HINT"]
        self._missed = data.missed_functions(task)

    def __call__(self, turn: int = 0) -> list[ToolSpec]:
        """The added ones go last, in the order upstream appends them."""
        withheld_now = {name for at, names in self._missed.items() if at > turn for name in names}
        missed_all = {n for names in self._missed.values() for n in names}
        base = [d for d in self._docs if d["name"] not in missed_all]
        added = [d for at in sorted(self._missed) if at <= turn for name in self._missed[at]
                 for d in self._docs if d["name"] == name]
        return [tool_spec(d, self._hint) for d in base + added if d["name"] not in withheld_now]


class BfclEnvironment(Environment):
    def __init__(self, task: Task, data_dir: Path):
        self.task = task
        self.world = new_world(task, data_dir)
        self._offered = OfferedTools(task, data_dir)

    def agent_tools(self, turn: int = 0) -> list[ToolSpec]:
        return self._offered(turn)

    def execute(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        try:
            kwargs = decode_arguments(call.arguments)
        except (ValueError, RecursionError) as e:
            reason = str(e)[:200]
            return ToolOutcome(BAD_JSON.format(name=call.name[:100], reason=reason), error=True)
        text = self.world.call(call.name, (), kwargs)
        return ToolOutcome(text, error=text.startswith(ERROR_PREFIX))

    def state(self) -> Optional[dict]:
        return self.world.state()
