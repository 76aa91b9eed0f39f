"""Regression gate: compare a candidate run with a baseline run, task by task, and give a verdict.

The candidate fails when (a) it is incomplete, (b) its episode error rate passes a threshold, or (c) on the
tasks both runs scored, it is worse than the baseline by more than ``margin`` with the chosen confidence
(one-sided paired test over tasks: bootstrap or sign-flip permutation). Per task, the value compared is the
mean over its scored trials (errors excluded) of the chosen metric: the reward, or a named score component.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

from .errors import ConfigError
from .runs import Run
from .stats import PairedTest, mean, paired_bootstrap, paired_permutation

METHODS = {"bootstrap": paired_bootstrap, "permutation": paired_permutation}


@dataclass(frozen=True)
class GateSettings:
    metric: str = "reward"
    margin: float = 0.0  # tolerated drop, as a fraction (0.02 = 2 points)
    confidence: float = 0.95
    method: str = "bootstrap"
    resamples: int = 10000
    seed: int = 0
    max_error_rate: float = 0.02
    allow_incomplete: bool = False


@dataclass
class SubsetDelta:
    subset: str
    tasks: int
    baseline: float
    candidate: float


@dataclass
class Verdict:
    passed: bool
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    test: Optional[PairedTest] = None
    subsets: list[SubsetDelta] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"passed": self.passed, "failures": self.failures, "notes": self.notes,
                "test": asdict(self.test) if self.test else None, "subsets": [asdict(s) for s in self.subsets]}


def _missing_text(run: Run, limit: int = 3) -> str:
    missing = [f"{s.name}/{t}#{k}" for s in run.subsets.values() for t, k in s.missing]
    more = f" and {len(missing) - limit} more" if len(missing) > limit else ""
    return ", ".join(missing[:limit]) + more


def _pairs(baseline: Run, candidate: Run, metric: str) -> tuple[list[list[float]], list[SubsetDelta]]:
    diffs, deltas = [], []
    for name, cand in candidate.subsets.items():
        base = baseline.subsets.get(name)
        if base is None:
            continue
        b_vals, c_vals = [], []
        for task_id, c_task in cand.tasks.items():
            b_task = base.tasks.get(task_id)
            b, c = (b_task.value(metric) if b_task else None), c_task.value(metric)
            if b is not None and c is not None:
                b_vals.append(b)
                c_vals.append(c)
        if b_vals:
            diffs.append([c - b for b, c in zip(b_vals, c_vals)])
            deltas.append(SubsetDelta(name, len(b_vals), mean(b_vals), mean(c_vals)))
    return diffs, deltas


def compare(baseline: Run, candidate: Run, s: GateSettings = GateSettings()) -> Verdict:
    if baseline.benchmark != candidate.benchmark:
        raise ConfigError(f"cannot compare a {baseline.benchmark} run with a {candidate.benchmark} run")
    if s.method not in METHODS:
        raise ConfigError(f"unknown method {s.method!r}; choose one of {', '.join(METHODS)}")
    if not 0.5 <= s.confidence < 1.0 or s.resamples < 1:
        raise ConfigError("--confidence must be in [0.5, 1) and --resamples at least 1")
    v = Verdict(passed=True)
    incomplete = not candidate.complete and not s.allow_incomplete
    erring = candidate.error_rate > s.max_error_rate
    if incomplete:
        v.failures.append(f"candidate is incomplete: {candidate.finished}/{candidate.expected_episodes} "
                          f"episodes finished (missing {_missing_text(candidate)})")
    if erring:
        v.failures.append(f"candidate error rate {candidate.error_rate:.1%} ({candidate.errors}/"
                          f"{candidate.finished} episodes) is above the allowed {s.max_error_rate:.1%}")
    v.notes += [f"baseline {p}" for p in baseline.problems()]
    v.notes += [f"candidate {p}" for p in candidate.problems()  # those already failed on are not repeated
                if not (incomplete and p.startswith("incomplete")) and not (erring and "episode errors" in p)]

    diffs, v.subsets = _pairs(baseline, candidate, s.metric)
    if not diffs:
        v.failures.append(f"no task has a scored {s.metric!r} in both runs: nothing to compare")
    else:
        v.test = METHODS[s.method](diffs, margin=s.margin, confidence=s.confidence,
                                   resamples=s.resamples, seed=s.seed)
        alpha = 1.0 - s.confidence
        if v.test.p_value < alpha:
            v.failures.append(f"candidate is worse than baseline by more than {100 * s.margin:.1f} points "
                              f"({s.confidence:.0%} confidence): {_test_text(v.test, s)}")
        else:
            v.notes.insert(0, f"no regression beyond {100 * s.margin:.1f} points at {s.confidence:.0%} "
                              f"confidence: {_test_text(v.test, s)}")
        uncovered = sum(len(c.tasks) for c in candidate.subsets.values()) - v.test.n
        if uncovered:
            v.notes.append(f"{uncovered} candidate task(s) not compared (not scored in both runs)")
    v.passed = not v.failures
    return v


def _test_text(t: PairedTest, s: GateSettings) -> str:
    return (f"mean {s.metric} change {100 * t.delta:+.1f} points over {t.n} paired tasks, "
            f"{s.confidence:.0%} CI [{100 * t.low:+.1f}, {100 * t.high:+.1f}], one-sided p={t.p_value:.4f} "
            f"(paired {t.method}, {t.resamples} resamples, seed {s.seed})")


def format_verdict(v: Verdict, baseline: Run, candidate: Run) -> str:
    lines = [f"{'PASS' if v.passed else 'FAIL'}: candidate {candidate.name} ({candidate.model}) vs "
             f"baseline {baseline.name} ({baseline.model}), {candidate.benchmark}"]
    lines += [f"  x {f}" for f in v.failures]
    lines += [f"  - {n}" for n in v.notes]
    for d in v.subsets:
        lines.append(f"    {d.subset}: {100 * d.baseline:.1f} -> {100 * d.candidate:.1f} "
                     f"({100 * (d.candidate - d.baseline):+.1f}) over {d.tasks} tasks")
    return "\n".join(lines) + "\n"
