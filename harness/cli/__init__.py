"""The ``mua`` command. Each subcommand lives in its own module here, which registers itself with
``register(subparsers)`` and sets ``func`` to a ``run(args) -> int``; this file only wires them together."""

from __future__ import annotations

import os
import signal
import sys

from . import signals


def _starting_line(signum: int) -> str:
    return f"mua: {_stopped(signum)} while starting; nothing was written"


def _stopped(signum: int) -> str:
    return "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"


_AS_PROGRAM = signals.starting(_starting_line) if os.path.basename(sys.argv[0]) == "mua" else None  # the imports below

import argparse  # noqa: E402  (after the handlers: a signal while these load is one line too)
import importlib  # noqa: E402
import logging  # noqa: E402

from ..errors import MuaError  # noqa: E402
from ..io.urls import redact_url  # noqa: E402
from ..quiet import silence_unactionable  # noqa: E402

DESCRIPTION = ("mua: evaluate and train tool-using LLM agents that talk with a simulated user, on the installed "
               "benchmarks (see `mua eval --help`).")

COMMANDS = ("eval", "score", "data", "leaderboard", "gate", "view", "review", "train", "sft", "export", "model",
            "tasks", "play", "sweep", "users", "study")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        # one line, as every other mua error (a flag's bad value names the flag and the value)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone (a run imports only the modules of its own command;
    `mua --help` and a misspelt command see them all)."""
    parser = _Parser(prog="mua", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (command,) if command in COMMANDS else COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    previous = signals.starting(_starting_line)  # flags and the commands' imports: nothing written yet
    try:
        return _main(argv)
    finally:
        signals.restore(_AS_PROGRAM or previous)


def _main(argv: list[str] | None) -> int:
    from .spelling import one_spelling

    silence_unactionable()  # library notices the user cannot act on, before any library is imported
    argv = one_spelling(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser(argv[0] if argv else None)
    args, rest = parser.parse_known_args(argv)
    if rest and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest  # a command with its own parser (train: TRL's) reads these
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")

    def stopped(signum: int) -> str:
        return f"mua {args.command}: {_stopped(signum)}; re-run the same command to resume"
    signals.running(stopped)
    try:
        return int(args.func(args) or 0)
    except MuaError as e:
        print(f"mua {args.command}: error: {redact_url(str(e))}", file=sys.stderr)
        return 2
    except OSError as e:  # an unwritable or vanished path, a full disk: one line, never a traceback
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        print(f"mua {args.command}: error: cannot write or read{where}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (signals.Terminated)
        signum = signal.SIGTERM if isinstance(e, signals.Terminated) else signal.SIGINT
        signals.say(stopped(signum))
        return signals.CODES[signum]


if __name__ == "__main__":
    sys.exit(main())
