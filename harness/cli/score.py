"""`mua score`: replay given trajectories in fresh environments and score them with the benchmark's scorer."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ..errors import ConfigError
from ..io.data import resolve_data_dir
from ..io.outputs import add_overwrite_flag, check_output
from ..protocol import recorded_data_dir
from ..results.episodes import dumps
from ..results.stats import is_success
from ..results.store import RunDir, write_atomic
from ..run.build import open_model
from ..run.endpoints import with_judge
from ..tools.replay import TaskIndex, read_items, score_all
from .common import (
    add_data_dir,
    add_model_flags,
    add_timeouts,
    check_output_file,
    model_spec,
    positive_int,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="re-score trajectories (mua JSONL or official results files)",
                       description="Input: one JSON object per line {benchmark, subset, task_id, messages, "
                                   "variant?}, or a benchmark's own results file (any format an installed "
                                   "benchmark reads). Output: one line per input, same order.")
    p.add_argument("--trajectories", required=True, type=Path, help="input file")
    p.add_argument("--out", required=True, help="output JSONL ('-' for stdout)")
    add_model_flags(p, {"judge": "LLM judge for judged score components (skipped and flagged without one)"})
    p.add_argument("--concurrency", type=positive_int, default=8, help="trajectories scored at once (judge calls)")
    add_timeouts(p)
    add_data_dir(p, run=True)
    add_overwrite_flag(p, "--out")
    p.set_defaults(func=run)


def _data_dir(args: argparse.Namespace) -> Path:
    """--data-dir; else, for a run's own episodes.jsonl, the data folder the run recorded; else the usual
    search."""
    run = RunDir(args.trajectories.parent)
    config = run.read_config() if args.trajectories.name == run.episodes.name else None
    if config is None:
        return resolve_data_dir(args.data_dir)
    return recorded_data_dir(config, run.path, args.data_dir)


async def _score(args: argparse.Namespace) -> list[dict]:
    data_dir = _data_dir(args)
    pairs = list(read_items(args.trajectories, data_dir, TaskIndex(data_dir)))
    judge = open_model(model_spec(args, "judge", default_temperature=0.0))
    return await with_judge(judge, lambda j: score_all(pairs, j, args.concurrency), args.stall_timeout,
                            "Fix the endpoint (or raise --stall-timeout for a slow one) and re-run; nothing was "
                            "written")


def run(args: argparse.Namespace) -> int:
    if not args.trajectories.is_file():
        raise ConfigError(f"--trajectories {args.trajectories}: no such file")
    if args.out != "-":
        check_output_file("--out", Path(args.out))
        check_output(args.out, flag="--out", overwrite=args.overwrite, inputs=[args.trajectories])
    rows = asyncio.run(_score(args))
    text = "".join(dumps(r) + "\n" for r in rows)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        write_atomic(Path(args.out), text)
    errors = sum(1 for r in rows if r["error"])
    passed = sum(1 for r in rows if is_success(r["reward"]))
    print(f"scored {len(rows)} trajectories: {passed} pass, {errors} errors", file=sys.stderr)
    for row in [r for r in rows if r["error"]][:5]:
        print(f"  error: {row['error']}", file=sys.stderr)
    official = [r for r in rows if "official" in r]
    if official:
        unscored = sum(1 for r in official if r["error"] is not None or r["reward"] is None)
        agree = sum(1 for r in official if r["error"] is None and r["reward"] is not None
                    and is_success(r["reward"]) == _official_pass(r["official"]))
        extra = f" ({unscored} could not be scored: error rows or unknown rewards)" if unscored else ""
        print(f"agreement with the official verdicts: {agree}/{len(official)}{extra}", file=sys.stderr)
    return 1 if errors else 0  # every line still has its output row; a non-zero exit says some are errors


def _official_pass(official: dict) -> bool:
    for key in ("reward", "valid", "pass"):
        if key in official:
            value = official[key]
            return bool(value) if isinstance(value, bool) else is_success(float(value))
    return False
