"""`mua export`: a run's finished episodes as a Hugging Face dataset (or JSONL) for supervised training."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ConfigError
from ..io.outputs import add_overwrite_flag, check_output
from ..protocol import recorded_data_dir
from ..tools.export import ROLES
from .common import add_data_dir, finite_float

FORMATS = ("datasets", "jsonl")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a run's episodes as a training dataset",
                       description="One row per finished episode: the agent's view (messages, system prompt "
                                   "first), the tools it was offered (JSON text), reward and score components. "
                                   "Errored and unscored episodes are left out.")
    p.add_argument("run", type=Path, help="run directory written by mua eval")
    p.add_argument("--out", required=True, type=Path, help="output directory (datasets) or file (jsonl)")
    p.add_argument("--format", choices=FORMATS, default="datasets",
                   help="datasets: Hugging Face save_to_disk folder (default); jsonl: one row per line")
    p.add_argument("--min-reward", type=finite_float, help="only episodes with at least this reward (e.g. 1)")
    p.add_argument("--role", choices=ROLES, default="agent",
                   help="whose side: agent (default), or user: the user simulator's view (the scenario prompt as the "
                        "system message, the agent's words as user turns, the user's replies as assistant turns), "
                        "to train a user model with mua sft")
    add_data_dir(p, run=True)
    add_overwrite_flag(p, "--out")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..registry import open_benchmark
    from ..results.store import RunDir
    from ..tools.export import export_rows, write_dataset

    config = RunDir(args.run).read_config()
    if config is None:
        raise ConfigError(f"{args.run} is not a mua run (no config.json)")
    bench = open_benchmark(str(config.get("benchmark")), recorded_data_dir(config, args.run, args.data_dir))
    check_output(args.out, flag="--out", overwrite=args.overwrite, inputs=[args.run])
    rows = export_rows(args.run, bench, args.min_reward, role=args.role)
    if not rows:
        raise ConfigError(f"{args.run}: no finished episodes" + (f" with reward >= {args.min_reward}"
                                                                 if args.min_reward is not None else ""))
    write_dataset(rows, args.out, args.format)
    print(f"exported {len(rows)} episodes ({args.role} side) -> {args.out}")
    return 0
