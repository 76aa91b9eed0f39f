"""Reading BFCL's own multi-turn result files so their trajectories can be re-scored verdict by verdict.

A result file (``..._BFCL_v3_multi_turn_base_result.json``, JSON Lines) holds per entry ``result``: per turn, per
step, either FC calls (a list of ``{func_name: json_args}``) or a prompting-mode text such as
``"[cd(folder='a')]"``; text is parsed with the safe call parser, never evaluated. Each entry becomes user and
assistant messages (tool messages carry no recorded result: scoring re-executes). When the matching
``..._score.json`` lies next to it, ``ReplayItem.official`` holds the verdict: the score file lists only
failing entries, so an id absent from it passed.

Data release: the file name says ``BFCL_v3_`` or ``BFCL_v4_``, but bfcl-eval 2025.8.25 wrote ``BFCL_v4_``
files from the v3 questions, and releases up to 2025.11.3 from interim ones. So when the score file records the
prompts of its failing entries, the release whose questions and initial configs equal all of them is used;
otherwise (no score file, no failures, or neither release matches) the file name decides. ``ReplayItem.variant``
names the release.
"""
from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from mua.harness.interfaces import ReplayItem
from mua.harness.io.jsonl import BadLine, iter_raw_lines, loads_line
from mua.harness.types import Message, Task, ToolCall

from . import data
from .calls import CallSyntaxError, parse_call_list
from .episode import _owner, user_turns
from .scoring import INFERENCE_ERROR

_NAME = re.compile(r"BFCL_(v\d+)_(multi_turn_[a-z_]+?)_result\.json$")
_PROMPT_KEYS = ("question", "initial_config", "involved_classes")  # missed_function is rewritten in prompts
NOT_RECORDED = "(result not recorded in the official file)"

# The tasks of one subset in one data release, loaded the way the benchmark loads them (so their data dir is
# known to it): the only thing this reader needs from the benchmark.
LoadRelease = Callable[[str, data.DataVersion], list[Task]]


def _fc_step(step: Any, prefix: str) -> Optional[list[ToolCall]]:
    items = [step] if isinstance(step, dict) else step
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        return None
    calls: list[ToolCall] = []
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
    calls: list[ToolCall] = []
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


@dataclass
class ScoreFile:
    """What a ``..._score.json`` records: failing ids -> verdict, and failing ids -> the prompt record used."""

    failures: dict[str, dict] = field(default_factory=dict)
    prompts: dict[str, dict] = field(default_factory=dict)


def read_score_file(score_path: Path) -> Optional[ScoreFile]:
    """None when there is no score file."""
    if not score_path.is_file():
        return None
    out = ScoreFile()
    for _lineno, raw, _complete in iter_raw_lines(score_path):
        try:
            row = loads_line(raw)
        except BadLine:
            continue  # a line nobody can read states no verdict (the summary line is skipped the same way)
        if isinstance(row, dict) and isinstance(row.get("id"), (str, int)) and not isinstance(row.get("id"), bool):
            err: dict = row["error"] if isinstance(row.get("error"), dict) else {}
            msg = err.get("error_message")
            out.failures[row["id"]] = {"valid": False, "error_type": err.get("error_type"),
                                       "error_message": msg[0] if isinstance(msg, list) and msg else msg}
            if isinstance(row.get("prompt"), dict):
                out.prompts[row["id"]] = row["prompt"]
    return out


def read_verdicts(score_path: Path) -> Optional[dict[str, dict]]:
    """Failing ids -> {error_type, error_message} from a score file; None when there is no score file."""
    scores = read_score_file(score_path)
    return None if scores is None else scores.failures


def _matches(tasks: dict[str, Task], prompts: dict[str, dict]) -> bool:
    return all(pid in tasks and all(prompt.get(k) == (tasks[pid].raw or {}).get(k) for k in _PROMPT_KEYS)
               for pid, prompt in prompts.items())


def choose_release(load_release: LoadRelease, named: str, subset: str,
                   scores: Optional[ScoreFile]) -> tuple[data.DataVersion, dict[str, Task]]:
    """The release whose records the score file's prompts show (the named one first), else the named one."""
    first = data.VERSIONS.get(named, data.V4)  # a newer name than v4: the newest release we have
    prompts = scores.prompts if scores else {}
    first_tasks = {t.id: t for t in load_release(subset, first)}
    if not prompts or _matches(first_tasks, prompts):
        return first, first_tasks
    for other in data.VERSIONS.values():
        if other != first:
            tasks = {t.id: t for t in load_release(subset, other)}
            if _matches(tasks, prompts):
                return other, tasks
    return first, first_tasks


def read_result_file(load_release: LoadRelease, path: Path, data_dir: Path,
                     version: Optional[data.DataVersion] = None) -> Optional[Iterator[ReplayItem]]:
    """Items of one result file; ``version`` forces a data release instead of choosing it (see the top)."""
    match = _NAME.search(path.name)
    if not match or match.group(2) not in data.SUBSETS:
        return None
    subset = match.group(2)
    scores = read_score_file(path.with_name(path.name[: -len("_result.json")] + "_score.json"))
    if version is None:
        version, tasks = choose_release(load_release, match.group(1), subset, scores)
    else:
        tasks = {t.id: t for t in load_release(subset, version)}
    failures = None if scores is None else scores.failures
    variant = version.name

    def items() -> Iterator[ReplayItem]:
        for lineno, raw, _complete in iter_raw_lines(path):
            try:
                row = loads_line(raw)
            except BadLine as e:
                yield ReplayItem(None, [], subset, f"line {lineno}", variant=variant, error=str(e))
                continue
            if not isinstance(row, dict):
                yield ReplayItem(None, [], subset, f"line {lineno}", variant=variant,
                                 error="line is not a JSON object")
                continue
            task_id = str(row.get("id"))
            official = None if failures is None else failures.get(task_id, {"valid": True})
            task = tasks.get(task_id)
            result = row.get("result")
            if task is None:
                yield ReplayItem(None, [], subset, task_id, variant=variant, official=official,
                                 error="unknown task id")
            elif not isinstance(result, list):
                # Inference failed upstream (the result is an error text): the official checker marks the
                # entry invalid, so it is scored, as an empty trajectory, rather than reported unreadable.
                yield ReplayItem(task, [], subset, task_id, variant=variant, official=official,
                                 termination=INFERENCE_ERROR)
            else:
                yield ReplayItem(task, entry_messages(task, result, data_dir), subset, task_id,
                                 variant=variant, official=official)

    return items()
