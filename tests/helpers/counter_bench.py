"""A tiny benchmark for harness tests: set a counter to a target by calling `add`, then the user stops."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from mua.harness.agents import ScriptedAgent
from mua.harness.interfaces import Benchmark, Environment, EpisodeSpec, Limits, ToolOutcome
from mua.harness.types import Message, Score, Task, ToolCall, ToolSpec
from mua.harness.users.simulator import ScriptedUser, SimulatedUser

ADD = ToolSpec("add", "Add n to the counter.", {"type": "object", "properties": {"n": {"type": "integer"}},
                                                 "required": ["n"]})
PEEK = ToolSpec("peek", "The user looks at the counter.", {"type": "object", "properties": {}})


class CounterEnv(Environment):
    def __init__(self):
        self.value = 0

    def agent_tools(self, turn: int = 0) -> list[ToolSpec]:
        return [ADD]

    def user_tools(self) -> list[ToolSpec]:
        return [PEEK]

    def execute(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        allowed = {"assistant": "add", "user": "peek"}[requestor]
        if call.name != allowed:
            return ToolOutcome(f"Error: unknown tool {call.name}", error=True)
        try:
            args = call.parsed_arguments()
        except ValueError as e:
            return ToolOutcome(f"Error: {e}", error=True)
        if call.name == "peek":
            return ToolOutcome(str(self.value))
        if not isinstance(args.get("n"), int):
            return ToolOutcome("Error: n must be an integer", error=True)
        self.value += args["n"]
        return ToolOutcome(str(self.value))

    def state(self):
        return self.value


def replay(messages: list[Message]) -> CounterEnv:
    env = CounterEnv()
    for m in messages:
        for call in (m.tool_calls or []) if m.role == "assistant" else []:
            env.execute(call)
    return env


class CounterBenchmark(Benchmark):
    name = "counter"
    subsets = ("easy", "hard")
    train_splits = ("train",)

    def __init__(self, data_dir: Path = Path("."), n_tasks: int = 4, limits: Optional[Limits] = None):
        super().__init__(data_dir)  # the counter needs no data files
        self.n_tasks = n_tasks
        self.episode_limits = limits or Limits(max_messages=40, max_errors=5)

    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        base = 10 if subset == "hard" else 1
        return [Task(id=str(i), benchmark=self.name, subset=subset, scenario=f"set the counter to {base + i}",
                     evaluation={"target": base + i}) for i in range(self.n_tasks)]

    def start(self, task: Task) -> EpisodeSpec:
        return EpisodeSpec(env=CounterEnv(), system_prompt="You operate a counter.",
                           opening=[Message(role="assistant", content="Hi! How can I help?")],
                           limits=self.limits(task), agent_stop_marker="###STOP###")

    def limits(self, task: Task) -> Limits:
        return self.episode_limits

    def gold_agent(self, task: Task) -> ScriptedAgent:
        call = ToolCall(id="call_0", name="add", arguments=json.dumps({"n": task.evaluation["target"]}))
        return ScriptedAgent([[Message(role="assistant", tool_calls=[call]),
                               Message(role="assistant", content="Done.")]])

    def gold_user(self, task: Task) -> ScriptedUser:
        return ScriptedUser([task.scenario, "###STOP###"], stop_markers=["###STOP###"])

    def simulated_user(self, task: Task, model, seed=None) -> SimulatedUser:
        return SimulatedUser(model, f"You want to {task.scenario}.", stop_markers=["###STOP###"], seed=seed)

    async def score(self, task, messages, *, env=None, termination=None, judge=None) -> Score:
        value = (env if env is not None else replay(messages)).state()
        ok = float(value == task.evaluation["target"])
        return Score(reward=ok, components={"counter": ok}, info={"value": value})


class SlowAgent(ScriptedAgent):
    """A gold agent that takes a little while per step, so runs can be interrupted midway."""

    delay = 0.02

    async def respond(self, messages, tools):
        import asyncio

        await asyncio.sleep(self.delay)
        return await super().respond(messages, tools)


class SlowCounterBenchmark(CounterBenchmark):
    name = "slowcounter"

    def gold_agent(self, task):
        agent = super().gold_agent(task)
        return SlowAgent(agent.turns)
