"""A tau2 task's ground truth for people (``mua view``): the user's instructions and the expected actions as
readable sections, and where an episode's end database differs from the one the gold actions produce.

The end states are rebuilt as the DB check builds them (``scoring.replay`` of the episode's calls, recorded
tool results never trusted; ``scoring.gold_env`` for the gold actions), so the difference shown is the one
the check saw. Retail and airline states are copy-on-write overlays: only the records either side changed
are compared. Telecom's are small documents (the carrier's records and the user's phone): compared whole.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from mua.harness.types import Message, Task

from . import scoring
from .domain import Tau2Domain
from .overlay import Overlay

# the order a reader wants tau2's user instructions in (the data has them in any order)
INSTRUCTION_ORDER = ("reason_for_call", "known_info", "unknown_info", "task_instructions")
MAX_DIFFERENCES = 200  # a page shows at most this many differing fields per episode (then says so)


def task_sections(task: Task) -> dict[str, Any]:
    """Titled sections: the user's instructions, what the task is about, the expected actions (with the
    arguments the action check compares) and every other check of the task's reward basis."""
    sections: dict[str, Any] = {}
    scenario = task.scenario if isinstance(task.scenario, dict) else {}
    instructions = scenario.get("instructions")
    if isinstance(instructions, dict):
        keys = [k for k in INSTRUCTION_ORDER if k in instructions] + [k for k in instructions
                                                                      if k not in INSTRUCTION_ORDER]
        sections["user instructions"] = "\n".join(f"{key.replace('_', ' ')}: {instructions[key]}"
                                                  for key in keys if instructions[key])
    elif instructions:
        sections["user instructions"] = str(instructions)
    if scenario.get("persona"):
        sections["user persona"] = str(scenario["persona"])
    description = (task.raw or {}).get("description") if isinstance(task.raw, dict) else None
    if isinstance(description, dict) and description.get("purpose"):
        sections["purpose"] = str(description["purpose"])
    evaluation = task.evaluation if isinstance(task.evaluation, dict) else {}
    if evaluation.get("reward_basis"):
        sections["reward basis"] = ", ".join(str(b) for b in evaluation["reward_basis"])
    sections["expected actions"] = [_action_text(a) for a in evaluation.get("actions") or [] if isinstance(a, dict)]
    if evaluation.get("communicate_info"):
        sections["information the agent must give"] = [str(c) for c in evaluation["communicate_info"]]
    if evaluation.get("env_assertions"):
        sections["environment assertions"] = [_assertion_text(a) for a in evaluation["env_assertions"]
                                               if isinstance(a, dict)]
    if evaluation.get("nl_assertions"):
        sections["NL assertions (judged)"] = [str(a) for a in evaluation["nl_assertions"]]
    return sections


def _action_text(action: dict) -> str:
    args = json.dumps(action.get("arguments") or {}, ensure_ascii=False, sort_keys=True)
    who = "" if (action.get("requestor") or "assistant") == "assistant" else f"[{action['requestor']}] "
    compared = action.get("compare_args")
    note = "" if compared is None else f"  (compares: {', '.join(compared) or 'nothing'})"
    return f"{who}{action.get('name')}({args}){note}"


def _assertion_text(assertion: dict) -> str:
    args = json.dumps(assertion.get("arguments") or {}, ensure_ascii=False, sort_keys=True)
    return (f"[{assertion.get('env_type')}] {assertion.get('func_name')}({args}) == "
            f"{assertion.get('assert_value', True)}")


def end_state_diff(domain: Tau2Domain, task: Task, messages: list[Message]) -> Optional[list[dict]]:
    """The fields where the episode's end database differs from the gold one; None when the task has no gold
    end state to compare (no evaluation, or neither actions nor env assertions: its DB check always passes)."""
    evaluation = task.evaluation
    if not isinstance(evaluation, dict) or (evaluation.get("actions") is None
                                             and evaluation.get("env_assertions") is None):
        return None
    episode = scoring.replay(domain, task.initial_state, scoring.tool_calls(messages)).state()
    gold = scoring.gold_env(domain, task.initial_state, evaluation).state()
    out: list[dict] = []
    for path, (mine, theirs) in _documents(episode, gold).items():
        _diff(path, mine, theirs, out)
    if len(out) > MAX_DIFFERENCES:
        out = out[:MAX_DIFFERENCES] + [{"path": f"... and {len(out) - MAX_DIFFERENCES} more differences"}]
    return out


_ABSENT = object()


def _documents(episode: Any, gold: Any) -> dict[str, tuple[Any, Any]]:
    """(episode, gold) pairs of what to compare, by path."""
    if isinstance(episode, Overlay) and isinstance(gold, Overlay):
        keys = sorted({(table, key) for state in (episode, gold) for table, records in state.changed.items()
                       for key in records})
        return {f"{table}/{key}": (_record(episode, table, key), _record(gold, table, key)) for table, key in keys}
    from .telecom.state import TelecomState  # only a telecom episode gets here: other runs never load telecom

    if isinstance(episode, TelecomState) and isinstance(gold, TelecomState):
        pairs = zip(episode.fingerprint(), gold.fingerprint())  # canonical JSON: type-exact, as the DB check
        return {name: (json.loads(a), json.loads(b)) for name, (a, b) in zip(("agent db", "user db"), pairs)}
    raise TypeError(f"no database comparison for a {type(episode).__name__} state")


def _record(state: Overlay, table: str, key: str) -> Any:
    return state.get(table, key, _ABSENT)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _diff(path: str, mine: Any, theirs: Any, out: list[dict]) -> None:
    if mine is not _ABSENT and theirs is not _ABSENT and _canonical(mine) == _canonical(theirs):
        return
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in list(mine) + [k for k in theirs if k not in mine]:
            _diff(f"{path}/{key}", mine.get(key, _ABSENT), theirs.get(key, _ABSENT), out)
        return
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs)):
            _diff(f"{path}[{i}]", a, b, out)
        return
    entry: dict[str, Any] = {"path": path}
    if mine is not _ABSENT:
        entry["episode"] = mine
    if theirs is not _ABSENT:
        entry["gold"] = theirs
    out.append(entry)
