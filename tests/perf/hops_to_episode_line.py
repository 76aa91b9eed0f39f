"""Hops (mua function frames) from `mua eval`'s entry point to the write of one task's line in episodes.jsonl:
the Python stack at the first call of results.dumps made by JsonlAppender.append, mua frames only (asyncio's
own frames between them are left out). The workers run as asyncio tasks, so the functions that created them
(batch.run_eval, then the scheduler) are not on that stack: add 2 for the logical chain.
Usage: python tests/perf/hops_to_episode_line.py ../shared/data"""
import inspect
import sys
import tempfile
from pathlib import Path

from mua.harness.cli import main
from mua.harness.results import store as results

stacks: list[list[str]] = []
real_dumps = results.dumps


def traced_dumps(obj):
    frames = [f for f in inspect.stack()[1:] if "/mua/" in f.filename or "/harness/" in f.filename]
    if not stacks and any(f.function == "append" for f in frames) and isinstance(obj, dict) and "messages" in obj:
        stacks.append([f"{Path(f.filename).name}:{f.function}" for f in reversed(frames)] + ["results.py:dumps"])
    return real_dumps(obj)


results.dumps = traced_dumps
out = Path(tempfile.mkdtemp()) / "run"
main(["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold", "--task-ids", "0", "--no-progress",
      "--data-dir", sys.argv[1], "--out", str(out)])
chain = stacks[0]
print(f"{len(chain)} hops: " + " -> ".join(chain))
