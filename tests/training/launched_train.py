"""`mua train` as a launcher (torchrun, accelerate launch) runs it on each rank, with two test benchmarks
registered: ``slow_counter``, whose user stalls once the file named by $MUA_TEST_SLOW_AFTER exists (so a test
can interrupt a rollout that would otherwise run far past the launcher's grace period), and ``silent_counter``,
whose user says nothing (no policy token in any episode)."""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the helpers package

from helpers.counter_bench import CounterBenchmark  # noqa: E402

from mua.harness.cli import main  # noqa: E402
from mua.harness.registry import register_benchmark  # noqa: E402
from mua.harness.users.simulator import ScriptedUser  # noqa: E402


class StallingUser(ScriptedUser):
    async def respond(self, messages, tools):
        flag = os.environ.get("MUA_TEST_SLOW_AFTER")
        if flag and Path(flag).exists():
            await asyncio.sleep(600)
        return await super().respond(messages, tools)


class SlowCounter(CounterBenchmark):
    name = "slow_counter"

    def gold_user(self, task):
        return StallingUser([task.scenario, "###STOP###"], stop_markers=["###STOP###"])


class SilentCounter(CounterBenchmark):
    """Every episode ends before the agent speaks: a step without a single policy token."""

    name = "silent_counter"

    def gold_user(self, task):
        return ScriptedUser([])


if __name__ == "__main__":
    register_benchmark(SlowCounter, n_tasks=2)
    register_benchmark(SilentCounter, n_tasks=2)
    sys.exit(main(sys.argv[1:]))
