"""How large a drop can a gate see? (`mua gate --power`)

Simulates pairs of runs with the gate's own paired test (stats.paired_bootstrap / paired_permutation) and finds
the smallest drop in pass rate that the gate flags in at least ``power`` of the simulated pairs, while a
candidate equal to the baseline is flagged in about ``1 - confidence`` of them (the false-alarm rate, which is
measured too, never assumed).

The model, deliberately simple and stated in the output:
- every task has the same per-trial success probability ``pass_rate`` in the baseline. For a fixed mean this is
  the noisiest case (a task's variance p(1-p) is largest when no task is sure to pass or fail), so the figure is
  an upper bound: real benchmarks, where many tasks always pass or always fail, let the gate see smaller drops;
- the candidate loses each of the baseline's successes with the same chance, so its rate is
  ``pass_rate - drop`` on every task;
- a task's value is its success rate over ``trials`` independent trials, as the gate's "success" metric is.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

from ..errors import ConfigError
from .stats import PairedTest, paired_bootstrap, paired_permutation

TESTS: dict[str, Callable[..., PairedTest]] = {"bootstrap": paired_bootstrap, "permutation": paired_permutation}


@dataclass(frozen=True)
class PowerSettings:
    groups: tuple[int, ...]  # tasks per subset (the gate's test is stratified by subset)
    trials: int
    pass_rate: float
    margin: float = 0.0
    confidence: float = 0.95
    power: float = 0.8
    method: str = "bootstrap"
    resamples: int = 1000  # per simulated test; the decision at 5% needs far fewer than the gate's 10,000
    simulations: int = 200
    seed: int = 0

    def check(self) -> None:
        if not self.groups or min(self.groups) < 1:
            raise ConfigError("--tasks must be at least 1")
        if self.trials < 1:
            raise ConfigError("--trials must be at least 1")
        if not 0.0 < self.pass_rate <= 1.0:
            raise ConfigError(f"--pass-rate is the baseline's pass rate in (0, 1]; got {self.pass_rate:g}")
        if not 0.0 <= self.margin < 1.0:
            raise ConfigError(f"--margin is a fraction of the metric in [0, 1): 0.02 means 2 points; got "
                              f"{self.margin:g}")
        if not 0.5 <= self.confidence < 1.0 or not 0.5 <= self.power < 1.0:
            raise ConfigError("--confidence and --target-power must be in [0.5, 1)")
        if self.method not in TESTS:
            raise ConfigError(f"unknown method {self.method!r}; choose one of {', '.join(TESTS)}")
        if self.simulations < 20 or self.resamples < 100:
            raise ConfigError("--simulations must be at least 20 and --resamples at least 100")


@dataclass(frozen=True)
class PowerResult:
    settings: PowerSettings
    false_alarm: float  # share of equal-candidate simulations flagged
    drop: Optional[float]  # smallest drop (on a 1-point grid) flagged with the target power; None: none is
    power_at_drop: Optional[float]
    curve: tuple[tuple[float, float], ...]  # (drop, share flagged) for every drop simulated


def _simulated_diffs(s: PowerSettings, drop: float, rng: random.Random) -> list[list[float]]:
    cand_rate = max(0.0, s.pass_rate - drop)

    def one_task(rate: float) -> float:
        return sum(1 for _ in range(s.trials) if rng.random() < rate) / s.trials

    return [[one_task(cand_rate) - one_task(s.pass_rate) for _ in range(n)] for n in s.groups]


def flagged_share(s: PowerSettings, drop: float) -> float:
    """Share of simulated (baseline, candidate) pairs the gate calls a regression. The same seed is used for
    every drop (common random numbers), so the share grows smoothly with the drop."""
    rng = random.Random(s.seed)
    test, alpha, flagged = TESTS[s.method], 1.0 - s.confidence, 0
    for i in range(s.simulations):
        diffs = _simulated_diffs(s, drop, rng)
        t = test(diffs, margin=s.margin, confidence=s.confidence, resamples=s.resamples, seed=s.seed + i)
        flagged += t.p_value < alpha
    return flagged / s.simulations


def smallest_detectable_drop(s: PowerSettings, progress: Callable[[float, float], None] = lambda d, p: None
                             ) -> PowerResult:
    """Bisection over whole points between the margin and the pass rate (power rises with the drop)."""
    s.check()
    curve: dict[int, float] = {}

    def share(points: int) -> float:
        if points not in curve:
            curve[points] = flagged_share(s, points / 100)
            progress(points / 100, curve[points])
        return curve[points]

    false_alarm = share(0)
    low, high = int(round(100 * s.margin)), int(100 * s.pass_rate)
    if share(high) < s.power:
        return PowerResult(s, false_alarm, None, None, _sorted(curve))
    while high - low > 1:  # invariant: share(high) >= power, and low is below it (or the margin)
        mid = (low + high) // 2
        if share(mid) >= s.power:
            high = mid
        else:
            low = mid
    return PowerResult(s, false_alarm, high / 100, curve[high], _sorted(curve))


def _sorted(curve: dict[int, float]) -> tuple[tuple[float, float], ...]:
    return tuple((p / 100, v) for p, v in sorted(curve.items()))


def format_power(r: PowerResult) -> str:
    s = r.settings
    tasks = sum(s.groups)
    head = (f"gate power: {tasks} tasks{f' in {len(s.groups)} subsets' if len(s.groups) > 1 else ''}, "
            f"{s.trials} trial(s) each, baseline pass rate {s.pass_rate:.0%}, margin {100 * s.margin:.1f} points, "
            f"paired {s.method} at {s.confidence:.0%} confidence "
            f"({s.simulations} simulated pairs, {s.resamples} resamples each, seed {s.seed})\n")
    alarm = f"  false alarms (candidate as good as the baseline): {r.false_alarm:.1%} flagged\n"
    if r.drop is None:
        verdict = (f"  no drop up to the whole pass rate is flagged with {s.power:.0%} power: run more tasks "
                   "or trials\n")
    else:
        verdict = (f"  smallest drop flagged with {s.power:.0%} power: {100 * r.drop:.0f} points "
                   f"({r.power_at_drop:.0%} of simulated pairs flagged); smaller drops pass unnoticed more "
                   "often than not\n")
    table = "".join(f"    drop {100 * d:3.0f} points: {v:6.1%} flagged\n" for d, v in r.curve)
    note = ("  model: every task passes with the same chance, the noisiest case for this pass rate; benchmarks "
            "whose tasks mostly always pass or always fail let the gate see smaller drops\n")
    return head + alarm + verdict + table + note
