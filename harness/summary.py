"""Run-level metrics from episode records: pass^k as tau2 defines it, mean reward and components, errors."""
from __future__ import annotations

from array import array
from typing import Any, Iterable, Optional, Sequence

from . import stats
from .stats import is_success


def _mean(values: Sequence[float]) -> Optional[float]:
    return sum(values) / len(values) if values else None


class EpisodeStats:
    """Run metrics accumulated one episode record at a time, so a summary needs no list of records: memory is
    one float per scored value (kept in arrays, summed in arrival order exactly as a list would be)."""

    def __init__(self) -> None:
        self.per_task: dict[tuple[str, str], array] = {}
        self.components: dict[str, array] = {}
        self.skipped: set[str] = set()
        self.episodes = self.errors = self.unknown = 0

    def add(self, r: dict) -> None:
        self.episodes += 1
        if r.get("error"):
            self.errors += 1
            return
        for name, value in (r.get("components") or {}).items():
            if value is None:
                self.skipped.add(name)
            else:
                self.components.setdefault(name, array("d")).append(value)
        if r.get("reward") is None:
            self.unknown += 1
            return
        self.per_task.setdefault((r["subset"], r["task_id"]), array("d")).append(r["reward"])

    def result(self, trials: int) -> dict:
        per_task = self.per_task
        out: dict[str, Any] = {"tasks": len(per_task), "episodes": self.episodes, "errors": self.errors,
                               "unknown_rewards": self.unknown}
        # As tau2: pass^k only for k up to the fewest scored trials any task has.
        top = stats.max_k([len(rs) for rs in per_task.values()])
        for k in range(1, trials + 1):
            out[f"pass^{k}"] = (_mean([stats.pass_hat_k(len(rs), sum(map(is_success, rs)), k)
                                       for rs in per_task.values()]) if k <= top else None)
        out["mean_reward"] = _mean([x for rs in per_task.values() for x in rs])
        out["components"] = {name: _mean(vals) for name, vals in sorted(self.components.items())}
        out["incomplete_components"] = sorted(self.skipped)
        return out


def summarize_episodes(records: Iterable[dict], trials: int) -> dict:
    """Metrics over a set of episode records (one subset or pooled). Errored episodes are counted, not scored;
    so are episodes whose reward is unknown (null: a check the verdict depends on was skipped)."""
    acc = EpisodeStats()
    for r in records:
        acc.add(r)
    return acc.result(trials)
