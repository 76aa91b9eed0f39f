"""SIGINT and SIGTERM, at any moment: one line saying what was kept, exit 130 / 143, within a second.

Before a command starts its work (start-up: imports, flags) nothing has been written, so the handler says so and
exits at once. Once the command runs, both signals become ``KeyboardInterrupt`` (:class:`Terminated` for
SIGTERM), the one path Ctrl-C has always taken: ``main`` prints what was kept. A run whose unwinding takes
longer than ``GRACE_S`` (a thread still in a model call or a pack tool) is ended by a timer with the same
line: result files are append-only, so a resume is exact either way."""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable, Optional

GRACE_S = 0.8
CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Terminated(KeyboardInterrupt):
    """SIGTERM, taking the path of Ctrl-C."""


_lock = threading.RLock()  # a handler may run while its own thread is in say()
_state: dict[str, Any] = {"line": None, "signal": None, "said": False}


def say(line: str, raw: bool = False) -> None:
    """Print the line that ends the command, once (main and the timer may both reach here); ``raw`` (in a
    signal handler) straight to fd 2, as the stream may be in the middle of a write."""
    with _lock:
        if _state["said"]:
            return
        _state["said"] = True
    if raw:
        os.write(2, (line + "\n").encode("utf-8", "replace"))
    else:
        print(line, file=sys.stderr, flush=True)


def _starting(signum: int, frame: Any) -> None:
    _end(signum)


def _end(signum: int) -> None:
    say(_state["line"](signum), raw=True)
    os._exit(CODES[signum])


def _running(signum: int, frame: Any) -> None:
    if _state["signal"] is not None:
        return  # a second signal while unwinding: the timer already bounds the exit
    _state["signal"] = signum
    timer = threading.Timer(GRACE_S, _end, args=(signum,))
    timer.daemon = True
    timer.start()
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def starting(line: Callable[[int], str]) -> dict:
    """Start-up: a signal prints ``line(signum)`` and exits. Returns the handlers it replaced (``restore``)."""
    _state.update(line=line, signal=None, said=False)
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        return {}
    return {sig: signal.signal(sig, _starting) for sig in CODES}


def running(line: Callable[[int], str]) -> None:
    """The command's work: a signal unwinds it as Ctrl-C does; ``line(signum)`` if it takes past GRACE_S."""
    _state["line"] = line
    if threading.current_thread() is threading.main_thread():
        for sig in CODES:
            signal.signal(sig, _running)


def restore(previous: Optional[dict]) -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
