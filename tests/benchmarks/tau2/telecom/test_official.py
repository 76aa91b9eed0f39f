"""Real telecom runs with official verdicts (/work/shared/real/tau2: grok-3 telecom and telecom-workflow,
gpt-4.1-mini telecom): mua's verdicts, the tool results both sides saw, and the recorded policies."""
from __future__ import annotations

import asyncio
import json

import pytest
from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.benchmarks.tau2.registry import get_domain

BENCH = Tau2Benchmark(DATA_DIR)
# file name fragment -> (simulations, official passes)
FILES = {"activegraph__runs_20260601-041221-091109_telecom": (1, 1),
         "blakeelias__2025-10-05T07-52-52.930199_telecom_": (5, 4),
         "blakeelias__2025-10-05T22-26-20.526995_telecom-workflow": (20, 12)}


def _items(real_dir, data_dir, fragment):
    path = next(p for p in (real_dir / "tau2").glob("*.json") if p.name.startswith(fragment))
    return path, list(BENCH.read_official(path))


@pytest.mark.parametrize("fragment", FILES)
def test_verdicts_agree_with_official(real_dir, data_dir, fragment):
    _, items = _items(real_dir, data_dir, fragment)
    assert (len(items), sum(i.official["reward"] == 1.0 for i in items)) == FILES[fragment]
    for item in items:
        assert item.error is None, item.error
        score = asyncio.run(BENCH.score(item.task, item.messages, termination=item.termination))
        assert score.reward == item.official["reward"], (item.task_id, score.info)


@pytest.mark.parametrize("fragment", FILES)
def test_tool_results_reproduce_the_recorded_ones(real_dir, data_dir, fragment):
    """Re-executing every call of the run (agent and user side, in order) gives the recorded tool messages."""
    _, items = _items(real_dir, data_dir, fragment)
    compared = 0
    for item in items:
        env = BENCH.start(item.task).env
        outcomes = {}
        for m in item.messages:
            if m.role in ("assistant", "user") and m.tool_calls:
                outcomes.update({c.id: env.execute(c, requestor=m.role) for c in m.tool_calls})
            elif m.role == "tool" and m.tool_call_id in outcomes:
                assert outcomes.pop(m.tool_call_id).content == m.content, (item.task_id, m.content[:200])
                compared += 1
    assert compared > 0


def test_recorded_policies_are_ours(real_dir, data_dir):
    domain = get_domain("telecom", data_dir)
    for fragment in FILES:
        path, _ = _items(real_dir, data_dir, fragment)
        info = json.loads(path.read_text())["info"]["environment_info"]
        kind = "workflow" if info["domain_name"] == "telecom-workflow" else "manual"
        assert info["policy"] == domain.policies[kind]
