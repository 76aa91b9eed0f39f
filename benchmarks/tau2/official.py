"""Reading tau2's own Results JSON (``{timestamp, info, tasks, simulations}``) into ReplayItems.

Tasks are built from the definitions embedded in the file (task sets changed between tau2 versions); the
policy recorded in ``info.environment_info.policy`` is kept on the task (it only affects the agent prompt).
tau2 messages become OpenAI-shape messages: tool-call arguments (dicts) become JSON strings, tool messages
carry ``tool_call_id``, and user messages keep their tool calls (telecom).

A simulation is scored against the task its ``reward_info`` shows was evaluated (see ``evaluated_task``): in the
ToolOrchestra leaderboard files (tau2 0.1.3) the ``task_id`` labels are shuffled relative to the conversations."""
from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Iterator, Optional

from mua.harness.errors import DataError
from mua.harness.interfaces import ReplayItem
from mua.harness.io.files import read_json, type_name
from mua.harness.io.jsonl import loads_line
from mua.harness.types import Message, Task, ToolCall

from .tasks import make_task

# The note tau2 writes into reward_info["info"][part] when the task has nothing of that kind to check.
_NOTHING_TO_CHECK = {"action": "No actions to evaluate", "communicate": "No communicate_info to evaluate",
                     "nl": "No nl_assertions to evaluate"}


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


def _message_problem(m) -> Optional[str]:
    """Why one recorded message cannot be converted (None when it can)."""
    if not isinstance(m, dict):
        return f"is a {type(m).__name__}, not a JSON object"
    calls = m.get("tool_calls")
    if calls and (not isinstance(calls, list) or
                  not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls)):
        return "has tool_calls that are not a list of objects with a name"
    return None


def convert_messages(raw) -> tuple[list[Message], Optional[str]]:
    """A simulation's messages, or ([], why not): a missing or empty conversation is never scored (the scorer
    would replay nothing and could pass a task whose gold actions change nothing)."""
    if raw is None:
        return [], "the simulation has no messages"
    if not isinstance(raw, list):
        return [], f"the simulation's messages are a {type(raw).__name__}, not a list"
    for i, m in enumerate(raw):
        problem = _message_problem(m)
        if problem:
            return [], f"message {i} {problem}"
    messages = [m for m in (convert_message(x) for x in raw) if m is not None]
    if not messages:
        return [], "the simulation has no messages" + (" with a known role" if raw else "")
    return messages, None


def parse_reward_info(raw) -> tuple[Optional[dict], Optional[str]]:
    """reward_info as a dict; some files store its Python repr as a string (parsed as a literal, never run)."""
    if raw is None or isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, dict):
            return _typed_reward_info(value)
    return None, "reward_info is neither a dict nor the Python repr of one"


def _typed_reward_info(info: dict) -> tuple[Optional[dict], Optional[str]]:
    """reward_info parsed from a repr holds only what JSON can carry (it is written back into score rows)."""
    try:
        return loads_line(json.dumps(info, allow_nan=False)), None
    except (TypeError, ValueError, RecursionError) as e:  # inf, a set, bytes, nesting too deep
        return None, f"reward_info holds a value JSON cannot carry ({str(e)[:80]})"


def _reward_problem(reward_info: Optional[dict]) -> Optional[str]:
    """The recorded reward, which score compares with mua's verdict: absent, null or a number in [0, 1]."""
    reward = (reward_info or {}).get("reward")
    if reward is None:
        return None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not 0 <= reward <= 1:
        shown = repr(reward) if isinstance(reward, (int, float, str)) else type_name(reward)
        return f"reward_info.reward must be a number from 0 to 1, found {shown[:60]}"
    return None


def _action_key(action) -> tuple:
    if not isinstance(action, dict):  # malformed: matches nothing well-formed
        return (None, None, action)
    return (action.get("requestor") or "assistant", action.get("name"), action.get("arguments") or {})


def _recorded(reward_info: dict, checks_key: str, part: str, field: str) -> Optional[list]:
    """The criteria of one kind the evaluator checked, in order; None when the file does not say (not evaluated)."""
    checks = reward_info.get(checks_key)
    if isinstance(checks, list):
        return [c.get(field) for c in checks if isinstance(c, dict)]
    info = reward_info.get("info")
    note = info.get(part) if isinstance(info, dict) else None
    return [] if isinstance(note, dict) and note.get("note") == _NOTHING_TO_CHECK[part] else None


def _evidence(reward_info: dict) -> dict[str, Optional[list]]:
    actions = _recorded(reward_info, "action_checks", "action", "action")
    return {"actions": None if actions is None else [_action_key(a) for a in actions],
            "communicate": _recorded(reward_info, "communicate_checks", "communicate", "info"),
            "nl": _recorded(reward_info, "nl_assertions", "nl", "nl_assertion")}


def _criteria(task: Task) -> dict:
    return task.evaluation if isinstance(task.evaluation, dict) else {}


def _consistent(task: Task, evidence: dict[str, Optional[list]]) -> bool:
    crit = _criteria(task)
    own = {"actions": [_action_key(a) for a in crit.get("actions") or []],
           "communicate": list(crit.get("communicate_info") or []), "nl": list(crit.get("nl_assertions") or [])}
    return all(evidence[k] is None or evidence[k] == own[k] for k in own)


def _action_ids(actions) -> list:
    return [a.get("action_id") for a in actions or [] if isinstance(a, dict)]


def evaluated_task(tasks: dict[str, Task], task_id: str,
                   reward_info: Optional[dict]) -> tuple[Optional[Task], Optional[str]]:
    """The embedded task whose criteria equal those the evaluator recorded in reward_info (gold actions by
    requestor, name and arguments in order; communicate infos; NL assertions), preferring the labelled task.
    Tasks with identical criteria are told apart by the recorded action ids (compared with the embedded
    actions' ids, not with task ids: in the 0.1.3 retail set tasks 95-113 carry ids "96_0".."114_0").
    Returns (task, None) or (None, why not)."""
    evidence = _evidence(reward_info or {})
    labelled = tasks.get(task_id)
    if labelled is not None and _consistent(labelled, evidence):
        return labelled, None
    if all(v is None for v in evidence.values()):  # nothing recorded to check the label against
        return labelled, None if labelled else f"task {task_id} is not embedded in the file"
    candidates = [t for t in tasks.values() if _consistent(t, evidence)]
    if len(candidates) > 1:
        ids = _action_ids(c.get("action") for c in (reward_info or {}).get("action_checks") or []
                          if isinstance(c, dict))
        candidates = [t for t in candidates if ids and _action_ids(_criteria(t).get("actions")) == ids]
    if len(candidates) == 1:
        return candidates[0], None
    label = f"task {task_id} is not embedded" if labelled is None else f"labelled task {task_id} was not evaluated"
    return None, (f"{label} (reward_info records other criteria) and "
                  f"{len(candidates) or 'no'} embedded tasks match the recorded criteria")


def _object(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _string(value: object) -> Optional[str]:
    return value if isinstance(value, str) else None


def read_results(path: Path) -> Optional[Iterator[ReplayItem]]:
    try:  # the hardened reader: deep nesting, huge numbers or bad bytes mean "not a tau2 results file"
        doc = read_json(path, what="results file")
    except DataError:
        return None
    if not _is_results(doc):
        return None
    info = _object(doc.get("info"))
    env_info = _object(info.get("environment_info"))
    domain = _string(env_info.get("domain_name")) or ""
    # tau2's "telecom-workflow" is the telecom domain with a workflow-style policy (same tools, tasks and
    # evaluator); the policy recorded in the file is kept on the task.
    domain = "telecom" if domain == "telecom-workflow" else domain
    policy = _string(env_info.get("policy"))
    tasks = {}
    for record in doc["tasks"]:
        try:
            task = make_task(record, domain, policy=policy)
        except Exception:
            continue
        tasks[task.id] = task

    def items() -> Iterator[ReplayItem]:
        for index, sim in enumerate(doc["simulations"]):
            yield _replay_item(index, sim, tasks, domain)
    return items()


def _replay_item(index: int, sim, tasks: dict[str, Task], domain: str) -> ReplayItem:
    """One simulation; a malformed one becomes an item with ``error`` set (reported, not scored)."""
    if not isinstance(sim, dict):
        return ReplayItem(task=None, messages=[], subset=domain, task_id=f"simulations[{index}]",
                          error=f"simulations[{index}] is a {type(sim).__name__}, not a JSON object")
    task_id = str(sim.get("task_id"))
    messages, error = convert_messages(sim.get("messages"))
    reward_info, info_error = parse_reward_info(sim.get("reward_info"))
    info_error = info_error or _reward_problem(reward_info)
    if info_error is not None:
        info_error, reward_info = f"simulations[{index}]: {info_error}", None
    error = error or info_error
    task = None
    if info_error is None:
        task, task_error = evaluated_task(tasks, task_id, reward_info)
        error = error or task_error
    if task is not None:
        task_id = task.id  # the evaluated task, which may differ from the file's label
    if error is None and domain not in ("retail", "airline", "telecom"):
        error = f"domain {domain!r} is not a tau2 domain mua implements"
    return ReplayItem(task=task, messages=messages, subset=domain, task_id=task_id,
                      variant=str(sim.get("trial")) if sim.get("trial") is not None else None,
                      termination=sim.get("termination_reason"), official=reward_info, error=error)
