"""Episode records for tests, from partial rows (the key filled in), and their pooled summary."""
from mua.harness.results.episodes import EpisodeRecord
from mua.harness.results.runs import aggregate
from mua.harness.results.summary import declared_fields, episode_stats


def records(rows):
    """One task per row, trial 0."""
    return [EpisodeRecord.from_json({"subset": r.get("subset") or "s", "task_id": str(i), "trial": 0,
                                     **{k: v for k, v in r.items() if k != "subset"}}, f"row {i}")
            for i, r in enumerate(rows)]


def summarize(records, decl, trials):
    """Pooled metrics over ``records`` (any subsets and tasks): the overall part of a summary.json."""
    tasks: dict = {}
    for r in records:
        if r.task_id not in tasks.setdefault(r.subset, []):
            tasks[r.subset].append(r.task_id)
    agg = aggregate(records, decl, tasks, trials)
    subsets = list(agg.subsets.values())
    return episode_stats([t for s in subsets for t in s.tasks.values()], trials) | declared_fields(decl, subsets)


def summary_fields(decl, rows):
    """The pooled summary of ``rows`` (its declared fields among the rest)."""
    return summarize(records(rows), decl, trials=1)
