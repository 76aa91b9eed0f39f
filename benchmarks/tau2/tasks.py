"""tau2 tasks as mua Tasks.

``Tau2Task`` is a Task that also remembers where it came from: the data directory (the Benchmark API gives
``start``/``simulated_user``/``score`` only the task, and they need the domain's database and prompts) and,
for tasks embedded in an official results file, the policy recorded there (``None`` = the data dir's policy).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from mua.harness.datafiles import load_json
from mua.harness.errors import ConfigError, DataError
from mua.harness.types import Task


@dataclass
class Tau2Task(Task):
    data_dir: Optional[Path] = None
    policy: Optional[str] = None


def make_task(record: dict, domain: str, data_dir: Optional[Path], split: Optional[str] = None,
              policy: Optional[str] = None) -> Tau2Task:
    if not isinstance(record, dict) or "id" not in record:
        raise DataError(f"tau2 {domain}: a task record without an id")
    return Tau2Task(id=str(record["id"]), benchmark="tau2", subset=domain, scenario=record.get("user_scenario"),
                    initial_state=record.get("initial_state"), evaluation=record.get("evaluation_criteria"),
                    split=split, raw=record, data_dir=Path(data_dir) if data_dir else None, policy=policy)


def load_tasks(data_dir: Path, domain: str, split: Optional[str]) -> list[Tau2Task]:
    folder = f"tau2/domains/{domain}"
    records = load_json(data_dir, f"{folder}/tasks.json")
    if not isinstance(records, list):
        raise DataError(f"{folder}/tasks.json: expected a list of tasks")
    if split is None:
        return [make_task(r, domain, data_dir) for r in records]
    splits = load_json(data_dir, f"{folder}/split_tasks.json")
    if split not in splits:
        raise ConfigError(f"tau2 {domain}: unknown split {split!r}; valid splits: {', '.join(splits)}")
    wanted = {str(i) for i in splits[split]}
    return [make_task(r, domain, data_dir, split) for r in records if str(r.get("id")) in wanted]
