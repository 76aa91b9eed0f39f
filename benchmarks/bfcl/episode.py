"""The scripted side of a BFCL episode: the user's turns and the gold agent's ground-truth calls."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

from mua.harness.types import Message, Task, ToolCall

from . import data
from .apis import suites_for
from .calls import parse_call


def user_turns(task: Task, data_dir: Path) -> list[str]:
    """One user message per question turn; an empty (miss_func holdout) turn says the protocol's
    "I have updated some more functions" text, as BFCL's FC harness does."""
    added = data.protocol(data_dir)["DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC"]
    texts = []
    for turn in task.scenario or []:
        texts.append(" ".join(m.get("content", "") for m in turn) if turn else added)
    return texts


def _owner(task: Task, name: str):
    """The suite class that answers ``name`` (the later involved class wins, as in dispatch)."""
    suites = suites_for(data.version_of(task).name)
    found = None
    for cls in (task.raw or {}).get("involved_classes", []):
        if name in suites[cls]._api_methods():
            found = suites[cls]
    return found


def as_tool_call(task: Task, text: str, call_id: str) -> ToolCall:
    """A ground-truth call string as a structured tool call (positional arguments named by the signature)."""
    parsed = parse_call(text)
    kwargs = dict(parsed.kwargs)
    if parsed.args:
        owner = _owner(task, parsed.name)
        params = [p for p in inspect.signature(getattr(owner, parsed.name)).parameters if p != "self"]
        kwargs = {**dict(zip(params, parsed.args)), **kwargs}
    return ToolCall(id=call_id, name=parsed.name, arguments=json.dumps(kwargs))


def gold_script(task: Task) -> list[list[Message]]:
    """Per turn: one assistant message with all of that turn's ground-truth calls (none for an empty turn)."""
    script = []
    for t, calls in enumerate(task.evaluation or []):
        tool_calls = [as_tool_call(task, c, f"gold_{t}_{i}") for i, c in enumerate(calls)]
        script.append([Message(role="assistant", content=None, tool_calls=tool_calls)] if tool_calls else [])
    return script
