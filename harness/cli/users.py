"""`mua users`: the simulated user under test. ``suite`` scores the benchmark's own (scripted) user on the
adversarial agent suite (``harness/user_suite.py``); ``audit`` measures what the users of a finished run did."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..data import resolve_data_dir
from ..errors import ConfigError
from .common import add_data_dir, positive_int

EXAMPLES = """examples:
  mua users suite --data-dir FOLDER            the scripted user's figures on the suite, one line per family
  mua users suite BENCHMARK --data-dir FOLDER --split train --limit 20 --json
  mua users audit RUN                          per episode and overall: what the run's users told and when"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("users", help="score a simulated user on the adversarial suite; audit a run's users",
                       description="The simulated user under test. suite: put the adversarial agent messages "
                                   "(keyword stuffing, template questions, off-topic chatter, compound and "
                                   "paraphrased natural questions, the gold questions) to the benchmark's scripted "
                                   "user and print, per family, how often it told a fact it should not, or the "
                                   "right fact. audit: see `mua users audit --help`.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = p.add_subparsers(dest="users_command", required=True)
    s = commands.add_parser("suite", help="the scripted user's figures on the adversarial suite",
                            description="Build the benchmark's suite cases from its tasks (one agent message "
                                        "after the user's opening) and score its scripted user. A family "
                                        "without cases prints n/a (unknown), never 0.")
    s.add_argument("benchmark", nargs="?", metavar="BENCHMARK",
                   help="the benchmark (default: the one installed benchmark whose data --data-dir holds)")
    s.add_argument("--split", help="the split whose tasks to use (default: the benchmark's)")
    s.add_argument("--limit", type=positive_int, help="only the first N tasks of each subset")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_data_dir(s)
    s.set_defaults(func=run_suite)


def _benchmark(name: str | None, data_dir: Path):
    from ..catalog import catalog
    from ..registry import open_benchmark

    if name is None:
        found = [e.name for e in catalog(data_dir) if not e.error]
        if len(found) != 1:
            raise ConfigError(f"{data_dir}: " + (f"holds data of {', '.join(found)}: name one (mua users suite "
                                                 "BENCHMARK)" if found else "no installed benchmark reads it"))
        name = found[0]
    return open_benchmark(name, data_dir)


def run_suite(args: argparse.Namespace) -> int:
    from ..user_suite import score_user, suite, suite_lines

    bench = _benchmark(args.benchmark, resolve_data_dir(args.data_dir))
    tasks = []
    for subset in bench.subsets:
        tasks += bench.load_tasks(subset, args.split or bench.default_split)[:args.limit]
    cases = suite(bench, tasks)
    if not cases:
        raise ConfigError(f"{bench.name}: no user suite (the benchmark does not say what its users' facts are)")
    scores = score_user(lambda case: bench.gold_user(case.task), cases)
    if args.json:
        print(json.dumps({"benchmark": bench.name, "tasks": len(tasks), "user": "scripted",
                          "families": [s.to_dict() for s in scores.values()]}, indent=1))
    else:
        print(f"{bench.name}: scripted user on {len(cases)} suite cases from {len(tasks)} tasks")
        print("\n".join(suite_lines(scores)))
    return 0
