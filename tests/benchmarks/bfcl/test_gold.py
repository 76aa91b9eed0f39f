"""The gold agent (ground-truth calls) with the scripted user passes every task the official checker passes
on its own ground truth: all 800 but multi_turn_base_154 (5 question turns, 6 answer turns: force_terminated)."""
import asyncio

import pytest
from helpers.records import summary_fields

from mua.benchmarks.bfcl import BfclBenchmark
from mua.harness.runner import run_episode

OFFICIAL_GOLD_FAILURES = {"multi_turn_base_154": "multi_turn:force_terminated"}


@pytest.mark.parametrize("subset", BfclBenchmark.subsets)
def test_gold_passes_like_official(data_dir, subset):
    bench = BfclBenchmark(data_dir)
    tasks = bench.load_tasks(subset)
    assert len(tasks) == 200
    failures = {}
    for task in tasks:
        result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task)))
        if result.score.reward != 1.0:
            failures[task.id] = result.score.info["error_type"]
    expected = {k: v for k, v in OFFICIAL_GOLD_FAILURES.items() if k.startswith(subset + "_")}
    assert failures == expected


def test_declared_summary_reports_accuracy():
    decl = BfclBenchmark.declared_metrics()
    eps = [{"reward": 1.0, "error": None}, {"reward": 0.0, "error": None}, {"reward": None, "error": "boom"}]
    assert summary_fields(decl, eps)["accuracy"] == 0.5
    assert summary_fields(decl, eps[2:])["accuracy"] is None  # nothing scored: unknown, not 0
