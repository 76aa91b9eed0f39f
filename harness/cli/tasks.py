"""`mua tasks`: what can be run (benchmarks, subsets, splits, task counts), a subset's tasks, and one task."""
from __future__ import annotations

import argparse
import json

from ..errors import ConfigError, DataError
from ..io.data import resolve_data_dir
from ..registry import open_benchmark
from ..tools.catalog import catalog, catalog_text, describe, find_task, summary_line, task_text
from .common import add_data_dir

EXAMPLES = """examples:
  mua tasks                                    every installed benchmark: subsets, splits, task counts
  mua tasks BENCHMARK --subset SUBSET          the subset's tasks in the default split, one line each
  mua tasks BENCHMARK --subset SUBSET TASK_ID  one task: scenario, expected actions, criteria, policy, tools
  mua tasks BENCHMARK TASK_ID --json           the same as JSON (tools with their full schemas)
  mua tasks --data-dir FOLDER                  what the data in FOLDER holds (e.g. your own task folder)"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="list benchmarks, subsets, splits and tasks; show one task",
                       description="Without BENCHMARK: every installed benchmark (entry points of "
                                   "mua.benchmarks) with its subsets, splits and task counts in the data "
                                   "directory. With BENCHMARK and --subset: that "
                                   "subset's tasks. With TASK_ID: the task as an episode of it starts.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark", nargs="?", metavar="BENCHMARK")
    p.add_argument("task_id", nargs="?", metavar="TASK_ID")
    p.add_argument("--subset", help="the subset (needed to list tasks, and for a task id found in several)")
    p.add_argument("--split", help="the split whose tasks to list (default: the benchmark's)")
    p.add_argument("--all-tasks", action="store_true", help="list the tasks of every split")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_data_dir(p)
    # argparse takes positionals in one go: a TASK_ID after --subset arrives among the unparsed words
    p.set_defaults(func=run, passthrough=True)


def run(args: argparse.Namespace) -> int:
    rest = list(getattr(args, "rest", []) or [])
    if args.task_id is None and len(rest) == 1 and not rest[0].startswith("-") and args.benchmark:
        args.task_id = rest.pop()
    if rest:
        raise ConfigError(f"unrecognized arguments: {' '.join(rest)} (see mua tasks --help)")
    data_dir = resolve_data_dir(args.data_dir)
    if args.benchmark is None:
        entries = catalog(data_dir)
        _emit(args, [e.to_dict() for e in entries], catalog_text(entries))
        return 0
    bench = open_benchmark(args.benchmark, data_dir)
    if args.task_id is not None:
        view = describe(bench, find_task(bench, args.task_id, args.subset))
        _emit(args, view, task_text(view))
        return 0
    if args.subset is None:
        entries = catalog(data_dir, [bench.name])
        if entries[0].error:  # the benchmark named has no data here: an error, not a listing
            raise DataError(entries[0].error)
        _emit(args, entries[0].to_dict(), catalog_text(entries) + [
            f"(list a subset's tasks: mua tasks {bench.name} --subset SUBSET)"])
        return 0
    if args.subset not in bench.subsets:
        raise ConfigError(f"{bench.name} has no subset {args.subset!r}; choose from {', '.join(bench.subsets)}")
    split = None if args.all_tasks else (args.split or bench.default_split)
    tasks = bench.load_tasks(args.subset, split)
    rows = [(t, bench.describe_task(t)) for t in tasks]
    _emit(args, [{"task_id": t.id, "split": t.split, "summary": a.summary} for t, a in rows],
          [f"{bench.name} / {args.subset} / split {split or 'all'}: {len(tasks)} tasks"]
          + [summary_line(t.id, a) for t, a in rows])
    return 0


def _emit(args: argparse.Namespace, data: object, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        print("\n".join(lines))
