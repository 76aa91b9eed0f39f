"""Reading a run directory (``config.json`` + ``episodes.jsonl``) for the leaderboard and the gate.

What the benchmark reports (its metrics, default split and full split sizes) comes from the declaration
config.json records (see metrics.py), so reading results needs neither the adapters nor the data.

Numbers are recomputed from the episode rows, never taken from ``summary.json``, so a crashed or partial run
reads correctly: ``config.json`` says which (task, trial) pairs were expected, the rows say which finished.
Episodes with an error are counted, never scored. A torn last line (a crash mid-write) is skipped and counted.

:class:`Aggregate` (built by :func:`aggregate`) is the one accumulation of episode records into per-task
values: ``summary.json`` (summary.py), the leaderboard and the gate all read their numbers from it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from ..errors import ConfigError
from ..metrics import MetricsDeclaration, generic
from ..registry import installed_declaration
from .cost import RunCost
from .episodes import EpisodeKey, EpisodeRecord, Positions, episode_index
from .stats import is_success
from .store import read_config


@dataclass
class TaskResult:
    """All trials of one task in one run. ``rewards`` holds the scored trials only (errors excluded)."""

    task_id: str
    expected_trials: int
    rewards: list[float] = field(default_factory=list)  # in trial (arrival) order
    components: dict[str, list[float]] = field(default_factory=dict)  # non-null values per component, scored trials
    # non-null values per component of every trial not errored, its reward known or not, in arrival order
    # (what summary.json's component means cover, as they always have)
    episode_components: dict[str, list[float]] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)  # components left uncomputed (null), e.g. no judge model
    errors: int = 0
    unknown: int = 0  # trials with reward null (a check the verdict depends on was skipped)
    invalid: list[str] = field(default_factory=list)  # trials whose reward or a component is not a number
    finished_trials: int = 0

    @property
    def scored(self) -> bool:
        return bool(self.rewards)

    @property
    def successes(self) -> int:
        return sum(1 for r in self.rewards if is_success(r))

    def value(self, metric: str = "reward") -> Optional[float]:
        """Per-task score used for intervals and paired tests: the mean over scored trials of the reward, of
        success (reward == 1), or of a named component; None when nothing was scored."""
        if metric == "reward":
            vals = self.rewards
        elif metric == "success":
            vals = [1.0 if is_success(r) else 0.0 for r in self.rewards]
        else:
            vals = self.components.get(metric, [])
        return math.fsum(vals) / len(vals) if vals else None


@dataclass
class SubsetResult:
    name: str
    tasks: dict[str, TaskResult]  # in config order
    missing: list[tuple[str, int]] = field(default_factory=list)  # (task_id, trial) with no episode row

    @property
    def expected_episodes(self) -> int:
        return sum(t.expected_trials for t in self.tasks.values())

    @property
    def finished(self) -> int:
        return sum(t.finished_trials for t in self.tasks.values())

    @property
    def errors(self) -> int:
        return sum(t.errors for t in self.tasks.values())

    @property
    def unknown(self) -> int:
        return sum(t.unknown for t in self.tasks.values())

    @property
    def skipped(self) -> set[str]:
        return set().union(*(t.skipped for t in self.tasks.values()))

    def values(self, metric: str = "reward") -> list[float]:
        return [v for v in (t.value(metric) for t in self.tasks.values()) if v is not None]


@dataclass
class Run:
    path: Path
    benchmark: str
    model: str
    trials: int
    subsets: dict[str, SubsetResult]  # in config order
    config: dict
    metrics: MetricsDeclaration
    torn_lines: int = 0  # unreadable lines in episodes.jsonl
    unexpected_rows: int = 0  # rows for tasks or trials not in config.json
    label: Optional[str] = None  # how tables and messages name it beside other runs (label_runs)

    @property
    def name(self) -> str:
        return self.label or self.path.name

    @property
    def split(self) -> Optional[str]:
        """The split the tasks came from, the benchmark's default filled in."""
        recorded = self.config.get("split")
        return str(recorded) if recorded is not None else self.metrics.default_split

    @property
    def expected_episodes(self) -> int:
        return sum(s.expected_episodes for s in self.subsets.values())

    @property
    def finished(self) -> int:
        return sum(s.finished for s in self.subsets.values())

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.subsets.values())

    @property
    def complete(self) -> bool:
        return self.finished == self.expected_episodes

    @property
    def unknown(self) -> int:
        return sum(s.unknown for s in self.subsets.values())

    @property
    def invalid_values(self) -> list[str]:
        return [w for s in self.subsets.values() for t in s.tasks.values() for w in t.invalid]

    @property
    def error_rate(self) -> float:
        return self.errors / self.finished if self.finished else 0.0

    def problems(self) -> list[str]:
        """Short human-readable flags; empty when the run is complete and error-free."""
        out = []
        if not self.complete:
            out.append(f"incomplete: {self.finished}/{self.expected_episodes} episodes")
        if self.errors:
            out.append(f"{self.errors} episode errors (excluded from scores)")
        if self.unknown:
            out.append(f"{self.unknown} episodes with unknown reward (null: a check was skipped, e.g. no judge "
                       "model; excluded from scores)")
        if self.invalid_values:
            out.append(f"{len(self.invalid_values)} episodes whose reward or a score is not a number (damaged "
                       f"file, e.g. {self.invalid_values[0]}; excluded from scores)")
        if self.torn_lines:
            out.append(f"{self.torn_lines} unreadable lines in episodes.jsonl")
        return out


def declaration_of(config: dict) -> MetricsDeclaration:
    """The metrics declaration a run was made under: the one config.json records; for a run written before
    declarations were recorded, the installed adapter's (same benchmark name), else the generic mean-reward
    rule. Raises ValueError for a malformed one."""
    recorded = config.get("metrics")
    benchmark = str(config.get("benchmark"))
    if recorded is not None:
        if not isinstance(recorded, dict):
            raise ValueError("bad metrics declaration (not a JSON object)")
        return MetricsDeclaration.from_dict(recorded)
    return installed_declaration(benchmark) or generic(benchmark)


def model_label(config: dict) -> str:
    """The agent's name from the model spec `mua eval` records ({"name": NAME, ...}; "gold" for the gold agent)."""
    agent = config.get("agent") or {}
    return str(agent.get("name") or "unknown")


def spec_label(spec: Optional[dict]) -> str:
    """A recorded model spec (user simulator, judge) as text: name plus any sampling params; "none" if absent."""
    if not spec:
        return "none"
    params = spec.get("params") or {}
    extra = ", ".join(f"{k}={params[k]}" for k in sorted(params))
    return f"{spec.get('name')}" + (f" ({extra})" if extra else "")


class Aggregate:
    """Episode records accumulated into per-task results, one record at a time (records are not kept).
    ``tasks`` lists the expected task ids per subset (config order); a record of a key outside them, or of a
    trial past ``trials``, is counted in ``unexpected``. Add each episode once (the latest record of its key)."""

    def __init__(self, declaration: MetricsDeclaration, tasks: dict[str, list[str]], trials: int,
                 subsets: Optional[list[str]] = None, cost: Optional[RunCost] = None):
        self.declaration = declaration
        self.cost = cost  # summary.json's "cost", fed the same records (cost.py)
        self.trials = trials
        self.subsets = {s: SubsetResult(s, {str(t): TaskResult(str(t), trials) for t in tasks.get(s, [])})
                        for s in (subsets if subsets is not None else list(tasks))}
        self.unexpected = 0
        self.seen: set[EpisodeKey] = set()

    def _task(self, key: EpisodeKey) -> Optional[TaskResult]:
        subset = self.subsets.get(key[0])
        task = subset.tasks.get(key[1]) if subset is not None else None
        if task is None or not 0 <= key[2] < self.trials:
            self.unexpected += 1
            return None
        self.seen.add(key)
        return task

    def add(self, record: EpisodeRecord) -> None:
        task = self._task(record.key)
        if task is None:
            return
        if self.cost is not None:
            self.cost.add(record)
        task.finished_trials += 1
        if record.error is not None:
            task.errors += 1
            return
        for name, value in record.components.items():
            if value is None:
                task.skipped.add(name)
            else:
                task.episode_components.setdefault(name, []).append(value)
        if record.reward is None:  # unknown: a check the verdict depends on was skipped (e.g. no judge model)
            task.unknown += 1
            return
        task.rewards.append(record.reward)
        for name, value in sorted(record.components.items()):
            if value is not None:
                task.components.setdefault(name, []).append(value)

    def add_invalid(self, key: EpisodeKey, reason: str) -> None:
        """A finished episode whose line has a field of the wrong type or value: counted, never scored."""
        task = self._task(key)
        if task is not None:
            task.finished_trials += 1
            task.invalid.append(reason)

    def missing(self, subset: SubsetResult) -> list[tuple[str, int]]:
        return [(t, k) for t in subset.tasks for k in range(self.trials) if (subset.name, t, k) not in self.seen]


def aggregate(records: Iterable[EpisodeRecord], declaration: MetricsDeclaration, tasks: dict[str, list[str]],
              trials: int, *, invalid: Optional[dict[EpisodeKey, str]] = None,
              subsets: Optional[list[str]] = None) -> Aggregate:
    """The per-task results of ``records`` (the latest record of each episode) and of ``invalid`` episodes
    (key -> reason: finished, never scored), as summary.json, the leaderboard and the gate read them."""
    agg = Aggregate(declaration, tasks, trials, subsets)
    for key, reason in (invalid or {}).items():
        agg.add_invalid(key, reason)
    for record in records:
        agg.add(record)
    for s in agg.subsets.values():
        s.missing = agg.missing(s)
    return agg


def read_run(path: Path | str) -> Run:
    path = Path(path)
    config_path = path / "config.json"
    if not config_path.is_file():
        raise ConfigError(f"{config_path} not found: is {path} a run directory written by `mua eval`?")
    config = read_config(config_path, required=("benchmark", "trials", "tasks"))
    try:
        metrics = declaration_of(config)
    except ValueError as e:
        raise ConfigError(f"{config_path}: {e}") from None
    tasks = {str(s): [str(t) for t in ids] for s, ids in config["tasks"].items()}
    subsets = [str(s) for s in config.get("subsets") or tasks]
    positions = Positions(tasks, config["trials"])
    # A file in config order with each episode once (any finished run) is aggregated during its one read.
    # Otherwise the index keeps each episode's latest line (a resumed run may hold a trial twice; the later row
    # is the one the resume kept) and the records are read back one at a time.
    early = Aggregate(metrics, tasks, config["trials"], subsets)
    index = episode_index(path / "episodes.jsonl", positions.position, positions.size, in_order=early.add)
    if index.ordered:
        agg = early
        for s in agg.subsets.values():
            s.missing = agg.missing(s)
    else:
        agg = aggregate(chain(index.records(range(positions.size)), index.records()), metrics, tasks,
                        config["trials"], invalid=index.invalid, subsets=subsets)
    return Run(path, config["benchmark"], model_label(config), config["trials"], agg.subsets, config, metrics,
               len(index.bad), agg.unexpected)


def label_runs(runs: Sequence[Run], given: Optional[Mapping[Path, str]] = None) -> None:
    """Give each run a label no other of ``runs`` has: the one ``given`` for its folder (--label), else the
    shortest end of its path that no other run's path ends with, so results/baselines/x and results/x show
    as baselines/x and results/x (the folder name alone where that is unique)."""
    given = {Path(k).resolve(): v for k, v in (given or {}).items()}
    paths = [r.path.resolve() for r in runs]
    unknown = [str(k) for k in given if k not in paths]
    if unknown:
        raise ConfigError(f"--label names {unknown[0]}, which is not one of the runs shown")
    taken = list(given.values())
    if len(set(taken)) < len(taken):
        twice = sorted(t for t in taken if taken.count(t) > 1)[0]
        raise ConfigError(f"--label gives two runs the same label {twice!r}")
    for run, path in zip(runs, paths):
        if path in given:
            run.label = given[path]
            continue
        others = [q.parts for q in paths if q != path and q not in given]  # the labelled ones show theirs
        for k in range(1, len(path.parts) + 1):
            end = path.parts[-k:]
            text = str(Path(*end))
            if all(q[-k:] != end for q in others) and text not in taken:
                break
        run.label = text
