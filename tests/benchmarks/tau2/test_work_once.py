"""Work a tau2 episode does once: a task's gold scripts (its gold agent and gold user share them, and later
trials reuse them), and each tool call's arguments (decoded by the environment, read back by the scorer)."""
from __future__ import annotations

import asyncio

from mua.benchmarks.tau2 import Tau2Benchmark, environment, gold, scoring
from mua.harness.runner import run_episode


def test_gold_scripts_are_built_once_per_task(data_dir, monkeypatch):
    bench = Tau2Benchmark(data_dir)
    task = bench.load_tasks("retail", None)[0]
    built = []
    real = gold.gold_scripts
    monkeypatch.setattr(gold, "gold_scripts", lambda *args: built.append(args) or real(*args))
    for _ in range(2):  # two trials
        bench.gold_agent(task)
        bench.gold_user(task)
    assert len(built) == 1


def test_tool_arguments_are_parsed_once(data_dir, monkeypatch):
    bench = Tau2Benchmark(data_dir)
    task = bench.load_tasks("retail", None)[0]
    parsed = []
    real = environment.parse_arguments

    def counting(raw: str) -> dict:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(environment, "parse_arguments", counting)
    monkeypatch.setattr(scoring, "parse_arguments", counting)
    result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task)))
    calls = [c.arguments for m in result.messages for c in m.tool_calls or []]
    assert result.score is not None and result.score.reward == 1.0
    assert calls and parsed == calls  # the scorer decoded none again
