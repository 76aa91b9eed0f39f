"""CPU time to start and grade one tau2 retail episode, against a copy.deepcopy of the loaded DB (the cost a
naive per-episode copy would add). A script, not a test: ``python tests/perf/bench_episode_start.py [data_dir]``."""
from __future__ import annotations

import asyncio
import copy
import sys
import time
from pathlib import Path

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.harness.runner import run_episode


def main() -> None:
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared" / "data"
    bench = Tau2Benchmark(data_dir)
    tasks = bench.load_tasks("retail", None)
    # gold trajectories, recorded once; the timed part is start + grade (replay on a fresh state)
    runs = [asyncio.run(run_episode(bench, t, bench.gold_agent(t), bench.gold_user(t), score=False)) for t in tasks]
    for task, run in zip(tasks, runs):  # warm the per-task gold cache, as in any run after the first episode
        asyncio.run(bench.score(task, run.messages))
    t0 = time.process_time()
    for task, run in zip(tasks, runs):
        bench.start(task)
        asyncio.run(bench.score(task, run.messages))
    per_episode = (time.process_time() - t0) / len(tasks)
    domain_db = bench.start(tasks[0]).env.domain.base
    t0 = time.process_time()
    copy.deepcopy(domain_db)
    deepcopy_cost = time.process_time() - t0
    print(f"retail episodes: {len(tasks)}")
    print(f"start + grade per episode: {per_episode * 1000:.3f} ms CPU (target <= 4 ms)")
    print(f"copy.deepcopy of the DB:   {deepcopy_cost * 1000:.1f} ms CPU")
    print(f"ratio deepcopy / (start + grade): {deepcopy_cost / per_episode:.0f}x")


if __name__ == "__main__":
    main()
