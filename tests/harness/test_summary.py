import pytest
from helpers.records import summarize

from mua.harness.metrics import generic
from mua.harness.results.episodes import EpisodeRecord

_trials: dict = {}


def rec(task, reward, error=None, components=None):
    trial = _trials[task] = _trials.get(task, -1) + 1
    return EpisodeRecord.from_json({"subset": "s", "task_id": task, "trial": trial % 2, "reward": reward,
                                    "error": error, "components": components or {}}, "test")


def summarize_episodes(rows, trials):
    return summarize(rows, generic("b"), trials)


def test_summary_pools_tasks_and_counts_errors_apart():
    _trials.clear()
    rows = [rec("a", 1.0), rec("a", 1.0), rec("b", 1.0), rec("b", 0.0), rec("c", None, error="model error: x"),
            rec("c", 0.0, components={"db": 0.0, "nl_assertion": None})]
    s = summarize_episodes(rows, trials=2)
    assert s["errors"] == 1 and s["episodes"] == 6 and s["tasks"] == 3
    assert s["pass^1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["pass^2"] is None  # as tau2: k is capped by the task with the fewest scored trials (c has one)
    assert s["incomplete_components"] == ["nl_assertion"] and s["components"] == {"db": 0.0}
    full = summarize_episodes(rows[:4], trials=2)
    assert full["pass^2"] == pytest.approx((1 + 0) / 2) and full["pass^1"] == pytest.approx(0.75)


def test_success_is_reward_within_tolerance_of_one():
    _trials.clear()
    rows = [rec("a", 1.0 - 1e-7), rec("b", 0.999), rec("c", 1.0 + 1e-7)]
    assert summarize_episodes(rows, trials=1)["pass^1"] == pytest.approx(2 / 3)
