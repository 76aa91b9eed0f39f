"""What every example pack's tests check the same way: the gold agent passes every task with both offline
users, the splits are disjoint in what matters, and generate.py rebuilds the pack byte for byte."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

from mua.benchmarks.pack import PackBenchmark
from mua.harness.runner import run_episode
from mua.harness.types import Message, Task, ToolCall

EXAMPLES = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples"


def play(bench, task, agent):
    return asyncio.run(run_episode(bench, task, agent, bench.gold_user(task)))


def call(name: str, args: dict) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(id="c", name=name, arguments=json.dumps(args))])


def assert_gold_passes_every_task(example: Path, count: int) -> None:
    """With the scripted user and with the static user (reference user turns replayed)."""
    for bench in (PackBenchmark(example), PackBenchmark(example, static_user=True)):
        tasks = bench.load_tasks("tasks")
        assert len(tasks) == count
        for task in tasks:
            result = play(bench, task, bench.gold_agent(task))
            assert result.score.reward == 1.0, (task.id, result.score.info)


def assert_splits_disjoint_and_regenerated(example: Path, sizes: dict[str, int], fact: Callable[[Task], str],
                                           tmp_path: Path) -> None:
    """No ``fact`` of a task is shared between two splits; generate.py --seed 1 (the packs' seed) writes the same
    files."""
    splits = json.loads((example / "splits.json").read_text())
    tasks = {t.id: t for t in PackBenchmark(example).load_tasks("tasks")}
    facts = {name: {fact(tasks[i]) for i in ids} for name, ids in splits.items()}
    assert {k: len(v) for k, v in splits.items()} == sizes
    assert not facts["train"] & facts["validation"] and not facts["train"] & facts["test"]
    assert not facts["validation"] & facts["test"]
    subprocess.run([sys.executable, str(example / "generate.py"), "--seed", "1", "--out", str(tmp_path)], check=True)
    for name in ("tasks.json", "splits.json", "db.json"):
        assert (tmp_path / name).read_bytes() == (example / name).read_bytes()
