"""End to end through a mock OpenAI-compatible server on 127.0.0.1 playing both agent and user, with and
without injected faults."""
import asyncio
import re
from pathlib import Path

import pytest
from helpers.counter_bench import CounterBenchmark
from mock_openai import Faults, MockOpenAI, by_model, text_reply, tool_call_reply

from mua.harness.registry import register_benchmark
from mua.harness.run.batch import RunPlan, run_eval
from mua.harness.run.build import ModelSpec

FAST_RETRY = {"max_attempts": 30, "initial_wait_s": 0.001, "max_wait_s": 0.01, "max_total_s": 60}


def agent(request):
    last = request["messages"][-1]
    if last["role"] == "user":
        n = int(re.search(r"(\d+)\s*$", last["content"]).group(1))
        return tool_call_reply([("add", {"n": n})])
    return text_reply("Done.")


def user(request):
    target = re.search(r"counter to (\d+)", request["messages"][0]["content"]).group(1)
    last = request["messages"][-1]["content"]
    return text_reply("###STOP###" if last == "Done." else f"please set the counter to {target}")


def run(out: Path, base_url: str, timeout_s: float = 5.0):
    spec = dict(base_url=base_url, params={"timeout_s": timeout_s, "retry": FAST_RETRY})
    plan = RunPlan(benchmark="counter", subsets=["easy", "hard"], agent=ModelSpec("agent", **spec),
                    user=ModelSpec("user", **spec), trials=2, seed=3)
    return asyncio.run(run_eval(plan, out, Path("."), concurrency=8, progress=False))


@pytest.fixture(autouse=True)
def counter():
    register_benchmark(CounterBenchmark, n_tasks=6)


def test_mock_agent_and_user_play_tool_calls_text_and_stop(tmp_path):
    with MockOpenAI(by_model({"agent": agent, "user": user})) as url:
        outcome = run(tmp_path / "clean", url)
    s = outcome.summary
    assert s["complete"] and s["errors"] == 0 and s["overall"]["pass^2"] == 1.0
    row = (tmp_path / "clean" / "episodes.jsonl").read_text().splitlines()[0]
    assert '"termination":"user_stop"' in row and '"name":"add"' in row and '"requests":2' in row


def test_faults_do_not_change_results(tmp_path):
    with MockOpenAI(by_model({"agent": agent, "user": user})) as url:
        run(tmp_path / "clean", url)
    mock = MockOpenAI(by_model({"agent": agent, "user": user}), faults=Faults(rate=0.35, seed=11, hang_s=5.0))
    with mock as url:
        outcome = run(tmp_path / "faulty", url, timeout_s=0.3)
    stats = mock.stats()
    assert sum(stats["faults"].values()) >= 0.3 * stats["requests"]
    assert set(stats["faults"]) >= {"429", "500", "hang", "malformed"}
    assert outcome.summary["errors"] == 0
    for name in ("episodes.jsonl", "summary.json"):
        assert (tmp_path / "clean" / name).read_bytes() == (tmp_path / "faulty" / name).read_bytes()


def test_endpoint_down_records_errors_not_zero_scores(tmp_path):
    with MockOpenAI(faults=Faults(sequence=("503",) * 1000)) as url:  # up for the preflight, then failing
        spec = dict(base_url=url, params={"timeout_s": 2, "retry": {**FAST_RETRY, "max_attempts": 2}})
        plan = RunPlan(benchmark="counter", subsets=["easy"], agent=ModelSpec("agent", **spec),
                        user=ModelSpec("user", **spec))
        outcome = asyncio.run(run_eval(plan, tmp_path / "down", Path("."), progress=False))
    assert outcome.summary["errors"] == 6 and outcome.summary["overall"]["pass^1"] is None
    assert all("model error" in e for e in outcome.errors)
