"""`mua eval` as a library call: open the benchmark and the models, check the run folder, record config.json,
then hand the episodes to the scheduler. The jobs live apart: what a run is and its record (plan.py), playing one
episode (eval_episode.py), scheduling, resume and the final files (schedule.py), the progress line (progress.py),
summary.json (summary.py)."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Callable, Optional

from ..errors import ConfigError
from ..io.lock import exclusive
from ..registry import open_benchmark
from ..results.store import RunDir
from .build import Models, open_model
from .plan import RunPlan, check_resumable, planned, run_config
from .schedule import EvalOutcome, PendingRun, run_pending
from .selection import select_tasks

__all__ = ["EvalOutcome", "RunPlan", "run_eval"]

log = logging.getLogger(__name__)


async def run_eval(plan: RunPlan, out: Path, data_dir: Path, *, concurrency: int = 8,
                   progress: bool = True, retry_errors: bool = True, max_error_streak: int = 20,
                   stall_timeout_s: float = 120.0, on_play: Optional[Callable[[], None]] = None) -> EvalOutcome:
    """Run (or resume) an evaluation into ``out``. Finished (task, trial) pairs found there are skipped.

    Every endpoint is checked once before the first episode. ``max_error_streak`` consecutive episodes failing
    on the model endpoint stop the run with a ModelError (0: never): an endpoint that is down should be
    reported once, not retried for hours, episode by episode. ``stall_timeout_s``: an endpoint that answers
    nothing for that long while requests wait stops the run (resumable) with a ModelError naming it (0: never).
    ``on_play`` is called before the first episode is played (never for a run found finished:
    ``EvalOutcome.finished_before``).
    """
    bench = open_benchmark(plan.benchmark, data_dir)
    plan, overrides = planned(bench, plan)
    tasks = select_tasks(bench, plan.subsets, plan.split, plan.task_ids, plan.limit)
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
    busy = (f"--out {run.path} is in use by another mua eval or mua play (both would write episodes there, and "
            "one would lose the other's lines): wait for it, or use another --out")
    with exclusive(run.path, busy):  # held until the final files are written
        if not run.config.exists() and any(p.exists() and p.stat().st_size for p in (run.episodes, run.timings)):
            raise ConfigError(f"--out {run.path} holds result files but no config.json: it was not written by "
                              "`mua eval` (or its config was removed); mua will not adopt or rewrite it. Use "
                              "another --out")
        models = Models(agent=open_model(plan.agent), user=open_model(plan.user), judge=open_model(plan.judge))
        try:
            config = run_config(bench, plan, tasks, models, overrides)
            check_resumable(run, config)  # the one "same run?" rule (plan.py), for `mua sweep` too
            pending = PendingRun(bench, plan, tasks, run, config, models, on_play, concurrency, progress,
                                 retry_errors, max_error_streak, stall_timeout_s)
            return await run_pending(pending)
        finally:
            await models.aclose()
