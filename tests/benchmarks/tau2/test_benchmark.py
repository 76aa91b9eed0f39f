"""Tau2Benchmark: tasks, prompts (vs the official ones), gold episodes through run_episode, scoring rules."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.benchmarks.tau2.findings import Tau2Findings
from mua.harness.errors import ConfigError
from mua.harness.runner import run_episode
from mua.harness.types import Message, ToolCall

FIXTURES = Path(__file__).parent / "fixtures"
BENCH = Tau2Benchmark(DATA_DIR)


def test_splits(data_dir):
    assert len(BENCH.load_tasks("retail", None)) == 114
    assert len(BENCH.load_tasks("retail", "test")) == 40
    assert len(BENCH.load_tasks("airline", "base")) == 50
    with pytest.raises(ConfigError, match="valid splits: train, test, base"):
        BENCH.load_tasks("airline", "nope")


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_prompts_equal_official(data_dir, domain):
    official = json.loads((FIXTURES / "official_prompts.json").read_text())
    tasks = {t.id: t for t in BENCH.load_tasks(domain, None)}
    some = next(iter(tasks.values()))
    assert BENCH.start(some).system_prompt == official[f"{domain}_agent"]
    for key, prompt in official.items():
        if key.startswith(f"{domain}_user_"):
            user = BENCH.simulated_user(tasks[key.rsplit("_", 1)[1]], model=None)
            assert user.system_prompt == prompt


def test_judge_prompt_equal_official():
    from mua.benchmarks.tau2.judge import judge_messages
    case = json.loads((FIXTURES / "official_prompts.json").read_text())["judge"]
    system, user = judge_messages([Message(**m) for m in case["trajectory"]], case["nl_assertions"])
    assert (system.content, user.content) == (case["system"], case["user"])


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_gold_passes_every_task(data_dir, domain):
    async def run_all():
        out = []
        for task in BENCH.load_tasks(domain, None):
            result = await run_episode(BENCH, task, BENCH.gold_agent(task), BENCH.gold_user(task))
            out.append((task, result))
        return out
    results = asyncio.run(run_all())
    unknown = 0
    for task, result in results:
        assert result.termination == "user_stop"
        score = result.score
        if score.reward is None:  # NL assertions without a judge: every computed check passed, verdict unknown
            unknown += 1
            assert score.partial_reward == 1.0 and score.info["skipped"] == ["nl_assertion"], (task.id, score)
        else:
            assert score.reward == 1.0, (task.id, score)
        # scoring the same trajectory by replay (no env) gives the same verdict
        again = asyncio.run(BENCH.score(task, result.messages))
        assert (again.reward, again.partial_reward) == (score.reward, score.partial_reward)
    # retail: 40 of 114 tasks have real NL assertions; airline has none in its reward basis
    assert unknown == {"retail": 40, "airline": 0}[domain]


def _gold_messages(task):
    async def go():
        return (await run_episode(BENCH, task, BENCH.gold_agent(task), BENCH.gold_user(task), score=False)).messages
    return asyncio.run(go())


def test_broken_trajectories_fail(data_dir):
    task = next(t for t in BENCH.load_tasks("airline", None) if t.evaluation["communicate_info"])
    messages = _gold_messages(task)
    # no stop marker at the end: premature termination
    assert asyncio.run(BENCH.score(task, messages[:-1])).reward == 0.0
    # the final text without the information to communicate
    cut = [m for m in messages if not (m.role == "assistant" and m.content and m.content.startswith("Done."))]
    score = asyncio.run(BENCH.score(task, cut))
    assert score.components["communicate"] == 0.0 and score.info["communicate_missing"]


def test_missing_write_fails_db(data_dir):
    task = next(t for t in BENCH.load_tasks("retail", None)
                if any(a["name"].startswith(("cancel", "modify", "return", "exchange"))
                       for a in t.evaluation["actions"]))
    messages = _gold_messages(task)
    without_calls = [m for m in messages if not m.tool_calls and m.role != "tool"]
    score = asyncio.run(BENCH.score(task, without_calls))
    assert score.components["db"] == 0.0 and score.info["db_match"] is False


def test_judge_scores_nl_assertions(data_dir):
    task = next(t for t in BENCH.load_tasks("retail", None) if t.evaluation.get("nl_assertions"))
    messages = _gold_messages(task)

    class Judge:
        async def chat(self, msgs, tools=None, seed=None):
            results = [{"expectedOutcome": a, "reasoning": "r", "metExpectation": False}
                       for a in task.evaluation["nl_assertions"]]
            return Message(role="assistant", content=json.dumps({"results": results})), None

    score = asyncio.run(BENCH.score(task, messages, judge=Judge()))
    assert score.components["nl_assertion"] == 0.0 and score.reward == 0.0 and "incomplete" not in score.info


def test_unparseable_and_unknown_calls_are_skipped_in_replay(data_dir):
    task = BENCH.load_tasks("retail", None)[0]
    messages = _gold_messages(task)
    junk = [Message(role="assistant", tool_calls=[ToolCall(id="x", name="cancel_pending_order", arguments="{bad"),
                                                  ToolCall(id="y", name="drop_tables", arguments="{}")]),
            Message(role="tool", content="Error", tool_call_id="x"),
            Message(role="tool", content="E", tool_call_id="y")]
    assert asyncio.run(BENCH.score(task, messages[:2] + junk + messages[2:])).reward == 1.0


def test_a_skipped_check_is_never_a_pass():
    """Without a judge, a task whose NL assertions are real gets reward None when everything else passes, and
    0 when a computed check fails (the product is 0 whatever the judge would say)."""
    combine = type(BENCH)._combine
    unknown = combine({"db": 1.0, "nl_assertion": None}, Tau2Findings())
    assert unknown.reward is None and unknown.partial_reward == 1.0 and unknown.info["incomplete"]
    failed = combine({"db": 0.0, "nl_assertion": None}, Tau2Findings())
    assert failed.reward == 0.0 and failed.info["skipped"] == ["nl_assertion"]
    assert combine({"db": 1.0, "nl_assertion": 1.0}, Tau2Findings()).reward == 1.0
