"""What `mua view` shows beside a recorded episode when the benchmark's data is at hand: the task's ground
truth (the adapter's ``describe_task``, as titled sections), the difference between the episode's end state and
the gold end state (``end_state_diff``), and what each agent request held.

mua does not record raw requests (a run of 10,000 episodes would store every conversation prefix again), so
a turn's request is reconstructed: the system prompt and tools the adapter gives the task today, the agent's
view of the conversation before that turn (runner.agent_view: the user's own tool calls hidden) and the
model, parameters and seed config.json recorded. The page says it is a reconstruction.

An adapter failing on one task (a changed data file, a bug) is shown on that episode; it never stops the page.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ..errors import MuaError, StaleData
from ..interfaces import Benchmark
from ..run.build import GOLD
from ..runner import agent_view
from ..types import Message, Task


def _failure(e: Exception) -> str:
    if isinstance(e, KeyError) and e.args:
        return str(e.args[0])
    return str(e) if isinstance(e, MuaError) else f"{type(e).__name__}: {e}"


class GroundTruth:
    """The benchmark of one run, opened on a data directory, and the blobs (system prompts, tool lists) its
    episodes share, each stored once per page."""

    def __init__(self, bench: Benchmark, config: dict):
        self.bench = bench
        self.config = config
        self.blobs: list[Any] = []
        self._blob_ids: dict[str, int] = {}
        self._tasks: dict[str, dict[str, Task] | Exception] = {}

    @classmethod
    def open(cls, config: dict, data_dir: Optional[Path],
             run: Path = Path(".")) -> tuple[Optional["GroundTruth"], Optional[str]]:
        """The ground truth of the run at ``run`` (config.json ``config``), read from ``data_dir`` if named,
        else from the data folder the run recorded (protocol.recorded_data_dir), or None and why not (one line
        for the page). Data changed since the run is refused (StaleData), not shown as ground truth."""
        from ..protocol import recorded_data_dir
        from ..registry import open_benchmark

        name = config.get("benchmark")
        if not isinstance(name, str) or not name:
            return None, "no ground truth: config.json names no benchmark"
        try:
            where = recorded_data_dir(config, run, None if data_dir is None else str(data_dir))
            return cls(open_benchmark(name, where), config), None
        except StaleData:
            raise
        except (MuaError, ImportError, OSError) as e:
            return None, f"no ground truth (task instructions, expected actions, database difference): {_failure(e)}"

    def task(self, subset: str, task_id: str) -> Task:
        if subset not in self._tasks:  # find_task reads the whole subset: index it once (a failure too)
            try:
                self._tasks[subset] = {t.id: t for t in self.bench.load_tasks(subset, split=None)}
            except Exception as e:
                self._tasks[subset] = e
        tasks = self._tasks[subset]
        if isinstance(tasks, Exception):
            raise tasks
        found = tasks.get(task_id)
        if found is None:
            raise KeyError(f"{self.bench.name}/{subset}: no task {task_id!r} in the data directory")
        return found

    def describe(self, subset: str, task_id: str) -> dict[str, Any]:
        try:
            return dict(self.bench.describe_task(self.task(subset, task_id)).titled_sections())
        except Exception as e:  # an adapter's failure is shown on the page, never stops it
            return {"(not available)": _failure(e)}

    def _blob(self, value: Any) -> int:
        key = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        if key not in self._blob_ids:
            self._blob_ids[key] = len(self.blobs)
            self.blobs.append(value)
        return self._blob_ids[key]

    def episode(self, row: dict) -> dict[str, Any]:
        """``diff`` (end_state_diff; None: no database to compare) and ``requests`` for one episode row."""
        out: dict[str, Any] = {}
        try:
            task = self.task(str(row.get("subset")), str(row.get("task_id")))
            messages = [Message.from_dict(m) for m in row.get("messages") or [] if isinstance(m, dict)]
        except Exception as e:
            return {"ground_error": _failure(e)}
        if messages:
            try:
                out["diff"] = self.bench.end_state_diff(task, messages)
            except Exception as e:
                out["diff_error"] = _failure(e)
        agent = self.config.get("agent")
        if isinstance(agent, dict) and agent.get("name") == GOLD:
            out["requests_error"] = "the gold agent replays the expected actions: it sends no model requests"
            return out
        try:
            out["requests"] = self._requests(task, messages, row)
        except Exception as e:
            out["requests_error"] = _failure(e)
        return out

    def _requests(self, task: Task, messages: list[Message], row: dict) -> dict[str, Any]:
        """How to rebuild each agent request: the messages the agent saw (indices into the episode's messages;
        ``stripped``: a user message sent without its tool calls), and per reply (the message index, how many
        of those it saw, its turn's tools)."""
        spec = self.bench.start(task)
        seen = _seen(messages)
        position = {i: p for p, (i, _) in enumerate(seen)}
        replies, says, tools = [], 0, {}
        for i, m in enumerate(messages):
            if m.role == "user" and not m.tool_calls:
                says += 1  # the agent's turn is numbered by the user message it answers, as in the runner
            if m.role != "assistant" or i < len(spec.opening) or i not in position:
                continue
            turn = max(0, says - 1)
            if turn not in tools:
                tools[turn] = self._blob([t.to_openai() for t in spec.env.agent_tools(turn)])
            replies.append([i, position[i], tools[turn]])
        recorded = self.config.get("agent")
        agent: dict = recorded if isinstance(recorded, dict) else {}
        seed = row.get("seed") if agent.get("seed", True) else None
        return {"system": self._blob(spec.system_prompt) if spec.system_prompt else None, "model": agent.get("name"),
                "params": agent.get("params") or {}, "seed": seed, "seen": seen, "replies": replies}


def _seen(messages: list[Message]) -> list[list]:
    """[message index, stripped] of each message in the agent's view (runner.agent_view keeps the order; a user
    message it sends without its tool calls is a copy, marked stripped)."""
    out: list[list] = []
    j = 0
    for m in agent_view(messages):
        while messages[j] is not m and not (messages[j].role == "user" and messages[j].tool_calls
                                            and m.role == "user" and messages[j].content == m.content):
            j += 1
        out.append([j, messages[j] is not m])
        j += 1
    return out
