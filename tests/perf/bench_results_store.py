"""CPU seconds of the results store on a 16,000-episode counter run (2,000 tasks x 2 subsets x 4 trials, gold
agent): the eval, a resume with nothing left to do, and read_run (what leaderboard and gate read).
CPU time (time.process_time), not wall time: the fsyncs and a shared machine make wall time noisy.
Usage: python tests/perf/bench_results_store.py"""
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ (helpers)
from helpers.counter_bench import CounterBenchmark  # noqa: E402

from mua.harness.registry import register_benchmark  # noqa: E402
from mua.harness.results.runs import read_run  # noqa: E402
from mua.harness.run.batch import RunPlan, run_eval  # noqa: E402
from mua.harness.run.build import ModelSpec  # noqa: E402


def cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    register_benchmark(CounterBenchmark, n_tasks=2000)
    plan = RunPlan(benchmark="counter", subsets=["easy", "hard"], agent=ModelSpec("gold"), trials=4, seed=7)
    out = Path(tempfile.mkdtemp()) / "r"
    eval_s = cpu(lambda: asyncio.run(run_eval(plan, out, Path("."), progress=False)))
    resume_s = cpu(lambda: asyncio.run(run_eval(plan, out, Path("."), progress=False)))
    read_s = cpu(lambda: read_run(out))
    print(f"16000 episodes ({(out / 'episodes.jsonl').stat().st_size} bytes): eval {eval_s:.2f} s, no-op resume "
          f"{resume_s:.2f} s, read_run {read_s:.2f} s (CPU)")


if __name__ == "__main__":
    main()
