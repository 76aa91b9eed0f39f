"""The ``mua`` command. Each subcommand lives in its own module here, which registers itself with
``register(subparsers)`` and sets ``func`` to a ``run(args) -> int``; this file only wires them together."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from ..errors import MuaError
from ..urls import redact_url

DESCRIPTION = ("mua: evaluate and train tool-using LLM agents that talk with a simulated user, on the installed "
               "benchmarks (see `mua eval --help`).")

COMMANDS = ("eval", "score", "data", "leaderboard", "gate", "view", "train", "sft", "export", "model",
            "tasks", "play", "sweep", "users")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        # one line, as every other mua error (a flag's bad value names the flag and the value)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mua", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .spelling import one_spelling

    parser = build_parser()
    args, rest = parser.parse_known_args(one_spelling(sys.argv[1:] if argv is None else list(argv)))
    if rest and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest  # a command with its own parser (train: TRL's) reads these
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except MuaError as e:
        print(f"mua {args.command}: error: {redact_url(str(e))}", file=sys.stderr)
        return 2
    except OSError as e:  # an unwritable or vanished path, a full disk: one line, never a traceback
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        print(f"mua {args.command}: error: cannot write or read{where}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"mua {args.command}: interrupted; re-run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
