"""Reading a pack folder, with errors that name the file, the record and the field.

    PACK/
      pack.json     {"name": "bookings", "user": "scripted"}   user: "llm" (default), "scripted" or "static";
                    optional max_messages, max_errors, tool_timeout_s (seconds one tool call may take, 10);
                    with "user": "llm", optional user_model: the LLM user's model (see ``_user_model``);
                    optional user_prompt: "scenario" (default: tau2's scenario text) or "replies" (the
                    opening and each reply's words, one a line under its kind: ``users.py: replies_text``)
      policy.md     the agent's policy (goes into tau2's agent system prompt)
      db.json       {table: {key: record}}: the database the tools read and write
      tools.py      one plain Python function per tool: fn(db, arg: type, ...) with a docstring
      tasks.json    a list of tau2-shaped tasks (id, user_scenario, evaluation_criteria)
      splits.json   {split: [task ids]} e.g. {"train": [...], "test": [...]} (optional: then --all-tasks)
      user_guidelines.md   optional: the LLM user simulator's guidelines (default: the adapter's own)

A task's ``user_scenario.replies`` ([{"when": [keywords], "say": text, "ask": question, "after": action_id,
"asks": [questions]}]) drives the offline scripted user (``users.py``); a pack whose pack.json says
``"user": "scripted"`` is played with it everywhere; ``"user": "static"`` replays the reference
conversation's user turns in order whatever the agent says (an ablation: what the responsive user adds).
``asks`` (optional) are other phrasings of a question about the reply, each asking for it alone: the
conversations a user model is trained on draw from them (``user_lessons.py``), so that it learns the question
rather than a keyword.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from mua.harness.errors import DataError
from mua.harness.io.datafiles import load_json
from mua.harness.io.files import read_text, type_name
from mua.harness.run.build import looks_like_path

from ..tau2.domain import Tau2Domain
from ..tau2.overlay import Overlay
from .isolation import DEFAULT_TIMEOUT_S, load_tools

USER_KINDS = ("llm", "scripted", "static")  # static: the scripted replies replayed in order (an ablation)
USER_PROMPTS = ("scenario", "replies")  # what the LLM user's system prompt shows of a task (pack.json user_prompt)
MAX_TOOL_TIMEOUT_S = 3600.0
MAX_COUNT = 1_000_000  # max_messages, max_errors: beyond this a number is a mistake, not a budget
BASIS = ("DB", "COMMUNICATE", "ACTION", "NL_ASSERTION")
DEFAULT_GUIDELINES = Path(__file__).with_name("user_guidelines.md")


class PackDomain(Tau2Domain):
    """A pack's database and tools behind tau2's domain contract (so tau2's environment and scorer run it)."""

    name = "pack"

    def __init__(self, policy: str, agent_tools: dict, base: dict):
        super().__init__(policy=policy, agent_tools=agent_tools)
        self.base = base

    @classmethod
    def load(cls, data_dir: Path) -> "PackDomain":
        return load_pack(data_dir).domain

    def new_state(self) -> Overlay:
        return Overlay(self.base)

    def fingerprint(self, state: Overlay) -> tuple:
        return state.fingerprint()


@dataclass
class Pack:
    name: str
    user: str
    domain: PackDomain
    tasks: list[dict]
    splits: Optional[dict[str, list[str]]]
    guidelines: str
    max_messages: int
    max_errors: int
    user_model: Optional[str] = None  # the LLM user's model when pack.json names one: a checkpoint path or a name
    user_prompt: str = "scenario"  # one of USER_PROMPTS


def _fail(where: str, what: str) -> DataError:
    return DataError(f"pack: {where}: {what}")


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(where, f"expected a JSON object, got {type(value).__name__}")
    return value


def _string(record: dict, key: str, where: str, required: bool = True) -> Optional[str]:
    value = record.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"field {key!r} must be a non-empty string")
    return value


def _meta(folder: Path) -> dict:
    meta = _object(load_json(folder, "pack.json"), "pack.json")
    _string(meta, "name", "pack.json")
    user = meta.setdefault("user", "llm")
    if user not in USER_KINDS:
        raise _fail("pack.json", f"field 'user' must be one of {', '.join(USER_KINDS)}, got {user!r}")
    for key in ("max_messages", "max_errors"):
        if key in meta and (not isinstance(meta[key], int) or isinstance(meta[key], bool)
                            or not 1 <= meta[key] <= MAX_COUNT):
            raise _fail("pack.json", f"field {key!r} must be a whole number from 1 to {MAX_COUNT:,}")
    limit = meta.setdefault("tool_timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= MAX_TOOL_TIMEOUT_S:
        raise _fail("pack.json", f"field 'tool_timeout_s' must be a number of seconds in (0, {MAX_TOOL_TIMEOUT_S:g}]"
                                 f", got {limit!r}")
    meta["user_model"] = _user_model(meta, folder)
    if meta.setdefault("user_prompt", "scenario") not in USER_PROMPTS:
        raise _fail("pack.json", f"field 'user_prompt' must be one of {', '.join(USER_PROMPTS)}, got "
                                 f"{meta['user_prompt']!r}")
    return meta


def _user_model(meta: dict, folder: Path) -> Optional[str]:
    """pack.json's ``user_model``: the model that plays the LLM user when a run names none (``--user-model``
    overrides it). A path when it starts with "/", "./", "../" or "~" (as for ``--user-model``) or names an
    entry of the pack folder, and then a checkpoint folder, resolved against the pack folder (so the pack can be
    moved) into an absolute path; anything else ("Qwen/Qwen3-8B", "openai/gpt-4.1") is a model name, passed on
    as it is."""
    value = meta.get("user_model")
    if value is None:
        return None
    if meta["user"] != "llm":
        raise _fail("pack.json", f"field 'user_model' names the LLM user's model, but 'user' is {meta['user']!r} "
                                 "(use \"user\": \"llm\", or drop user_model)")
    if not isinstance(value, str) or not value.strip():
        raise _fail("pack.json", "field 'user_model' must be a non-empty string: a checkpoint folder (relative to "
                                 f"the pack) or a model name, got {value!r}")
    path = folder / Path(value).expanduser()  # an absolute path stays as it is
    if not looks_like_path(value) and not os.path.lexists(path):
        return value
    if not path.is_dir():
        raise _fail("pack.json", f"field 'user_model': {value}: no such checkpoint folder ({path} does not exist "
                                 "or is not a folder; a relative path is read from the pack folder)")
    if not (path / "config.json").is_file():
        raise _fail("pack.json", f"field 'user_model': {value} is not a model checkpoint (no config.json in {path})")
    return os.path.normpath(path)  # symlinks kept: the path as the pack names it


def _database(folder: Path) -> dict:
    db = _object(load_json(folder, "db.json"), "db.json")
    for table, records in db.items():
        if not isinstance(records, dict):
            raise _fail(f"db.json, table {table!r}", "expected an object of key -> record")
    return db


def _check_replies(scenario: dict, where: str, needed: bool) -> None:
    replies = scenario.get("replies")
    if replies is None:
        if needed:
            raise _fail(where, "field 'user_scenario.replies' is required: pack.json says the user is scripted")
        return
    if not isinstance(replies, list):
        raise _fail(where, "field 'user_scenario.replies' must be a list")
    for i, reply in enumerate(replies):
        at = f"{where}, user_scenario.replies[{i}]"
        _object(reply, at)
        _string(reply, "say", at)
        _string(reply, "ask", at, required=False)
        asks = reply.get("asks", [])
        if not isinstance(asks, list) or not all(isinstance(a, str) and a.strip() for a in asks):
            raise _fail(at, "field 'asks' must be a list of questions (non-empty strings), each asking for this "
                            "reply only")
        when = reply.get("when")
        if not isinstance(when, list) or not when or not all(isinstance(w, str) and w.strip() for w in when):
            raise _fail(at, "field 'when' must be a non-empty list of keywords")


def _check_evaluation(evaluation: Any, where: str, tools: dict) -> None:
    if evaluation is None:
        return
    at = f"{where}, evaluation_criteria"
    _object(evaluation, at)
    basis = evaluation.get("reward_basis")
    if not isinstance(basis, list) or not basis or any(b not in BASIS for b in basis):
        raise _fail(at, f"field 'reward_basis' must be a non-empty list of {', '.join(BASIS)}")
    actions = evaluation.get("actions") or []
    if not isinstance(actions, list):
        raise _fail(at, "field 'actions' must be a list")
    for i, action in enumerate(actions):
        a = f"{at}.actions[{i}]"
        _object(action, a)
        if action.get("name") not in tools:
            raise _fail(a, f"field 'name': {action.get('name')!r} is not a tool of tools.py "
                           f"({', '.join(tools)})")
        if not isinstance(action.get("arguments", {}), dict):
            raise _fail(a, "field 'arguments' must be an object")
        if action.get("requestor", "assistant") != "assistant":
            raise _fail(a, "field 'requestor': packs have agent tools only ('assistant')")
    for key in ("communicate_info", "nl_assertions"):
        items = evaluation.get(key) or []
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise _fail(at, f"field {key!r} must be a list of strings")


def _tasks(folder: Path, tools: dict, scripted: bool) -> list[dict]:
    records = load_json(folder, "tasks.json")
    if not isinstance(records, list):
        raise _fail("tasks.json", "expected a list of tasks")
    seen: set[str] = set()
    for i, record in enumerate(records):
        where = f"tasks.json, record {i}"
        _object(record, where)
        if not isinstance(record.get("id"), (str, int)) or isinstance(record.get("id"), bool):
            raise _fail(where, "field 'id' must be a string or an integer")
        task_id = str(record["id"])
        where = f"tasks.json, task {task_id!r}"
        if task_id in seen:
            raise _fail(where, "duplicate id")
        seen.add(task_id)
        scenario = _object(record.get("user_scenario"), f"{where}, field 'user_scenario'")
        instructions = scenario.get("instructions")
        if isinstance(instructions, dict):
            for key in ("domain", "reason_for_call", "task_instructions"):
                _string(instructions, key, f"{where}, user_scenario.instructions")
        elif not isinstance(instructions, str) or not instructions.strip():
            raise _fail(where, "field 'user_scenario.instructions' must be an object (domain, reason_for_call, "
                               "task_instructions, known_info) or a string")
        _check_initial_state(record.get("initial_state"), where)
        _check_replies(scenario, where, scripted)
        _check_evaluation(record.get("evaluation_criteria"), where, tools)
        _check_after(scenario, record.get("evaluation_criteria"), where)
    return records


def _check_initial_state(value: Any, where: str) -> None:
    """A pack's database starts as db.json for every task: ``initial_state`` may only be absent, null or an
    object without ``initialization_data`` / ``initialization_actions`` (tau2's ways of changing it)."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise _fail(where, f"field 'initial_state' must be an object or null, found {type_name(value)}")
    for key in ("initialization_data", "initialization_actions"):
        if value.get(key):
            raise _fail(where, f"field 'initial_state.{key}' is not supported by packs (every task starts from "
                               "db.json; give the task its own records there)")


def _check_after(scenario: dict, evaluation: Any, where: str) -> None:
    """A reply's optional ``after`` names the expected action after which the gold agent asks its question."""
    ids = {a.get("action_id") for a in (evaluation or {}).get("actions") or [] if a.get("action_id")}
    for i, reply in enumerate(scenario.get("replies") or []):
        after = reply.get("after")
        if after is not None and (not isinstance(after, str) or after not in ids or not reply.get("ask")):
            raise _fail(f"{where}, user_scenario.replies[{i}]", "field 'after' must name the action_id of an "
                        "expected action, and the reply needs an 'ask'")


def _splits(folder: Path, ids: set[str]) -> Optional[dict[str, list[str]]]:
    if not (folder / "splits.json").is_file():
        return None
    raw = _object(load_json(folder, "splits.json"), "splits.json")
    splits = {}
    for split, members in raw.items():
        if not isinstance(members, list):
            raise _fail(f"splits.json, split {split!r}", "expected a list of task ids")
        unknown = [str(m) for m in members if str(m) not in ids]
        if unknown:
            raise _fail(f"splits.json, split {split!r}", f"unknown task id {unknown[0]!r}")
        splits[split] = [str(m) for m in members]
    return splits


FILES = ("pack.json", "policy.md", "db.json", "tools.py", "tasks.json", "splits.json", "user_guidelines.md")


def load_pack(data_dir: Path) -> Pack:
    """The pack in ``data_dir``, parsed once per process and version of its files."""
    folder = Path(data_dir).resolve()
    stamps: list[Optional[tuple]] = []
    for name in FILES:
        try:
            info = (folder / name).stat()
            stamps.append((info.st_mtime_ns, info.st_size))
        except OSError:
            stamps.append(None)
    return _load(str(folder), tuple(stamps))


@lru_cache(maxsize=None)
def _load(folder_name: str, stamps: tuple) -> Pack:
    folder = Path(folder_name)
    if not folder.is_dir():
        raise DataError(f"pack: {folder} is not a folder (name the pack folder with --data-dir)")
    meta = _meta(folder)
    policy_path = folder / "policy.md"
    if not policy_path.is_file():
        raise _fail("policy.md", "missing (the agent's policy text)")
    policy = read_text(policy_path, what="pack: policy.md")
    base = _database(folder)
    tools = load_tools(folder / "tools.py", "tools.py", base, float(meta["tool_timeout_s"]))
    domain = PackDomain(policy, tools, base)
    tasks = _tasks(folder, tools, meta["user"] in ("scripted", "static"))
    guidelines_path = folder / "user_guidelines.md"
    guidelines = read_text(guidelines_path if guidelines_path.is_file() else DEFAULT_GUIDELINES,
                           what="pack: user guidelines")
    return Pack(name=meta["name"], user=meta["user"], domain=domain, tasks=tasks,
                splits=_splits(folder, {str(t["id"]) for t in tasks}), guidelines=guidelines,
                max_messages=meta.get("max_messages", 201), max_errors=meta.get("max_errors", 10),
                user_model=meta["user_model"], user_prompt=meta["user_prompt"])
