"""Playing one episode of a run: the agent and user for its seed, ``run_episode``, and the EpisodeRecord that
becomes its line in episodes.jsonl. A model endpoint failure or a bug in one episode is recorded in the
episode (``error``), never raised; bad data or configuration (a MuaError) stops the run."""
from __future__ import annotations

import logging
import time

from .build import Models, UsageCounter, make_agent, make_user
from .episodes import EpisodeRecord
from .errors import ModelError, MuaError
from .interfaces import Benchmark
from .plan import RunPlan, jsonable
from .runner import run_episode
from .seeds import episode_seed
from .types import Task

log = logging.getLogger(__name__)


def _failed(bench: Benchmark, task: Task, trial: int, seed: int, error: str) -> EpisodeRecord:
    return EpisodeRecord.new(benchmark=bench.name, subset=task.subset, task_id=task.id, trial=trial, seed=seed,
                             reward=None, components={}, termination=None, turns=0, messages=[], usage={},
                             info={}, error=error)


async def play_episode(bench: Benchmark, task: Task, trial: int, plan: RunPlan, models: Models
                       ) -> tuple[EpisodeRecord, float]:
    """The episode's record and its wall-clock seconds."""
    seed = episode_seed(plan.seed, task.subset, task.id, trial)
    start = time.monotonic()
    try:
        agent = make_agent(bench, task, plan.agent, models, seed)
        user = make_user(bench, task, models.user, seed, scripted=plan.agent.gold)
        judge = UsageCounter(models.judge) if models.judge is not None else None
        result = await run_episode(bench, task, agent, user, judge=judge)
    except ModelError as e:
        return _failed(bench, task, trial, seed, f"model error: {e}"), time.monotonic() - start
    except MuaError:
        raise  # bad data or configuration: the person running mua must fix it, once, not per episode
    except Exception as e:  # a bug in one episode must not take the run down; it is recorded
        log.exception("episode %s/%s trial %d failed", task.subset, task.id, trial)
        return _failed(bench, task, trial, seed, f"{type(e).__name__}: {e}"), time.monotonic() - start
    score = result.score
    if score is None:  # run_episode scores unless asked not to
        raise RuntimeError("run_episode returned no score")
    record = EpisodeRecord.new(
        benchmark=bench.name, subset=task.subset, task_id=task.id, trial=trial, seed=seed,
        reward=score.reward, components=score.components, termination=result.termination, turns=result.turns,
        messages=[m.to_dict() for m in result.messages],
        usage={"agent": result.agent_usage.to_dict(), "user": result.user_usage.to_dict(),
               **({"judge": judge.usage.to_dict()} if judge is not None and judge.usage.requests else {})},
        info=jsonable(score.info), error=None)
    return record, time.monotonic() - start
