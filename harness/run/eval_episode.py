"""Playing one episode of a run: the agent and user for its seed, ``run_episode``, and the EpisodeRecord that
becomes its line in episodes.jsonl. A model endpoint failure or a bug in one episode is recorded in the
episode (``error``), never raised; bad data or configuration (a MuaError) stops the run."""
from __future__ import annotations

import logging
import time
from typing import Optional

from ..errors import ModelError, MuaError
from ..interfaces import Agent, Benchmark, ChatModel, Limits, User
from ..results.episodes import EpisodeRecord
from ..results.store import JsonlAppender, RunDir
from ..runner import EpisodeResult, run_episode
from ..seeds import derive_seed
from ..types import Task
from .build import Models, UsageCounter, make_agent, make_user
from .plan import RunPlan, jsonable, write_config

log = logging.getLogger(__name__)


def _failed(bench: Benchmark, task: Task, trial: int, seed: int, error: str) -> EpisodeRecord:
    return EpisodeRecord.new(benchmark=bench.name, subset=task.subset, task_id=task.id, trial=trial, seed=seed,
                             reward=None, components={}, termination=None, turns=0, messages=[], usage={},
                             info={}, error=error)


async def play_one(bench: Benchmark, plan: RunPlan, models: Models, task: Task, trial: int
                   ) -> tuple[EpisodeRecord, float]:
    """The one way an episode of a run is played (`mua eval`, `mua sweep` through it, `mua play`): the episode's
    record and its wall-clock seconds."""
    seed = derive_seed(plan.seed, task.subset, task.id, trial)  # the episode's: trial ``trial`` of the task
    start = time.monotonic()
    try:
        agent, user = _seated(bench, plan, models, task, seed)
    except Exception as e:
        return _failed(bench, task, trial, seed, _failure(task, e)), time.monotonic() - start
    judge = UsageCounter(models.judge) if models.judge is not None else None
    result, error = await run_played(bench, task, agent, user, judge)
    if result is None:
        return _failed(bench, task, trial, seed, error or ""), time.monotonic() - start
    return episode_record(bench, task, trial, seed, result, judge), time.monotonic() - start


async def run_played(bench: Benchmark, task: Task, agent: Agent, user: User, judge: Optional[ChatModel] = None,
                     limits: Optional[Limits] = None, ends: tuple[type[BaseException], ...] = ()
                     ) -> tuple[Optional[EpisodeResult], Optional[str]]:
    """The one runner call of every played episode (play_one's, and the GRPO rollout's with its token-stream
    policy as the agent): ``run_episode``, and the episode's result or, where it failed, why, as the run records
    it: a model endpoint failure (``"model error: ..."``) or a bug in one episode (logged) is the episode's
    error, never raised; bad data or configuration (a MuaError) stops the run. The hook: ``ends``, exceptions a
    player raises to end its episode early, handed on to the caller (training: the policy's token budget)."""
    try:
        return await run_episode(bench, task, agent, user, judge=judge, limits=limits), None
    except ends:
        raise
    except Exception as e:
        return None, _failure(task, e)


def _failure(task: Task, e: Exception) -> str:
    """Why an episode failed, as its record says it (called while ``e`` is handled); a MuaError is raised on."""
    if isinstance(e, ModelError):
        return f"model error: {e}"
    if isinstance(e, MuaError):
        raise e  # bad data or configuration: the person running mua must fix it, once, not per episode
    log.exception("episode %s/%s failed", task.subset, task.id)  # a bug in one episode must not take the run down
    return f"{type(e).__name__}: {e}"


def _seated(bench: Benchmark, plan: RunPlan, models: Models, task: Task, seed: int) -> tuple[Agent, User]:
    """The agent and user of an episode: the person at the terminal in the role they play (`mua play`), the
    plan's models in the others; the scripted user for the gold agent or where the plan names no user model
    (a subset that needs one is refused before the run: batch.py)."""
    person = models.person
    if plan.person == "agent":
        assert isinstance(person, Agent)
        agent: Agent = person
    else:
        agent = make_agent(bench, task, plan.agent, models, seed)
    if plan.person == "user":
        assert isinstance(person, User)
        return agent, person
    return agent, make_user(bench, task, models.user, seed, scripted=plan.agent.gold or plan.user is None)


def write_played(run: RunDir, config: dict, record: EpisodeRecord) -> None:
    """A run of one episode played outside the scheduler (`mua play`): config.json through the one writer
    (plan.write_config), then the episode's line of episodes.jsonl, durable (flush + fsync)."""
    run.path.mkdir(parents=True, exist_ok=True)
    write_config(run, config)
    episodes = JsonlAppender(run.episodes)
    try:
        episodes.append_line(record.to_line())
    finally:
        episodes.close()


def episode_record(bench: Benchmark, task: Task, trial: int, seed: int, result: EpisodeResult,
                   judge: Optional[UsageCounter] = None) -> EpisodeRecord:
    """The record of a played and scored episode (`mua eval`'s and `mua play`'s line of episodes.jsonl)."""
    score = result.score
    if score is None:  # run_episode scores unless asked not to
        raise RuntimeError("run_episode returned no score")
    return EpisodeRecord.new(
        benchmark=bench.name, subset=task.subset, task_id=task.id, trial=trial, seed=seed,
        reward=score.reward, components=score.components, termination=result.termination, turns=result.turns,
        messages=[m.to_dict() for m in result.messages],
        usage={"agent": result.agent_usage.to_dict(), "user": result.user_usage.to_dict(),
               **({"judge": judge.usage.to_dict()} if judge is not None and judge.usage.requests else {})},
        info=jsonable(score.info), error=None)
