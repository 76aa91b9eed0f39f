"""What one episode costs mua, this checkout against another revision, measured in one run: Python function calls
(cProfile's count: steady under load, unlike time) and CPU seconds, per episode and at start-up.

Both trees play the same `mua eval` against one instant mock endpoint (../shared/tools/mock_openai.py; tau2 retail,
agent, user simulator and NL judge on it), interleaved, the order alternating by round. The other revision's
harness, benchmarks and training folders are exported (`git archive`) to a scratch folder, this checkout's are
copied beside them, and each run puts its tree first on PYTHONPATH (so both are imported alike). Per episode is
marginal: (run of N episodes - run of 10) / (N - 10), so start-up cancels out; the 10-episode run stands for
start-up. Each figure is the median over the rounds; ratios are this / base.

    python tests/perf/compare_episode_cost.py [--base main] [--rounds 3] [--tasks 100 --trials 2] [--concurrency 8]

CPU seconds on a shared machine move with its load (printed); the call counts do not.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from mock_endpoint import MOCK, ROOT, eval_argv, start_mock  # noqa: E402 - beside this file

SMALL = 10  # episodes of the start-up run
PARTS = ("harness", "benchmarks", "training")

CHILD = r"""
import cProfile, json, pstats, sys
from mua.harness.cli import main
argv, profiled = json.loads(sys.argv[1])
if profiled:
    prof = cProfile.Profile()
    code = prof.runcall(main, argv)
    print(json.dumps(pstats.Stats(prof).total_calls))
else:
    code = main(argv)
sys.exit(code)
"""


def run_once(env: dict, argv: list[str], profiled: bool) -> tuple[float, int]:
    """(CPU seconds of the child, its function calls; 0 unprofiled)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([argv, profiled])], env=env, cwd=tempfile.gettempdir(),
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"mua eval failed: {done.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, int(done.stdout.strip().splitlines()[-1]) if profiled else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="main", help="the git revision to compare with (default: main)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    episodes = args.tasks * args.trials
    if args.rounds < 1 or args.concurrency < 1 or episodes <= SMALL:
        print(f"compare_episode_cost: --rounds and --concurrency >= 1, more than {SMALL} episodes", file=sys.stderr)
        return 2
    if not MOCK.is_file():
        print(f"compare_episode_cost: {MOCK} not found (the measuring tools live in ../shared/tools)", file=sys.stderr)
        return 2
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="episode-cost-") as tmp:
        scratch = Path(tmp)
        base_tree, this_tree = scratch / "base", scratch / "this"
        (base_tree / "mua").mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, *PARTS], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_tree / "mua")], input=archive, check=True)
        for part in PARTS:  # this checkout as it is (uncommitted changes too), imported the same way as the base
            shutil.copytree(ROOT / part, this_tree / "mua" / part, ignore=shutil.ignore_patterns("__pycache__"))
        common = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        common["OPENAI_API_KEY"] = "x"
        envs = {tree: dict(common, PYTHONPATH=str(scratch / tree), PYTHONPYCACHEPREFIX=str(scratch / f"pyc-{tree}"))
                for tree in ("base", "this")}
        figures: dict[str, dict[str, list[float]]] = {t: {"cpu": [], "calls": [], "cpu0": [], "calls0": []}
                                                      for t in envs}
        mock, port = start_mock()
        runs = 0

        def argv(tasks: int, trials: int) -> list[str]:
            nonlocal runs
            runs += 1
            return eval_argv(port, tasks, trials, args.concurrency, str(scratch / f"run{runs}"), args.data_dir)
        try:
            for env in envs.values():  # fills each tree's bytecode cache
                run_once(env, argv(1, 1), False)
            for r in range(args.rounds):
                for tree in (list(envs) if r % 2 == 0 else list(envs)[::-1]):
                    env, f = envs[tree], figures[tree]
                    big, small = run_once(env, argv(args.tasks, args.trials), False), run_once(env, argv(SMALL, 1), False)
                    f["cpu"].append(1000 * (big[0] - small[0]) / (episodes - SMALL))
                    f["cpu0"].append(small[0])
                    big, small = run_once(env, argv(args.tasks, args.trials), True), run_once(env, argv(SMALL, 1), True)
                    f["calls"].append((big[1] - small[1]) / (episodes - SMALL))
                    f["calls0"].append(small[1])
        finally:
            mock.kill()
            mock.wait()
    med = {t: {k: statistics.median(v) for k, v in f.items()} for t, f in figures.items()}
    print(f"{episodes} episodes at concurrency {args.concurrency} (and {SMALL} for start-up), {args.rounds} "
          f"interleaved rounds; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    for tree in envs:
        m = med[tree]
        print(f"  {tree:5s} ({args.base if tree == 'base' else 'this checkout'}): {m['calls']:.0f} calls and "
              f"{m['cpu']:.2f} ms CPU per episode; {SMALL}-episode run {m['calls0']:.0f} calls, {m['cpu0']:.3f} s CPU "
              f"(per-round CPU per episode: {', '.join(f'{x:.2f}' for x in figures[tree]['cpu'])})")
    b, t = med["base"], med["this"]
    print(f"  this / base: calls per episode {t['calls'] / b['calls']:.3f}, CPU per episode {t['cpu'] / b['cpu']:.3f}, "
          f"start-up calls {t['calls0'] / b['calls0']:.3f}, start-up CPU {t['cpu0'] / b['cpu0']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
