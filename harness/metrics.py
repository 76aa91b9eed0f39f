"""What a benchmark reports, as its adapter declares it: which measures, per subset and overall, how subsets
combine, which columns lead the leaderboard, and how many tasks each full split has.

The adapter fills a :class:`MetricsDeclaration` (``Benchmark.metrics``); ``mua eval`` records it in the run's
``config.json`` under ``"metrics"``; the leaderboard, the gate and the run summary read it from there, so they
need neither the adapter nor the data. A run directory written before the declaration existed is read with
the installed adapter's declaration, or, when that adapter is not installed, :func:`generic` (mean reward per
subset) — see ``runs.declaration_of``.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Optional

PASS_HAT_K = "pass^k"  # tau2's pass^k per subset, k from 1 to the fewest scored trials of any task
SUCCESS = "success"  # share of scored trials that pass (stats.is_success)
REWARD = "reward"  # mean reward
# any other measure names a score component (Score.components), e.g. ACEBench's "end_state"
COMBINE = ("macro", "pooled")  # macro: every subset counts once; pooled: every task counts once


@dataclass(frozen=True)
class Metric:
    """One measure. ``column`` names its per-subset leaderboard column; ``{subset}`` stands for the subset's
    label (``MetricsDeclaration.subset_labels``, else its name) and, for pass^k, ``{k}`` for k.
    ``overall`` names the column of the value over all subsets, combined per ``combine``; None: none.
    ``summary`` is the key under which ``summary.json`` also reports the plain mean over scored episodes
    (as the benchmark's own summary reports it, rounded to ``digits`` when given)."""

    measure: str
    column: str
    overall: Optional[str] = None
    combine: str = "macro"
    summary: Optional[str] = None
    digits: Optional[int] = None

    def __post_init__(self) -> None:
        if self.combine not in COMBINE:
            raise ValueError(f"metric {self.measure!r}: combine must be one of {COMBINE}, got {self.combine!r}")
        if self.measure == PASS_HAT_K and self.overall is not None:
            raise ValueError("pass^k is reported per subset only: no overall column")

    def subset_column(self, label: str, k: Optional[int] = None) -> str:
        return self.column.format(subset=label, k=k)


@dataclass(frozen=True)
class SplitSize:
    """Tasks per subset in one full split (``split`` None: the benchmark has no named splits)."""

    split: Optional[str]
    tasks: dict[str, int]


@dataclass(frozen=True)
class MetricsDeclaration:
    """Everything a results reader needs to know about a benchmark. ``headline`` lists leaderboard columns in
    the order they lead the table; ``detail`` the columns shown only with ``--detail``; any other column
    follows, sorted. ``position`` orders benchmarks' column groups on a leaderboard with several (lower
    first; ties by name)."""

    benchmark: str
    subsets: tuple[str, ...]
    metrics: tuple[Metric, ...]
    default_split: Optional[str] = None
    full_splits: tuple[SplitSize, ...] = ()
    subset_labels: dict[str, str] = field(default_factory=dict)
    headline: tuple[str, ...] = ()
    detail: tuple[str, ...] = ()
    position: int = 100

    def label(self, subset: str) -> str:
        return self.subset_labels.get(subset, subset)

    def full_split_tasks(self, split: Optional[str], subset: str) -> Optional[int]:
        """Tasks of ``subset`` in the full ``split``; None when not declared (e.g. a custom split)."""
        for size in self.full_splits:
            if size.split == split:
                return size.tasks.get(subset)
        return None

    def to_dict(self) -> dict:
        """Plain JSON data (lists, not tuples): what config.json holds and reads back equal."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, d: dict) -> "MetricsDeclaration":
        """The declaration as config.json records it; ValueError naming what is wrong."""
        try:
            return cls(
                benchmark=str(d["benchmark"]),
                subsets=tuple(str(s) for s in d["subsets"]),
                metrics=tuple(Metric(**m) for m in d["metrics"]),
                default_split=d.get("default_split"),
                full_splits=tuple(SplitSize(s["split"], {str(k): int(v) for k, v in s["tasks"].items()})
                                  for s in d.get("full_splits") or ()),
                subset_labels={str(k): str(v) for k, v in (d.get("subset_labels") or {}).items()},
                headline=tuple(d.get("headline") or ()),
                detail=tuple(d.get("detail") or ()),
                position=int(d.get("position", 100)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"bad metrics declaration ({type(e).__name__}: {e})") from None


def generic(benchmark: str, subsets: tuple[str, ...] = (), default_split: Optional[str] = None
            ) -> MetricsDeclaration:
    """The rule for a benchmark that declares nothing: mean reward per subset, and over subsets (macro)."""
    return MetricsDeclaration(benchmark, tuple(subsets), (
        Metric(REWARD, f"{benchmark}/{{subset}} reward", overall=f"{benchmark} mean reward"),),
        default_split=default_split)


def headline_measure(decl: MetricsDeclaration) -> str:
    """The per-task measure behind the declaration's headline (its first headline column, else its first
    metric), as the gate compares it: "success" for pass^k and success (a task's mean success over its trials
    is its pass^1), "reward", or a score component's name."""
    def columns(m: Metric) -> set[str]:
        labels = [decl.label(s) for s in decl.subsets] or ["{subset}"]
        cols = {m.subset_column(label, k) for label in labels for k in range(1, 9)}
        return cols | ({m.overall} if m.overall else set())

    lead = decl.headline[0] if decl.headline else None
    chosen = next((m for m in decl.metrics if lead in columns(m)), decl.metrics[0] if decl.metrics else None)
    if chosen is None:
        return REWARD
    return SUCCESS if chosen.measure == PASS_HAT_K else chosen.measure
