"""Verdict agreement with the official tau2 results recorded in ../shared/real/tau2 (retail and airline).

Every blakeelias (upstream tau2 of 2025-10, incl. the modified_policy runs) and activegraph simulation agrees.
The two ToolOrchestra leaderboard files cannot be compared: their simulations do not belong to the tasks
embedded in the same file (simulation "0" of retail is the Raj Santos keyboard conversation, which is task
89 of the current set, while embedded task "0" is Yusuf Rossi's exchange), so mua scores each conversation
against a different task than the one it was run on; see KNOWN_UNCOMPARABLE."""
from __future__ import annotations

from pathlib import Path

import pytest

from mua.benchmarks.tau2 import Tau2Benchmark

KNOWN_UNCOMPARABLE = {"toolorchestra__toolorchestra_airline_gpt-5_1trial.json",
                      "toolorchestra__toolorchestra_retail_gpt-5_1trial.json"}
BENCH = Tau2Benchmark()


def _files(real_dir: Path) -> list[Path]:
    return sorted((real_dir / "tau2").glob("*.json")) + sorted((real_dir / "tau2" / "modified_policy").glob("*.json"))


def test_official_verdicts_agree(real_dir, data_dir):
    checked = 0
    for path in _files(real_dir):
        if path.name in KNOWN_UNCOMPARABLE:
            continue
        for item in BENCH.read_official(path, data_dir):
            if item.error or item.subset not in ("retail", "airline"):
                continue
            score = BENCH.score(item.task, item.messages, termination=item.termination)
            assert score.reward == pytest.approx(item.official["reward"]), (path.name, item.task_id, score)
            checked += 1
    assert checked == 220


def test_read_official_shapes(real_dir, data_dir):
    path = real_dir / "tau2" / "blakeelias__2025-10-05T07-42-54.471516_airline_llm_agent_grok-3_user_simulator_grok-3.json"
    items = list(BENCH.read_official(path, data_dir))
    assert len(items) == 5 and all(i.task is not None and i.official for i in items)
    calls = [c for i in items for m in i.messages if m.tool_calls for c in m.tool_calls]
    assert calls and all(isinstance(c.arguments, str) for c in calls)
    assert BENCH.read_official(real_dir / "README.md", data_dir) is None
