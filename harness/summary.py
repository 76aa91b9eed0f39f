"""Run-level metrics from episode records: pass^k as tau2 defines it, mean reward and components, errors."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Optional

from . import stats
from .stats import is_success


def _mean(values: list[float]) -> Optional[float]:
    return sum(values) / len(values) if values else None


def summarize_episodes(records: Iterable[dict], trials: int) -> dict:
    """Metrics over a set of episode records (one subset or pooled). Errored episodes are counted, not scored;
    so are episodes whose reward is unknown (null: a check the verdict depends on was skipped)."""
    per_task: dict[tuple[str, str], list[float]] = defaultdict(list)
    components: dict[str, list[float]] = defaultdict(list)
    skipped: set[str] = set()
    episodes = errors = unknown = 0
    for r in records:
        episodes += 1
        if r.get("error"):
            errors += 1
            continue
        for name, value in (r.get("components") or {}).items():
            if value is None:
                skipped.add(name)
            else:
                components[name].append(value)
        if r.get("reward") is None:
            unknown += 1
            continue
        per_task[(r["subset"], r["task_id"])].append(r["reward"])
    out: dict[str, Any] = {"tasks": len(per_task), "episodes": episodes, "errors": errors,
                           "unknown_rewards": unknown}
    # As tau2: pass^k only for k up to the fewest scored trials any task has.
    top = stats.max_k([len(rs) for rs in per_task.values()])
    for k in range(1, trials + 1):
        out[f"pass^{k}"] = (_mean([stats.pass_hat_k(len(rs), sum(map(is_success, rs)), k) for rs in per_task.values()])
                            if k <= top else None)
    out["mean_reward"] = _mean([x for rs in per_task.values() for x in rs])
    out["components"] = {name: _mean(vals) for name, vals in sorted(components.items())}
    out["incomplete_components"] = sorted(skipped)
    return out
