"""`mua train`: GRPO training of a local policy checkpoint on a benchmark's train split, with the episodes
played by the same runner as `mua eval` (see mua.training). Its arguments are read by TRL's parser
(mua.training.config.parse_config): ``--config FILE`` plus a flag for every mua and TRL setting."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import ConfigError
from ..io.data import resolve_data_dir
from ..run.endpoints import preflight


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", add_help=False, help="GRPO-train a local checkpoint on benchmark tasks with a simulated user",
        description="mua train --config FILE [--KEY VALUE ...]: see `mua train --help` (`--help-all`: every "
                    "TRL setting)")
    p.set_defaults(func=run, passthrough=True)  # every argument goes to TRL's parser (cli.main hands them over)


def short_help(command: str, rest: list[str]) -> bool:
    """``--help``/``-h``: print the command's short help, written beforehand from its settings classes
    (``python -m mua.training.help``), and say so; nothing heavy is imported (TRL's parser takes 10 s to build).
    ``--help-all`` goes to TRL's parser as ``--help`` (see :func:`full_help`)."""
    if "-h" not in rest and "--help" not in rest:
        return False
    sys.stdout.write(Path(__file__).with_name(f"help_{command}.txt").read_text(encoding="utf-8"))
    return True


def full_help(rest: list[str]) -> list[str]:
    """The arguments for TRL's parser: ``--help-all`` is its ``--help`` (every mua and TRL setting)."""
    return ["--help" if arg == "--help-all" else arg for arg in rest]


def parse_launched(parse_config, rest: list[str]):
    """TRL's parser builds the TrainingArguments, which joins torch.distributed when launched under torchrun or
    accelerate: a busy MASTER_PORT or an unreachable MASTER_ADDR is the user's to fix, so say it in one line."""
    import torch.distributed as dist

    try:
        return parse_config(rest)
    except dist.DistError as exc:
        where = f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"torch.distributed could not start at MASTER_ADDR:MASTER_PORT {where} ({reason}); "
                          "free that port or launch with another --master_port") from None


def run(args: argparse.Namespace) -> int:
    if short_help("train", args.rest):
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from ...training.config import parse_config
        from ...training.grpo import NoLearningSignal, TrainingInterrupted, train
    except ImportError as exc:
        raise ConfigError(f"mua train needs torch, transformers, trl and datasets ({exc})") from None
    from ...training.grpo import endpoint_specs
    from ..registry import open_benchmark

    cfg = parse_launched(parse_config, full_help(args.rest))
    if not cfg.benchmark:
        raise ConfigError("name a benchmark: --benchmark NAME (or benchmark: in --config)")
    bench = open_benchmark(cfg.benchmark, resolve_data_dir(cfg.data_dir))
    cfg.validate_for(bench)
    preflight(endpoint_specs(cfg, bench))  # a dead or silent endpoint is reported now, not after the model loads
    try:
        out = train(cfg, bench)
    except (TrainingInterrupted, NoLearningSignal) as exc:  # a checkpoint is saved; the message says which
        if os.environ.get("RANK", "0") == "0":  # every rank stopped the same way; one says so
            print(f"mua train: {exc}", file=sys.stderr)
        return 130 if isinstance(exc, TrainingInterrupted) else 3
    if os.environ.get("RANK", "0") == "0":  # under accelerate/torchrun every rank runs this command
        from ...training.hint import eval_command, shown

        print(f"trained policy written to {out}; score it on the held-out tasks with:\n  "
              f"{shown(eval_command(cfg, bench, out))}")
    return 0
