"""The results API (harness/results/results_api.py): runs below a folder as typed records, read through the one
episode reader, with null rewards and errors kept apart, and to_pandas() with and without pandas."""
from __future__ import annotations

import sys

import pytest

from mua.harness.errors import ConfigError
from mua.harness.results.episodes import EpisodeRecord
from mua.harness.results.results_api import find_runs, load_run, load_runs
from mua.harness.results.store import dumps
from tests.helpers.view_runs import episode, write_run


def test_a_run_reads_as_typed_records_with_unknown_and_errored_kept_apart(tmp_path):
    run = load_run(write_run(tmp_path, "r", {"1": 1.0, "2": 0.0, "3": None, "4": "error"}))
    assert (run.benchmark, run.model, run.split, run.subsets) == ("tau2", "model-a", "base", ["airline"])
    episodes = list(run.episodes())
    assert all(isinstance(e, EpisodeRecord) for e in episodes)
    assert [(e.task_id, e.reward, e.error is not None) for e in episodes] == [
        ("1", 1.0, False), ("2", 0.0, False), ("3", None, False), ("4", None, True)]
    assert (run.run.errors, run.run.unknown) == (1, 1)
    assert any("unknown reward" in p for p in run.problems) and any("errors" in p for p in run.problems)
    assert run.scores == {"tau2/airline pass^1": 0.5}  # 1 of the 2 scored tasks; null and error not counted
    assert run.summary is None  # no summary.json written yet


def test_the_latest_line_of_an_episode_wins_as_everywhere_else(tmp_path):
    path = write_run(tmp_path, "r", {"1": 0.0})
    with open(path / "episodes.jsonl", "a", encoding="utf-8") as f:
        f.write(dumps(episode("1", 1.0)) + "\n")  # a resumed run re-ran the episode
    assert [e.reward for e in load_run(path).episodes()] == [1.0]


def test_runs_are_found_at_any_depth_and_framed(tmp_path):
    write_run(tmp_path / "a", "one", {"1": 1.0})
    write_run(tmp_path / "b" / "deeper", "two", {"1": 0.0, "2": "error"})
    (tmp_path / "notes").mkdir()
    assert [p.relative_to(tmp_path).as_posix() for p in find_runs(tmp_path)] == ["a/one", "b/deeper/two"]
    runs = load_runs(tmp_path)
    frame = runs.to_pandas()
    assert list(frame["finished"]) == [1, 2] and list(frame["errors"]) == [0, 1]
    assert list(frame["tau2/airline pass^1"]) == [1.0, 0.0]
    episodes = runs.episodes_to_pandas()
    assert len(episodes) == 3 and episodes["passed"].tolist() == [True, False, None]
    assert "component.db" in episodes.columns


def test_a_folder_without_runs_and_a_missing_pandas_are_one_clear_error(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="holds no run directory"):
        load_runs(tmp_path)
    with pytest.raises(ConfigError, match="not a folder"):
        load_runs(tmp_path / "nope")
    with pytest.raises(ConfigError, match="config.json not found"):
        load_run(tmp_path)
    run = load_run(write_run(tmp_path, "r", {"1": 1.0}))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails as if not installed
    with pytest.raises(ConfigError, match="pip install pandas"):
        run.to_pandas()
