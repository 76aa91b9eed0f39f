"""AceBenchmark: the ACEBench agent subsets (multi_turn and multi_step, en and zh) as a mua Benchmark.

Episode shape
- multi_turn: the simulated user opens (see user.py); the agent answers with tool calls or text; the dialogue
  ends on ``finish conversation`` (from either side, at upstream's loop index > 1) or after upstream's 40 loop
  iterations, which is 41 trajectory messages when each assistant message carries at most one call.
- multi_step: the request is the first user message; text replies get the official nudge; same limits.
Agent-side text never executes: calls must be structured tool calls (the official prompts ask for a text form).

Scoring always replays the trajectory's tool calls message by message in a fresh environment (recorded tool
results are ignored, and the live environment is not reused), so ``mua eval`` and ``mua score`` give the same
verdict for the same messages. Termination does not affect the verdict, as upstream.
"""
from __future__ import annotations

import json
from typing import Optional

from mua.harness.agents import ScriptedAgent
from mua.harness.errors import ConfigError
from mua.harness.interfaces import (
    Agent,
    AgentPrompt,
    Benchmark,
    ChatModel,
    Environment,
    EpisodeSpec,
    Limits,
    TaskDescription,
    User,
)
from mua.harness.metrics import Metric, MetricsDeclaration, SplitSize
from mua.harness.protocol import RoleProtocol, RunProtocol
from mua.harness.types import Finding, Message, Score, Task, ToolCall, task_context

from . import data
from .calls import parse_calls
from .data import AceContext
from .environment import AceEnvironment, AceExecutor, executable
from .scoring import AceFindings, check_end_state, process_score, render_tool_message
from .user import MAX_DIALOG_TURNS, AceSimulatedUser, GoldMultiTurnUser, MultiStepUser


class AceBenchmark(Benchmark):
    name = "acebench"
    subsets = tuple(data.SUBSETS)
    default_split = None
    # ACEBench's agent end-state and process accuracy per subset, and overall as the unweighted mean of the
    # subsets (as ACEBench averages multi_turn and multi_step); its summary rounds the means to 3 decimals.
    metrics = MetricsDeclaration(
        benchmark=name, subsets=subsets, position=2,
        metrics=(Metric("end_state", "acebench/{subset} end_state", overall="acebench agent end_state",
                        summary="end_state_accuracy", digits=3),
                 Metric("process", "acebench/{subset} process", overall="acebench agent process",
                        summary="process_accuracy", digits=3)),
        full_splits=(SplitSize(None, {"agent_multi_turn_en": 30, "agent_multi_step_en": 20,
                                      "agent_multi_turn_zh": 30, "agent_multi_step_zh": 20}),),
        headline=("acebench agent end_state", "acebench agent process"),
        detail=tuple(f"acebench/{s} {c}" for s in subsets for c in ("end_state", "process")))

    # What ACEBench's API-model path sends (ACEBench e6db74b: model_inference/apimodel_inference.py builds
    # APIAgent_turn/APIAgent_step and APIUSER without sampling arguments, so the constructor defaults of
    # model_inference/multi_turn/APIModel_agent.py, APIModel_user.py and multi_step/APIModel_agent.py apply:
    # temperature 0.001, top_p 1, max_tokens 1000, no seed; generate.py's --temperature 0.7 reaches only the
    # single-turn path). User model: generate.py --user-model gpt-4o; --max-dialog-turns 40 (user.py).
    protocol = RunProtocol(
        source="ACEBench e6db74b (generate.py, model_inference/apimodel_inference.py, multi_turn/APIModel_agent.py,"
               " multi_turn/APIModel_user.py)",
        # the official agent gets no tools (a prompting protocol), so it sends no tool_choice either
        agent=RoleProtocol({"temperature": 0.001, "top_p": 1, "max_tokens": 1000, "tool_choice": None}, seed=False),
        user=RoleProtocol({"temperature": 0.001, "top_p": 1, "max_tokens": 1000}, seed=False, model="gpt-4o"),
        limits={"max_messages": MAX_DIALOG_TURNS + 1},
        data=("acebench/",))

    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        if split is not None:
            raise ConfigError(f"acebench has no splits (got split {split!r}); run it without --split")
        return data.load_tasks(self.data_dir, subset)

    def start(self, task: Task) -> EpisodeSpec:
        context = task_context(task, AceContext)
        return EpisodeSpec(env=AceEnvironment(context.world), system_prompt=context.prompts["system"],
                           limits=self.limits(task))

    def agent_prompt(self, task: Task) -> AgentPrompt:
        context = task_context(task, AceContext)
        return AgentPrompt(context.prompts["system"], lambda turn: list(context.world.tools))

    def limits(self, task: Task) -> Limits:
        return Limits(**self.declared_protocol().limits)

    def gold_agent(self, task: Task) -> Agent:
        """Replays the first milestone list (one assistant message per milestone), then ends the dialogue."""
        milestones = task.evaluation["mile_stone"]
        if milestones and isinstance(milestones[0], list):
            milestones = milestones[0]
        script = []
        for i, text in enumerate(milestones):
            calls = [ToolCall(id=f"gold_{i}_{j}", name=c.name, arguments=_json(c.args))
                     for j, c in enumerate(parse_calls(text))]
            script.append(Message(role="assistant", content=None, tool_calls=calls))
        return ScriptedAgent([script], fallback=data.FINISH)

    def gold_user(self, task: Task) -> User:
        if task_context(task, AceContext).world.category == "multi_step":
            return MultiStepUser(task.scenario)
        return GoldMultiTurnUser(task.scenario)

    def describe_task(self, task: Task) -> TaskDescription:
        """The milestones (the expected call sequences) and the end state the scorer compares with."""
        return TaskDescription(scenario=task.scenario, expected_actions=task.evaluation["mile_stone"],
                               criteria={"end_state": task.evaluation["ground_truth"],
                                         "process": "share of a milestone list's calls made in order (1 when the end "
                                                    "state matches)"})

    def needs_user_model(self, subset: str) -> bool:
        return "multi_turn" in subset  # multi_step has no user after the opening request

    def simulated_user(self, task: Task, model: ChatModel, seed: Optional[int] = None) -> User:
        if task_context(task, AceContext).world.category == "multi_step":
            return MultiStepUser(task.scenario)
        prompts = task_context(task, AceContext).prompts
        return AceSimulatedUser(model, prompts["user_system"], prompts["user_greeting"], seed=seed)

    @classmethod
    def explain(cls, components: dict[str, Optional[float]], info: dict) -> list[Finding]:
        return AceFindings.from_info(info).findings(components)

    async def score(self, task: Task, messages: list[Message], *, env: Optional[Environment] = None,
                    termination: Optional[str] = None, judge: Optional[ChatModel] = None) -> Score:
        executor = AceExecutor(task_context(task, AceContext).world)
        process: list[str] = []
        for m in messages:
            if m.role == "assistant" and m.tool_calls:
                executor.run_message(m.tool_calls)
                # an unexecutable message is a text to upstream: multi_turn routes it to the user (not part of
                # the process), multi_step hands it to the executor (part of the process)
                if executable(m.tool_calls) or task_context(task, AceContext).world.category == "multi_step":
                    process.append(render_tool_message(m))
        saved = executor.saved_state()
        verdict = check_end_state(saved, task.evaluation["ground_truth"])
        proc = process_score(process, task.evaluation["mile_stone"], verdict.valid)
        return Score(reward=1.0 if verdict.valid else 0.0,
                     components={"end_state": 1.0 if verdict.valid else 0.0, "process": proc},
                     info=AceFindings(verdict.errors, verdict.error_type, process).to_info())


def _json(args: dict) -> str:
    return json.dumps(args, ensure_ascii=False)
