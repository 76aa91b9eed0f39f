"""Shared helpers for the ACEBench adapter tests."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mua.benchmarks.acebench import AceBenchmark

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def bench(data_dir) -> AceBenchmark:
    return AceBenchmark(data_dir)


@pytest.fixture(scope="session")
def official() -> dict:
    return json.loads((FIXTURES / "official_verdicts.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def as_messages():
    return openai_messages


def openai_messages(task, calls: list) -> list[dict]:
    """A `mua score` style trajectory: the request, then one assistant message per call list; the tool results
    are deliberately wrong (the scorer must replay, never trust them)."""
    msgs = [{"role": "user", "content": task.scenario}]
    for i, message in enumerate(calls):
        tcs = [{"id": f"c{i}_{j}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
               for j, (name, args) in enumerate(message)]
        msgs.append({"role": "assistant", "content": None, "tool_calls": tcs})
        msgs += [{"role": "tool", "tool_call_id": tc["id"], "content": "{\"status\": true}"} for tc in tcs]
    msgs.append({"role": "assistant", "content": "finish conversation"})
    return msgs
