"""Wall time per pack tool call: a worker process (``benchmarks/pack/isolation.py``, today) against a thread per
call on a working copy (how a call ran before issue 41), the same tool, arguments and episode database, in one
run. A script, not a test: ``python tests/perf/bench_pack_tool_call.py [pack folder] [calls]``."""
from __future__ import annotations

import copy
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mua.benchmarks.pack.loader import load_pack
from mua.benchmarks.tau2.environment import serialise
from mua.benchmarks.tau2.overlay import Overlay
from mua.harness.io.datafiles import load_json

EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
TOOL, ARGS = "book_table", {"name": "Anna", "seat": "window", "hour": 7}


def thread_call(fn: Any, db: Overlay, kwargs: dict) -> str:
    """The earlier mechanism: the call in a daemon thread on a copy of the changed records, waited for."""
    work = Overlay(db.base)
    work.changed = copy.deepcopy(db.changed)
    box: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["content"] = serialise(fn(work, **kwargs))
        finally:
            done.set()
    threading.Thread(target=run, daemon=True).start()
    done.wait(10)
    db.changed = work.changed
    return box["content"]


def in_process_tool(folder: Path) -> Any:
    """The pack's tool imported here (only this benchmark does that: mua runs it in a worker)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_bench_pack_tools", folder / "tools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, TOOL)


def per_call(call: Any, calls: int) -> float:
    best = float("inf")
    for _ in range(3):  # best of three rounds: the machine is shared
        started = time.perf_counter()
        for i in range(calls):
            if i % 10 == 0:
                db = Overlay(base)  # a fresh episode every 10 calls: the overlay stays episode-sized
            call(db)
        best = min(best, (time.perf_counter() - started) / calls)
    return best


folder = Path(sys.argv[1]) if len(sys.argv) > 1 else EXAMPLE
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
base = load_json(folder, "db.json")
pack = load_pack(folder)
worker_tool = pack.domain.agent_tools[TOOL].func
fn = in_process_tool(folder)
per_call(lambda db: worker_tool(db, **ARGS), 50)  # warm: the spare worker has started
thread_s = per_call(lambda db: thread_call(fn, db, ARGS), calls)
worker_s = per_call(lambda db: worker_tool(db, **ARGS), calls)
print(f"pack {folder.name}, tool {TOOL}, {calls} calls x 3 rounds (best round)")
print(f"thread per call (before): {thread_s * 1e6:8.1f} us per call")
print(f"worker process (now):     {worker_s * 1e6:8.1f} us per call")
print(f"ratio worker / thread:    {worker_s / thread_s:8.2f}x")
