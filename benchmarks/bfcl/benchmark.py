"""BfclBenchmark: BFCL multi-turn (base, miss_func, miss_param, long_context) behind mua's Benchmark API.

Data release: v3 by default. The split "v4" selects the v4 release (``mua eval --split v4``; questions, answers,
function docs and API behaviour as official v4 runs use them, see data.py); BFCL has no other splits. Official
result files pick their release themselves (official.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

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
    ReplayItem,
    TaskDescription,
    User,
)
from mua.harness.metrics import SUCCESS, Metric, MetricsDeclaration, SplitSize
from mua.harness.protocol import RoleProtocol, RunProtocol
from mua.harness.types import Finding, Message, Score, Task
from mua.harness.users.simulator import ScriptedUser

from . import data
from .environment import BfclEnvironment, OfferedTools
from .episode import gold_script, user_turns
from .official import read_result_file
from .scoring import Verdict, score_messages


class BfclBenchmark(Benchmark):
    """The user is scripted (the task's turns); FC agents get no system prompt, as in BFCL's FC mode.

    Step limit: upstream counts executed steps and force-quits after the 21st of a turn (MAXIMUM_STEP_LIMIT
    20, checked with ``>``), so an agent may take up to 21 model steps per turn; a 22nd request never happens.
    Scoring always replays the messages in fresh worlds (``env`` is not needed), see scoring.py.
    """

    name = data.BENCHMARK
    subsets = data.SUBSETS
    default_split = None
    # BFCL's multi-turn accuracy per category, and "multi turn overall": the unweighted mean of the categories.
    metrics = MetricsDeclaration(
        benchmark=name, subsets=subsets, position=1,
        metrics=(Metric(SUCCESS, "bfcl_v3/{subset}", overall="bfcl_v3 overall", combine="macro",
                        summary="accuracy"),),
        full_splits=(SplitSize(None, {s: 200 for s in subsets}), SplitSize("v4", {s: 200 for s in subsets})),
        subset_labels={s: s.removeprefix("multi_turn_") for s in subsets},
        headline=("bfcl_v3 overall",) + tuple(f"bfcl_v3/{s.removeprefix('multi_turn_')}" for s in subsets))

    # What `bfcl generate` sends to an OpenAI-compatible FC model by default (gorilla cd9429c, the tree of
    # bfcl-eval 2025.8.6.2: bfcl_eval/__main__.py --temperature 0.001; model_handler/api_inference/
    # openai_completion.py _query_FC sends model, messages, temperature, store=False and tools, with no
    # tool_choice and no seed). Step limit: constants/default_prompts.py MAXIMUM_STEP_LIMIT 20, checked with
    # ">" (see above: 21 model steps per turn). The user is the task's scripted turns; there is no judge.
    protocol = RunProtocol(
        source="gorilla bfcl_eval 2025.8.6.2 (cd9429c: __main__.py, model_handler/api_inference/"
               "openai_completion.py, constants/default_prompts.py)",
        agent=RoleProtocol({"temperature": 0.001, "store": False, "tool_choice": None}, seed=False),
        limits={"max_agent_steps_per_turn": 21},
        data=("bfcl_v3/", "bfcl_v4_multi_turn/"))

    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        if split in (None, "", "base", "v3"):
            version = data.V3
        elif split == "v4":
            version = data.V4
        else:
            raise ConfigError(f"bfcl_v3 has no split {split!r}; its data releases are v3 (default) and v4")
        return self.load_release(subset, version)

    def split_for_variant(self, variant: Optional[str]) -> Optional[str]:
        return "v4" if variant == "v4" else None  # a `mua score` line with "variant": "v4" uses the v4 data

    def load_release(self, subset: str, version: data.DataVersion) -> list[Task]:
        """The tasks of ``subset`` in one data release (a task's ``split`` names its release)."""
        tasks = data.load_tasks(self.data_dir, subset, version)
        # the files every episode reads (cached): a missing or bad one fails here, before any episode
        data.protocol(self.data_dir), data.func_docs(self.data_dir, version), data.extensions(self.data_dir)
        return tasks

    def start(self, task: Task) -> EpisodeSpec:
        return EpisodeSpec(env=BfclEnvironment(task, self.data_dir), system_prompt="", limits=self.limits(task))

    def agent_prompt(self, task: Task) -> AgentPrompt:
        return AgentPrompt("", OfferedTools(task, self.data_dir))

    def limits(self, task: Task) -> Limits:
        return Limits(**self.declared_protocol().limits)

    def gold_agent(self, task: Task) -> Agent:
        return ScriptedAgent(gold_script(task))

    def gold_user(self, task: Task) -> User:
        return ScriptedUser(user_turns(task, self.data_dir))

    def describe_task(self, task: Task) -> TaskDescription:
        """The user's turns, the ground-truth calls of each turn, and what BFCL's multi-turn checker compares."""
        return TaskDescription(scenario=task.scenario, expected_actions=task.evaluation, criteria=(
            "after every user turn: the state of each API instance equals its state after the expected calls, "
            "and every result of the expected calls is among the results of the agent's calls"))

    def needs_user_model(self, subset: str) -> bool:
        return False  # BFCL's user is always the scripted question turns

    @classmethod
    def explain(cls, components: dict[str, Optional[float]], info: dict) -> list[Finding]:
        """The official checker's verdict, read back as ``Verdict.to_score`` stored it."""
        return Verdict.from_info(info).findings()

    async def score(self, task: Task, messages: list[Message], *, env: Optional[Environment] = None,
                    termination: Optional[str] = None, judge: Optional[ChatModel] = None) -> Score:
        return score_messages(task, messages, self.data_dir, termination)

    def read_official(self, path: Path) -> Optional[Iterable[ReplayItem]]:
        """A BFCL result file, scored against the data release that produced it (see official.py)."""
        return read_result_file(self.load_release, Path(path), self.data_dir)
