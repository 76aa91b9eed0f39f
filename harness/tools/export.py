"""Finished episodes of a run as training rows: the agent's view (system prompt first) with the tools it was
offered, one row per episode, its reward and score components as columns. With ``role="user"``, the user's side
instead: the view the benchmark's user simulator is shown (its scenario prompt as the system message, the agent's
words as the user turns, the user's replies as the assistant turns; ``SimulatedUser.view``) with the user's own
tools, so that ``mua sft`` trains a user model on exactly what it is later asked to continue (the user's tools
come from an episode started once per task).

The system prompt and tools are read from the benchmark (they are not stored in result lines) without starting
an episode (``Benchmark.agent_prompt``), so export needs the data directory the run used. ``tools`` holds every
tool the agent was offered during the episode (first-offered order), ``tools_by_turn`` the names offered at
each user turn (BFCL's miss_func adds tools after the first). Errored and unscored episodes are never
exported. Each task is looked up once per run, so the time is linear in rows."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from ..interfaces import AgentPrompt, Benchmark
from ..results.episodes import latest_episodes
from ..results.store import RunDir
from ..runner import agent_view
from ..types import Message, Task
from ..users.simulator import SimulatedUser

ROLES = ("agent", "user")

MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def message_row(m: Message) -> dict:
    """A message with every key present (None where unset), so all rows share one table schema."""
    d = m.to_dict()
    return {k: d.get(k) for k in MESSAGE_KEYS}


class _Prompts:
    """Each task's prompt and offered tools, looked up once per run: a subset's tasks are built once, a task's
    prompt is read once (without starting an episode), a task's tools once per turn count."""

    def __init__(self, run: Path, bench: Benchmark):
        self.run, self.bench = run, bench
        self._tasks: dict[str, dict[str, Task]] = {}
        self._prompts: dict[tuple[str, str], AgentPrompt] = {}
        self._tools: dict[tuple[str, str, int], tuple[str, str]] = {}
        self._users: dict[tuple[str, str], tuple[SimulatedUser, str]] = {}

    def task(self, subset: str, task_id: str) -> Task:
        if subset not in self._tasks:
            self._tasks[subset] = {t.id: t for t in self.bench.load_tasks(subset, split=None)}
        task = self._tasks[subset].get(task_id)
        if task is None:
            raise ConfigError(f"{self.run}: {self.bench.name}/{subset}: no task with id {task_id!r} "
                              "(is --data-dir the one the run used?)")
        return task

    def prompt(self, subset: str, task_id: str) -> AgentPrompt:
        key = (subset, task_id)
        if key not in self._prompts:
            self._prompts[key] = self.bench.agent_prompt(self.task(subset, task_id))
        return self._prompts[key]

    def user(self, subset: str, task_id: str) -> tuple[SimulatedUser, str]:
        """The task's user simulator (built without a model: only its view is used) and the user's own tools
        as JSON text (tau2 telecom's phone; none elsewhere)."""
        key = (subset, task_id)
        if key not in self._users:
            task = self.task(subset, task_id)
            user = self.bench.simulated_user(task, _NO_MODEL)
            if not isinstance(user, SimulatedUser):
                raise ConfigError(f"{self.bench.name}/{subset}: its user is scripted, not a user model, so there is "
                                  "no user side to train on (--role user needs a benchmark with a user simulator)")
            tools = self.bench.start(task).env.user_tools()
            self._users[key] = (user, json.dumps([t.to_openai() for t in tools], ensure_ascii=False))
        return self._users[key]

    def tools(self, subset: str, task_id: str, turns: int) -> tuple[str, str]:
        """(every tool offered in the first ``turns`` user turns, in first-offered order; the names offered at
        each turn), both as JSON text."""
        key = (subset, task_id, turns)
        if key not in self._tools:
            tools_at = self.prompt(subset, task_id).tools_at
            offered: dict[str, dict] = {}
            by_turn = []
            for turn in range(turns):
                specs = tools_at(turn)
                by_turn.append([t.name for t in specs])
                for t in specs:
                    offered.setdefault(t.name, t.to_openai())
            # JSON text: tool schemas differ in shape, which one table column cannot hold
            self._tools[key] = (json.dumps(list(offered.values()), ensure_ascii=False),
                                json.dumps(by_turn, ensure_ascii=False))
        return self._tools[key]


def user_turns(messages: list[Message]) -> int:
    """How many user turns the agent was offered tools for: the runner numbers an agent turn by the user
    message (not a user tool call) it answers; an episode that ended before the user spoke counts one."""
    return max(1, sum(1 for m in messages if m.role == "user" and not m.tool_calls))


def user_columns(view: list[Message], tools: str) -> dict:
    """A user-side row's messages and tools (JSON text; the same tools at each of its turns)."""
    names = [t["function"]["name"] for t in json.loads(tools)]
    turns = sum(1 for m in view if m.role == "assistant")
    return {"messages": [message_row(m) for m in view], "tools": tools,
            "tools_by_turn": json.dumps([names] * turns, ensure_ascii=False)}


class _NoModel:
    """The model of a user simulator built only for its view: asked anything, it is a bug."""

    async def chat(self, messages, tools=None, seed=None):
        raise RuntimeError("export builds the user simulator for its view only")


_NO_MODEL = _NoModel()


def export_rows(run: Path, bench: Benchmark, min_reward: Optional[float] = None,
                role: str = "agent") -> list[dict]:
    """One row per finished episode of ``run``: ``role`` "agent" (the agent's view) or "user" (the user's)."""
    if role not in ROLES:
        raise ConfigError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
    config = RunDir(run).read_config()
    if config is None:
        raise ConfigError(f"{run} is not a mua run (no config.json)")
    if config.get("benchmark") != bench.name:
        raise ConfigError(f"{run} is a {config.get('benchmark')} run, not {bench.name}")
    episodes = latest_episodes(RunDir(run).episodes)[0].values()
    names = sorted({k for r in episodes for k in r.components})
    prompts = _Prompts(run, bench)
    rows = []
    for record in episodes:
        reward = record.reward
        if record.error or reward is None:
            continue
        if min_reward is not None and reward < min_reward:
            continue
        subset, task_id = record.subset, record.task_id
        messages = [Message.from_dict(m) for m in record.messages]
        if role == "user":
            user, user_tools = prompts.user(subset, task_id)
            side = user_columns(user.view(messages), user_tools)
        else:
            system_prompt = prompts.prompt(subset, task_id).system_prompt
            view = ([Message(role="system", content=system_prompt)] if system_prompt else []) + agent_view(messages)
            tools, tools_by_turn = prompts.tools(subset, task_id, user_turns(messages))
            side = {"messages": [message_row(m) for m in view], "tools": tools, "tools_by_turn": tools_by_turn}
        rows.append({
            "benchmark": bench.name, "subset": subset, "task_id": task_id, "role": role,
            "trial": record.trial, "split": config.get("split"),
            **side,
            "reward": reward, "termination": record.termination,
            **{f"component_{n}": record.components.get(n) for n in names},
        })
    return rows


def write_dataset(rows: list[dict], out: Path, fmt: str) -> None:
    """``datasets``: a Hugging Face dataset saved with ``save_to_disk`` (``datasets.load_from_disk(out)``);
    ``jsonl``: the same rows, one JSON object per line."""
    if fmt == "jsonl":
        from ..results.episodes import dumps
        from ..results.store import write_atomic
        write_atomic(out, "".join(dumps(r) + "\n" for r in rows))
        return
    try:
        import datasets
    except ImportError:
        raise ConfigError("--format datasets needs the datasets package: pip install -e '.[train]'") from None
    # no "Saving the dataset" bars (carriage returns in every log; `mua export` prints its own line), and
    # datasets' setting as it was afterwards: the caller may be a longer-lived process
    bars_were_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        datasets.Dataset.from_list(rows).save_to_disk(str(out))
    finally:
        if not bars_were_off:
            datasets.enable_progress_bars()
