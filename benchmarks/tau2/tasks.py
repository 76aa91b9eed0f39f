"""tau2 tasks as mua Tasks. Each carries a :class:`Tau2Context`: for tasks embedded in an official results
file, the policy recorded there (``None`` = the data dir's policy)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from mua.harness.errors import ConfigError, DataError
from mua.harness.io.datafiles import FIX_HINT, load_json
from mua.harness.types import Task


@dataclass(frozen=True)
class Tau2Context:
    policy: Optional[str] = None  # the agent policy an official results file recorded; None: the domain's


def make_task(record: dict, domain: str, split: Optional[str] = None, policy: Optional[str] = None) -> Task:
    if not isinstance(record, dict) or "id" not in record:
        raise DataError(f"tau2 {domain}: a task record without an id")
    return Task(id=str(record["id"]), benchmark="tau2", subset=domain, scenario=record.get("user_scenario"),
                initial_state=record.get("initial_state"), evaluation=record.get("evaluation_criteria"),
                split=split, raw=record, context=Tau2Context(policy))


_parsed: dict[tuple[Path, str], tuple[Optional[tuple], object]] = {}  # (folder, file) -> (its version, its data)


def _load(data_dir: Path, relpath: str) -> object:
    """A JSON data file parsed once per process and file version (telecom's tasks.json is 14 MB). The result
    is shared read-only: Tasks are rebuilt on every call and never modify their records."""
    data_dir = Path(data_dir).resolve()
    try:
        info = (data_dir / relpath).stat()
        stamp: Optional[tuple] = (info.st_mtime_ns, info.st_size)
    except OSError:
        stamp = None
    cached = _parsed.get((data_dir, relpath))
    if cached is None or cached[0] != stamp or stamp is None:
        cached = _parsed[data_dir, relpath] = (stamp, load_json(data_dir, relpath))
    return cached[1]


def load_tasks(data_dir: Path, domain: str, split: Optional[str]) -> list[Task]:
    folder = f"tau2/domains/{domain}"
    records = _load(data_dir, f"{folder}/tasks.json")
    if not isinstance(records, list):
        raise DataError(f"{folder}/tasks.json: expected a list of tasks. {FIX_HINT}")
    if split is None:
        return [make_task(r, domain) for r in records]
    splits = _load(data_dir, f"{folder}/split_tasks.json")
    if not isinstance(splits, dict) or not all(isinstance(ids, list) for ids in splits.values()):
        raise DataError(f"{folder}/split_tasks.json: expected an object of split name -> list of task ids. "
                        f"{FIX_HINT}")
    if split not in splits:
        raise ConfigError(f"tau2 {domain}: unknown split {split!r}; valid splits: {', '.join(splits)}")
    wanted = {str(i) for i in splits[split]}
    return [make_task(r, domain, split) for r in records if str(r.get("id")) in wanted]
