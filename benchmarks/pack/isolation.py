"""Running a pack's tools.py in processes of its own, so that the pack's code cannot hang, crash or end mua.

A pack's tools.py is code its author wrote; mua must survive whatever it does, at import and in every call,
``os._exit``, a signal and a segfault included. :class:`ToolWorkers` keeps worker processes (``worker.py``)
that have imported tools.py: one is started when the pack is loaded (the import, bounded by the pack's
``tool_timeout_s``), and each call takes an idle one (or starts one: one per concurrent call at most) and
sends it the tool's name, its arguments and the episode's changed records (a copy-on-write ``Overlay``: only
the records this episode changed, so small); the worker answers with the result, serialised there, and the
changed records after the call. The caller waits at most ``tool_timeout_s``:

* returns in time: its writes are kept and its result is the tool message;
* raises anything, ``SystemExit`` and other ``BaseException`` included: the writes it made before raising are
  kept (tau2 keeps them too) and the call is an ``Error: ...`` tool result, counted like any tool error;
* runs past the limit, or ends its process: the call is an ``Error: ...`` tool result, the episode goes on
  with the database as it was before the call, and the worker is killed (the next call starts a fresh one).

A failed import is one ``DataError`` line naming tools.py (``pack: tools.py: exited with 3 while importing``).
Cost: a call is a round trip over a pipe instead of a thread start (``tests/perf/bench_pack_tool_call.py``).
"""
from __future__ import annotations

import atexit
import io
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

from mua.harness.errors import DataError
from mua.harness.types import ToolSpec

from ..tau2.domain import Param, ToolDef
from ..tau2.overlay import Overlay
from .worker import HEADER, MAX_FRAME, frame

DEFAULT_TIMEOUT_S = 10.0
STARTUP_S = 120.0  # a worker's Python and mua imports on a loaded machine, before the pack's own time starts
_COMMAND = "from mua.benchmarks.pack.worker import main; main()"
# classes an answer may hold (a record a tool stored); anything else in an answer is refused, never imported
_ALLOWED = {("mua.benchmarks.tau2.domain", "Record"), ("datetime", "datetime"), ("datetime", "date")}
_LIVE: set[subprocess.Popen] = set()  # every worker of this process, ended at exit


class ToolFailed(Exception):
    """A pack tool's call that raised, ran too long, ended its worker or returned something that cannot be
    shown; ``str()`` is what the agent reads after ``Error: ``."""


class _Broken(Exception):
    """The worker did not answer: it ran past the deadline (``timed_out``) or its process ended."""

    def __init__(self, how: str, timed_out: bool):
        super().__init__(how)
        self.timed_out = timed_out
        self.started = True  # False: the worker's own start failed, before the pack's code ran


class _Answers(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a value of type {module}.{name}")


def _ended(proc: subprocess.Popen) -> str:
    """How a worker's process ended, in words ("exited with 3", "was killed by signal SIGSEGV")."""
    try:
        code = proc.wait(timeout=1)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return "stopped answering"
    if code >= 0:
        return f"exited with {code}"
    try:
        return f"was killed by signal {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def _kill(proc: subprocess.Popen) -> None:
    _LIVE.discard(proc)
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the tool's own children too
        except OSError:
            proc.kill()
        proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


@atexit.register
def _end_all() -> None:
    for proc in list(_LIVE):
        _kill(proc)


class _Worker:
    """One process that has imported tools.py."""

    def __init__(self, tools: Path, relpath: str, base: dict, timeout_s: float):
        self.proc = subprocess.Popen([sys.executable, "-c", _COMMAND], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, start_new_session=True)
        _LIVE.add(self.proc)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        try:
            self.exchange(None, STARTUP_S)  # Python and mua starting: not the pack's time
        except _Broken as e:
            e.started = False
            raise
        self.answer = self.exchange({"tools": str(tools), "relpath": relpath, "base": base}, timeout_s)

    def exchange(self, message: Any, timeout_s: float) -> dict:
        """Send one request (None: none, read the next answer) and read its answer within ``timeout_s``;
        _Broken otherwise (the worker is then killed)."""
        deadline = time.monotonic() + timeout_s
        try:
            if message is not None:
                self._send(frame(message), deadline)
            head = self._receive(HEADER.size, deadline)
            size = HEADER.unpack(head)[0]
            if size > MAX_FRAME:
                raise _Broken("answered with a frame too large to be an answer", timed_out=False)
            answer = _Answers(io.BytesIO(self._receive(size, deadline))).load()
        except _Broken:
            self.close()
            raise
        except Exception as e:  # a value that is refused or cannot be read back
            self.close()
            raise _Broken(f"answered with something that cannot be read back ({e})", timed_out=False) from None
        if not isinstance(answer, dict):
            self.close()
            raise _Broken("answered with something that is not an answer", timed_out=False)
        return answer

    def _wait(self, fd: int, deadline: float, writing: bool) -> None:
        left = max(deadline - time.monotonic(), 0)
        ready = select.select([], [fd], [], left)[1] if writing else select.select([fd], [], [], left)[0]
        if not ready:
            raise _Broken("timed out", timed_out=True)

    def _send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(self._in, deadline, writing=True)
            try:
                view = view[os.write(self._in, view):]
            except BlockingIOError:
                continue
            except OSError:  # the worker is gone (broken pipe)
                raise _Broken(_ended(self.proc), timed_out=False) from None

    def _receive(self, size: int, deadline: float) -> bytes:
        parts, got = [], 0
        while got < size:
            self._wait(self._out, deadline, writing=False)
            try:
                chunk = os.read(self._out, min(size - got, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise _Broken(_ended(self.proc), timed_out=False)
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        _kill(self.proc)


class ToolWorkers:
    """The worker processes of one pack's tools.py: idle ones, and one spare being started whenever none is idle
    (a call waits for whichever comes first, a worker another call gives back or the spare), so a slow tool
    never holds up the calls of other episodes."""

    def __init__(self, tools: Path, relpath: str, base: dict, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.tools, self.relpath, self.base, self.timeout_s = tools, relpath, base, timeout_s
        self._idle: list[_Worker] = []
        self._ready = threading.Condition()
        self._starting = 0
        self._failure: Optional[str] = None  # why the last spare could not start
        self._closed = False

    def start(self) -> list:
        """Import tools.py in a first worker: the tools it defines, as ``worker.py`` describes them; DataError
        (one line naming tools.py) when the import fails, runs past the time limit or ends the process."""
        if not self.tools.is_file():
            raise DataError(f"pack: missing {self.relpath} (plain Python functions, one per tool)")
        with self._ready:
            self._start_spare()  # imports beside the first, so a second call need not wait for one
        try:
            worker = self._spawn("importing")
        except DataError:
            self.close()  # the spare too, once it has started
            raise
        self._give_back(worker)
        return worker.answer["tools"]

    def _spawn(self, doing: str) -> _Worker:
        try:
            worker = _Worker(self.tools, self.relpath, self.base, self.timeout_s)
        except _Broken as e:
            how = (f"did not finish within {self.timeout_s:g} s (the pack's tool_timeout_s)" if e.timed_out
                   else str(e))
            if not e.started:
                how = f"the process to run it did not start ({e})"
            raise DataError(f"pack: {self.relpath}: {how} while {doing}") from None
        except OSError as e:
            raise DataError(f"pack: {self.relpath}: cannot start a process to run it ({e})") from None
        if "error" in worker.answer:
            worker.close()
            raise DataError(str(worker.answer["error"]))
        return worker

    def _start_spare(self) -> None:
        # called holding self._ready
        self._starting += 1
        threading.Thread(target=self._spare, name="mua-pack-worker-start", daemon=True).start()

    def _spare(self) -> None:
        worker, failure = None, None
        try:
            worker = self._spawn("importing it again for a call")
        except DataError as e:
            failure = str(e)
        with self._ready:
            self._starting -= 1
            if worker is not None and self._closed:
                worker.close()
            elif worker is not None:
                self._idle.append(worker)
            else:
                self._failure = failure
            self._ready.notify_all()

    def _give_back(self, worker: _Worker) -> None:
        with self._ready:
            self._idle.append(worker)
            self._ready.notify()

    def _take(self) -> _Worker:
        with self._ready:
            while not self._idle:
                if self._failure is not None:
                    failure, self._failure = self._failure, None
                    raise ToolFailed(failure)
                if not self._starting:
                    self._start_spare()
                self._ready.wait(0.5)
            worker = self._idle.pop()
            if not self._idle and not self._starting:
                self._start_spare()
            return worker

    def call(self, name: str, db: Any, kwargs: dict) -> str:
        """Tool ``name`` on the episode's database ``db`` (its changed records are replaced by the call's):
        the tool message text, or ToolFailed."""
        if not isinstance(db, Overlay):
            raise TypeError(f"pack: a tool's database must be an Overlay, got {type(db).__name__}")
        worker = self._take()
        try:
            answer = worker.exchange((name, kwargs, db.changed), self.timeout_s)
        except _Broken as e:
            if e.timed_out:
                raise ToolFailed(f"tool {name} did not return within {self.timeout_s:g} s (the pack's "
                                 "tool_timeout_s); the call was stopped and the database left as it was before "
                                 "it") from None
            raise ToolFailed(f"tool {name} ended the process it ran in ({e}); the database was left as it was "
                             "before the call") from None
        self._give_back(worker)
        if isinstance(answer.get("changed"), dict):
            db.changed = answer["changed"]
        if "error" in answer:
            raise ToolFailed(str(answer["error"]))
        return str(answer["content"])

    def close(self) -> None:
        """End the idle workers, and any spare still starting once it has."""
        with self._ready:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()


def load_tools(path: Path, relpath: str, base: dict, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, ToolDef]:
    """The pack's tools, imported and run in worker processes: each tool's dispatch sends the call to a worker,
    so the caller gets text or ToolFailed (an "Error: ..." tool result), whatever the code does."""
    workers = ToolWorkers(path, relpath, base, timeout_s)
    tools = {}
    for name, spec_name, description, parameters, extra, params, owner, mutates, kind in workers.start():
        tools[name] = ToolDef(spec=ToolSpec(name=spec_name, description=description, parameters=parameters,
                                            extra=extra),
                              func=_dispatch(workers, name), params=tuple(Param(p, r) for p, r in params),
                              owner=owner, mutates=mutates, kind=kind)
    return tools


def _dispatch(workers: ToolWorkers, name: str) -> Callable:
    def call(db: Any, **kwargs: Any) -> str:
        return workers.call(name, db, kwargs)
    return call
