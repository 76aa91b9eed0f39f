"""summary.json: run-level metrics read off the one :class:`~harness.results.runs.Aggregate` (tau2's pass^k, mean reward
and components, errors, plus the summary values the benchmark's metrics declaration names).

The arithmetic is kept exactly as summary.json has always been computed (plain left-to-right sums over values
in episode order, then one division), so summaries of existing runs stay byte-identical. The leaderboard and
the gate read the same per-task values with their own estimators (bootstrap intervals, paired tests).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ..metrics import PASS_HAT_K, REWARD, SUCCESS, MetricsDeclaration
from . import stats
from .runs import Aggregate, SubsetResult, TaskResult
from .stats import is_success


def _mean(values: Sequence[float]) -> Optional[float]:
    return sum(values) / len(values) if values else None


def episode_stats(tasks: Sequence[TaskResult], trials: int) -> dict[str, Any]:
    """Counts, pass^k (k up to the fewest scored trials any task has, as tau2 caps it), mean reward and the
    mean of each score component over ``tasks``; errored and unknown-reward episodes are counted, not scored."""
    scored = [t for t in tasks if t.rewards]
    out: dict[str, Any] = {"tasks": len(scored), "episodes": sum(t.finished_trials for t in tasks),
                           "errors": sum(t.errors for t in tasks), "unknown_rewards": sum(t.unknown for t in tasks)}
    top = stats.max_k([len(t.rewards) for t in scored])
    for k in range(1, trials + 1):
        out[f"pass^{k}"] = (_mean([stats.pass_hat_k(len(t.rewards), t.successes, k) for t in scored])
                            if k <= top else None)
    out["mean_reward"] = _mean([x for t in scored for x in t.rewards])
    names = sorted({n for t in tasks for n in t.episode_components})
    out["components"] = {n: _mean([x for t in tasks for x in t.episode_components.get(n, ())]) for n in names}
    out["incomplete_components"] = sorted(set().union(*(t.skipped for t in tasks)))
    return out


def _values(task: TaskResult, measure: str) -> list[float]:
    """One task's episode values of a declared measure (scored trials; components of any unerrored trial)."""
    if measure == SUCCESS:
        return [1.0 if is_success(r) else 0.0 for r in task.rewards]
    if measure == REWARD:
        return task.rewards
    return task.episode_components.get(measure, [])


def declared_fields(decl: MetricsDeclaration, subsets: Sequence[SubsetResult]) -> dict[str, Any]:
    """The summary values ``decl`` names (each metric with a ``summary`` key: the plain mean over episodes
    that have a value, null when none do, rounded to its ``digits``); for several subsets with unerrored
    episodes, also per subset under ``by_subset``, in declared subset order."""
    declared = [m for m in decl.metrics if m.summary and m.measure != PASS_HAT_K]
    if not declared or not any(t.finished_trials for s in subsets for t in s.tasks.values()):
        return {}
    present = [s for s in subsets if any(t.finished_trials > t.errors for t in s.tasks.values())]

    def fields(group: Sequence[SubsetResult]) -> dict[str, Optional[float]]:
        out: dict[str, Optional[float]] = {}
        for m in declared:
            mean = _mean([v for s in group for t in s.tasks.values() for v in _values(t, m.measure)])
            out[str(m.summary)] = round(mean, m.digits) if mean is not None and m.digits is not None else mean
        return out

    summary: dict[str, Any] = fields(present)
    if len(present) > 1:
        order = {s: i for i, s in enumerate(decl.subsets)}
        ordered = sorted(present, key=lambda s: (order.get(s.name, len(order)), s.name))
        summary["by_subset"] = {s.name: fields([s]) for s in ordered}
    return summary


def summary_json(config: dict, agg: Aggregate) -> dict[str, Any]:
    """summary.json of a run: per subset (config order) and overall."""
    trials = config["trials"]
    subsets = list(agg.subsets.values())
    every_task = [t for s in subsets for t in s.tasks.values()]
    overall = episode_stats(every_task, trials)
    expected = sum(len(ids) for ids in config["tasks"].values()) * trials
    agent = config.get("agent") or {}
    return {
        "benchmark": config["benchmark"],
        "model": agent.get("name", "?"),
        "complete": overall["episodes"] == expected,
        "expected_episodes": expected,
        "finished": overall["episodes"],
        "errors": overall["errors"],
        "trials": trials,
        "subsets": {s.name: episode_stats(list(s.tasks.values()), trials) | declared_fields(agg.declaration, [s])
                    for s in subsets},
        "overall": overall | declared_fields(agg.declaration, subsets),
        **({"cost": cost} if agg.cost is not None and (cost := agg.cost.result()) is not None else {}),
    }
