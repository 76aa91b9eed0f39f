"""Results as a Python API: load one run, or every run below a folder, as typed records (docs/results-api.md).

Everything here reads through the readers `mua leaderboard`, `mua gate` and `mua view` use: the run's
config.json through ``results.read_config``, its episodes through the one streaming reader
(``episodes.episode_index``: the latest line of each episode, one record in memory at a time) and its numbers
through ``runs.read_run`` (recomputed from the episodes, never copied from summary.json). ``to_pandas()``
needs pandas, which mua does not depend on: it is imported only there, and its absence is one clear error.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any, Iterator, Optional

from ..errors import ConfigError, MuaError
from ..io.files import read_json
from .episodes import EpisodeRecord, Positions, episode_index
from .runs import Run, read_run, spec_label
from .stats import is_success

__all__ = ["RunResults", "RunSet", "find_runs", "load_run", "load_runs"]


def find_runs(folder: Path | str) -> list[Path]:
    """The run directories at or below ``folder`` (any depth), in path order. A run directory is a folder with
    a config.json naming its benchmark and tasks (what `mua eval` writes first); nothing below a run is
    searched (a run holds no runs)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder")
    found = []
    for here, dirs, _files in os.walk(folder):
        path = Path(here)
        if is_run_dir(path):
            found.append(path)
            dirs.clear()
        else:
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return sorted(found)


def is_run_dir(path: Path) -> bool:
    config = path / "config.json"
    if not config.is_file():
        return False
    try:
        value = read_json(config, what="run config")
    except MuaError:  # a damaged config.json still marks a run (reading it later says what is wrong)
        return (path / "episodes.jsonl").is_file()
    return isinstance(value, dict) and "benchmark" in value and "tasks" in value


@dataclass(frozen=True)
class RunResults:
    """One run directory: its config.json, summary.json (None while the run is in flight), the numbers
    recomputed from its episodes (``run``: a :class:`runs.Run`) and its episodes as :class:`EpisodeRecord`."""

    path: Path
    run: Run

    @property
    def config(self) -> dict:
        return self.run.config

    @property
    def benchmark(self) -> str:
        return self.run.benchmark

    @property
    def model(self) -> str:
        return self.run.model

    @property
    def split(self) -> Optional[str]:
        return self.run.split

    @property
    def subsets(self) -> list[str]:
        return list(self.run.subsets)

    @property
    def date(self) -> datetime:
        """When the run last wrote a result (its episodes file, else its config.json), in UTC: config.json
        records no clock time, so that runs stay byte-identical."""
        newest = max((p.stat().st_mtime for p in (self.path / "episodes.jsonl", self.path / "config.json")
                      if p.is_file()), default=0.0)
        return datetime.fromtimestamp(newest, timezone.utc)

    @cached_property
    def summary(self) -> Optional[dict]:
        path = self.path / "summary.json"
        return read_json(path, what="run summary", expect=dict) if path.is_file() else None

    @cached_property
    def cells(self) -> dict[str, Any]:
        """The leaderboard's headline cells of this run ({column: leaderboard.Cell}: value, interval, tasks,
        flags), as `mua leaderboard` prints them; a column with nothing scored is absent."""
        from .leaderboard import headline_cells

        return dict(headline_cells(self.run))

    @property
    def scores(self) -> dict[str, Optional[float]]:
        """The headline cells' values ({column: fraction})."""
        return {column: cell.value for column, cell in self.cells.items()}

    @property
    def problems(self) -> list[str]:
        """What makes the numbers partial (incomplete, errors, unknown rewards, damaged lines); empty if none."""
        return self.run.problems()

    @property
    def protocol_departures(self) -> list[str]:
        from ..protocol import differences

        return differences(self.config.get("protocol"))

    def episodes(self) -> Iterator[EpisodeRecord]:
        """The latest valid record of every episode, in config order (then any episode config.json does not
        list), read back one at a time."""
        trials = self.run.trials
        tasks = {s: list(r.tasks) for s, r in self.run.subsets.items()}
        positions = Positions(tasks, trials)
        index = episode_index(self.path / "episodes.jsonl", positions.position, positions.size)
        yield from chain(index.records(range(positions.size)), index.records())

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per episode (:func:`episode_row`)."""
        return _frame([episode_row(self, e) for e in self.episodes()])


def episode_row(run: RunResults, e: EpisodeRecord) -> dict[str, Any]:
    """An episode as a flat row: the run it belongs to, its key, reward, ``passed`` (None when the reward is
    unknown or the episode errored), termination, turns, error and one ``component.NAME`` column each."""
    return {"run": str(run.path), "benchmark": run.benchmark, "model": run.model, "subset": e.subset,
            "task_id": e.task_id, "trial": e.trial, "reward": e.reward,
            "passed": None if e.error or e.reward is None else is_success(e.reward),
            "termination": e.termination, "turns": e.turns, "error": e.error,
            **{f"component.{name}": value for name, value in e.components.items()}}


@dataclass(frozen=True)
class RunSet:
    """Runs found below a folder (:func:`load_runs`), in path order."""

    runs: list[RunResults]

    def __iter__(self) -> Iterator[RunResults]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per run: path, benchmark, split, subsets, models, date, episode counts,
        the headline scores (one column each) and the flags (problems, protocol departures)."""
        return _frame([run_row(r) for r in self.runs])

    def episodes_to_pandas(self) -> Any:
        """A pandas DataFrame, one row per episode of every run."""
        return _frame([episode_row(r, e) for r in self.runs for e in r.episodes()])


def run_row(r: RunResults) -> dict[str, Any]:
    return {"run": str(r.path), "benchmark": r.benchmark, "split": r.split, "subsets": ",".join(r.subsets),
            "model": r.model, "user": spec_label(r.config.get("user")), "date": r.date.isoformat(timespec="seconds"),
            "expected": r.run.expected_episodes, "finished": r.run.finished, "errors": r.run.errors,
            "unknown": r.run.unknown, **r.scores, "problems": "; ".join(r.problems),
            "protocol_departures": "; ".join(r.protocol_departures)}


def load_run(path: Path | str) -> RunResults:
    """The run directory ``path`` (written by `mua eval`); ConfigError in one line when it is not one."""
    path = Path(path)
    return RunResults(path, read_run(path))


def load_runs(folder: Path | str) -> RunSet:
    """Every run at or below ``folder``; ConfigError when there is none."""
    paths = find_runs(folder)
    if not paths:
        raise ConfigError(f"{folder} holds no run directory (a folder with the config.json `mua eval` writes)")
    return RunSet([load_run(p) for p in paths])


def _frame(rows: list[dict[str, Any]]) -> Any:
    try:
        import pandas
    except ImportError:
        raise ConfigError("to_pandas() needs pandas, which mua does not install: pip install pandas") from None
    return pandas.DataFrame(rows)
