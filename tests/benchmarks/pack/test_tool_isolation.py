"""A pack's tools cannot hang or end a run: a tool that sleeps past its time limit, loops forever, raises
SystemExit or BaseException, or returns something that cannot be serialised is one tool error inside its
episode, and the other episodes keep running meanwhile."""
import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mua.benchmarks.pack import PackBenchmark
from mua.harness.agents import ScriptedAgent
from mua.harness.errors import DataError
from mua.harness.runner import run_episode
from mua.harness.types import Message, ToolCall

EXAMPLE = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"

HOSTILE_TOOLS = '''

import time as _time


def nap(db, seconds: float) -> str:
    """Sleep, then answer."""
    _time.sleep(seconds)
    return "awake"


def spin(db) -> str:
    """Loop (for 5 s: long past the limit, short enough not to slow the rest of the test session)."""
    db.insert("bookings", "SPIN", {"booking_id": "SPIN"})
    until = _time.monotonic() + 5
    while _time.monotonic() < until:
        pass


def leave(db, code: int) -> str:
    """Exit the process."""
    raise SystemExit(code)


def escape(db) -> str:
    """Raise a bare BaseException."""
    db.insert("bookings", "ESC", {"booking_id": "ESC"})
    raise BaseException("out")


def loop_list(db) -> list:
    """Return a list that contains itself."""
    x = []
    x.append(x)
    return x


def tuple_keys(db) -> dict:
    """Return a dict with tuple keys."""
    return {(1, 2): "x"}
'''


@pytest.fixture
def pack(tmp_path) -> Path:
    folder = tmp_path / "pack"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    with open(folder / "tools.py", "a") as f:
        f.write(HOSTILE_TOOLS)
    meta = json.loads((folder / "pack.json").read_text())
    meta["tool_timeout_s"] = 1
    (folder / "pack.json").write_text(json.dumps(meta))
    return folder


def call(name: str, **args) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(id="c1", name=name, arguments=json.dumps(args))])


def play(bench, task, *messages):
    agent = ScriptedAgent([[*messages, Message(role="assistant", content="Done.")]])
    return run_episode(bench, task, agent, bench.gold_user(task))


def tool_result(result) -> Message:
    return next(m for m in result.messages if m.role == "tool")


@pytest.mark.parametrize("name,args,expected", [
    ("nap", {"seconds": 3}, "Error: tool nap did not return within 1 s"),
    ("spin", {}, "Error: tool spin did not return within 1 s"),
    ("leave", {"code": 4}, "Error: SystemExit: 4"),
    ("escape", {}, "Error: BaseException: out"),
    ("loop_list", {}, "Error: tool returned a value that cannot be serialised"),
    ("tuple_keys", {}, "Error: tool returned a value that cannot be serialised (keys must be"),
])
def test_a_hostile_tool_is_one_tool_error(pack, name, args, expected):
    bench = PackBenchmark(pack)
    task = bench.load_tasks("tasks", "test")[0]
    started = time.monotonic()
    result = asyncio.run(play(bench, task, call(name, **args)))
    assert time.monotonic() - started < 5
    out = tool_result(result)
    assert out.content.startswith(expected), out.content
    after = result.messages[result.messages.index(out) + 1]
    assert after.role == "assistant" and after.content == "Done."  # the episode went on after the failed call
    assert result.score is not None and result.score.reward == 0.0
    # a timed-out call leaves the database as it was before it; a raising one keeps its writes (as tau2 does)
    keys = set(result.env.state().keys("bookings"))
    if name == "spin":
        assert "SPIN" not in keys
    if name == "escape":
        assert "ESC" in keys


def test_other_episodes_run_while_a_tool_is_slow(pack):
    bench = PackBenchmark(pack)
    tasks = bench.load_tasks("tasks", "test")[:6]

    async def both():
        slow = asyncio.ensure_future(play(bench, tasks[0], call("nap", seconds=0.9)))
        started = time.monotonic()
        quick = await asyncio.gather(*(run_episode(bench, t, bench.gold_agent(t), bench.gold_user(t))
                                       for t in tasks[1:]))
        quick_done = time.monotonic() - started
        await slow
        return quick_done, quick, slow.result()

    quick_done, quick, slow = asyncio.run(both())
    assert quick_done < 0.6, quick_done  # not serialised behind the 0.9 s tool
    assert tool_result(slow).content == "awake"
    assert [r.score.reward for r in quick] == [1.0] * 5


def test_time_limit_is_checked(pack):
    meta = json.loads((pack / "pack.json").read_text())
    for bad in (0, -1, "10", True, 1e9):
        (pack / "pack.json").write_text(json.dumps(dict(meta, tool_timeout_s=bad)))
        with pytest.raises(DataError, match="tool_timeout_s"):
            PackBenchmark(pack).load_tasks("tasks")


def test_mua_eval_survives_a_tool_that_exits(pack, tmp_path):
    """The whole command, in a fresh process: SystemExit(4) inside a tool neither exits 4 nor loses output."""
    tools = (pack / "tools.py").read_text()
    # the example's own tool now exits: the gold agent calls it in every task
    tools = tools.replace('    if name not in NAMES:\n', '    raise SystemExit(4)\n    if name not in NAMES:\n', 1)
    (pack / "tools.py").write_text(tools)
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", "eval", "--benchmark", "pack", "--data-dir", str(pack),
                           "--agent", "gold", "--limit", "3", "--no-progress", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 3
    assert all("Error: SystemExit: 4" in line for line in lines)
