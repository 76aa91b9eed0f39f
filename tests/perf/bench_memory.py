"""Peak memory of `mua eval` as a run grows: it must depend on concurrency, not on the number of episodes.

Runs `mua eval` on tau2 retail in fresh processes and reads each one's peak RSS (os.wait4): the gold agent
(no endpoint) at about 1,000 and 100,000 episodes, and against ../shared/tools/mock_openai.py (agent, user
and judge on one instant endpoint, concurrency 32) at about 1,000 and 20,000 episodes. Prints peak RSS per run
and the ratio of the large run to the small one (target: within 1.2x).

    python tests/perf/bench_memory.py                    # 1,026 vs 99,978 gold; 1,026 vs 19,950 mock
    python tests/perf/bench_memory.py --quick            # 1,026 vs 10,032 gold; 1,026 vs 5,016 mock
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mock_endpoint import start_mock  # beside this file

RETAIL_TASKS = 114  # the retail test split; --trials T gives 114 * T episodes
ENTRY = "import sys; from mua.harness.cli import main; sys.exit(main(sys.argv[1:]))"


def peak_rss_mb(argv: list[str]) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one `mua` process."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):  # 1: some episodes errored or had unknown rewards, still a finished run
        raise SystemExit(f"bench_memory: mua {' '.join(argv)} exited {proc.returncode}:\n{err[-2000:]}")
    return usage.ru_maxrss / 1024, time.monotonic() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller large runs (10,032 gold, 5,016 mock episodes)")
    ap.add_argument("--small-trials", type=int, default=9, help="trials of the small runs (9: 1,026 episodes)")
    args = ap.parse_args()
    gold_large, mock_large = (88, 44) if args.quick else (877, 175)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for trials in (args.small_trials, gold_large):
            out = Path(tmp) / f"gold-{trials}"
            rss, wall = peak_rss_mb(["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold",
                                     "--trials", str(trials), "--no-progress", "--out", str(out)])
            rows.append(("gold agent, no endpoint", RETAIL_TASKS * trials, rss, wall))
        mock, port = start_mock()
        url = f"http://127.0.0.1:{port}/v1"
        try:
            for trials in (args.small_trials, mock_large):
                out = Path(tmp) / f"mock-{trials}"
                rss, wall = peak_rss_mb(["eval", "--benchmark", "tau2", "--subset", "retail", "--trials",
                                         str(trials), "--concurrency", "32", "--no-progress", "--out", str(out),
                                         "--agent-model", "mock", "--agent-base-url", url, "--user-model", "mock",
                                         "--user-base-url", url, "--judge-model", "mock", "--judge-base-url", url])
                rows.append(("mock endpoint, concurrency 32", RETAIL_TASKS * trials, rss, wall))
        finally:
            mock.kill()
            mock.wait()
    print("peak RSS of `mua eval` on tau2 retail (fresh process each):")
    for what, episodes, rss, wall in rows:
        print(f"  {what:30} {episodes:7,d} episodes  {rss:6.1f} MB  ({wall:.0f} s)")
    worst = 0.0
    for i in (0, 2):
        ratio = rows[i + 1][2] / rows[i][2]
        worst = max(worst, ratio)
        print(f"  {rows[i][0]}: {rows[i + 1][1]:,d} / {rows[i][1]:,d} episodes -> {ratio:.2f}x peak RSS")
    print(f"target: within 1.2x -> {'met' if worst <= 1.2 else 'MISSED'}")
    return 0 if worst <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())
