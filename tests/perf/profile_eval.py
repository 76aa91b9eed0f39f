"""Where `mua eval`'s time goes against an instant endpoint: start-up phases to the first request, and CPU per episode.

Starts ../shared/tools/mock_openai.py, then runs `mua eval` (tau2 retail, agent + user simulator + NL judge on the
mock) twice in a child process of this script:

1. start-up timeline, not profiled: wall-clock marks taken by thin wrappers around the harness's own functions
   (process start, imports done, benchmark opened, tasks loaded, endpoints checked, first request sent,
   episodes done, result files written).
2. the same run under cProfile: time per episode split by what it was spent on, read from the harness's call
   graph (inclusive times of the functions named in each line, so nested lines are not counted twice).
   cProfile roughly doubles Python's cost: read the shares, and the ms as profiled.

    python tests/perf/profile_eval.py [--tasks 100 --trials 8] [--concurrency 32] [--top 0]

mua starts from cached bytecode as an installed package does (a scratch PYTHONPYCACHEPREFIX, filled by a warm-up
run). The machine's load average is printed: on a shared machine absolute times are noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mock_endpoint import MOCK, ROOT, eval_argv, start_mock  # noqa: E402 - beside this file

# The child: marks phases with wrappers (harness functions only), runs `mua eval`, optionally under cProfile.
CHILD = r"""
import json, sys, time
T0 = time.perf_counter()
marks = {"process start": 0.0}
def mark(name):
    marks.setdefault(name, time.perf_counter() - T0)
from mua.harness.cli import main
import mua.harness.cli.eval
from mua.harness.run import batch, schedule
from mua.harness.models import openai_client
mark("imports done")

def after(module, name, label):
    inner = getattr(module, name)
    def wrapped(*a, **k):
        out = inner(*a, **k)
        mark(label)
        return out
    setattr(module, name, wrapped)

after(batch, "open_benchmark", "benchmark opened")
after(batch, "select_tasks", "tasks loaded (and checked)")
check = batch.Models.check_alive
async def check_alive(self):
    await check(self)
    mark("endpoints checked")
batch.Models.check_alive = check_alive
attempt = openai_client.OpenAIChatModel._attempt
async def first_attempt(self, *a, **k):
    mark("first request sent")
    return await attempt(self, *a, **k)
openai_client.OpenAIChatModel._attempt = first_attempt
finish = schedule._summary
def finishing(*a, **k):
    mark("episodes done")
    return finish(*a, **k)
schedule._summary = finishing
argv, profile_to, marks_to = json.loads(sys.argv[1])
if profile_to:
    import cProfile
    prof = cProfile.Profile()
    code = prof.runcall(main, argv)
    prof.dump_stats(profile_to)
else:
    code = main(argv)
mark("result files written")
json.dump(marks, open(marks_to, "w"))
sys.exit(code)
"""






def run_child(argv: list[str], env: dict, scratch: Path, profile: bool) -> tuple[dict, float, Path]:
    prof, marks = scratch / "eval.prof", scratch / "marks.json"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD, json.dumps([argv, str(prof) if profile else "", str(marks)])],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads(marks.read_text()), time.perf_counter() - t0, prof


def python_start(env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - t0


class CallGraph:
    """Inclusive times from a cProfile dump, by function name or by caller -> callee edge."""

    def __init__(self, path: Path):
        self.stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]

    def _match(self, func: tuple, where: str) -> bool:
        file, _, name = func
        fpart, _, fname = where.rpartition(":")
        return name == fname and file.replace(os.sep, "/").endswith(fpart)

    def total(self, where: str) -> float:
        """Inclusive time of every function matching 'path/suffix.py:name' (summed over matches)."""
        return sum(v[3] for f, v in self.stats.items() if self._match(f, where))

    def edge(self, caller: str, callee: str) -> float:
        """Inclusive time of ``callee`` when called from ``caller``."""
        t = 0.0
        for f, v in self.stats.items():
            if self._match(f, callee):
                t += sum(e[3] for c, e in v[4].items() if self._match(c, caller))
        return t


def breakdown(graph: CallGraph) -> list[tuple[str, float]]:
    """(what, seconds) lines of the per-episode work; each a disjoint part of the episodes' time."""
    h = "harness/"
    chat = graph.total(h + "models/openai_client.py:chat")
    build = graph.edge(h + "models/openai_client.py:chat", h + "models/openai_client.py:request_payload") or \
        graph.edge(h + "models/openai_client.py:chat", "json/__init__.py:dumps")
    parse = graph.edge(h + "models/openai_client.py:_attempt", h + "models/openai_client.py:read_body") + \
        graph.edge(h + "models/openai_client.py:_attempt", h + "models/openai_client.py:parse")
    http = graph.total(h + "models/openai_client.py:_attempt") - parse
    start = graph.edge(h + "runner.py:run_episode", ":start")
    score = graph.edge(h + "runner.py:run_episode", ":score")
    judge_chat = graph.edge(":judge_nl_assertions", h + "models/openai_client.py:chat")
    tools = graph.total(h + "runner.py:_execute")
    play = graph.total(h + "run/eval_episode.py:play_one")
    episode = graph.edge(h + "run/eval_episode.py:play_one", h + "runner.py:run_episode")
    make = graph.edge(h + "run/eval_episode.py:play_one", h + "run/build.py:make_agent") + \
        graph.edge(h + "run/eval_episode.py:play_one", h + "run/build.py:make_user")
    writes = graph.total(h + "results/store.py:append") + graph.total(h + "results/store.py:commit") + \
        graph.total(h + "run/schedule.py:_summary") + graph.total(h + "results/store.py:write_json")
    return [
        ("request building (request body to JSON bytes)", build),
        ("HTTP client (send, wait for and read the answer)", http),
        ("JSON parsing of answers", parse),
        ("other model-call code (message objects, retries)", chat - build - http - parse),
        ("environment start (fresh DB state, prompts)", start),
        ("agent and user built per episode", make),
        ("tool execution", tools),
        ("scoring, without the judge's request", score - judge_chat),
        ("episode record (trajectory to dicts)", play - episode - make),
        ("conversation loop (turns, budgets, views)",
         episode - start - score - (chat - judge_chat) - tools),
        ("results writes (append, fsync, final ordered rewrite, summary)", writes),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--top", type=int, default=0, help="also print the N functions with the most own time")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    if min(args.tasks, args.trials, args.concurrency) < 1 or args.top < 0:
        print("profile_eval: --tasks, --trials and --concurrency must be >= 1, --top >= 0", file=sys.stderr)
        return 2
    if not MOCK.is_file():
        print(f"profile_eval: {MOCK} not found (the measuring tools live in ../shared/tools)", file=sys.stderr)
        return 2
    episodes = args.tasks * args.trials
    load = os.getloadavg()
    mock, port = start_mock()
    try:
        with tempfile.TemporaryDirectory(prefix="profile-eval-") as tmp:
            scratch = Path(tmp)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env.update(OPENAI_API_KEY="x", PYTHONPYCACHEPREFIX=str(scratch / "pycache"))

            def argv(name: str) -> list[str]:
                return eval_argv(port, args.tasks, args.trials, args.concurrency, str(scratch / name),
                                 args.data_dir)
            run_child(argv("warm"), env, scratch, profile=False)  # fills the bytecode cache
            base = python_start(env)
            marks, wall, _ = run_child(argv("timeline"), env, scratch, profile=False)
            _, prof_wall, prof = run_child(argv("profiled"), env, scratch, profile=True)
            graph = CallGraph(prof)
            top = pstats.Stats(str(prof)) if args.top else None
    finally:
        mock.kill()
        mock.wait()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"\nstart-up and run, {episodes} episodes at concurrency {args.concurrency}, not profiled "
          f"(wall {wall:.3f} s from spawn to exit; a bare `python -c pass` takes {base:.3f} s):")
    prev = 0.0
    print(f"  {'interpreter start (bare python)':46s} {base:7.3f} s")
    for name, t in sorted(marks.items(), key=lambda kv: kv[1]):
        if name == "process start":
            continue
        print(f"  {name:46s} +{t - prev:6.3f} s  (at {t:.3f} s after the interpreter ran mua's first line)")
        prev = t
    rate = episodes / (marks["episodes done"] - marks["first request sent"])
    print(f"  steady rate: {rate:.1f} episodes/s from first request to episodes done")
    rows = breakdown(graph)
    busy = sum(t for _, t in rows)
    print(f"\nper episode, profiled run (wall {prof_wall:.2f} s; cProfile slows Python code about 2x):")
    for what, t in rows:
        print(f"  {what:66s} {1000 * t / episodes:6.2f} ms  {100 * t / busy:5.1f} %")
    print(f"  {'sum':66s} {1000 * busy / episodes:6.2f} ms")
    if top is not None:
        print()
        top.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
