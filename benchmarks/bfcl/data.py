"""Reading the BFCL v3 multi-turn data files (questions, ground truth, function docs, long-context filler)."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Optional

from mua.harness.datafiles import load_json, load_jsonl
from mua.harness.errors import DataError
from mua.harness.types import Task

from .apis import DOC_FILES, Extensions

ROOT = "bfcl_v3"
BENCHMARK = "bfcl_v3"
SUBSETS = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


def question_file(subset: str) -> str:
    return f"{ROOT}/BFCL_v3_{subset}.json"


def answer_file(subset: str) -> str:
    return f"{ROOT}/possible_answer/BFCL_v3_{subset}.json"


def load_tasks(data_dir: Path, subset: str) -> list[Task]:
    if subset not in SUBSETS:
        raise DataError(f"bfcl_v3 has no subset {subset!r}; choose one of {', '.join(SUBSETS)}")
    questions = load_jsonl(data_dir, question_file(subset))
    answers = {row["id"]: row["ground_truth"] for row in load_jsonl(data_dir, answer_file(subset))}
    tasks = []
    for q in questions:
        if q["id"] not in answers:
            raise DataError(f"{answer_file(subset)} has no ground truth for {q['id']}")
        tasks.append(Task(id=q["id"], benchmark=BENCHMARK, subset=subset, scenario=q["question"],
                          initial_state=q["initial_config"], evaluation=answers[q["id"]], raw=q))
    return tasks


@functools.lru_cache(maxsize=8)
def _func_docs(data_dir: str) -> dict[str, tuple[dict, ...]]:
    out = {}
    for cls, stem in DOC_FILES.items():
        out[cls] = tuple(load_jsonl(Path(data_dir), f"{ROOT}/multi_turn_func_doc/{stem}.json"))
    return out


def func_docs(data_dir: Path) -> dict[str, tuple[dict, ...]]:
    """Function docs per involved class, in file order (shared, read-only: copy before changing)."""
    return _func_docs(str(Path(data_dir).resolve()))


@functools.lru_cache(maxsize=8)
def _extensions(data_dir: str) -> Extensions:
    constants = dict(load_json(Path(data_dir), f"{ROOT}/long_context_constants.json"))
    watch = list(constants["WATCH_LIST_EXTENSION"])
    if watch and watch[-1] == "...":  # upstream's last item is Python's Ellipsis (printed "Ellipsis")
        watch[-1] = Ellipsis
    constants["WATCH_LIST_EXTENSION"] = watch
    return Extensions(constants)


def extensions(data_dir: Path) -> Extensions:
    return _extensions(str(Path(data_dir).resolve()))


@functools.lru_cache(maxsize=8)
def _protocol(data_dir: str) -> dict[str, Any]:
    raw = load_json(Path(data_dir), f"{ROOT}/protocol_constants.json")
    return {name: entry["value"] for name, entry in raw["constants"].items()}


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
