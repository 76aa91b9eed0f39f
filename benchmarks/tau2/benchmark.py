"""``Tau2Benchmark``: tau2-bench retail, airline (and telecom, from ``telecom/``) behind the mua interface."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Optional

from mua.harness.errors import ConfigError
from mua.harness.interfaces import (Agent, Benchmark, ChatModel, EpisodeSpec, Environment, Limits, ReplayItem,
                                    User)
from mua.harness.metrics import PASS_HAT_K, Metric, MetricsDeclaration, SplitSize
from mua.harness.protocol import RoleProtocol, RunProtocol
from mua.harness.types import Message, Score, Task, task_context
from mua.harness.users import SimulatedUser

from . import gold, official, scoring
from .domain import Tau2Domain
from .environment import Tau2Environment
from .judge import judge_nl_assertions
from .prompts import (FIRST_AGENT_MESSAGE, STOP, USER_STOP_MARKERS, agent_system_prompt, user_system_prompt)
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

    # -- tasks and episodes -------------------------------------------------------------------------------
    def load_tasks(self, subset: str, split: Optional[str] = None) -> list[Task]:
        if subset not in self.subsets:
            raise ConfigError(f"tau2: unknown subset {subset!r}; valid: {', '.join(self.subsets)}")
        tasks = list(load_tasks(self.data_dir, subset, split))
        get_domain(subset, self.data_dir)  # checks the domain's database now: a damaged one fails before episodes
        return tasks

    def _domain(self, task: Task) -> Tau2Domain:
        return get_domain(task.subset, self.data_dir)

    def start(self, task: Task) -> EpisodeSpec:
        domain = self._domain(task)
        state = domain.new_state()
        domain.initialise(state, task.initial_state)
        policy = task_context(task, Tau2Context).policy or domain.policy
        return EpisodeSpec(env=Tau2Environment(domain, state), system_prompt=agent_system_prompt(policy),
                           opening=[Message(role="assistant", content=FIRST_AGENT_MESSAGE)],
                           limits=self.limits(task), agent_stop_marker=STOP, single_kind_messages=True)

    def limits(self, task: Task) -> Limits:
        return Limits(**self.declared_protocol().limits)

    def simulated_user(self, task: Task, model: ChatModel, seed: Optional[int] = None) -> User:
        domain = self._domain(task)
        prompt = user_system_prompt(self.data_dir, task.scenario, bool(domain.user_tools))
        return SimulatedUser(model, prompt, stop_markers=USER_STOP_MARKERS, seed=seed)

    # -- gold -----------------------------------------------------------------------------------------------
    def gold_agent(self, task: Task) -> Agent:
        """Replays the gold actions of the assistant side (see ``gold.py``), then states every communicate_info."""
        return gold.gold_agent(task.evaluation, _opening(task))

    def gold_user(self, task: Task) -> User:
        """Opens with the reason for calling, replays the user-side gold actions (telecom), then stops."""
        return gold.gold_user(task.evaluation, _opening(task))

    # -- scoring --------------------------------------------------------------------------------------------
    def _gold_fingerprint(self, domain: Tau2Domain, task: Task) -> Any:
        key = (id(domain), json.dumps([task.initial_state, task.evaluation], sort_keys=True, default=str))
        if key not in self._gold_cache:
            self._gold_cache[key] = scoring.gold_fingerprint(domain, task.initial_state, task.evaluation or {})
        return self._gold_cache[key]

    def _score_checks(self, task: Task, messages: list[Message], env: Optional[Environment],
                      termination: Optional[str]) -> tuple[Optional[Score], dict, dict, list[str]]:
        termination = termination or scoring.derive_termination(messages)
        info: dict = {"termination": termination}
        if termination not in scoring.STOPPED:
            info["note"] = f"premature termination ({termination}): reward 0 without checks, as tau2"
            return Score(reward=0.0, components={}, info=info), info, {}, []
        evaluation = task.evaluation
        if evaluation is None:
            info["note"] = "no evaluation criteria"
            return Score(reward=1.0, components={}, info=info), info, {}, []
        basis = [b.lower() for b in evaluation.get("reward_basis") or []]
        domain = self._domain(task)
        calls = scoring.tool_calls(messages)
        components: dict[str, Optional[float]] = {}
        if "db" in basis or "env_assertion" in basis:
            if evaluation.get("actions") is None and evaluation.get("env_assertions") is None:
                db_match, final_state = True, None
            else:
                final = env if isinstance(env, Tau2Environment) else scoring.replay(domain, task.initial_state, calls)
                final_state = final.state()
                db_match = domain.fingerprint(final_state) == self._gold_fingerprint(domain, task)
            info["db_match"] = db_match
            if "db" in basis:
                components["db"] = 1.0 if db_match else 0.0
            if "env_assertion" in basis:
                reward, failed = (scoring.env_assertions_check(domain, final_state,
                                                               evaluation.get("env_assertions") or [])
                                  if final_state is not None else (1.0, []))
                components["env_assertion"] = reward
                info["env_assertions_failed"] = failed
        if "communicate" in basis:
            components["communicate"], info["communicate_missing"] = scoring.communicate_check(
                messages, evaluation.get("communicate_info") or [])
        if "action" in basis:
            components["action"], info["actions_unmatched"] = scoring.action_check(
                calls, evaluation.get("actions") or [])
        pending = []
        if "nl_assertion" in basis:
            if not evaluation.get("nl_assertions"):
                components["nl_assertion"] = 1.0
            else:
                components["nl_assertion"] = None
                pending.append("nl_assertion")
        return None, info, components, pending

    @staticmethod
    def _combine(components: dict, info: dict) -> Score:
        """tau2's reward is the product of the components. With a component skipped (no judge), the reward is
        known only when a computed component is already 0; otherwise it is unknown (None), never a pass."""
        product = 1.0
        for value in components.values():
            if value is not None:
                product *= value
        skipped = [k for k, v in components.items() if v is None]
        if not skipped:
            return Score(reward=product, components=components, info=info)
        info["skipped"] = skipped
        info["incomplete"] = True
        if product == 0.0:
            return Score(reward=0.0, components=components, info=info)
        return Score(reward=None, components=components, info=info, partial_reward=product)

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
        done, info, components, pending = self._score_checks(task, messages, env, termination)
        if done:
            return done
        if pending and judge is not None:
            reward, results = await judge_nl_assertions(judge, messages, task.evaluation["nl_assertions"])
            components["nl_assertion"] = reward
            info["nl_assertions"] = results
        return self._combine(components, info)

    @classmethod
    def explain(cls, components: dict[str, Optional[float]], info: dict) -> list[str]:
        """Reads what ``_score_checks`` stored: an early termination, the database check, failed environment
        assertions, unsaid communicate_info, unmatched gold actions, NL assertions the judge rejected."""
        lines = [info["note"]] if info.get("note") else []
        if info.get("db_match") is False:
            lines.append("database: the final state differs from the one the gold actions produce")
        lines += [f"environment assertion failed: {a}" for a in info.get("env_assertions_failed") or []]
        lines += [f"never told the user: {c!r}" for c in info.get("communicate_missing") or []]
        lines += [f"gold action not matched: {a}" for a in info.get("actions_unmatched") or []]
        for result in info.get("nl_assertions") or []:
            if isinstance(result, dict) and not result.get("met", True):
                lines.append(f"NL assertion not met: {result.get('nl_assertion')}: {result.get('justification', '')}")
        lines += [f"{name}: not computed (no judge model), reward unknown" for name in info.get("skipped") or []]
        return lines or super().explain(components, info)

    # -- official results -----------------------------------------------------------------------------------
    def read_official(self, path: Path) -> Optional[Iterable[ReplayItem]]:
        return official.read_results(path)
