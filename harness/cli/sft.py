"""`mua sft`: supervised fine-tuning of a local checkpoint on exported episodes (`mua export`), the cold start
before `mua train`. Loss on the agent's own tokens only, rendered as RL renders them."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ConfigError, DataError
from ..outputs import add_overwrite_flag, check_output
from .common import finite_float, non_negative_float, non_negative_int, positive_float, positive_int
from ..files import field, type_name
from ..jsonl import BadLine, iter_raw_lines, loads_line


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sft", help="supervised fine-tuning on exported episodes (TRL SFTTrainer)",
                       description="Trains --policy on a dataset written by `mua export` with TRL's SFTTrainer: each "
                                   "episode is tokenised exactly as `mua train` streams it, and only the agent's "
                                   "own replies are trained on. Needs the train extra.")
    p.add_argument("--policy", required=True, help="checkpoint directory to start from")
    p.add_argument("--dataset", required=True, type=Path, help="`mua export` output (datasets folder or .jsonl)")
    p.add_argument("--output-dir", required=True, help="where the fine-tuned checkpoint is written")
    add_overwrite_flag(p, "the checkpoint")
    p.add_argument("--min-reward", type=finite_float, help="train only on rows with at least this reward")
    p.add_argument("--epochs", type=positive_float, default=1.0, help="passes over the dataset (default 1)")
    p.add_argument("--max-steps", type=_steps, default=-1, help="optimizer steps (overrides --epochs when > 0)")
    p.add_argument("--learning-rate", type=positive_float, default=2e-5)
    p.add_argument("--batch-size", type=positive_int, default=8)
    p.add_argument("--weight-decay", type=non_negative_float, default=0.0,
                   help="AdamW weight decay (default 0, as TRL's)")
    p.add_argument("--lr-scheduler", default="linear", choices=("linear", "cosine", "constant"),
                   help="learning-rate schedule over the steps (default linear decay to 0, as TRL's)")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def _steps(text: str) -> int:
    """-1 (as many steps as --epochs make) or a positive number of steps."""
    if text.strip() == "-1":
        return -1
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"-1 or {e}") from None


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        raise ConfigError(f"no dataset at {path} (write one with `mua export RUN --out {path}`)")
    if path.is_file():
        rows = []
        for lineno, raw, _complete in iter_raw_lines(path):
            try:
                row = loads_line(raw)
            except BadLine as e:
                raise DataError(f"dataset {path}, line {lineno}: {e}") from None
            if not isinstance(row, dict):
                raise DataError(f"dataset {path}, line {lineno}: expected a JSON object, found {type_name(row)}")
            where = f"dataset {path}, line {lineno}"
            field(row, "messages", list, where=where)
            field(row, "tools", str, where=where, default=None)
            field(row, "reward", float, where=where, default=None, nullable=True)
            rows.append(row)
        return rows
    try:
        import datasets
    except ImportError:
        raise ConfigError("mua sft needs the train extra: pip install -e '.[train]'") from None
    try:
        return list(datasets.load_from_disk(str(path)))
    except (FileNotFoundError, ValueError) as e:
        raise ConfigError(f"{path}: not a saved dataset ({e})") from None


def run(args: argparse.Namespace) -> int:
    if not (Path(args.policy) / "config.json").is_file():
        raise ConfigError(f"--policy {args.policy}: not a model checkpoint directory (no config.json)")
    check_output(args.output_dir, flag="--output-dir", overwrite=args.overwrite, inputs=[args.policy, args.dataset])
    rows = read_rows(args.dataset)
    if args.min_reward is not None:
        rows = [r for r in rows if isinstance(r.get("reward"), (int, float)) and r["reward"] >= args.min_reward]
    missing = [k for k in ("messages", "tools") if rows and k not in rows[0]]
    if not rows or missing:
        raise ConfigError(f"{args.dataset}: " + ("no rows to train on" if not rows else
                                                 f"rows lack {', '.join(missing)} (write it with `mua export`)"))
    from mua.training.sft import sft_train

    losses = sft_train(args.policy, rows, args.output_dir, max_steps=args.max_steps, epochs=args.epochs,
                       learning_rate=args.learning_rate, batch_size=args.batch_size, seed=args.seed,
                       progress=not args.no_progress, lr_scheduler_type=args.lr_scheduler,
                       weight_decay=args.weight_decay)
    print(f"trained on {len(rows)} episodes, {len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}; "
          f"saved {args.output_dir}")
    return 0
