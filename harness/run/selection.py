"""Which tasks a run plays: the one selection step of `mua eval` and `mua train` (subsets, split, task ids,
a per-subset limit), and the split files that name train and held-out task ids for benchmarks without an
official train split."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..errors import ConfigError
from ..interfaces import Benchmark
from ..io.files import read_text
from ..types import Task


def select_tasks(bench: Benchmark, subsets: Sequence[str] = (), split: Optional[str] = None,
                 task_ids: Optional[Sequence[str]] = None, limit: Optional[int] = None) -> dict[str, list[Task]]:
    """The chosen tasks by subset, in data order: ``subsets`` (none: every subset of the benchmark), the tasks of
    ``split`` (None: all), only ``task_ids`` when given, at most ``limit`` per subset. Unknown subsets and task
    ids are refused (ConfigError), as is a selection that matches nothing."""
    subsets = list(subsets) or list(bench.subsets)
    task_ids = list(task_ids or ())
    wanted = set(task_ids)
    tasks: dict[str, list[Task]] = {}
    found: set[str] = set()
    for subset in subsets:
        if subset not in bench.subsets:
            raise ConfigError(f"{bench.name} has no subset {subset!r}; choose from {', '.join(bench.subsets)}")
        chosen = bench.load_tasks(subset, split)
        if wanted:
            chosen = [t for t in chosen if t.id in wanted]
        found.update(t.id for t in chosen)
        tasks[subset] = chosen[:limit] if limit is not None else chosen
    unknown = [t for t in task_ids if t not in found]
    if unknown:
        raise ConfigError(f"task ids not found in {bench.name} {'/'.join(subsets)} "
                          f"(split {split or 'all'}): {', '.join(unknown[:10])}")
    if not any(tasks.values()):
        raise ConfigError(f"no {bench.name} tasks selected: check the subsets, split and task ids")
    return tasks


@dataclass(frozen=True)
class SplitFile:
    """A user's own train/held-out division of a benchmark that has no official train split: a JSON or YAML
    mapping ``{"train": [task ids], "held_out": [task ids]}``. Training plays only ``train``; the held-out
    ids are the ones to report (``mua eval --task-ids``)."""

    path: str
    train: tuple[str, ...]
    held_out: tuple[str, ...]


def read_split_file(path: str) -> SplitFile:
    text = read_text(path, what="split file")
    import yaml  # JSON is YAML too

    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:  # also 5,000-digit integers, deep nesting
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
        raise ConfigError(f"split file {path}: not valid JSON or YAML: {reason}") from None
    if not isinstance(data, dict) or set(data) != {"train", "held_out"}:
        raise ConfigError(f"split file {path}: expected a mapping with exactly the keys 'train' and 'held_out' "
                          "(lists of task ids)")
    lists = {}
    for key in ("train", "held_out"):
        ids = data[key]
        if not isinstance(ids, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
            raise ConfigError(f"split file {path}: {key!r} must be a list of task ids")
        lists[key] = tuple(str(i) for i in ids)
    if not lists["train"]:
        raise ConfigError(f"split file {path}: 'train' names no task")
    both = sorted(set(lists["train"]) & set(lists["held_out"]))
    if both:
        raise ConfigError(f"split file {path}: task ids both in train and held_out: {', '.join(both[:10])}")
    return SplitFile(path, lists["train"], lists["held_out"])
