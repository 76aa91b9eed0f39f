"""Reading a run directory (``config.json`` + ``episodes.jsonl``) for the leaderboard and the gate.

What the benchmark reports (its metrics, default split and full split sizes) comes from the declaration
config.json records (see metrics.py), so reading results needs neither the adapters nor the data.

Numbers are recomputed from the episode rows, never taken from ``summary.json``, so a crashed or partial run
reads correctly: ``config.json`` says which (task, trial) pairs were expected, the rows say which finished.
Episodes with an error are counted, never scored. A torn last line (a crash mid-write) is skipped and counted.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .errors import ConfigError
from .jsonl import BadLine, iter_raw_lines, loads_line
from .metrics import MetricsDeclaration, generic
from .registry import installed_declaration
from .stats import is_success


@dataclass
class TaskResult:
    """All trials of one task in one run. ``rewards`` holds the scored trials only (errors excluded)."""

    task_id: str
    expected_trials: int
    rewards: list[float] = field(default_factory=list)
    components: dict[str, list[float]] = field(default_factory=dict)  # non-null values per component
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

    @property
    def name(self) -> str:
        return self.path.name

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


def _read_json(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: is {path.parent} a run directory written by `mua eval`?") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise ConfigError(f"{path} is not valid JSON ({type(e).__name__}: {e})") from None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


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


def read_run(path: Path | str) -> Run:
    path = Path(path)
    config = _read_json(path / "config.json")
    try:
        benchmark = str(config["benchmark"])
        trials = int(config["trials"])
        task_lists = config["tasks"]
        subset_names = list(config.get("subsets") or task_lists)
        metrics = declaration_of(config)
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{path / 'config.json'}: missing or bad field ({e})") from None
    subsets = {s: SubsetResult(s, {str(t): TaskResult(str(t), trials) for t in task_lists.get(s, [])})
               for s in subset_names}
    # A resumed run may hold a trial twice; the later row wins (it is the one the resume kept).
    rows: dict[tuple[str, str, int], dict] = {}
    torn = unexpected = 0
    episodes = path / "episodes.jsonl"
    if episodes.is_file():
        for _lineno, raw, complete in iter_raw_lines(episodes):
            try:
                row: Any = loads_line(raw, strict=False) if complete else None
                key = (str(row["subset"]), str(row["task_id"]), int(row["trial"]))
            except (BadLine, KeyError, TypeError, ValueError):
                torn += 1  # a torn, garbled or non-UTF-8 line: counted and flagged, never fatal
                continue
            if key[0] in subsets and key[1] in subsets[key[0]].tasks and 0 <= key[2] < trials:
                rows[key] = row
            else:
                unexpected += 1
    for (subset, task_id, _trial), row in sorted(rows.items()):
        _add_row(subsets[subset].tasks[task_id], row, f"{subset}/{task_id}#{_trial}")
    for s in subsets.values():
        s.missing = [(t, k) for t in s.tasks for k in range(trials) if (s.name, t, k) not in rows]
    return Run(path, benchmark, model_label(config), trials, subsets, config, metrics, torn, unexpected)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _add_row(task: TaskResult, row: dict, where: str) -> None:
    task.finished_trials += 1
    reward = row.get("reward")
    if row.get("error") is not None:
        task.errors += 1
        return
    if reward is None:  # unknown: a check the verdict depends on was skipped (e.g. no judge model)
        task.unknown += 1
        task.skipped.update(k for k, v in (row.get("components") or {}).items() if v is None)
        return
    values = [reward] + [v for v in (row.get("components") or {}).values() if v is not None]
    if not all(_is_number(v) for v in values) or not isinstance(row.get("components") or {}, dict):
        task.invalid.append(where)
        return
    task.rewards.append(float(reward))
    for name, value in sorted((row.get("components") or {}).items()):
        if value is None:
            task.skipped.add(name)
        else:
            task.components.setdefault(name, []).append(float(value))
