"""`mua model tiny OUT_DIR`: build the offline test checkpoint (a tiny random model with a tool-calling chat
template), usable anywhere a model is named, e.g. `mua eval --agent-model OUT_DIR`."""
from __future__ import annotations

import argparse

from ..errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("model", help="build the tiny offline test checkpoint",
                       description="Builds a tiny random-initialised causal LM and tokenizer with a tool-calling "
                                   "chat template, entirely offline. Its scores are near zero: it is for tests "
                                   "and offline examples, not for measuring anything.")
    p.add_argument("what", choices=("tiny",))
    p.add_argument("out_dir", help="checkpoint directory to write")
    p.add_argument("--seed", type=int, default=0, help="weights seed (same seed, byte-identical files)")
    p.add_argument("--hidden-size", type=_positive, default=64, help="hidden size (default 64)")
    p.add_argument("--heads", type=_positive, default=1,
                   help="attention heads; hidden size / heads must be even (default 1; vLLM on CPU wants heads of "
                        "at least 32)")
    p.add_argument("--layers", type=_positive, default=2, help="transformer layers (default 2)")
    p.add_argument("--sliding-window", type=_positive, default=None, metavar="N",
                   help="every layer attends to the last N tokens only (default: the whole sequence); helps a "
                        "tiny model learn to copy from the conversation behind a long system prompt")
    p.add_argument("--single-digits", action="store_true",
                   help="one token per digit (default: BPE merges digits), so ids are copied digit by digit")
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    try:
        from ..models.tiny import build_tiny_checkpoint  # lazy: needs torch and transformers (extra `local`)
    except ImportError as e:
        raise ConfigError(f'the tiny model needs torch and transformers ({e}): pip install -e ".[local]"') from None

    path = build_tiny_checkpoint(args.out_dir, seed=args.seed, hidden_size=args.hidden_size,
                                 heads=args.heads, layers=args.layers, sliding_window=args.sliding_window,
                                 single_digits=args.single_digits)
    print(f"tiny checkpoint written to {path}; try: mua eval --benchmark NAME --limit 2 "
          f"--agent-model {path} --user-model ... (scores will be near zero)")
    return 0
