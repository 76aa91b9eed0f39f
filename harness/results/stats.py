"""Statistics over per-task scores: tau2's pass^k, percentile bootstrap intervals, paired tests.

Plain functions on lists of floats. Every resampling draws from ``random.Random(seed)`` in a fixed order, so
the same inputs and seed give byte-identical numbers on every machine (no numpy, no hash-seed dependence).
Tasks are the unit of resampling: trials of one task are averaged first (they are not independent).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Optional, Sequence

# tau2 counts a trial as a success when its reward is within this distance of 1.0 (tau2's is_successful:
# (1 - 1e-6) <= reward <= (1 + 1e-6), written the same way so the boundary rounds the same).
SUCCESS_TOLERANCE = 1e-6


def is_success(reward: Optional[float]) -> bool:
    """The one definition of "pass" in mua: a reward within SUCCESS_TOLERANCE of 1.0. An unknown reward
    (None: an errored or unscored episode) is never a pass."""
    return reward is not None and 1.0 - SUCCESS_TOLERANCE <= reward <= 1.0 + SUCCESS_TOLERANCE


def pass_hat_k(num_trials: int, successes: int, k: int) -> float:
    """tau2's pass^k for one task: the chance that k trials drawn without replacement all succeed."""
    if not 0 <= successes <= num_trials:
        raise ValueError(f"successes {successes} not within 0..{num_trials}")
    if not 1 <= k <= num_trials:
        raise ValueError(f"k={k} needs 1 <= k <= number of trials ({num_trials})")
    return math.comb(successes, k) / math.comb(num_trials, k)


def max_k(trial_counts: Sequence[int]) -> int:
    """Largest k with pass^k defined for every task: tau2 caps k at the fewest trials any task has."""
    return min(trial_counts) if trial_counts else 0


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default rule), for a fixed, documented form."""
    if not sorted_values:
        raise ValueError("quantile of an empty sequence")
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def combine(group_means: Sequence[float], sizes: Sequence[int], weighting: str) -> float:
    """'pooled': every task counts once (mean over all tasks); 'macro': every group counts once, as BFCL's
    multi-turn overall and ACEBench's agent score average their categories."""
    if weighting == "pooled":
        return math.fsum(m * n for m, n in zip(group_means, sizes)) / sum(sizes)
    if weighting == "macro":
        return mean(group_means)
    raise ValueError(f"unknown weighting {weighting!r}")


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    n: int  # tasks


def bootstrap_ci(groups: Sequence[Sequence[float]], *, weighting: str = "pooled", confidence: float = 0.95,
                 resamples: int = 2000, seed: int = 0) -> Estimate:
    """Point value and percentile interval of the combined mean of per-task values. Each group (a subset)
    is resampled separately with its own size kept, so the combination rule stays meaningful."""
    groups = [list(g) for g in groups if len(g)]
    if not groups:
        raise ValueError("no tasks to estimate from")
    sizes = [len(g) for g in groups]
    value = combine([mean(g) for g in groups], sizes, weighting)
    stats = resampled_means(groups, weighting, resamples, seed)
    tail = (1.0 - confidence) / 2
    return Estimate(value, quantile(stats, tail), quantile(stats, 1.0 - tail), sum(sizes))


def resampled_means(groups: Sequence[Sequence[float]], weighting: str, resamples: int, seed: int) -> list[float]:
    """The bootstrap: ``resamples`` combined means, each group resampled with replacement at its own size,
    sorted. The one resampling loop behind every interval and paired test here."""
    sizes = [len(g) for g in groups]
    rng = random.Random(seed)
    stats = []
    for _ in range(resamples):
        means = [math.fsum(rng.choices(g, k=len(g))) / len(g) for g in groups]
        stats.append(combine(means, sizes, weighting))
    stats.sort()
    return stats


@dataclass(frozen=True)
class PairedTest:
    """Result of testing H0 "candidate - baseline >= -margin" against "the candidate is worse by more than
    margin". ``p_value`` small means confident regression."""

    delta: float  # mean over tasks of candidate - baseline
    low: float  # two-sided interval of delta at the chosen confidence
    high: float
    p_value: float
    n: int
    method: str
    resamples: int


def paired_bootstrap(diffs: Sequence[Sequence[float]], *, margin: float = 0.0, confidence: float = 0.95,
                     resamples: int = 10000, seed: int = 0) -> PairedTest:
    """Paired bootstrap over tasks (stratified by group). p = share of resampled mean differences that are
    still >= -margin: the bootstrap's estimate of how plausible "no regression beyond margin" is."""
    groups = [list(g) for g in diffs if len(g)]
    if not groups:
        raise ValueError("no paired tasks")
    sizes = [len(g) for g in groups]
    delta = combine([mean(g) for g in groups], sizes, "pooled")
    stats = resampled_means(groups, "pooled", resamples, seed)
    tail = (1.0 - confidence) / 2
    # The 1e-12 slack keeps "exactly at the margin" on the no-regression side despite float rounding.
    p = sum(1 for s in stats if s >= -margin - 1e-12) / resamples
    return PairedTest(delta, quantile(stats, tail), quantile(stats, 1 - tail), p, sum(sizes), "bootstrap", resamples)


def paired_permutation(diffs: Sequence[Sequence[float]], *, margin: float = 0.0, confidence: float = 0.95,
                       resamples: int = 10000, seed: int = 0) -> PairedTest:
    """Sign-flip permutation test of H0 "mean difference = -margin" (differences shifted by +margin, signs
    flipped at random). One-sided p = (1 + #permuted means <= observed) / (1 + resamples), which is a valid
    p-value for a Monte Carlo test. The interval reported beside it is the paired bootstrap's."""
    flat = [d for g in diffs for d in g]
    if not flat:
        raise ValueError("no paired tasks")
    shifted = [d + margin for d in flat]
    observed = mean(shifted)
    rng = random.Random(seed)
    hits = 0
    for _ in range(resamples):
        s = math.fsum(x if rng.random() < 0.5 else -x for x in shifted) / len(shifted)
        if s <= observed + 1e-12:
            hits += 1
    p = (1 + hits) / (1 + resamples)
    ci = paired_bootstrap(diffs, margin=margin, confidence=confidence, resamples=min(resamples, 2000), seed=seed)
    return PairedTest(mean(flat), ci.low, ci.high, p, len(flat), "permutation", resamples)


def paired_bootstrap_crossed(rows: Sequence[Sequence[float]], *, confidence: float = 0.95, resamples: int = 2000,
                             seed: int = 0) -> PairedTest:
    """Paired bootstrap over two crossed factors: ``rows[r][t]`` is the difference (candidate - baseline) of
    replicate r (e.g. a training seed, whose models differ) on task t, the same tasks in every row. Each resample
    draws the rows and the tasks with replacement, independently, so the interval holds the variance between
    replicates as well as between tasks (resampling tasks alone treats the replicates' models as fixed). p is the
    share of resampled means >= 0."""
    rows = [list(r) for r in rows]
    if not rows or not rows[0]:
        raise ValueError("no paired rows or tasks")
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError("every row must hold the same tasks")
    rng = random.Random(seed)
    stats = []
    for _ in range(resamples):
        picked_rows = rng.choices(range(len(rows)), k=len(rows))
        counts = [0] * width
        for t in rng.choices(range(width), k=width):
            counts[t] += 1
        stats.append(math.fsum(c * rows[r][t] for r in picked_rows for t, c in enumerate(counts) if c)
                     / (len(rows) * width))
    stats.sort()
    tail = (1.0 - confidence) / 2
    delta = math.fsum(math.fsum(r) for r in rows) / (len(rows) * width)
    p = sum(1 for s in stats if s >= -1e-12) / resamples
    return PairedTest(delta, quantile(stats, tail), quantile(stats, 1 - tail), p, len(rows) * width,
                      "bootstrap over rows and tasks", resamples)
