"""Runs many episodes: concurrency, checkpointing to the results store, resume, progress and the summary.

Every episode goes through ``run_episode``; this layer only schedules them and records what came back.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Iterable, Optional

from tqdm import tqdm

from .build import ModelSpec, Models, UsageCounter, describe, make_agent, make_user, open_model
from .cost import RunCost, prices_record, user_table
from .errors import ConfigError, ModelError, MuaError
from .interfaces import Benchmark
from .metrics import SummaryFields
from .plan import protocol_record, role_record, under_protocol
from .protocol import ROLES, RunProtocol
from .registry import open_benchmark
from .results import EpisodeIndex, EpisodeKey, JsonlAppender, RunDir, rewrite_in_order, write_json
from .runner import run_episode
from .runs import declaration_of
from .seeds import episode_seed
from .selection import TaskSelection
from .selection import select_tasks as select
from .stats import is_success
from .summary import EpisodeStats
from .types import Task

log = logging.getLogger(__name__)
MAX_LISTED_ERRORS = 100  # errored episodes named in the outcome (all are counted, and all are in the file)


@dataclass
class EvalPlan:
    benchmark: str
    subsets: list[str]
    agent: ModelSpec
    user: Optional[ModelSpec] = None
    judge: Optional[ModelSpec] = None
    split: Optional[str] = None
    trials: Optional[int] = None  # None: the benchmark protocol's trials (1 for the gold agent)
    seed: int = 0
    task_ids: Optional[list[str]] = None
    limit: Optional[int] = None
    prices: Optional[str] = None  # a user's price table file (cost.py); mua's built-in table otherwise


@dataclass
class EvalOutcome:
    summary: dict
    ran: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


def mua_version() -> str:
    try:
        return version("mua")
    except PackageNotFoundError:
        return "unknown"


def select_tasks(bench: Benchmark, plan: EvalPlan) -> dict[str, list[Task]]:
    # a missing or malformed data file surfaces here (load_tasks checks what episodes will read), before any run
    return select(bench, TaskSelection(plan.subsets, plan.split, plan.task_ids or [], plan.limit))


def with_protocol(plan: EvalPlan, official: RunProtocol) -> tuple[EvalPlan, list[str]]:
    """The plan as it runs under the benchmark's official protocol: each model role's request params are
    the official ones with the plan's (flags) on top, its seed sent as the protocol says, trials the
    protocol's unless given (one for the gold agent: it replays the same actions every trial). Also returns
    the overrides ("agent.temperature", "trials", ...)."""
    overrides: list[str] = []
    specs = {}
    for role in ROLES:
        spec = getattr(plan, role)
        if spec is None or spec.gold:
            specs[role] = spec
            continue
        specs[role], changed = under_protocol(official, role, spec)  # the plan `mua train` applies too
        overrides += changed
    trials = plan.trials
    if trials is None:
        trials = 1 if plan.agent.gold else official.trials
    elif trials != official.trials and not plan.agent.gold:
        overrides.append("trials")
    return replace(plan, trials=trials, **specs), overrides


def _protocol(bench: Benchmark, plan: EvalPlan, tasks: dict[str, list[Task]], overrides: list[str]) -> dict:
    """config.json's "protocol": what this run sends per role, its budgets, trials and data checksums, beside
    the benchmark's official protocol (see protocol.py)."""
    user_played = not plan.agent.gold and any(bench.needs_user_model(s) for s in tasks)
    roles = {}
    for role in ROLES:
        spec = getattr(plan, role)
        played = spec is not None and not spec.gold and (role != "user" or user_played)
        roles[role] = role_record(spec) if played else None
    return protocol_record(bench, roles, plan.trials or 1, list(tasks), overrides)


def _config(bench: Benchmark, plan: EvalPlan, tasks: dict[str, list[Task]], models: Models,
            overrides: Optional[list[str]] = None) -> dict:
    return {
        "benchmark": plan.benchmark,
        "subsets": plan.subsets,
        "split": plan.split,
        "trials": plan.trials,
        "seed": plan.seed,
        "agent": describe(plan.agent, models.agent),
        "user": describe(plan.user, models.user),
        "judge": describe(plan.judge, models.judge),
        "tasks": {s: [t.id for t in ts] for s, ts in tasks.items()},
        "metrics": bench.declared_metrics().to_dict(),  # how results are read without the adapter (see metrics.py)
        "protocol": _protocol(bench, plan, tasks, overrides or []),
        **_prices(plan),
    }


def _prices(plan: EvalPlan) -> dict:
    """config.json's "prices" (cost.py), for runs that play a model; nothing for the others."""
    prices = prices_record({"agent": plan.agent, "user": plan.user, "judge": plan.judge}, user_table(plan.prices))
    return {"prices": prices} if prices else {}


def _check_resumable(run: RunDir, config: dict) -> None:
    old = run.read_config()
    if old is None:
        return
    # What mua records about itself (its version, the benchmark's declaration) may change between versions
    # without changing which episodes the run is made of; it is rewritten with the current one.
    derived = ("mua_version", "metrics", "prices")  # prices: what the cost is computed at, not what was played
    diff = sorted(k for k in set(old) | set(config) if k not in derived and old.get(k) != config.get(k))
    if "protocol" in diff and "protocol" not in old:
        raise ConfigError(f"{run.path} was written before mua recorded run protocols (its requests may have used "
                          "other decoding settings); finish it with that mua version, or use another --out")
    if diff:
        raise ConfigError(f"{run.path} already holds a different run (differs in: {', '.join(diff)}); "
                          "use another --out, or the same options to resume it")


def _jsonable(value):
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


async def _play(bench: Benchmark, task: Task, trial: int, plan: EvalPlan, models: Models) -> tuple[dict, float]:
    seed = episode_seed(plan.seed, task.subset, task.id, trial)
    record: dict[str, Any] = {"benchmark": bench.name, "subset": task.subset, "task_id": task.id, "trial": trial,
                              "seed": seed}
    start = time.monotonic()
    try:
        agent = make_agent(bench, task, plan.agent, models, seed)
        user = make_user(bench, task, models.user, seed, scripted=plan.agent.gold)
        judge = UsageCounter(models.judge) if models.judge is not None else None
        result = await run_episode(bench, task, agent, user, judge=judge)
    except ModelError as e:
        record.update(reward=None, components={}, termination=None, turns=0, messages=[], usage={}, info={},
                      error=f"model error: {e}")
        return record, time.monotonic() - start
    except MuaError:
        raise  # bad data or configuration: the person running mua must fix it, once, not per episode
    except Exception as e:  # a bug in one episode must not take the run down; it is recorded
        log.exception("episode %s/%s trial %d failed", task.subset, task.id, trial)
        record.update(reward=None, components={}, termination=None, turns=0, messages=[], usage={}, info={},
                      error=f"{type(e).__name__}: {e}")
        return record, time.monotonic() - start
    score = result.score
    assert score is not None  # run_episode scores unless asked not to
    record.update(
        reward=score.reward, components=score.components, termination=result.termination, turns=result.turns,
        messages=[m.to_dict() for m in result.messages],
        usage={"agent": result.agent_usage.to_dict(), "user": result.user_usage.to_dict(),
               **({"judge": judge.usage.to_dict()} if judge is not None and judge.usage.requests else {})},
        info=_jsonable(score.info), error=None,
    )
    return record, time.monotonic() - start


class RunSummary:
    """summary.json, accumulated one episode record at a time (each expected episode at most once, in config
    order): the harness's counts and pass^k, plus the summary values the recorded metrics declaration names
    (e.g. ACEBench's end_state_accuracy), per subset and overall. Records are not kept."""

    def __init__(self, config: dict):
        self.config = config
        decl = declaration_of(config)
        self.parts = {s: (EpisodeStats(), SummaryFields(decl)) for s in config["tasks"]}
        self.overall = (EpisodeStats(), SummaryFields(decl))
        self.cost = RunCost(config)

    def add(self, record: dict) -> None:
        for acc in (*self.parts[record["subset"]], *self.overall, self.cost):
            acc.add(record)

    def result(self) -> dict:
        config, trials = self.config, self.config["trials"]
        expected = sum(len(ids) for ids in config["tasks"].values()) * trials
        finished = self.overall[0].episodes
        agent = config.get("agent") or {}
        return {
            "benchmark": config["benchmark"],
            "model": agent.get("name", "?"),
            "complete": finished == expected,
            "expected_episodes": expected,
            "finished": finished,
            "errors": self.overall[0].errors,
            "trials": trials,
            "subsets": {s: st.result(trials) | fields.result() for s, (st, fields) in self.parts.items()},
            "overall": self.overall[0].result(trials) | self.overall[1].result(),
            **({"cost": cost} if (cost := self.cost.result()) is not None else {}),
        }


def summarize_run(config: dict, records: Iterable[dict]) -> dict:
    summary = RunSummary(config)
    for r in records:
        summary.add(r)
    return summary.result()


class _Tally:
    """What the progress bar shows: passes among finished episodes with a known reward, then the unknown
    (null) and errored ones, which are counted apart and never in the fraction."""

    def __init__(self) -> None:
        self.passed = self.scored = self.unknown = self.errors = 0

    def add_status(self, status: int) -> None:
        """Count an episode found on resume by its index status code."""
        self.errors += status == EpisodeIndex.ERRORED
        self.unknown += status == EpisodeIndex.UNKNOWN
        self.scored += status in (EpisodeIndex.PASSED, EpisodeIndex.FAILED)
        self.passed += status == EpisodeIndex.PASSED

    def add(self, record: dict) -> None:
        if record.get("error"):
            self.errors += 1
        elif record.get("reward") is None:
            self.unknown += 1
        else:
            self.scored += 1
            self.passed += is_success(record["reward"])

    def text(self) -> str:
        rate = f"{self.passed}/{self.scored} = {self.passed / self.scored:.3f}" if self.scored else "-"
        extra = (f", unknown {self.unknown}" if self.unknown else "") + (f", errors {self.errors}" if self.errors
                                                                          else "")
        return f"pass {rate}{extra}"


async def run_eval(plan: EvalPlan, out: Path, data_dir: Path, *, concurrency: int = 8,
                   progress: bool = True, retry_errors: bool = True, max_error_streak: int = 20,
                   stall_timeout_s: float = 120.0) -> EvalOutcome:
    """Run (or resume) an evaluation into ``out``. Finished (task, trial) pairs found there are skipped.

    Every endpoint is checked once before the first episode. ``max_error_streak`` consecutive episodes failing
    on the model endpoint stop the run with a ModelError (0: never): an endpoint that is down should be
    reported once, not retried for hours, episode by episode. ``stall_timeout_s``: an endpoint that answers
    nothing for that long while requests wait stops the run (resumable) with a ModelError naming it (0: never).
    """
    bench = open_benchmark(plan.benchmark, data_dir)
    plan, overrides = with_protocol(plan, bench.declared_protocol())
    tasks = select_tasks(bench, plan)
    if not plan.agent.gold and plan.user is None and any(bench.needs_user_model(s) for s in tasks):
        raise ConfigError(f"{bench.name} {'/'.join(tasks)} needs a simulated user: pass --user-model")
    if plan.judge is None and (note := bench.unjudged_checks([t for ts in tasks.values() for t in ts])):
        log.warning("%s", note)
    run = RunDir(out)
    if run.path.exists() and not run.path.is_dir():
        raise ConfigError(f"--out {run.path} exists and is not a directory")
    try:
        run.path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {run.path}: cannot create it ({e.strerror or e})") from None
    if not os.access(run.path, os.W_OK):
        raise ConfigError(f"--out {run.path}: not writable")
    if run.config_missing_but_results_present():
        raise ConfigError(f"--out {run.path} holds result files but no config.json: it was not written by "
                          "`mua eval` (or its config was removed); mua will not adopt or rewrite it. Use "
                          "another --out")
    models = Models(agent=open_model(plan.agent), user=open_model(plan.user), judge=open_model(plan.judge))
    try:
        config = _config(bench, plan, tasks, models, overrides)
        _check_resumable(run, config)
        await models.check_alive()
        write_json(run.config, {"mua_version": mua_version(), **config})
        return await _run_pending(bench, plan, tasks, run, config, models, concurrency, progress, retry_errors,
                                  max_error_streak, stall_timeout_s)
    finally:
        await models.aclose()


async def _watch_endpoints(models: Models, limit_s: float) -> None:
    """Returns never; raises ModelError once an endpoint has been silent for ``limit_s`` with requests waiting."""
    while True:
        await asyncio.sleep(min(5.0, limit_s / 4))
        if silent := models.silent_endpoint(limit_s):
            raise ModelError(f"model endpoint {silent} while requests wait; stopping (in-flight episodes are "
                             "not recorded). Fix the endpoint (or raise --stall-timeout for a slow one) and re-run "
                             "the same command to resume.")


class _Layout:
    """Episode positions 0..size-1 in config order (subset, task, trial), computed instead of listed, so a run
    of 100,000 episodes holds one entry per task, not per episode."""

    def __init__(self, tasks: dict[str, list[Task]], trials: int):
        self.flat = [(s, t) for s, ts in tasks.items() for t in ts]
        self.trials = trials
        self.slot = {(s, t.id): i for i, (s, t) in enumerate(self.flat)}
        self.size = len(self.flat) * trials

    def position(self, key: EpisodeKey) -> Optional[int]:
        i = self.slot.get((key[0], key[1]))
        return None if i is None or not 0 <= key[2] < self.trials else i * self.trials + key[2]

    def episode(self, p: int) -> tuple[Task, int]:
        return self.flat[p // self.trials][1], p % self.trials


async def _run_pending(bench, plan, tasks, run, config, models, concurrency, progress, retry_errors,
                       max_error_streak, stall_timeout_s):
    layout = _Layout(tasks, plan.trials)
    done = EpisodeIndex(run.episodes, layout.position, layout.size)
    retry = EpisodeIndex.ERRORED if retry_errors else -1
    keep = [p for p in range(layout.size) if done.found(p) and done.status[p] != retry]
    tally = _Tally()
    for p in keep:
        tally.add_status(done.status[p])
    outcome = EvalOutcome(summary={}, skipped=len(keep))
    kept = bytearray(layout.size)
    for p in keep:
        kept[p] = 1
    del done, keep
    pending = (p for p in range(layout.size) if not kept[p])  # drawn lazily by the workers, in config order

    episodes, timings = JsonlAppender(run.episodes), JsonlAppender(run.timings)
    bar = tqdm(total=layout.size, initial=outcome.skipped, disable=not progress, unit="ep", dynamic_ncols=True,
               desc=f"{bench.name}/{'+'.join(tasks)}")
    ticker = asyncio.create_task(_show_activity(bar, tally)) if progress else None  # live local-model activity
    errors = streak = 0
    abort: list[ModelError] = []  # set once the endpoint looks down: episodes not yet started are skipped

    async def one(p: int) -> None:
        nonlocal errors, streak
        task, trial = layout.episode(p)
        record, seconds = await _play(bench, task, trial, plan, models)
        episodes.append(record)
        timings.append({"subset": task.subset, "task_id": task.id, "trial": trial, "seconds": round(seconds, 4)})
        outcome.ran += 1
        if record["error"]:
            errors += 1
            if len(outcome.errors) < MAX_LISTED_ERRORS:
                outcome.errors.append(f"{task.subset}/{task.id}#{trial}: {record['error']}")
        streak = streak + 1 if (record["error"] or "").startswith("model error") else 0
        if max_error_streak and streak >= max_error_streak and not abort:
            abort.append(ModelError(f"{streak} episodes in a row failed on the model endpoint; stopping. Last: "
                                    f"{record['error']}. Fix the endpoint and re-run the same command to resume."))
        tally.add(record)
        await episodes.commit()  # counted as done once durable; bookkeeping above happens before this await
        bar.update(1)
        bar.set_postfix_str(tally.text(), refresh=False)

    async def worker() -> None:
        for p in pending:  # one generator shared by all workers: each position is played once
            if abort:
                return
            await one(p)

    running = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
    watchdog = asyncio.create_task(_watch_endpoints(models, stall_timeout_s)) if stall_timeout_s > 0 else None
    everything = asyncio.gather(*running)
    try:
        if watchdog is not None:
            await asyncio.wait([everything, watchdog], return_when=asyncio.FIRST_COMPLETED)
            if watchdog.done():
                watchdog.result()  # raises the stall
        await everything
        if abort:
            raise abort[0]
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
        if ticker is not None:
            ticker.cancel()
        bar.close()
        episodes.close()
        timings.close()
    outcome.summary = _finish(run, config, layout)
    write_json(run.summary, outcome.summary)
    return outcome


ACTIVITY_EVERY_S = 2.0


async def _show_activity(bar, tally: _Tally) -> None:
    """Between finished episodes the bar shows what local models are doing: turns played and tokens/s."""
    from .models.activity import METER

    while True:
        await asyncio.sleep(ACTIVITY_EVERY_S)
        live = METER.text()
        if live:
            bar.set_postfix_str(f"{tally.text()}; {live}", refresh=True)


def _finish(run: RunDir, config: dict, layout: _Layout) -> dict:
    """The summary, streamed over the latest record of each episode in config order; a complete run's files
    are rewritten in that order on the way (byte-identical across reruns with the same answers)."""
    final = EpisodeIndex(run.episodes, layout.position, layout.size)
    summary = RunSummary(config)
    if all(final.found(p) for p in range(layout.size)):
        rewrite_in_order(final, layout.size, feed=summary.add)
        rewrite_in_order(EpisodeIndex(run.timings, layout.position, layout.size), layout.size)
    else:
        for record in final.records(range(layout.size)):
            summary.add(record)
    return summary.result()
