"""Bytes of episodes.jsonl read (and whether the file is replaced) by a resume that has nothing left to do:
a finished 4,000-episode counter run, `run_eval` called again. Usage: python tests/perf/bench_resume_reads.py"""
import asyncio
import builtins
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ (helpers)
from helpers.counter_bench import CounterBenchmark  # noqa: E402

from mua.harness.registry import register_benchmark  # noqa: E402
from mua.harness.run.batch import RunPlan, run_eval  # noqa: E402
from mua.harness.run.build import ModelSpec  # noqa: E402


class CountingReader:
    """A file object that adds what is read from it to ``counts["bytes"]``."""

    def __init__(self, f, counts: dict):
        self._f, self._counts = f, counts

    def __getattr__(self, name):
        return getattr(self._f, name)

    def _seen(self, data):
        self._counts["bytes"] += len(data)
        return data

    def read(self, *a):
        return self._seen(self._f.read(*a))

    def readline(self, *a):
        return self._seen(self._f.readline(*a))

    def __iter__(self):
        for line in self._f:
            yield self._seen(line)

    def __enter__(self):
        self._f.__enter__()
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)


def main() -> None:
    register_benchmark(CounterBenchmark, n_tasks=500)
    plan = RunPlan(benchmark="counter", subsets=["easy", "hard"], agent=ModelSpec("gold"), trials=4, seed=7)
    out = Path(tempfile.mkdtemp()) / "r"
    asyncio.run(run_eval(plan, out, Path("."), progress=False))
    episodes = out / "episodes.jsonl"
    size, inode = episodes.stat().st_size, episodes.stat().st_ino
    counts = {"opens": 0, "bytes": 0}
    real_open = builtins.open

    def counting_open(file, mode="r", *a, **k):
        f = real_open(file, mode, *a, **k)
        if str(file) == str(episodes) and ("r" in mode or "+" in mode):
            counts["opens"] += 1
            return CountingReader(f, counts)
        return f

    builtins.open = counting_open
    try:
        outcome = asyncio.run(run_eval(plan, out, Path("."), progress=False))
    finally:
        builtins.open = real_open
    print(f"episodes {outcome.skipped} skipped, {outcome.ran} ran; file {size} bytes; opened for reading "
          f"{counts['opens']} times, {counts['bytes']} bytes read ({counts['bytes'] / size:.1f}x the file); "
          f"replaced: {episodes.stat().st_ino != inode}")


if __name__ == "__main__":
    main()
