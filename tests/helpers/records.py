"""Episode records for tests, from partial rows (the key filled in: one task per row, trial 0)."""
from mua.harness.episodes import EpisodeRecord
from mua.harness.summary import summarize


def records(rows):
    return [EpisodeRecord.from_json({"subset": r.get("subset") or "s", "task_id": str(i), "trial": 0,
                                     **{k: v for k, v in r.items() if k != "subset"}}, f"row {i}")
            for i, r in enumerate(rows)]


def summary_fields(decl, rows):
    """The pooled summary of ``rows`` (its declared fields among the rest)."""
    return summarize(records(rows), decl, trials=1)
