"""The process a pack's tools.py runs in (``isolation.py`` starts it and talks to it): it imports tools.py, says
which tools it defines, then runs one call at a time on the copy-on-write database state the caller sends.

Protocol, over the process's own stdin/stdout (moved off fds 0 and 1 first, so that a tool that prints or reads
the terminal cannot corrupt it): frames of an 8-byte length and a pickle. The first request is
``{"ready": True}`` from the worker once mua's own modules are imported; then
``{"tools": path, "relpath": name, "base": database}``; the answer ``{"tools": [description, ...]}`` or
``{"error": line}``. Each call is ``(tool, arguments, changed records)`` and its answer
``{"content": text | "error": line, "changed": records}``: writes are kept when the tool returns or raises
(as tau2 keeps them). The caller reads answers with a restricted unpickler: nothing in them names code."""
from __future__ import annotations

import os
import pickle
import signal
import struct
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO, Optional

HEADER = struct.Struct("!Q")
MAX_FRAME = 1 << 30  # a frame longer than this is a broken worker, not an answer


def frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def _read(stream: BinaryIO, size: int) -> Optional[bytes]:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _receive(stream: BinaryIO) -> Any:
    head = _read(stream, HEADER.size)
    if head is None:
        return None
    body = _read(stream, HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)  # from mua itself, the parent


def _orphaned(parent: int) -> None:
    # mua was killed without a word to its workers: a worker stuck in a tool would otherwise spin forever
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def describe(e: BaseException) -> str:
    """An ordinary exception reads as tau2 shows it (its message); anything else names its type."""
    if isinstance(e, Exception) and not isinstance(e, RecursionError):
        return str(e)
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _load(request: dict) -> tuple[dict, list]:
    from mua.harness.errors import DataError

    from .tooldefs import import_tools, tool_defs
    relpath = request["relpath"]
    try:
        tools = tool_defs(import_tools(Path(request["tools"]), relpath), relpath)
    except DataError:
        raise
    except BaseException as e:  # anything the author's module does at import, BaseException included
        raise DataError(f"pack: importing {relpath} failed: {type(e).__name__}: {e}") from None
    described = [(name, t.spec.name, t.spec.description, t.spec.parameters, t.spec.extra,
                  [(p.name, p.required) for p in t.params], t.owner, t.mutates, t.kind) for name, t in tools.items()]
    return tools, described


def _call(tools: dict, base: dict, request: tuple) -> dict:
    from ..tau2.domain import Record
    from ..tau2.environment import serialise
    from ..tau2.overlay import Overlay
    name, kwargs, changed = request
    work = Overlay(base)
    work.changed = changed
    answer: dict[str, Any] = {}
    try:
        result = tools[name].func(work, **kwargs)
        if isinstance(result, dict) and not isinstance(result, Record):
            result = Record(result)  # a dict a tool returns is shown verbatim as JSON (as tau2's model dumps)
    except BaseException as e:  # SystemExit from a pack's code ends neither this worker nor mua
        answer["error"] = describe(e)
    else:
        try:
            answer["content"] = serialise(result)
        except ValueError as e:  # tau2's own message for an unsupported type
            answer["error"] = str(e)
        except BaseException as e:  # a self-containing value, a dict with tuple keys
            answer["error"] = f"tool returned a value that cannot be serialised ({describe(e)})"
    answer["changed"] = work.changed
    return answer


def _answer(out: BinaryIO, answer: dict) -> None:
    try:
        data = frame(answer)
    except BaseException as e:  # the tool stored something in the database that cannot travel back
        data = frame({"error": f"tool stored a value in the database that cannot be kept ({describe(e)}); "
                               "its writes were discarded"})
    out.write(data)
    out.flush()


def main() -> None:
    try:
        _serve()
    except (BrokenPipeError, ConnectionResetError):  # mua ended (a signal, a crash): nobody is left to answer
        os._exit(0)  # not sys.exit: flushing the dead channel at exit would print the same error again


def _serve() -> None:
    channel_in = os.fdopen(os.dup(0), "rb")
    channel_out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # what a tool prints goes to mua's stderr, never into the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # mua handles Ctrl-C and ends its workers
    threading.Thread(target=_orphaned, args=(os.getppid(),), daemon=True).start()
    from ..tau2 import environment  # noqa: F401
    from . import tooldefs  # noqa: F401  mua's own imports, before "ready": the pack's time limit is its own
    channel_out.write(frame({"ready": True}))
    channel_out.flush()
    request = _receive(channel_in)
    if request is None:
        return
    base = request["base"]
    try:
        tools, described = _load(request)
    except Exception as e:
        channel_out.write(frame({"error": str(e)}))
        channel_out.flush()
        return
    channel_out.write(frame({"tools": described}))
    channel_out.flush()
    while (call := _receive(channel_in)) is not None:
        _answer(channel_out, _call(tools, base, call))


if __name__ == "__main__":
    main()
