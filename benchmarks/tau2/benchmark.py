"""``Tau2Benchmark``: tau2-bench retail, airline (and telecom, from ``telecom/``) behind the mua interface."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Optional

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
from mua.harness.metrics import PASS_HAT_K, Metric, MetricsDeclaration, SplitSize
from mua.harness.protocol import RoleProtocol, RunProtocol
from mua.harness.types import Finding, Message, Score, Task, task_context
from mua.harness.user_facts import UserFacts
from mua.harness.users.simulator import SimulatedUser

from . import gold, ground_truth, official, scoring, user_facts
from .domain import Tau2Domain
from .environment import Tau2Environment
from .findings import Tau2Findings
from .judge import judge_nl_assertions
from .prompts import FIRST_AGENT_MESSAGE, STOP, USER_STOP_MARKERS, agent_system_prompt, user_system_prompt
from .registry import get_domain
from .tasks import Tau2Context, load_tasks

# tau2's CLI runs with max_steps=200 (config.DEFAULT_MAX_STEPS). A tau2 step is one user message, one agent
# message, or ONE batch of tool results; its first agent greeting is not a step. mua's runner counts messages,
# so 201 messages equal 200 tau2 steps when each tool-call message holds one call; with parallel calls mua
# stops earlier than tau2 would. (tau2 also lets the step limit override a user stop in the same step.)
MAX_MESSAGES = 201
MAX_ERRORS = 10


def _opening(task: Task) -> str:
    instructions = (task.scenario or {}).get("instructions")
    opening = instructions.get("reason_for_call") if isinstance(instructions, dict) else str(instructions)
    return opening or "Hello."


class Tau2Benchmark(Benchmark):
    name = "tau2"
    subsets: tuple[str, ...] = ("retail", "airline", "telecom")
    default_split = "base"
    train_splits = ("train",)  # tau2's split_tasks.json: "train" and "test" are disjoint; "base" is both
    held_out_split = "test"  # what a model trained on "train" is scored on ("base" holds train tasks too)
    # tau2 reports pass^k per domain, k up to the fewest trials any task has (no cross-domain overall).
    metrics = MetricsDeclaration(
        benchmark="tau2", subsets=subsets, default_split=default_split, position=0,
        metrics=(Metric(PASS_HAT_K, "tau2/{subset} pass^{k}"),),
        full_splits=(SplitSize("base", {"retail": 114, "airline": 50, "telecom": 114}),
                     SplitSize("train", {"retail": 74, "airline": 30, "telecom": 74}),
                     SplitSize("test", {"retail": 40, "airline": 20, "telecom": 40}),
                     SplitSize("small", {"telecom": 20}),
                     SplitSize("full", {"telecom": 2285})),
        headline=tuple(f"tau2/{d} pass^1" for d in subsets)
        + tuple(f"tau2/{d} pass^{k}" for d in subsets for k in range(2, 9)))
    # What `tau2 run` sends by default (tau2-bench a2c0247: src/tau2/config.py DEFAULT_LLM_ARGS_AGENT/_USER and
    # DEFAULT_LLM_NL_ASSERTIONS(_ARGS); src/tau2/agent/base/llm_config.py set_seed puts the run's seed into
    # the agent's and user's llm_args; evaluator_nl_assertions.py calls the judge without one;
    # utils/llm_utils.py generate adds tool_choice "auto" whenever tools are sent, as mua's client does).
    # Trials: docs/leaderboard-submission.md runs --num-trials 4 ("at least 4 trials" preferred).
    protocol = RunProtocol(
        source="tau2-bench a2c0247 (src/tau2/config.py, docs/leaderboard-submission.md)",
        agent=RoleProtocol({"temperature": 0.0}, seed=True),
        user=RoleProtocol({"temperature": 0.0}, seed=True, model="gpt-4.1-2025-04-14"),
        judge=RoleProtocol({"temperature": 0.0}, seed=False, model="gpt-4.1-2025-04-14"),
        limits={"max_messages": MAX_MESSAGES, "max_errors": MAX_ERRORS},
        trials=4,
        data=("tau2/domains/{subset}/", "tau2/user_simulator/"))

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self._gold_cache: dict[tuple, Any] = {}
        self._scripts: dict[int, tuple[Task, gold.Scripts]] = {}  # by id(task), kept with the task
        self._domains: dict[str, Tau2Domain] = {}  # by subset, loaded on first use

    # -- tasks and episodes -------------------------------------------------------------------------------
    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        if subset not in self.subsets:
            raise ConfigError(f"tau2: unknown subset {subset!r}; valid: {', '.join(self.subsets)}")
        tasks = list(load_tasks(self.data_dir, subset, split))
        # loads the domain's database now: a damaged one fails before episodes
        self._domains[subset] = get_domain(subset, self.data_dir)
        return tasks

    def _domain(self, task: Task) -> Tau2Domain:
        domain = self._domains.get(task.subset)
        if domain is None:
            domain = self._domains[task.subset] = get_domain(task.subset, self.data_dir)
        return domain

    def start(self, task: Task) -> EpisodeSpec:
        domain = self._domain(task)
        state = domain.new_state()
        domain.initialise(state, task.initial_state)
        prompt = agent_system_prompt(task_context(task, Tau2Context).policy or domain.policy)
        return EpisodeSpec(env=Tau2Environment(domain, state), system_prompt=prompt,
                           opening=[Message(role="assistant", content=FIRST_AGENT_MESSAGE)],
                           limits=self.limits(task), agent_stop_marker=STOP, single_kind_messages=True)

    def agent_prompt(self, task: Task) -> AgentPrompt:
        domain = self._domain(task)
        tools = [t.spec for t in domain.agent_tools.values()]  # the same at every turn
        prompt = agent_system_prompt(task_context(task, Tau2Context).policy or domain.policy)
        return AgentPrompt(prompt, lambda turn: list(tools))

    def limits(self, task: Task) -> Limits:
        return Limits(**self.declared_protocol().limits)

    def simulated_user(self, task: Task, model: ChatModel, seed: Optional[int] = None) -> User:
        domain = self._domain(task)
        prompt = user_system_prompt(self.data_dir, task.scenario, bool(domain.user_tools))
        return SimulatedUser(model, prompt, stop_markers=USER_STOP_MARKERS, seed=seed)

    def describe_task(self, task: Task) -> TaskDescription:
        """The reference actions apart; the rest of the evaluation criteria (reward basis, what to communicate,
        NL and env assertions) as tau2 records them."""
        criteria = dict(task.evaluation or {})
        return TaskDescription(scenario=task.scenario, expected_actions=criteria.pop("actions", None),
                               criteria=criteria, summary=_opening(task),
                               sections=ground_truth.task_sections(task))

    # -- gold -----------------------------------------------------------------------------------------------
    def gold_agent(self, task: Task) -> Agent:
        """Replays the gold actions of the assistant side (see ``gold.py``), then states every communicate_info."""
        return gold.gold_agent(self.gold_scripts(task, _opening(task))[0])

    def gold_user(self, task: Task) -> User:
        """Opens with the reason for calling, replays the user-side gold actions (telecom), then stops."""
        return gold.gold_user(self.gold_scripts(task, _opening(task))[1])

    def gold_scripts(self, task: Task, opening: str) -> gold.Scripts:
        """The gold episode's scripts (``gold.gold_scripts``), built once per task (a gold agent and its user
        read the same ones, and every trial replays them)."""
        cached = self._scripts.get(id(task))
        if cached is None or cached[0] is not task:
            cached = self._scripts[id(task)] = (task, gold.gold_scripts(task.evaluation, opening))
        return cached[1]

    # -- scoring --------------------------------------------------------------------------------------------
    def _gold_fingerprint(self, domain: Tau2Domain, task: Task) -> Any:
        key = (id(domain), json.dumps([task.initial_state, task.evaluation], sort_keys=True, default=str))
        if key not in self._gold_cache:
            gold = scoring.gold_env(domain, task.initial_state, task.evaluation or {})
            self._gold_cache[key] = domain.fingerprint(gold.state())
        return self._gold_cache[key]

    @staticmethod
    def _combine(components: dict, found: Tau2Findings) -> Score:
        """tau2's reward is the product of the components. With a component skipped (no judge), the reward is
        known only when a computed component is already 0; otherwise it is unknown (None), never a pass."""
        product = 1.0
        for value in components.values():
            if value is not None:
                product *= value
        skipped = [k for k, v in components.items() if v is None]
        if not skipped:
            return Score(reward=product, components=components, info=found.to_info())
        found.skipped = skipped
        found.incomplete = True
        if product == 0.0:
            return Score(reward=0.0, components=components, info=found.to_info())
        return Score(reward=None, components=components, info=found.to_info(), partial_reward=product)

    def unjudged_checks(self, tasks: list[Task]) -> Optional[str]:
        judged = [t for t in tasks if t.evaluation and t.evaluation.get("nl_assertions")
                  and "nl_assertion" in [b.lower() for b in t.evaluation.get("reward_basis") or []]]
        if not judged:
            return None
        return (f"no --judge-model: the NL assertions of {len(judged)} of {len(tasks)} tasks will be skipped; "
                "an episode of those tasks that passes every other check gets reward null (unknown), is left "
                "out of pass^k and means, and is counted in the summary")

    async def score(self, task: Task, messages: list[Message], *, env: Optional[Environment] = None,
                    termination: Optional[str] = None, judge: Optional[ChatModel] = None) -> Score:
        found = Tau2Findings(termination=termination or scoring.derive_termination(messages))
        if found.termination not in scoring.STOPPED:
            found.note = f"premature termination ({found.termination}): reward 0 without checks, as tau2"
            return Score(reward=0.0, components={}, info=found.to_info())
        evaluation = task.evaluation
        if evaluation is None:
            found.note = "no evaluation criteria"
            return Score(reward=1.0, components={}, info=found.to_info())
        basis = [b.lower() for b in evaluation.get("reward_basis") or []]
        domain = self._domain(task)
        live = env if isinstance(env, Tau2Environment) else None
        calls = scoring.tool_calls(messages, live.parsed if live else None)
        components: dict[str, Optional[float]] = {}
        if "db" in basis or "env_assertion" in basis:
            if evaluation.get("actions") is None and evaluation.get("env_assertions") is None:
                db_match, final_state = True, None
            else:
                final_state = (live or scoring.replay(domain, task.initial_state, calls)).state()
                db_match = domain.fingerprint(final_state) == self._gold_fingerprint(domain, task)
            found.db_match = db_match
            if "db" in basis:
                components["db"] = 1.0 if db_match else 0.0
            if "env_assertion" in basis:
                reward, failed = (scoring.env_assertions_check(domain, final_state,
                                                               evaluation.get("env_assertions") or [])
                                  if final_state is not None else (1.0, []))
                components["env_assertion"] = reward
                found.env_assertions_failed = failed
        if "communicate" in basis:
            components["communicate"], found.communicate_missing = scoring.communicate_check(
                messages, evaluation.get("communicate_info") or [])
        if "action" in basis:
            components["action"], found.actions_unmatched = scoring.action_check(
                calls, evaluation.get("actions") or [])
        if "nl_assertion" in basis:
            if not evaluation.get("nl_assertions"):
                components["nl_assertion"] = 1.0
            elif judge is None:
                components["nl_assertion"] = None  # unknown: see _combine
            else:
                components["nl_assertion"], found.nl_assertions = await judge_nl_assertions(
                    judge, messages, evaluation["nl_assertions"])
        return self._combine(components, found)

    @classmethod
    def explain(cls, components: dict[str, Optional[float]], info: dict) -> list[Finding]:
        """The stored ``info`` read back as the scorer wrote it (``findings.py``): an early termination, the
        database check, failed environment assertions, unsaid communicate_info, unmatched gold actions, NL
        assertions the judge rejected, components skipped."""
        return Tau2Findings.from_info(info).findings() or super().explain(components, info)

    # -- end state against gold for people (mua view) ------------------------------------------------------------------
    def end_state_diff(self, task: Task, messages: list[Message]) -> Optional[list[dict]]:
        return ground_truth.end_state_diff(self._domain(task), task, messages)

    # -- official results -----------------------------------------------------------------------------------
    def user_facts(self, task: Task) -> Optional[UserFacts]:
        """Identifiers and the name found in the scenario's prose (heuristic; see ``user_facts.py``)."""
        return user_facts.user_facts(task)

    def done_at(self, task: Task, messages: list[Message]) -> Optional[int]:
        domain = self._domain(task)
        return user_facts.done_at(domain, task, messages, self._gold_fingerprint(domain, task))

    def read_official(self, path: Path) -> Optional[Iterable[ReplayItem]]:
        return official.read_results(path)
