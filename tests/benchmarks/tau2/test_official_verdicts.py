"""mua's tau2 verdicts on retail/airline trajectories equal the official evaluator's (fixture: gold and broken
trajectories scored by official tau2 a2c0247, see the fixture's ``about``): reward and every component of the
task's reward_basis, including the termination gating (max_steps gives 0 with no components)."""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.harness.types import Message

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "official_verdicts.json").read_text(encoding="utf-8"))
CASES = FIXTURE["cases"]
BENCH = Tau2Benchmark(DATA_DIR)


@pytest.fixture(scope="module")
def tasks(data_dir):
    return {(subset, t.id): t for subset in ("retail", "airline") for t in BENCH.load_tasks(subset, None)}


def test_fixture_covers_both_domains_and_outcomes():
    assert len(CASES) >= 40
    assert Counter(c["domain"] for c in CASES).keys() == {"retail", "airline"}
    assert {c["reward"] for c in CASES} == {0.0, 1.0}
    assert {c["termination"] for c in CASES} >= {"user_stop", "agent_stop", "max_steps"}
    assert {k for c in CASES for k in c["components"]} == {"DB", "NL_ASSERTION", "COMMUNICATE"}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['domain']}{c['task_id']}-{c['variant']}" for c in CASES])
def test_verdict_matches_official(tasks, case):
    task = tasks[(case["domain"], case["task_id"])]
    messages = [Message.from_dict(m) for m in case["messages"]]
    score = asyncio.run(BENCH.score(task, messages, termination=case["termination"]))
    assert score.reward == case["reward"], score.info
    assert score.components == {k.lower(): v for k, v in case["components"].items()}, score.info
    assert not score.info.get("incomplete"), score.info
    if case["db_match"] is not None:
        assert score.info["db_match"] is case["db_match"]
    assert len(score.info.get("communicate_missing", [])) == case["communicate"].count(False)
