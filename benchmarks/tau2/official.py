"""Reading tau2's own Results JSON (``{timestamp, info, tasks, simulations}``) into ReplayItems.

Tasks are built from the definitions embedded in the file (task sets changed between tau2 versions); the
policy recorded in ``info.environment_info.policy`` is kept on the task (it only affects the agent prompt).
tau2 messages become OpenAI-shape messages: tool-call arguments (dicts) become JSON strings, tool messages
carry ``tool_call_id``, and user messages keep their tool calls (telecom)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, Optional

from mua.harness.interfaces import ReplayItem
from mua.harness.types import Message, ToolCall

from .tasks import make_task


def _is_results(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("simulations"), list) and isinstance(doc.get("tasks"), list)


def convert_message(m: dict) -> Optional[Message]:
    role = m.get("role")
    if role == "tool":
        return Message(role="tool", content=m.get("content"), tool_call_id=m.get("id"))
    if role not in ("assistant", "user", "system"):
        return None
    calls = None
    if m.get("tool_calls"):
        calls = [ToolCall(id=str(c.get("id") or ""), name=c["name"],
                          arguments=json.dumps(c.get("arguments") or {}))
                 for c in m["tool_calls"]]
    return Message(role=role, content=m.get("content"), tool_calls=calls)


def read_results(path: Path, data_dir: Path) -> Optional[Iterator[ReplayItem]]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not _is_results(doc):
        return None
    env_info = (doc.get("info") or {}).get("environment_info") or {}
    domain = env_info.get("domain_name") or ""
    # tau2's "telecom-workflow" is the telecom domain with a workflow-style policy (same tools, tasks and
    # evaluator); the policy recorded in the file is kept on the task.
    domain = "telecom" if domain == "telecom-workflow" else domain
    policy = env_info.get("policy")
    tasks = {}
    for record in doc["tasks"]:
        try:
            task = make_task(record, domain, data_dir, policy=policy)
        except Exception:
            continue
        tasks[task.id] = task

    def items() -> Iterator[ReplayItem]:
        for sim in doc["simulations"]:
            task_id = str(sim.get("task_id"))
            task = tasks.get(task_id)
            messages = [m for m in (convert_message(x) for x in sim.get("messages") or []) if m is not None]
            error = None
            if task is None:
                error = f"task {task_id} is not embedded in the file"
            elif domain not in ("retail", "airline", "telecom"):
                error = f"domain {domain!r} is not a tau2 domain mua implements"
            yield ReplayItem(task=task, messages=messages, subset=domain, task_id=task_id,
                             variant=str(sim.get("trial")) if sim.get("trial") is not None else None,
                             termination=sim.get("termination_reason"), official=sim.get("reward_info"),
                             error=error)
    return items()
