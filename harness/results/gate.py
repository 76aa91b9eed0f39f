"""Regression gate: compare a candidate run with a baseline run, task by task, and give a verdict.

The candidate fails when (a) either run is incomplete (episodes missing), (b) the candidate lacks tasks or
subsets the baseline has (it was run on a selection), (c) the runs were scored under different conditions
(split, judge model, run protocol: decoding, limits, trials, data; see protocol.py), (d) its episode
error rate passes a threshold, or (e) on the tasks both runs scored, it is worse than the baseline by
more than ``margin`` with the chosen confidence (one-sided paired test over tasks: bootstrap or sign-flip
permutation). A different user simulator model only warns: it changes the conversations, not what a
score means, and is sometimes the point of a comparison. Per task, the value
compared is the mean over its scored trials (errors excluded) of the chosen metric: the reward, or a named
score component. By default that metric is the benchmark's declared headline measure (metrics.headline_measure:
success for pass^k, a score component where that is the headline), so the gate tests what the benchmark
reports, not mean reward.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

from ..errors import ConfigError
from ..metrics import headline_measure
from ..protocol import mismatches
from .runs import Run, spec_label
from .stats import PairedTest, mean, paired_bootstrap, paired_permutation

METHODS = {"bootstrap": paired_bootstrap, "permutation": paired_permutation}


@dataclass(frozen=True)
class GateSettings:
    metric: Optional[str] = None  # None: the benchmark's declared headline measure
    margin: float = 0.0  # tolerated drop, as a fraction (0.02 = 2 points)
    confidence: float = 0.95
    method: str = "bootstrap"
    resamples: int = 10000
    seed: int = 0
    max_error_rate: float = 0.02
    allow_incomplete: bool = False  # either run may have missing episodes
    allow_partial: bool = False  # the candidate may cover only some of the baseline's tasks
    allow_protocol_mismatch: bool = False  # the runs may differ in protocol (decoding, limits, trials, data)


@dataclass
class SubsetDelta:
    subset: str
    tasks: int
    baseline: float
    candidate: float


@dataclass
class Verdict:
    passed: bool
    metric: str = ""  # the per-task measure compared
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    test: Optional[PairedTest] = None
    subsets: list[SubsetDelta] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"passed": self.passed, "metric": self.metric, "failures": self.failures, "notes": self.notes,
                "warnings": self.warnings,
                "test": asdict(self.test) if self.test else None, "subsets": [asdict(s) for s in self.subsets]}


def _missing_text(run: Run, limit: int = 3) -> str:
    missing = [f"{s.name}/{t}#{k}" for s in run.subsets.values() for t, k in s.missing]
    more = f" and {len(missing) - limit} more" if len(missing) > limit else ""
    return ", ".join(missing[:limit]) + more


def _lacking(baseline: Run, candidate: Run) -> Optional[str]:
    """What of the baseline's (subset, task) pairs the candidate's config.json does not list, as text."""
    lacking, parts, whole = 0, [], []
    for name, base in baseline.subsets.items():
        cand = candidate.subsets.get(name)
        absent = [t for t in base.tasks if cand is None or t not in cand.tasks]
        if not absent:
            continue
        lacking += len(absent)
        if len(absent) == len(base.tasks):
            whole.append(f"{name} ({len(absent)} tasks)")
        else:
            more = ", ..." if len(absent) > 3 else ""
            parts.append(f"{name}: {len(absent)} of {len(base.tasks)}, e.g. {', '.join(absent[:3])}{more}")
    if not lacking:
        return None
    total = sum(len(b.tasks) for b in baseline.subsets.values())
    detail = "; ".join(parts + ([f"{len(whole)} of its {len(baseline.subsets)} subsets entirely: "
                                 + ", ".join(whole)] if whole else []))
    return f"candidate lacks {lacking} of the baseline's {total} tasks ({detail})"


def _conditions(baseline: Run, candidate: Run, allow_protocol_mismatch: bool = False
                ) -> tuple[list[str], list[str]]:
    """Config differences that change what a score means (failures) or may shift it (warnings)."""
    failures, warnings = [], []
    differ = mismatches(baseline.config.get("protocol"), candidate.config.get("protocol"))
    if differ:
        text = f"runs were made under different protocols ({'; '.join(differ)})"
        if allow_protocol_mismatch:
            warnings.append(text)
        else:
            failures.append(f"{text}: their scores are not comparable; pass --allow-protocol-mismatch to "
                            "compare them anyway")
    if baseline.split != candidate.split:
        failures.append(f"runs use different splits (baseline {baseline.split}, candidate {candidate.split}): "
                        "the same task id may be a different task")
    judge = [spec_label(r.config.get("judge")) for r in (baseline, candidate)]
    if judge[0] != judge[1]:
        failures.append(f"runs use different judge models (baseline {judge[0]}, candidate {judge[1]}): "
                        "judged score components are decided differently")
    user = [spec_label(r.config.get("user")) for r in (baseline, candidate)]
    if user[0] != user[1]:
        warnings.append(f"runs use different user simulators (baseline {user[0]}, candidate {user[1]}): "
                        "a score change may come from the user, not the agent")
    return failures, warnings


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


def _check_settings(s: GateSettings) -> None:
    if s.method not in METHODS:
        raise ConfigError(f"unknown method {s.method!r}; choose one of {', '.join(METHODS)}")
    if not 0.5 <= s.confidence < 1.0 or s.resamples < 1:
        raise ConfigError("--confidence must be in [0.5, 1) and --resamples at least 1")
    if not 0.0 <= s.margin < 1.0:
        hint = f" (for {s.margin:g} points, pass --margin {s.margin / 100:g})" if 1.0 <= s.margin < 100 else ""
        raise ConfigError(f"--margin is a fraction of the metric in [0, 1): 0.02 means 2 points; got {s.margin:g}"
                          + hint)
    if not 0.0 <= s.max_error_rate <= 1.0:
        raise ConfigError(f"--max-error-rate is a fraction in [0, 1]; got {s.max_error_rate:g}")


def compare(baseline: Run, candidate: Run, s: GateSettings = GateSettings()) -> Verdict:
    if baseline.benchmark != candidate.benchmark:
        raise ConfigError(f"cannot compare a {baseline.benchmark} run with a {candidate.benchmark} run")
    _check_settings(s)
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        if run.invalid_values:
            raise ConfigError(f"{role} {run.path}: {len(run.invalid_values)} episode(s) have a reward or score "
                              f"that is not a number (e.g. {run.invalid_values[0]}); the results file is damaged "
                              "or was not written by mua, so no verdict can be given")
    metric = s.metric or headline_measure(candidate.metrics)
    v = Verdict(passed=True, metric=metric)
    base_incomplete = not baseline.complete and not s.allow_incomplete
    incomplete = not candidate.complete and not s.allow_incomplete
    erring = candidate.error_rate > s.max_error_rate
    if base_incomplete:
        v.failures.append(f"baseline is incomplete: {baseline.finished}/{baseline.expected_episodes} episodes "
                          f"finished (missing {_missing_text(baseline)}); finish it (re-run its `mua eval` "
                          "command to resume) or pass --allow-incomplete")
    if incomplete:
        v.failures.append(f"candidate is incomplete: {candidate.finished}/{candidate.expected_episodes} "
                          f"episodes finished (missing {_missing_text(candidate)})")
    lacking = _lacking(baseline, candidate)
    if lacking and not s.allow_partial:
        v.failures.append(f"{lacking}: it was run on a smaller selection (--subset, --task-ids, --limit); run it "
                          "on the baseline's tasks, or pass --allow-partial to compare only the shared tasks")
    elif lacking:
        v.notes.append(lacking)
    differ, v.warnings = _conditions(baseline, candidate, s.allow_protocol_mismatch)
    v.failures += differ
    if erring:
        v.failures.append(f"candidate error rate {candidate.error_rate:.1%} ({candidate.errors}/"
                          f"{candidate.finished} episodes) is above the allowed {s.max_error_rate:.1%}")
    # problems already failed on are not repeated as notes
    v.notes += [f"baseline {p}" for p in baseline.problems() if not (base_incomplete and p.startswith("incomplete"))]
    v.notes += [f"candidate {p}" for p in candidate.problems()
                if not (incomplete and p.startswith("incomplete")) and not (erring and "episode errors" in p)]

    _test(v, baseline, candidate, s, metric)
    v.passed = not v.failures
    return v


def _test(v: Verdict, baseline: Run, candidate: Run, s: GateSettings, metric: str) -> None:
    """The paired test over the tasks both runs scored, its outcome added to ``v``."""
    diffs, v.subsets = _pairs(baseline, candidate, metric)
    if not diffs:
        v.failures.append(f"no task has a scored {metric!r} in both runs: nothing to compare")
    else:
        v.test = METHODS[s.method](diffs, margin=s.margin, confidence=s.confidence,
                                   resamples=s.resamples, seed=s.seed)
        alpha = 1.0 - s.confidence
        if v.test.p_value < alpha:
            v.failures.append(f"candidate is worse than baseline by more than {100 * s.margin:.1f} points "
                              f"({s.confidence:.0%} confidence): {_test_text(v.test, s, metric)}")
        else:
            v.notes.insert(0, f"no regression beyond {100 * s.margin:.1f} points at {s.confidence:.0%} "
                              f"confidence: {_test_text(v.test, s, metric)}")
        uncovered = sum(len(c.tasks) for c in candidate.subsets.values()) - v.test.n
        if uncovered:
            v.notes.append(f"{uncovered} candidate task(s) not compared (not scored in both runs)")


def _test_text(t: PairedTest, s: GateSettings, metric: str) -> str:
    return (f"mean {metric} change {100 * t.delta:+.1f} points over {t.n} paired tasks, "
            f"{s.confidence:.0%} CI [{100 * t.low:+.1f}, {100 * t.high:+.1f}], one-sided p={t.p_value:.4f} "
            f"(paired {t.method}, {t.resamples} resamples, seed {s.seed})")


def format_verdict(v: Verdict, baseline: Run, candidate: Run) -> str:
    lines = [f"{'PASS' if v.passed else 'FAIL'}: candidate {candidate.name} ({candidate.model}) vs "
             f"baseline {baseline.name} ({baseline.model}), {candidate.benchmark}"]
    lines += [f"  x {f}" for f in v.failures]
    lines += [f"  ! warning: {w}" for w in v.warnings]
    lines += [f"  - {n}" for n in v.notes]
    for d in v.subsets:
        lines.append(f"    {d.subset}: {100 * d.baseline:.1f} -> {100 * d.candidate:.1f} "
                     f"({100 * (d.candidate - d.baseline):+.1f}) over {d.tasks} tasks")
    return "\n".join(lines) + "\n"
