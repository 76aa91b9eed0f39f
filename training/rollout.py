"""Rollouts for TRL's ``GRPOTrainer(rollout_func=...)``: every episode is played by ``run_played``, the runner
call `mua eval`'s ``play_one`` makes (harness/run/eval_episode.py), with a token-stream policy as the agent, so
an episode's failures are told apart as eval tells them (a model error or a bug: the episode's error; a MuaError:
the run stops). Not ``play_one`` itself: a rollout seeds the user per group and the policy per episode, adds the
training turn budget to the benchmark's limits, ends an episode at the policy's token budget (run_played's one
hook, ``ends``) and reads the score's partial reward, which an EpisodeRecord does not carry.

TRL hands the rollout function the prompt column of this rank's batch, each task already repeated once per
group member, and expects one row back per prompt: ``prompt_ids``, ``completion_ids``, ``logprobs`` and, for
multi-turn rows, ``env_mask`` (1 on tokens the policy generated, 0 on tool results and user turns). Every other
key is handed to the reward functions, one value per row: here the episode's reward and what the metrics
need. The prompt column holds task keys ``"<subset>/<task id>"``.

Seeds: the simulated user gets one seed per (task, round), shared by the whole group, so reward differences
inside a group come from the policy; the policy gets a distinct seed per episode.
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TypeVar

from mua.harness.agents import ModelAgent
from mua.harness.errors import ModelError, MuaError
from mua.harness.interfaces import Benchmark, ChatModel, Limits, User
from mua.harness.models.stream import TokenStream
from mua.harness.results.stats import is_success
from mua.harness.run.build import Models
from mua.harness.run.endpoints import DEFAULT_STALL_S
from mua.harness.run.eval_episode import run_played
from mua.harness.runner import MAX_STEPS, MAX_TURNS, TOO_MANY_ERRORS
from mua.harness.seeds import derive_seed
from mua.harness.types import Message, Task

from .credit import Scorer, TurnRecord, information_gain
from .policy import BudgetExhausted, StreamPolicy
from .tree import Prefix, branch_prefixes, replayed_ids, shares_prefix, zero_spread
from .window import reach, trim_start

log = logging.getLogger(__name__)
BUDGET_EXHAUSTED = "budget_exhausted"  # termination of an episode stopped by the policy's token budget
RUNNER_LIMITS = (MAX_STEPS, MAX_TURNS, TOO_MANY_ERRORS)  # terminations by a runner budget: truncated episodes


POLL_S = 0.2  # how often a rollout checks for a stop request (and for a silent user or judge endpoint)


class NoPolicyTokens(MuaError):
    """A whole training step (all ranks) in which the policy generated nothing: TRL would train on filler."""


def task_key(task: Task) -> str:
    return f"{task.subset}/{task.id}"


@dataclass
class EpisodeOutcome:
    key: str
    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    logprobs: list[float]
    reward: Optional[float]  # None: the episode failed (the trainer gives it no advantage)
    termination: Optional[str]
    turns: int = 0
    agent_turns: int = 0
    clipped_turns: int = 0
    truncated: bool = False  # stopped by a budget: the token budget or a runner limit (max_steps/turns/errors)
    incomplete: bool = False  # the score skipped some of its components
    # the benchmark's verdict (the one pass test); never a pass when truncated; None when unknown (a failed
    # episode, or an incomplete score that gives no reward)
    passed: Optional[bool] = None
    policy_tokens: int = 0  # tokens the policy generated (trained or, with mask_truncated, masked out)
    error: Optional[str] = None
    messages: list[dict] = field(default_factory=list)
    turn_records: list[TurnRecord] = field(default_factory=list)  # each agent turn's span in completion_ids
    turn_rewards: list[float] = field(default_factory=list)  # one per turn (training/credit.py); 0.0 by default
    user_seed: Optional[int] = None  # what a tree branch replays the episode's prefix with (training/tree.py)

    @property
    def generated_tokens(self) -> int:
        return sum(self.env_mask)


@dataclass
class RolloutSettings:
    seed: int = 0
    concurrency: int = 16  # episodes in flight per rank
    truncated_reward: float = 0.0  # reward of an episode stopped by the token budget
    mask_truncated: bool = False  # no loss on truncated episodes or ones ending in a cut reply
    max_turns: Optional[int] = None  # user turns per episode, on top of the benchmark's own limits
    # A score with skipped components (e.g. tau2 NL assertions without a judge) rewards only part of the task:
    # "drop" gives the episode no reward (no advantage), "keep" uses the benchmark's partial reward.
    incomplete_scores: str = "drop"


class EpisodePlayer:
    """Plays tasks of one benchmark with a fresh :class:`StreamPolicy` per episode."""

    def __init__(self, benchmark: Benchmark, tasks: list[Task], make_policy: Callable[[int], StreamPolicy],
                 make_user: Callable[[Task, int], User], settings: RolloutSettings, filler_id: int,
                 judge: Optional[ChatModel] = None):
        self.benchmark, self.make_policy, self.make_user, self.judge = benchmark, make_policy, make_user, judge
        self.tasks = {task_key(t): t for t in tasks}
        self.settings = settings
        self.filler_id = filler_id  # stands in for an empty prompt/completion (never trained on)
        self._limits: dict[str, Limits] = {}

    def limits(self, key: str) -> Optional[Limits]:
        """The runner budgets of ``key``'s episodes: the benchmark's, with the training turn budget."""
        turns = self.settings.max_turns
        if turns is None:
            return None
        if key not in self._limits:
            own = self.benchmark.limits(self.task(key))
            if own.max_user_turns is not None:
                turns = min(turns, own.max_user_turns)
            self._limits[key] = replace(own, max_user_turns=turns)
        return self._limits[key]

    def models(self) -> Models:
        """The user and judge model clients (what the stall check watches)."""
        return Models(user=getattr(self.make_user, "model", None), judge=self.judge)

    async def aclose(self) -> None:
        """Close the user and judge model clients (HTTP sessions) in the loop that used them."""
        for model in (getattr(self.make_user, "model", None), self.judge):
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()

    def task(self, key: str) -> Task:
        if key not in self.tasks:
            raise KeyError(f"the training prompts name task {key!r}, which is not among the loaded tasks")
        return self.tasks[key]

    async def play(self, key: str, policy_seed: int, user_seed: int,
                   replay: Optional[list[list[int]]] = None) -> EpisodeOutcome:
        """One episode; ``replay``: the generated ids of its first turns, played as context (a tree branch)."""
        outcome = await self._episode(key, policy_seed, user_seed, replay or [])
        outcome.user_seed = user_seed
        return outcome

    async def _episode(self, key: str, policy_seed: int, user_seed: int,
                       replay: list[list[int]]) -> EpisodeOutcome:
        task = self.task(key)
        policy = self.make_policy(policy_seed)
        policy.replay = replay
        user = self.make_user(task, user_seed)
        try:  # the runner call of every played episode, eval's too; the token budget ends it early (ends=)
            result, error = await run_played(self.benchmark, task, ModelAgent(policy, seed=policy_seed), user,
                                             self.judge, self.limits(key), ends=(BudgetExhausted,))
        except BudgetExhausted as exc:
            out = self._outcome(key, policy, self.settings.truncated_reward, BUDGET_EXHAUSTED, truncated=True)
            out.passed = False
            out.turns, out.messages = _user_turns(policy.last_view), [m.to_dict() for m in policy.last_view]
            out.error = None if policy.stream is not None else str(exc)
            return out
        if result is None:  # endpoint failures and the like: recorded, excluded from the update
            log.warning("episode %s failed: %s", key, error)
            out = self._outcome(key, policy, None, None)
            out.error = error
            return out
        score = result.score
        incomplete = score is not None and any(v is None for v in score.components.values())
        # An unknown reward (a skipped check could still change it) gives no reward under "drop"; "keep" uses
        # the reward over the computed components. A reward already decided (a computed check failed) stays.
        reward = score.reward if score is not None else None
        if score is not None and reward is None and self.settings.incomplete_scores == "keep":
            reward = score.partial_reward
        truncated = result.termination in RUNNER_LIMITS
        out = self._outcome(key, policy, reward, result.termination, truncated=truncated)
        out.incomplete = incomplete
        if truncated:
            out.passed = False
        elif score is not None and (score.reward is not None or self.settings.incomplete_scores == "keep"):
            out.passed = is_success(score.reward if score.reward is not None else score.partial_reward)
        out.turns, out.messages = result.turns, [m.to_dict() for m in result.messages]
        return out

    def _outcome(self, key: str, policy: StreamPolicy, reward: Optional[float], termination: Optional[str],
                 truncated: bool = False) -> EpisodeOutcome:
        stream = policy.stream.trimmed() if policy.stream is not None else TokenStream([self.filler_id])
        if not stream.completion_ids:  # the policy never generated: nothing to learn from
            stream.add_context([self.filler_id])
            reward = None
        generated = stream.generated_tokens
        if self.settings.mask_truncated and (truncated or policy.last_reply_cut):
            stream.env_mask = [0] * len(stream.env_mask)
        turns = [t for t in policy.turn_records if t.end <= len(stream.completion_ids)]
        return EpisodeOutcome(key, stream.prompt_ids, stream.completion_ids, stream.env_mask, stream.logprobs,
                              reward, termination, agent_turns=policy.turns, clipped_turns=policy.clipped_turns,
                              truncated=truncated, policy_tokens=generated, turn_records=turns,
                              turn_rewards=[0.0] * len(turns))

    async def play_all(self, jobs: Sequence[tuple],
                       on_done: Optional[Callable[[], None]] = None) -> list[EpisodeOutcome]:
        slots = asyncio.Semaphore(self.settings.concurrency)

        async def one(job):
            async with slots:
                outcome = await self.play(*job)
            if on_done is not None:
                on_done()
            return outcome

        return list(await asyncio.gather(*(one(job) for job in jobs)))


def _user_turns(view: list[Message]) -> int:
    """User turns so far, counted as the runner counts them (user messages with text)."""
    return sum(1 for m in view if m.role == "user" and m.content)


def to_trl(outcomes: list[EpisodeOutcome], window_reach: Optional[int] = None, played: int = 0) -> dict[str, list]:
    """The rollout function's return value: TRL's keys plus per-row fields for the reward function.
    ``window_reach`` (training/window.py): each prompt without the head its completion's log-probs cannot see;
    ``played``: the episodes the rollout played to get these (more than these where groups were refilled)."""
    return {
        # Why: TRL re-reads prompt + completion only for the completion's log-probs, whose first one comes from the
        # prompt's last position; a windowed model's logits there cannot see more than `window_reach` tokens back,
        # so the rest of the prompt is exact to drop (the episodes were played, and are kept, in full). TRL's
        # num_tokens metric then counts the prompt tokens it actually read.
        "prompt_ids": [o.prompt_ids[trim_start(len(o.prompt_ids) - 1, window_reach):] for o in outcomes],
        "completion_ids": [o.completion_ids for o in outcomes],
        "logprobs": [o.logprobs for o in outcomes],
        "env_mask": [o.env_mask for o in outcomes],
        "episode_reward": [o.reward for o in outcomes],
        "turn_spans": [[(t.start, t.end) for t in o.turn_records] for o in outcomes],
        "turn_rewards": [o.turn_rewards for o in outcomes],
        "episode_stats": [{"turns": o.turns, "agent_turns": o.agent_turns, "clipped_turns": o.clipped_turns,
                           "generated_tokens": o.generated_tokens, "truncated": o.truncated,
                           "incomplete": o.incomplete, "passed": o.passed, "policy_tokens": o.policy_tokens,
                           "termination": o.termination, "error": o.error,
                           "played": max(played, len(outcomes))} for o in outcomes],
    }


def episode_reward(prompts, completions, episode_reward=None, episode_stats=None, log_metric=None, **_):
    """TRL reward function: the benchmark's own reward of each episode (None for failed episodes); also logs
    the episode metrics of the batch."""
    if log_metric is not None and episode_stats:
        n = len(episode_stats)
        verdicts = [s["passed"] for s in episode_stats if s.get("passed") is not None]
        turns = sum(s["agent_turns"] for s in episode_stats)
        log_metric("episode/pass_rate", sum(verdicts) / max(len(verdicts), 1))
        log_metric("episode/no_policy_tokens", sum(not s.get("policy_tokens") for s in episode_stats) / n)
        log_metric("episode/turns", sum(s["turns"] for s in episode_stats) / n)
        log_metric("episode/generated_tokens", sum(s["generated_tokens"] for s in episode_stats) / n)
        log_metric("episode/clip_ratio", sum(s["clipped_turns"] for s in episode_stats) / max(turns, 1))
        log_metric("episode/truncated", sum(s["truncated"] for s in episode_stats) / n)
        log_metric("episode/errors", sum(s["error"] is not None for s in episode_stats) / n)
        log_metric("episode/incomplete_score", sum(bool(s.get("incomplete")) for s in episode_stats) / n)
        # what dynamic sampling and tree rollouts cost: a baseline given "the same episodes" needs this count
        log_metric("episode/played", max(s.get("played", n) for s in episode_stats))
    return list(episode_reward)


def sample_file(output_dir: Path, step: int) -> Path:
    """Where the sample episodes of training step ``step`` (1-based, the step their rollout feeds) go:
    ``samples/step-<step>.jsonl``, every rollout of that step in one file."""
    return output_dir / "samples" / f"step-{step}.jsonl"


def write_samples(path: Path, outcomes: list[EpisodeOutcome], limit: int, step: int, round_no: int) -> None:
    """Up to ``limit`` episodes of one rollout; the step's first rollout starts the file, later ones (several
    generation rounds per step) add to it. Each row says its step and round."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w" if round_no == 0 else "a", encoding="utf-8") as f:
        for o in outcomes[:limit]:
            row = {k: v for k, v in asdict(o).items() if k not in ("prompt_ids", "completion_ids", "env_mask",
                                                                     "logprobs", "turn_records", "user_seed")}
            row["generated_tokens"] = o.generated_tokens
            row["step"], row["round"] = step, round_no
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


async def _settle(tasks) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


def score_turns(outcomes: Sequence[EpisodeOutcome], score: Scorer) -> None:
    """Each scored episode's turn rewards: the information gain of every turn (training/credit.py)."""
    for o in outcomes:
        if o.reward is not None:
            o.turn_rewards = [information_gain(score, o.prompt_ids, o.completion_ids, t) for t in o.turn_records]


Source = TypeVar("Source")


def refill_groups(outcomes: list[EpisodeOutcome], group: int, spare: Sequence[Source], rounds: int,
                  play: Callable[[list[Source], int], list[EpisodeOutcome]]) -> tuple[list[EpisodeOutcome], int]:
    """Dynamic sampling (DAPO): each group of ``group`` consecutive episodes of one task whose rewards have no
    spread is replaced, in place, by a group of the next source of ``spare`` (tasks not in the batch, in a fixed
    order; or tree prefixes, training/tree.py) that has a spread; for up to ``rounds`` rounds, each playing one
    new group per group still without spread (``play(sources, round)`` plays ``group`` episodes of each source,
    grouped in order). A group no round could replace stays. Returns the batch (same size, same order of groups)
    and how many groups were replaced."""
    outcomes = list(outcomes)
    starts = [i for i in range(0, len(outcomes) - group + 1, group)
              if len({o.key for o in outcomes[i:i + group]}) == 1]  # a whole group of one task
    pending = [i for i in starts if zero_spread(outcomes[i:i + group])]
    queue, replaced = iter(spare), 0
    for r in range(rounds):
        keys = [k for _, k in zip(pending, queue)]
        if not keys:
            break
        played = play(keys, r)
        still = []
        for n, at in enumerate(pending):
            candidate = played[n * group:(n + 1) * group] if n < len(keys) else []
            if candidate and not zero_spread(candidate):
                outcomes[at:at + group] = candidate
                replaced += 1
            else:
                still.append(at)
        pending = still
    return outcomes, replaced


class RolloutFunc:
    """``rollout_func(prompts, trainer)`` for GRPOTrainer. ``backend_for(trainer)`` gives the generation
    backend (built lazily: the vLLM engine exists only once the trainer does).

    Every rollout runs in one event loop kept for the whole run, so the user and judge clients keep one HTTP
    session each; :meth:`close` closes them in that loop (call it when training ends, however it ends)."""

    def __init__(self, player: EpisodePlayer, backend_for: Callable[[Any], Any], samples_per_step: int = 4,
                 progress: bool = True, dynamic_sampling: int = 0, group: int = 0,
                 info_gain: bool = False, tree_rollouts: int = 0):
        self.player, self.backend_for = player, backend_for
        self.tree_rollouts = tree_rollouts  # branch rounds from mixed groups' turn prefixes (0: off)
        self.branched = 0  # groups replaced by tree branches at the last rollout
        self.info_gain = info_gain  # turn rewards: the information gain, scored by the backend (else all 0)
        self.samples_per_step, self.progress = samples_per_step, progress
        self.dynamic_sampling, self.group = dynamic_sampling, group  # refill rounds (0: off), episodes per group
        self.refilled = 0  # groups replaced at the last rollout
        self.played = 0  # episodes the last rollout played: its batch plus every refill and branch round
        self.interrupt: Any = None  # a SaveOnInterrupt: its ``requested`` abandons the rollout in progress
        self.backend: Any = None  # built on the first rollout
        self._round: tuple[int, int] = (-1, 0)  # (global step, rollouts made at that step)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self.last: list[EpisodeOutcome] = []

    def _next_round(self, step: int) -> str:
        last_step, count = self._round
        self._round = (step, count + 1 if step == last_step else 0)
        return f"{step}.{self._round[1]}"

    def _run(self, coro):
        """Run ``coro`` in the run's loop, then cancel what it left running (micro-batcher workers, which
        start again on demand), so no task outlives a rollout; HTTP sessions stay open."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        try:
            return self._loop.run_until_complete(coro)
        finally:
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            if pending:
                self._loop.run_until_complete(_settle(pending))

    def close(self) -> None:
        """Close the model clients in the loop that used them, then the loop."""
        loop = self._loop
        if loop is None:
            return
        try:
            self._run(self.player.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            self._loop = None
            loop.close()

    async def _play(self, jobs: Sequence[tuple], label: str,
                    show: bool) -> Optional[list[EpisodeOutcome]]:
        """The rollout's episodes, with a progress bar; None when a stop was requested (checked every
        POLL_S: the episodes in flight are cancelled)."""
        from tqdm.auto import tqdm

        self.played += len(jobs)
        bar = tqdm(total=len(jobs), desc=f"rollout {label}", unit="ep", leave=False, disable=not show,
                   dynamic_ncols=True)
        play = asyncio.ensure_future(self.player.play_all(jobs, on_done=lambda: bar.update(1)))
        try:
            while not play.done():
                if self.interrupt is not None and self.interrupt.requested:
                    play.cancel()
                    await asyncio.gather(play, return_exceptions=True)
                    return None
                if silent := self.player.models().silent_endpoint(DEFAULT_STALL_S):  # as `mua eval`'s bound
                    play.cancel()
                    await asyncio.gather(play, return_exceptions=True)
                    raise ModelError(f"model endpoint {silent} while rollout requests wait; stopping. Fix the "
                                     "endpoint and re-run the same command to resume from the last checkpoint")
                await asyncio.wait({play}, timeout=POLL_S)
            return play.result()
        finally:
            bar.close()

    def _refill(self, played: list[EpisodeOutcome], prompts: list[str], round_id: str, rank: int, label: str,
                show: bool) -> Optional[list[EpisodeOutcome]]:
        """``played`` with its zero-spread groups replaced (:func:`refill_groups`), from the train tasks not in
        this batch in an order fixed by the seed and the round; None when a stop was requested meanwhile."""
        import random

        seed = self.player.settings.seed
        spare = sorted(set(self.player.tasks) - set(prompts))
        random.Random(derive_seed(seed, "refill", round_id, rank)).shuffle(spare)
        stopped = False

        def play(keys: list[str], r: int) -> list[EpisodeOutcome]:
            nonlocal stopped
            jobs = [(key, derive_seed(seed, "policy", key, round_id, rank, f"refill {r}", i),
                     derive_seed(seed, "user", key, round_id, f"refill {r}"))
                    for key in keys for i in range(self.group)]
            got = None if stopped else self._run(self._play(jobs, f"{label}, refill {r + 1}", show))
            stopped = stopped or got is None
            return got or []

        outcomes, self.refilled = refill_groups(played, self.group, spare, self.dynamic_sampling, play)
        return None if stopped else outcomes

    def _branch(self, played: list[EpisodeOutcome], round_id: str, rank: int, label: str,
                show: bool) -> Optional[list[EpisodeOutcome]]:
        """``played`` with its zero-spread groups replaced by tree branches (training/tree.py); None when a stop
        was requested meanwhile."""
        seed, first = self.player.settings.seed, list(played)
        stopped = False

        def play(prefixes: list[Prefix], r: int) -> list[EpisodeOutcome]:
            nonlocal stopped
            jobs = [(first[p.episode].key,
                     derive_seed(seed, "policy", first[p.episode].key, round_id, rank, f"branch {r}", n, i),
                     first[p.episode].user_seed, replayed_ids(first[p.episode], p))
                    for n, p in enumerate(prefixes) for i in range(self.group)]
            got = None if stopped else self._run(self._play(jobs, f"{label}, branch {r + 1}", show))
            stopped = stopped or got is None
            branches = got or []
            for n, p in enumerate(prefixes):  # a group that left the tree anywhere is no branch group
                members = branches[n * self.group:(n + 1) * self.group]
                if not all(shares_prefix(b, first[p.episode], p) for b in members):
                    for b in members:
                        b.reward = None
            return branches

        outcomes, self.branched = refill_groups(played, self.group, branch_prefixes(first, self.group),
                                                self.tree_rollouts, play)
        return None if stopped else outcomes

    def __call__(self, prompts: list[str], trainer) -> dict[str, list]:
        from .stopping import RolloutInterrupted, any_ranks

        if self.backend is None:
            self.backend = self.backend_for(trainer)
        step = trainer.state.global_step
        round_id = self._next_round(step)
        rank, seed = trainer.accelerator.process_index, self.player.settings.seed
        jobs = [(key, derive_seed(seed, "policy", key, round_id, rank, i), derive_seed(seed, "user", key, round_id))
                for i, key in enumerate(prompts)]
        show = self.progress and trainer.accelerator.is_main_process
        self.played = 0
        with self.backend.session():
            played = self._run(self._play(jobs, f"step {step + 1}", show))
            if played is not None and self.dynamic_sampling and self.group > 1:
                played = self._refill(played, prompts, round_id, rank, f"step {step + 1}", show)
            if played is not None and self.tree_rollouts and self.group > 1:
                played = self._branch(played, round_id, rank, f"step {step + 1}", show)
            if played is not None and self.info_gain:
                score_turns(played, self.backend.score)
        outcomes = played or []
        failed = played is not None and all(o.error is not None for o in outcomes)
        has_tokens = any(o.policy_tokens for o in outcomes)
        # every rank stops together: one collective, whatever happened on each rank
        stopped, any_failed, any_tokens = any_ranks([played is None, failed, has_tokens],
                                                    getattr(trainer.accelerator, "device", None))
        if stopped:
            raise RolloutInterrupted(f"stopped during the rollout of step {step + 1}")
        if any_failed:
            first = next((o.error for o in outcomes if o.error), "failed on another rank")
            raise ModelError(f"every episode of training step {step + 1} failed (first error: {first}). Check "
                             "that the user, judge and generation endpoints are up; the run is kept up to its "
                             "last checkpoint: re-run the same command to resume")
        self.last = outcomes
        if trainer.accelerator.is_main_process and self.samples_per_step:
            write_samples(sample_file(Path(trainer.args.output_dir), step + 1), outcomes, self.samples_per_step,
                          step + 1, self._round[1])
        if not any_tokens:
            why = next((o.error or o.termination for o in outcomes if o.error or o.termination), "unknown")
            raise NoPolicyTokens(f"no episode of training step {step + 1} produced a policy token on any rank (first "
                                 f"reason: {why}), so there is nothing to train on; see the step's episodes in "
                                 f"{Path(trainer.args.output_dir) / 'samples'}. The run is kept up to its last "
                                 "checkpoint")
        return to_trl(outcomes, reach(getattr(getattr(trainer, "model", None), "config", None)), self.played)
