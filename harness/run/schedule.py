"""Scheduling the episodes of a run: which are still to play (resume), concurrent workers drawing them in
config order, the endpoint watchdog and error streak that stop a run whose model is down, appending each
record durably, and, at the end, the summary and the canonical rewrite of the result files."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, cast

from ..errors import ModelError
from ..interfaces import Benchmark
from ..results.cost import RunCost
from ..results.episodes import (
    ERRORED,
    INVALID,
    MISSING,
    EpisodeRecord,
    Index,
    Positions,
    dumps,
    episode_index,
    keyed_index,
)
from ..results.runs import Aggregate
from ..results.store import JsonlAppender, RunDir, rewrite_in_order, write_json
from ..results.summary import summary_json
from ..types import Task
from .build import Models
from .eval_episode import play_one
from .plan import RunPlan, write_config

if TYPE_CHECKING:
    from .progress import Progress

MAX_LISTED_ERRORS = 100  # errored episodes named in the outcome (all are counted, and all are in the file)


@dataclass
class EvalOutcome:
    summary: dict
    ran: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    finished_before: bool = False  # the folder held this run finished: nothing played, no endpoint asked


@dataclass(frozen=True)
class PendingRun:
    """Everything the scheduler needs: what to play, with what, into which folder, recorded as ``config``; then
    how it is played (the `mua eval` flags that do not change what it measures)."""

    bench: Benchmark
    plan: RunPlan
    tasks: dict[str, list[Task]]
    run: RunDir
    config: dict
    models: Models
    on_play: Optional[Callable[[], None]] = None  # called once the endpoints answer, before the first episode
    concurrency: int = 8
    progress: bool = True  # the progress bar (off: no Progress is built)
    retry_errors: bool = True  # re-play errored episodes found on resume
    max_error_streak: int = 20  # consecutive model-endpoint failures that stop the run (0: never)
    stall_timeout_s: float = 120.0  # an endpoint silent this long with requests waiting stops the run (0: never)


async def watch_endpoints(models: Models, limit_s: float) -> None:
    """Returns never; raises ModelError once an endpoint has been silent for ``limit_s`` with requests waiting."""
    while True:
        await asyncio.sleep(min(5.0, limit_s / 4))
        if silent := models.silent_endpoint(limit_s):
            raise ModelError(f"model endpoint {silent} while requests wait; stopping (in-flight episodes are "
                             "not recorded). Fix the endpoint (or raise --stall-timeout for a slow one) and re-run "
                             "the same command to resume.")


class _Player:
    """Plays pending positions and records each one as it finishes (the state shared by the workers)."""

    def __init__(self, job: PendingRun, trials: int, outcome: EvalOutcome, progress: Optional[Progress]):
        self.job, self.trials, self.outcome, self.progress = job, trials, outcome, progress
        self.flat = [t for ts in job.tasks.values() for t in ts]  # position p: flat[p // trials], trial p % trials
        self.episodes = JsonlAppender(job.run.episodes)
        self.timings = JsonlAppender(job.run.timings)
        self.streak = 0
        # timings.jsonl fresh and appended in config order so far: already final, never read back
        self.timings_in_order, self.timings_next = self.timings.was_empty, 0
        self.abort: list[ModelError] = []  # set once the endpoint looks down: episodes not yet started are skipped

    async def play(self, p: int) -> None:
        task, trial = self.flat[p // self.trials], p % self.trials
        job = self.job
        clock = self.progress.episode_started() if self.progress is not None else 0
        record, seconds = await play_one(job.bench, job.plan, job.models, task, trial)
        self.episodes.append_line(record.to_line())
        self.timings.append_line(dumps({"subset": task.subset, "task_id": task.id, "trial": trial,
                                        "seconds": round(seconds, 4)}))
        self.timings_in_order, self.timings_next = self.timings_in_order and p == self.timings_next, p + 1
        self.outcome.ran += 1
        if record.error:
            if len(self.outcome.errors) < MAX_LISTED_ERRORS:
                self.outcome.errors.append(f"{task.subset}/{task.id}#{trial}: {record.error}")
        self.streak = self.streak + 1 if (record.error or "").startswith("model error") else 0
        limit = job.max_error_streak
        if limit and self.streak >= limit and not self.abort:
            self.abort.append(ModelError(f"{self.streak} episodes in a row failed on the model endpoint; stopping. "
                                         f"Last: {record.error}. Fix the endpoint and re-run the same command to "
                                         "resume."))
        await self.episodes.commit()  # counted as done once durable; bookkeeping above happens before this await
        if self.progress is not None:
            self.progress.episode_done(clock, record)

    async def worker(self, pending: Iterator[int]) -> None:
        for p in pending:  # one iterator shared by all workers: each position is played once
            if self.abort:
                return
            await self.play(p)


async def _play_all(player: _Player, pending: Iterator[int], job: PendingRun) -> None:
    """``concurrency`` workers draw from ``pending`` until it is empty, the error streak aborts, or the
    watchdog finds an endpoint stalled; on any exit the workers are stopped before the files are closed."""
    running = [asyncio.create_task(player.worker(pending)) for _ in range(max(1, job.concurrency))]
    stall = job.stall_timeout_s
    # no endpoint (the gold agent with its scripted user): nothing can stall, no watchdog
    watched = stall > 0 and bool(job.models.distinct())
    watchdog = asyncio.create_task(watch_endpoints(job.models, stall)) if watched else None
    everything = asyncio.gather(*running)
    try:
        # waited on, not awaited: a Ctrl-C raised inside a worker then unwinds here, as the one path it takes
        await asyncio.wait([cast("asyncio.Future[Any]", everything), *([watchdog] if watchdog else [])],
                           return_when=asyncio.FIRST_COMPLETED)
        if watchdog is not None and watchdog.done():
            watchdog.result()  # raises the stall
        await everything
        if player.abort:
            raise player.abort[0]
    except BaseException:
        for task in running:  # stop the rest cleanly before the result files are closed
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        if everything.done() and not everything.cancelled():
            everything.exception()  # retrieved: the reason is the exception being raised here
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()


async def run_pending(job: PendingRun) -> EvalOutcome:
    """Play every episode of the run not already finished in its folder (after checking the endpoints once),
    then write summary.json; config.json is (re)written before either. A run found finished asks no endpoint."""
    layout = Positions({s: [t.id for t in ts] for s, ts in job.tasks.items()}, job.config["trials"])
    early = _aggregate(job, layout)  # filled while the file reads as final: a finished run is read once
    done = episode_index(job.run.episodes, layout.position, layout.size, in_order=early.add)
    retry = ERRORED if job.retry_errors else -1
    kept = bytearray(layout.size)  # 1: finished and kept (invalid lines are never kept: they are re-played)
    resumed: list[int] = []  # their index statuses, for the progress bar's counts
    for p in range(layout.size):
        if done.status[p] not in (MISSING, retry, INVALID):
            kept[p] = 1
            resumed.append(done.status[p])
    outcome = EvalOutcome(summary={}, skipped=len(resumed))
    if outcome.skipped == layout.size and done.canonical:  # nothing to play, files already final
        write_config(job.run, job.config)
        outcome.finished_before = True
        outcome.summary = _summary(job, layout, done, complete=True, agg=early)
        write_json(job.run.summary, outcome.summary)
        return outcome
    del done, early
    await job.models.check_alive()
    write_config(job.run, job.config)
    if job.on_play is not None:
        job.on_play()
    pending = (p for p in range(layout.size) if not kept[p])  # drawn lazily by the workers, in config order
    progress = None
    if job.progress:  # --no-progress: no bar, no clock, no counts, not even tqdm is loaded
        from .progress import Progress

        progress = Progress(f"{job.bench.name}/{'+'.join(job.tasks)}", layout.size, resumed, slots=job.concurrency)
    del resumed
    player = _Player(job, layout.trials, outcome, progress)
    try:
        await _play_all(player, pending, job)
    finally:
        if progress is not None:
            progress.close()
        player.episodes.close()
        player.timings.close()
    late = _aggregate(job, layout)  # as ``early``: filled by the one read below while the file is in order
    final = episode_index(job.run.episodes, layout.position, layout.size, in_order=late.add)
    outcome.summary = _summary(job, layout, final, complete=MISSING not in final.status,
                               agg=late if final.ordered else None, timings_final=player.timings_in_order)
    write_json(job.run.summary, outcome.summary)
    return outcome


def _aggregate(job: PendingRun, layout: Positions) -> Aggregate:
    # no price recorded (no role played a model, e.g. gold): no "cost" block, nothing to add up
    # the adapter's declaration itself, which config.json records (read back equal: MetricsDeclaration.to_dict)
    return Aggregate(job.bench.declared_metrics(), {s: [t.id for t in ts] for s, ts in job.tasks.items()},
                     layout.trials, cost=RunCost(job.config) if job.config.get("prices") else None)


def _summary(job: PendingRun, layout: Positions, index: Index[EpisodeRecord], complete: bool,
             agg: Optional[Aggregate] = None, timings_final: bool = False) -> dict:
    """The summary, streamed over the latest record of each episode in config order (``agg``: already fed
    with them all, in that order, from a file that is in it). A complete run's files are rewritten in that
    order on the way (byte-identical across reruns with the same answers), unless they already are in it
    (``timings_final``: timings.jsonl is known to be)."""
    if agg is None:
        agg = _aggregate(job, layout)
        if complete and not index.canonical:
            rewrite_in_order(index, feed=agg.add)
        else:
            for record in index.records(range(layout.size)):
                agg.add(record)
    if complete and not timings_final:
        timings = keyed_index(job.run.timings, layout.position, layout.size)
        if not timings.canonical:
            rewrite_in_order(timings)
    summary = summary_json(job.config, agg)
    if not job.bench.exact_user_facts:
        return summary
    from ..users.audit import has_exact_facts, summary_block  # lazy: only a benchmark with exact facts needs it

    if not has_exact_facts(job.bench, [t for ts in job.tasks.values() for t in ts]):
        return summary
    # read afresh: the rewrite above moves the lines ``index`` points at
    final = episode_index(job.run.episodes, layout.position, layout.size)
    return summary | {"users": summary_block(job.bench, {(s, t.id): t for s, ts in job.tasks.items() for t in ts},
                                             ((r.subset, r.task_id, r.messages, r.termination, r.trial)
                                              for r in final.records(range(layout.size))))}
