"""`mua sft`: supervised fine-tuning of a local checkpoint on exported episodes (`mua export`), the cold start
before `mua train`. Its arguments are read by TRL's parser, as `mua train`'s are
(mua.training.sft_config.parse_sft_config): ``--config FILE`` plus a flag for every mua and TRL SFTConfig
setting."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import ConfigError
from ..io.outputs import check_not_input
from .train import full_help, parse_launched, short_help


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sft", add_help=False, help="supervised fine-tuning on exported episodes (TRL SFTTrainer; LoRA optional)",
        description="mua sft --config FILE [--KEY VALUE ...]: see `mua sft --help` (`--help-all`: every "
                    "TRL setting)")
    p.set_defaults(func=run, passthrough=True)  # every argument goes to TRL's parser (cli.main hands them over)


def run(args: argparse.Namespace) -> int:
    if short_help("sft", args.rest):
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from ...training.sft import SftInterrupted, sft_train
        from ...training.sft_config import parse_sft_config
    except ImportError as exc:
        raise ConfigError(f"mua sft needs the train extra: pip install -e '.[train]' ({exc})") from None
    cfg = parse_launched(parse_sft_config, full_help(args.rest))
    if not cfg.policy:
        raise ConfigError("name the checkpoint to fine-tune: --policy DIR (or policy: in --config)")
    check_not_input(cfg.out, flag="--output-dir", inputs=[cfg.policy, cfg.dataset])
    try:
        done = sft_train(cfg)
    except SftInterrupted as exc:
        if os.environ.get("RANK", "0") == "0":
            print(f"mua sft: {exc}", file=sys.stderr)
        return 130
    if os.environ.get("RANK", "0") == "0":  # under accelerate/torchrun every rank runs this command
        loss = f", loss {done.losses[0]:.3f} -> {done.losses[-1]:.3f}" if done.losses else ""
        print(f"trained on {done.episodes} episodes, {done.steps} steps{loss}; saved {done.out}")
    return 0
