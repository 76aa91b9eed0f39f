"""Throughput and memory of the episode runner against an instant mock OpenAI server (a subprocess, so its
CPU is reported apart). Prints episodes/s at concurrency 1, 32 and 128 (ratio to concurrency 1), CPU per
episode for mua and for the mock, and peak memory with 1,000 episodes in flight next to the memory of the
loaded benchmark (the baseline) and of one deep copy of the retail DB.

    python tests/perf/bench_runner.py [--episodes-per-level 300] [--in-flight 1000]

Each episode: greeting, 3 user turns (the last one stops), 2 tool calls: 7 model requests.
"""
from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from mua.harness.io.data import resolve_data_dir  # noqa: E402
from mua.harness.registry import open_benchmark  # noqa: E402
from mua.harness.run.batch import RunPlan, run_eval  # noqa: E402
from mua.harness.run.build import ModelSpec  # noqa: E402


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_mock() -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    proc = subprocess.Popen([sys.executable, str(HERE.parent / "mock_openai.py"), "--responder", "helpers.responders:retail"],
                            stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline().split()
    assert line and line[0] == "READY", line
    return proc, line[1]


def mock_cpu(base_url: str) -> float:
    with urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats") as r:
        return json.loads(r.read())["cpu_s"]


def plan(base_url: str, limit: int, trials: int) -> RunPlan:
    spec = dict(base_url=base_url, params={"timeout_s": 120})
    return RunPlan(benchmark="tau2", subsets=["retail"], split="base", limit=limit, trials=trials,
                    agent=ModelSpec("agent", **spec), user=ModelSpec("user", **spec))


def level(base_url: str, data_dir: Path, concurrency: int, episodes: int) -> dict:
    limit = min(episodes, 114)
    trials = max(1, episodes // limit)
    with tempfile.TemporaryDirectory() as out:
        c0, m0, t0 = cpu_s(), mock_cpu(base_url), time.perf_counter()
        outcome = asyncio.run(run_eval(plan(base_url, limit, trials), Path(out), data_dir,
                                       concurrency=concurrency, progress=False))
        wall, c1, m1 = time.perf_counter() - t0, cpu_s(), mock_cpu(base_url)
    n = outcome.ran
    assert outcome.summary["errors"] == 0, outcome.errors[:3]
    return {"concurrency": concurrency, "episodes": n, "eps": n / wall,
            "mua_cpu_ms": 1000 * (c1 - c0) / n, "mock_cpu_ms": 1000 * (m1 - m0) / n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes-per-level", type=int, default=300)
    ap.add_argument("--in-flight", type=int, default=1000)
    args = ap.parse_args()
    data_dir = resolve_data_dir()
    bench = open_benchmark("tau2", data_dir)
    bench.load_tasks("retail", "base")
    proc, base_url = start_mock()
    try:
        asyncio.run(run_eval(plan(base_url, 2, 1), Path(tempfile.mkdtemp()), data_dir, progress=False))  # warm-up
        loaded_mb = rss_mb()
        rows = [level(base_url, data_dir, 1, max(30, args.episodes_per_level // 6))]
        rows += [level(base_url, data_dir, c, args.episodes_per_level) for c in (32, 128)]
        print(f"{'concurrency':>11} {'episodes':>8} {'eps/s':>8} {'x c=1':>6} {'mua CPU ms/ep':>14} {'mock CPU ms/ep':>15}")
        for r in rows:
            print(f"{r['concurrency']:>11} {r['episodes']:>8} {r['eps']:>8.1f} {r['eps'] / rows[0]['eps']:>6.1f} "
                  f"{r['mua_cpu_ms']:>14.2f} {r['mock_cpu_ms']:>15.2f}")
        print("official tau2 runner against the same kind of instant mock: 1.1-1.5 eps/s (issue figure); "
              f"best here {max(r['eps'] for r in rows):.0f} eps/s = {max(r['eps'] for r in rows) / 1.5:.0f}x the upper figure")
        big = level(base_url, data_dir, args.in_flight, args.in_flight)
        print(f"{args.in_flight} episodes in flight: peak RSS {peak_rss_mb():.0f} MB; baseline (benchmark loaded, "
              f"before any run) {loaded_mb:.0f} MB; {big['eps']:.1f} eps/s")
        db = json.loads((data_dir / "tau2/domains/retail/db.json").read_text())
        tracemalloc.start()
        copy.deepcopy(db)
        one_copy = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"baseline per episode with a deep-copied DB: {one_copy:.1f} MB -> {args.in_flight} in flight would "
              f"need {one_copy * args.in_flight / 1024:.1f} GB")
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
