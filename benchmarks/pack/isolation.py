"""Running one call of a pack's tool so that the pack's code cannot hang or end the run.

A pack's tools.py is code its author wrote; mua must survive whatever it does. Each call runs in its own
daemon thread, on a working copy of the episode's database, and the caller waits at most the pack's time
limit (``tool_timeout_s`` in pack.json, default 10 s):

* returns in time: its writes are kept and its result is serialised there (a self-containing list or a dict
  with tuple keys fails there, as an error of that call);
* raises anything, ``SystemExit`` and other ``BaseException`` included: the writes it made before raising are
  kept (tau2 keeps them too) and the call is an ``Error: ...`` tool result, counted like any tool error;
* runs past the limit: the call is an ``Error: ...`` tool result and the episode goes on with the database as
  it was before the call. Python cannot stop a thread, so the thread is abandoned: it keeps working on its
  own copy (never the episode's), and a daemon thread does not keep the process alive at exit. A tool that
  loops forever still costs a share of one core until mua exits; the error says so.

Why threads and not a process per pack: the database (a copy-on-write overlay of a shared base) and the
tools' results would have to cross a process boundary on every call, and tool calls are the hot path of
training rollouts; a thread costs ~0.1 ms.
"""
from __future__ import annotations

import copy
import threading
from typing import Any, Callable

from ..tau2.environment import serialise
from ..tau2.overlay import Overlay

DEFAULT_TIMEOUT_S = 10.0


class ToolFailed(Exception):
    """A pack tool's call that raised, ran too long or returned something that cannot be shown; ``str()`` is
    what the agent reads after ``Error: ``."""


def _working_copy(db: Any) -> Any:
    if isinstance(db, Overlay):
        work = Overlay(db.base)
        work.changed = copy.deepcopy(db.changed)  # only the records this episode changed: small
        return work
    return db


def _adopt(db: Any, work: Any) -> None:
    if work is not db:
        db.changed = work.changed


def run_isolated(fn: Callable[..., Any], db: Any, kwargs: dict, *, name: str, timeout_s: float) -> str:
    """``fn(db, **kwargs)`` serialised as tau2 shows a tool result; ToolFailed when it raises (anything), runs
    past ``timeout_s`` or returns a value that cannot be serialised."""
    work = _working_copy(db)
    box: dict[str, Any] = {}
    done = threading.Event()

    def call() -> None:
        try:
            result = fn(work, **kwargs)
        except BaseException as e:  # SystemExit from a pack's code must not end mua
            box["error"] = _describe(e)
        else:
            try:
                box["content"] = serialise(result)
            except ValueError as e:  # tau2's own message for an unsupported type
                box["error"] = str(e)
            except BaseException as e:  # a self-containing value, a dict with tuple keys
                box["error"] = f"tool returned a value that cannot be serialised ({_describe(e)})"
        finally:
            done.set()

    threading.Thread(target=call, name=f"mua-pack-tool-{name}", daemon=True).start()
    if not done.wait(timeout_s):
        raise ToolFailed(f"tool {name} did not return within {timeout_s:g} s (the pack's tool_timeout_s); "
                         "the call was abandoned and the database left as it was before it")
    _adopt(db, work)
    if "error" in box:
        raise ToolFailed(box["error"])
    return box["content"]


def _describe(e: BaseException) -> str:
    """An ordinary exception reads as tau2 shows it (its message); anything else names its type."""
    if isinstance(e, Exception) and not isinstance(e, RecursionError):
        return str(e)
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
