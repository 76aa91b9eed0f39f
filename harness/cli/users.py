"""`mua users`: the simulated user under test. ``suite`` scores the benchmark's own (scripted) user on the
adversarial agent suite (``harness/users/suite.py``); ``audit`` measures what the users of a finished run did."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from ..interfaces import Benchmark
from ..io.data import resolve_data_dir
from ..run.build import ModelSpec
from ..types import Message, Task
from .common import add_data_dir, add_model_flags, add_timeouts, model_spec, positive_int

EXAMPLES = """examples:
  mua users suite --data-dir FOLDER            the scripted user's figures on the suite, one line per family
  mua users suite BENCHMARK --data-dir FOLDER --split train --limit 20 --json
  mua users suite --data-dir FOLDER --split test --limit 5 --user-model CHECKPOINT   a trained user's figures
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
    s = commands.add_parser("suite", help="a simulated user's figures on the adversarial suite",
                            description="Build the benchmark's suite cases from its tasks (one agent message "
                                        "after the user's opening) and score its scripted user, or with "
                                        "--user-model its LLM user simulator played by that model (shown the "
                                        "agent's greeting first, as in a run). A family without cases prints n/a "
                                        "(unknown), never 0.")
    s.add_argument("benchmark", nargs="?", metavar="BENCHMARK",
                   help="the benchmark (default: the one installed benchmark whose data --data-dir holds)")
    s.add_argument("--split", help="the split whose tasks to use (default: the benchmark's)")
    s.add_argument("--limit", type=positive_int, help="only the first N tasks of each subset")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.add_argument("--concurrency", type=positive_int, default=8,
                   help="cases put to the user at once (a local checkpoint decodes them as one batch; default 8)")
    add_model_flags(s, {"user": "the user simulator model to score (endpoint model name or local checkpoint; "
                                "default: the benchmark's scripted user)"}, temperature_default="0, greedy")
    add_timeouts(s, stall=False)
    add_data_dir(s)
    s.set_defaults(func=run_suite)
    a = commands.add_parser("audit", help="what a run's users told, invented, contradicted, and when they stopped",
                            description="Per episode and overall: facts told unasked, facts not in the scenario, "
                                        "contradictions, stops before the task was done, turns after it was done, "
                                        "answers to keyword-stuffed messages. Each figure says whether it is exact "
                                        "(the benchmark says what each fact is) or heuristic (facts found in the "
                                        "scenario's prose); one a benchmark cannot give is 'not measured' (null), "
                                        "never 0. Definitions: harness/users/audit.py.")
    a.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="a run directory written by mua eval, or a benchmark's own results file (as mua score "
                        "reads them)")
    a.add_argument("--episodes", action="store_true", help="also one line per episode")
    a.add_argument("--json", action="store_true", help="print everything as JSON")
    add_data_dir(a)
    a.set_defaults(func=run_audit)


def _benchmark(name: str | None, data_dir: Path):
    from ..registry import open_benchmark
    from ..tools.catalog import catalog

    if name is None:
        found = [e.name for e in catalog(data_dir) if not e.error]
        if len(found) != 1:
            raise ConfigError(f"{data_dir}: " + (f"holds data of {', '.join(found)}: name one (mua users suite "
                                                 "BENCHMARK)" if found else "no installed benchmark reads it"))
        name = found[0]
    return open_benchmark(name, data_dir)


def run_suite(args: argparse.Namespace) -> int:
    from ..users.suite import score_user, suite, suite_lines

    bench = _benchmark(args.benchmark, resolve_data_dir(args.data_dir))
    spec = model_spec(args, "user", default_temperature=0.0)
    if spec is not None and type(bench).simulated_user is Benchmark.simulated_user:
        raise ConfigError(f"{bench.name}: its user is scripted only; --user-model has no LLM user to play")
    tasks = []
    for subset in bench.subsets:
        tasks += bench.load_tasks(subset, args.split or bench.default_split)[:args.limit]
    cases = suite(bench, tasks)
    if not cases:
        raise ConfigError(f"{bench.name}: no user suite (the benchmark does not say what its users' facts are)")
    if spec is None:
        scores = score_user(lambda case: bench.gold_user(case.task), cases)
    else:
        scores = _score_model_user(bench, spec, cases, args.concurrency)
    who = "scripted user" if spec is None else f"user model {spec.name}"
    if args.json:
        print(json.dumps({"benchmark": bench.name, "tasks": len(tasks), "user": "scripted" if spec is None
                          else spec.name, "families": [s.to_dict() for s in scores.values()]}, indent=1))
    else:
        print(f"{bench.name}: {who} on {len(cases)} suite cases from {len(tasks)} tasks")
        print("\n".join(suite_lines(scores)))
    return 0


def _score_model_user(bench: Benchmark, spec: ModelSpec, cases: list, concurrency: int) -> dict:
    """The suite's scores of the benchmark's LLM user simulator played by ``spec`` (greedy unless its flags say
    otherwise), each case shown the agent's opening words of an episode of its task first."""
    import asyncio

    from ..run.build import Models, open_model
    from ..users.suite import episode_greeting, score_user_async

    async def score() -> dict:
        models = Models(user=open_model(spec))
        user = models.user
        assert user is not None  # a spec always opens a model
        try:
            await models.check_alive()
            return await score_user_async(lambda case: bench.simulated_user(case.task, user, seed=0), cases,
                                          concurrency, episode_greeting(bench))
        finally:
            await models.aclose()

    return asyncio.run(score())


def _audit_items(path: Path, data_dir: Path):
    """(benchmark, task, messages, termination, trial) per episode of ``path``, and how many had no task."""
    from ..registry import open_benchmark
    from ..results.episodes import latest_episodes
    from ..results.store import RunDir
    from ..tools.replay import TaskIndex, read_items

    index, skipped = TaskIndex(data_dir), 0
    items: list[tuple[Benchmark, Task, list[Message], Optional[str], Optional[str]]] = []
    if path.is_dir():
        config = RunDir(path).read_config()
        if config is None:
            raise ConfigError(f"{path} is not a mua run (no config.json)")
        bench = open_benchmark(str(config.get("benchmark")), data_dir)
        for record in latest_episodes(RunDir(path).episodes)[0].values():
            try:
                task = index.get(bench, record.subset, record.task_id)
            except KeyError:
                skipped += 1
                continue
            items.append((bench, task, [Message.from_dict(m) for m in record.messages], record.termination,
                          str(record.trial)))
        return items, skipped
    if not path.is_file():
        raise ConfigError(f"{path}: no such run directory or results file")
    for found, item in read_items(path, data_dir, index):
        if found is None or item.task is None:
            skipped += 1
            continue
        items.append((found, item.task, item.messages, item.termination, item.variant))
    return items, skipped


def run_audit(args: argparse.Namespace) -> int:
    from ..users.audit import audit_all, audit_lines, overall

    data_dir = resolve_data_dir(args.data_dir)
    everything, report = [], []
    for path in args.paths:
        items, skipped = _audit_items(path, data_dir)
        audits = audit_all(items)
        everything += audits
        report.append({"path": str(path), "skipped": skipped, "overall": [f.to_dict() for f in overall(audits)],
                       "episodes": [vars(a) for a in audits]})
        if not args.json:
            print("\n".join(audit_lines(str(path), audits, skipped)))
            if args.episodes:
                for a in audits:
                    print("    " + json.dumps(vars(a)))
    if args.json:
        print(json.dumps({"paths": report, "overall": [f.to_dict() for f in overall(everything)]}, indent=1))
    elif len(args.paths) > 1:
        print("\n".join(audit_lines(f"all {len(args.paths)} inputs", everything)))
    return 0
