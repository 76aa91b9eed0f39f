"""Reading BFCL's own multi-turn result files so their trajectories can be re-scored verdict by verdict.

A result file (``..._BFCL_v3_multi_turn_base_result.json``, JSON Lines) holds per entry ``result``: per turn, per
step, either FC calls (a list of ``{func_name: json_args}``) or a prompting-mode text such as
``"[cd(folder='a')]"``; text is parsed with the safe call parser, never evaluated. Each entry becomes user and
assistant messages (tool messages carry no recorded result: scoring re-executes). When the matching
``..._score.json`` lies next to it, ``ReplayItem.official`` holds the verdict: the score file lists only
failing entries, so an id absent from it passed.
"""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional

from mua.harness.interfaces import ReplayItem
from mua.harness.types import Message, Task, ToolCall

from . import data
from .calls import CallSyntaxError, parse_call_list
from .episode import _owner, user_turns

if TYPE_CHECKING:
    from .benchmark import BfclBenchmark

_NAME = re.compile(r"BFCL_v\d+_(multi_turn_[a-z_]+?)_result\.json$")
NOT_RECORDED = "(result not recorded in the official file)"


def _fc_step(step: Any, prefix: str) -> Optional[list[ToolCall]]:
    items = [step] if isinstance(step, dict) else step
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        return None
    calls = []
    for item in items:
        for name, args in item.items():
            text = args if isinstance(args, str) else json.dumps(args)
            calls.append(ToolCall(id=f"{prefix}_{len(calls)}", name=str(name), arguments=text))
    return calls


def _text_step(task: Task, text: str, prefix: str) -> Optional[list[ToolCall]]:
    try:
        parsed = parse_call_list(text)
    except CallSyntaxError:
        return None
    calls = []
    for p in parsed:
        kwargs = dict(p.kwargs)
        if p.args:
            owner = _owner(task, p.name)
            if owner is None:
                return None
            names = [n for n in inspect.signature(getattr(owner, p.name)).parameters if n != "self"]
            kwargs = {**dict(zip(names, p.args)), **kwargs}
        try:
            calls.append(ToolCall(id=f"{prefix}_{len(calls)}", name=p.name, arguments=json.dumps(kwargs)))
        except (TypeError, ValueError):  # a set or other non-JSON literal
            return None
    return calls or None


def entry_messages(task: Task, result: list, data_dir: Path) -> list[Message]:
    texts = user_turns(task, data_dir)
    messages: list[Message] = []
    for t, turn in enumerate(result):
        messages.append(Message(role="user", content=texts[t] if t < len(texts) else ""))
        for s, step in enumerate(turn if isinstance(turn, list) else [turn]):
            prefix = f"call_{t}_{s}"
            calls = _text_step(task, step, prefix) if isinstance(step, str) else _fc_step(step, prefix)
            if calls:
                messages.append(Message(role="assistant", tool_calls=calls))
                messages.extend(Message(role="tool", content=NOT_RECORDED, tool_call_id=c.id, name=c.name)
                                for c in calls)
            else:
                messages.append(Message(role="assistant", content=step if isinstance(step, str) else json.dumps(step)))
    return messages


def read_verdicts(score_path: Path) -> Optional[dict[str, dict]]:
    """Failing ids -> {error_type, error_message} from a score file; None when there is no score file."""
    if not score_path.is_file():
        return None
    failures = {}
    with open(score_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            if "id" in row:
                err = row.get("error") or {}
                msg = err.get("error_message")
                failures[row["id"]] = {"valid": False, "error_type": err.get("error_type"),
                                       "error_message": msg[0] if isinstance(msg, list) and msg else msg}
    return failures


def read_result_file(bench: "BfclBenchmark", path: Path, data_dir: Path) -> Optional[Iterator[ReplayItem]]:
    match = _NAME.search(path.name)
    if not match or match.group(1) not in data.SUBSETS:
        return None
    subset = match.group(1)
    tasks = {t.id: t for t in bench.load_tasks(data_dir, subset)}
    failures = read_verdicts(path.with_name(path.name[: -len("_result.json")] + "_score.json"))

    def items() -> Iterator[ReplayItem]:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    yield ReplayItem(None, [], subset, f"line {lineno}", error=f"not valid JSON: {e}")
                    continue
                task_id = str(row.get("id"))
                official = None if failures is None else failures.get(task_id, {"valid": True})
                task = tasks.get(task_id)
                result = row.get("result")
                if task is None:
                    yield ReplayItem(None, [], subset, task_id, official=official, error="unknown task id")
                elif not isinstance(result, list):
                    # Inference failed upstream (the result is an error text): the official checker marks the
                    # entry invalid, so it is scored, as an empty trajectory, rather than reported unreadable.
                    yield ReplayItem(task, [], subset, task_id, official=official, termination="inference_error")
                else:
                    yield ReplayItem(task, entry_messages(task, result, data_dir), subset, task_id,
                                     official=official)

    return items()
