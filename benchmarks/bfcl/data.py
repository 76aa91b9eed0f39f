"""Reading the BFCL multi-turn data files (questions, ground truth, function docs, long-context filler).

Two data releases: ``v3`` (``bfcl_v3/``, bfcl-eval 2025.8.6.2, the default) and ``v4`` (``bfcl_v4_multi_turn/``,
bfcl-eval 2026.3.23: the multi-turn questions, answers and function docs that official runs from bfcl-eval
2025.11.7 on use). A task records its release in ``Task.split`` (None for v3, "v4"), so one id can exist in both.
The long-context filler and the protocol constants are read from ``bfcl_v3/`` for both: upstream did not change
them. v4's ``excluded_function`` key stays in ``Task.raw`` only: no official version reads it (checked in
bfcl-eval 2025.11.3 to 2026.3.23), so the tools are not reduced by it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from mua.harness.errors import DataError
from mua.harness.io.datafiles import load_json, load_jsonl
from mua.harness.types import Task

from ..records import check_items, check_kind, check_object, fail, record_label
from .apis import DOC_FILES, Extensions

ROOT = "bfcl_v3"  # shared files (filler, protocol constants) of both releases
BENCHMARK = "bfcl_v3"
SUBSETS = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


@dataclass(frozen=True)
class DataVersion:
    """One data release: its folder under data_dir and the file-name prefix of its question files."""

    name: str
    root: str
    prefix: str
    split: Optional[str]  # what Task.split holds for its tasks


V3 = DataVersion("v3", "bfcl_v3", "BFCL_v3", None)
V4 = DataVersion("v4", "bfcl_v4_multi_turn", "BFCL_v4", "v4")
VERSIONS = {"v3": V3, "v4": V4}


def version_of(task: Task) -> DataVersion:
    return V4 if task.split == V4.split else V3


def question_file(subset: str, version: DataVersion = V3) -> str:
    return f"{version.root}/{version.prefix}_{subset}.json"


def answer_file(subset: str, version: DataVersion = V3) -> str:
    return f"{version.root}/possible_answer/{version.prefix}_{subset}.json"


QUESTION_KEYS: dict[str, Any] = {"id": str, "question": list, "initial_config": dict, "involved_classes": list}
QUESTION_OPTIONAL = {"missed_function": dict}
ANSWER_KEYS: dict[str, Any] = {"id": str, "ground_truth": list}


def _check_question(q: Any, where: str) -> dict:
    check_object(q, where, QUESTION_KEYS, QUESTION_OPTIONAL)
    for t, turn in enumerate(check_items(q["question"], list, where, "question")):
        check_items(turn, dict, where, f"question[{t}]")
    unknown = [c for c in check_items(q["involved_classes"], str, where, "involved_classes") if c not in DOC_FILES]
    if unknown:
        raise fail(where, f"unknown involved_classes {unknown} (known: {', '.join(DOC_FILES)})")
    for turn, names in (q.get("missed_function") or {}).items():  # {"turn index": [function names]}
        key = f"missed_function[{turn}]"
        if not turn.isdigit():
            raise fail(where, f"{key}: the key should be a turn index")
        check_items(check_kind(names, list, where, key), str, where, key)
    return q


def _check_answer(a: Any, where: str) -> dict:
    check_object(a, where, ANSWER_KEYS)
    for t, calls in enumerate(check_items(a["ground_truth"], list, where, "ground_truth")):
        check_items(calls, str, where, f"ground_truth[{t}]")
    return a


def load_tasks(data_dir: Path, subset: str, version: DataVersion = V3) -> list[Task]:
    if subset not in SUBSETS:
        raise DataError(f"bfcl_v3 has no subset {subset!r}; choose one of {', '.join(SUBSETS)}")
    qfile, afile = question_file(subset, version), answer_file(subset, version)
    questions = [_check_question(q, record_label(qfile, n, q)) for n, q in enumerate(load_jsonl(data_dir, qfile), 1)]
    answers = {a["id"]: a["ground_truth"] for a in (_check_answer(a, record_label(afile, n, a))
                                                    for n, a in enumerate(load_jsonl(data_dir, afile), 1))}
    tasks = []
    for q in questions:
        if q["id"] not in answers:
            raise DataError(f"{afile} has no ground truth for {q['id']}")
        tasks.append(Task(id=q["id"], benchmark=BENCHMARK, subset=subset, scenario=q["question"],
                          initial_state=q["initial_config"], evaluation=answers[q["id"]], split=version.split,
                          raw=q))
    # the files every episode reads, checked now: a damaged one fails before any episode starts
    protocol(data_dir), extensions(data_dir), func_docs(data_dir, version)
    return tasks


@functools.lru_cache(maxsize=8)
def _func_docs(data_dir: str, root: str) -> dict[str, tuple[dict, ...]]:
    out = {}
    for cls, stem in DOC_FILES.items():
        relpath = f"{root}/multi_turn_func_doc/{stem}.json"
        out[cls] = tuple(check_object(d, record_label(relpath, n, d), {"name": str}, {"parameters": dict})
                         for n, d in enumerate(load_jsonl(Path(data_dir), relpath), 1))
    return out


def func_docs(data_dir: Path, version: DataVersion = V3) -> dict[str, tuple[dict, ...]]:
    """Function docs per involved class, in file order (shared, read-only: copy before changing)."""
    return _func_docs(str(Path(data_dir).resolve()), version.root)


# The long-context filler constants the API suites read, with their kinds.
EXTENSION_KINDS: dict[str, Any] = {
    **dict.fromkeys(("WATCH_LIST_EXTENSION", "TRANSACTION_HISTORY_EXTENSION", "MA_5_EXTENSION", "MA_20_EXTENSION",
                     "TECHNOLOGY_EXTENSION", "AUTOMOBILE_EXTENSION", "POPULATE_FILE_EXTENSION",
                     "INTERMEDIARY_CITIES", "FILES_TAIL_USED"), list),
    **dict.fromkeys(("ORDER_DETAIL_EXTENSION", "LONG_WEATHER_EXTENSION", "CREDIT_CARD_EXTENSION",
                     "BOOKING_RECORD_EXTENSION"), dict),
    **dict.fromkeys(("FILE_CONTENT_EXTENSION", "CAR_STATUS_METADATA_EXTENSION", "PARKING_BRAKE_INSTRUCTION"), str),
}
# The protocol constants the adapter reads, with their kinds.
PROTOCOL_KINDS: dict[str, Any] = {"MAXIMUM_STEP_LIMIT": int, "PYTHON_FUNCTION_DOC_HINT": str,
                                  "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC": str}


@functools.lru_cache(maxsize=8)
def _extensions(data_dir: str) -> Extensions:
    relpath = f"{ROOT}/long_context_constants.json"
    constants = dict(check_object(load_json(Path(data_dir), relpath), relpath, EXTENSION_KINDS))
    watch = list(constants["WATCH_LIST_EXTENSION"])
    if watch and watch[-1] == "...":  # upstream's last item is Python's Ellipsis (printed "Ellipsis")
        watch[-1] = Ellipsis
    constants["WATCH_LIST_EXTENSION"] = watch
    return Extensions(constants)


def extensions(data_dir: Path) -> Extensions:
    return _extensions(str(Path(data_dir).resolve()))


@functools.lru_cache(maxsize=8)
def _protocol(data_dir: str) -> dict[str, Any]:
    relpath = f"{ROOT}/protocol_constants.json"
    constants = check_object(load_json(Path(data_dir), relpath), relpath, {"constants": dict})["constants"]
    values = {name: check_object(entry, f"{relpath}, constants/{name}", {"value": object})["value"]
              for name, entry in constants.items()}
    return check_object(values, f"{relpath}, constants/*/value", PROTOCOL_KINDS)


def protocol(data_dir: Path) -> dict[str, Any]:
    """protocol_constants.json values by name (step limit, miss_func prompt, doc hint...)."""
    return _protocol(str(Path(data_dir).resolve()))


def is_long_context(task_id: str) -> bool:
    category = task_id.rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def missed_functions(task: Task) -> dict[int, list[str]]:
    """miss_func: turn index -> names of the functions added at that turn."""
    raw: Optional[dict] = (task.raw or {}).get("missed_function")
    return {int(turn): list(names) for turn, names in (raw or {}).items()}
