"""``PackBenchmark``: a task pack (a folder in the tau2 shape, see ``loader.py``) run by the tau2 adapter's own
episode setup and scorer, so a pack's verdicts follow tau2's rules exactly.

Select it with ``--benchmark pack --data-dir PACK``. A pack has one subset, ``tasks``; its splits come from
splits.json (``test`` is the default, ``train`` the training split)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

from mua.harness.errors import ConfigError
from mua.harness.interfaces import Agent, ChatModel, EpisodeSpec, Limits, User
from mua.harness.metrics import PASS_HAT_K, Metric, MetricsDeclaration
from mua.harness.types import Task
from mua.harness.user_facts import SuiteCase, UserFacts
from mua.harness.users.simulator import SimulatedUser

from ..tau2.benchmark import Tau2Benchmark
from ..tau2.domain import Tau2Domain
from ..tau2.environment import Tau2Environment
from ..tau2.gold import gold_agent as tau2_gold_agent
from ..tau2.gold import gold_user as tau2_gold_user
from ..tau2.prompts import USER_STOP_MARKERS, scenario_text
from ..tau2.tasks import Tau2Context
from .environment import PackEnvironment
from .loader import FILES, Pack, load_pack
from .suite import pack_cases, task_facts, values_by_kind
from .users import ScenarioUser, StaticUser, asked, asking_gold_agent, opening, replies_text

SUBSET = "tasks"


class PackBenchmark(Tau2Benchmark):
    name = "pack"
    subsets = (SUBSET,)
    default_split = "test"
    train_splits = ("train",)
    # tau2's reward is 0/1: reported as pass^k, as tau2's domains are
    metrics = MetricsDeclaration(benchmark="pack", subsets=(SUBSET,), default_split="test",
                                 metrics=(Metric(PASS_HAT_K, "pack/{subset} pass^{k}"),),
                                 headline=tuple(f"pack/{SUBSET} pass^{k}" for k in range(1, 9)))

    # tau2's protocol, except the data a run records: the pack's own files (so runs of two packs never compare)
    protocol = replace(Tau2Benchmark.protocol, data=FILES)
    gold_checked = True  # a pack is written against the scripted user's contract: `mua tasks` says gold N of M
    exact_user_facts = True  # a scenario's replies are its user's facts (user_facts below)

    def __init__(self, data_dir: Path, answers: bool = True, static_user: bool = False) -> None:
        """``answers=False``: the scripted user says its opening only; ``static_user``: it replays the reference
        conversation's user turns whatever the agent says (the learning check's static-user ablation)."""
        super().__init__(data_dir)
        self.answers, self.static_user = answers, static_user

    @property
    def pack(self) -> Pack:
        return load_pack(self.data_dir)

    def _domain(self, task: Task) -> Tau2Domain:
        return self.pack.domain

    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        if subset != SUBSET:
            raise ConfigError(f"pack: unknown subset {subset!r}; a pack has one subset, {SUBSET!r}")
        pack = self.pack
        records = pack.tasks
        if split is not None:
            if pack.splits is None:
                raise ConfigError(f"pack {pack.name}: no splits.json, so no split {split!r}; run every task with "
                                  "--all-tasks")
            if split not in pack.splits:
                raise ConfigError(f"pack {pack.name}: unknown split {split!r}; valid: {', '.join(pack.splits)}")
            wanted = set(pack.splits[split])
            records = [r for r in records if str(r["id"]) in wanted]
        return [Task(id=str(r["id"]), benchmark=self.name, subset=SUBSET, scenario=r["user_scenario"],
                     initial_state=r.get("initial_state"), evaluation=r.get("evaluation_criteria"), split=split,
                     raw=r, context=Tau2Context()) for r in records]

    def splits(self, subset: str) -> list[Optional[str]]:
        """The pack's splits.json names, the default split first; without one, all tasks (None)."""
        names = list(self.pack.splits or {})
        return sorted(names, key=lambda s: s != self.default_split) or [None]

    def start(self, task: Task) -> EpisodeSpec:
        spec = super().start(task)
        tau2_env = spec.env
        if not isinstance(tau2_env, Tau2Environment):  # the base class builds one; a pack wraps it
            raise TypeError(f"pack: expected a tau2 environment, got {type(tau2_env).__name__}")
        spec.env = PackEnvironment(tau2_env.domain, tau2_env.state())
        return spec

    def limits(self, task: Task) -> Limits:
        return Limits(max_messages=self.pack.max_messages, max_errors=self.pack.max_errors)

    def needs_user_model(self, subset: str) -> bool:
        return self.pack.user == "llm"

    def default_user_model(self, subset: str) -> Optional[str]:
        """pack.json's ``user_model`` (a checkpoint path resolved against the pack folder, or a model name)."""
        return self.pack.user_model

    def user_prompt(self, task: Task) -> str:
        """The LLM user's system prompt: the pack's guidelines and the task's scenario (with pack.json
        ``"user_prompt": "replies"``, its opening and replies one a line)."""
        replies = self.pack.user_prompt == "replies" and task.scenario.get("replies")
        text = replies_text(task.scenario) if replies else scenario_text(task.scenario)
        return f"{self.pack.guidelines}\n\n<scenario>\n{text}\n</scenario>"

    def simulated_user(self, task: Task, model: ChatModel, seed: Optional[int] = None) -> User:
        return SimulatedUser(model, self.user_prompt(task), stop_markers=USER_STOP_MARKERS, seed=seed)

    def gold_agent(self, task: Task) -> Agent:
        if task.scenario.get("replies"):
            return asking_gold_agent(task.scenario, task.evaluation)
        return tau2_gold_agent(self.gold_scripts(task, opening(task.scenario))[0])

    def gold_user(self, task: Task) -> User:
        """The scripted user: it answers from the scenario's replies (with ``answers=False``, opening only)."""
        if (self.static_user or self.pack.user == "static") and task.scenario.get("replies"):
            return StaticUser(task.scenario, task.evaluation)
        if task.scenario.get("replies") or not self.answers:
            return ScenarioUser(task.scenario, answers=self.answers)
        return tau2_gold_user(self.gold_scripts(task, opening(task.scenario))[1])

    def user_suite(self, tasks: list[Task]) -> Optional[list[SuiteCase]]:
        """The adversarial user suite's cases, from the scenarios' replies and the pack's user_suite.json."""
        return pack_cases(self.data_dir, tasks, self.load_tasks(SUBSET))

    def user_facts(self, task: Task) -> Optional[UserFacts]:
        """Exact: each reply is a fact (kind: its first ``when`` keyword, value: its ``say``); a scenario without
        replies falls back to tau2's heuristic."""
        if not task.scenario.get("replies"):
            return super().user_facts(task)
        facts = task_facts(task, values_by_kind(r["user_scenario"] for r in self.pack.tasks))
        return UserFacts(facts, exact=True, scenario_text=opening(task.scenario))

    def user_asked(self, task: Task, text: str) -> Optional[list[str]]:
        """The kinds the scripted user's contract (``users.py: asked``) counts ``text`` as asking for."""
        replies = task.scenario.get("replies") or []
        return [str(replies[i]["when"][0]) for i in asked(text, replies)] if replies else None

    def read_official(self, path: Path):
        return None  # a pack has no official results format; `mua score` reads mua's own result lines
