"""A study's report and its verdict: pass^1 per pack, seed and stage (greedy and sampled, 95% bootstrap intervals
as `mua leaderboard` computes them), every arm against every baseline paired over tasks per seed and pooled over
seeds (a bootstrap over seeds AND tasks, so the seed-to-seed spread of the trained models is inside the interval),
and two verdicts:

- *learns*: for every seed, the paired 95% lower bound of candidate - reference (GRPO with the user - SFT) is
  above zero, greedy AND sampled;
- *beats baselines*: pooled over at least ``verdict.seeds`` seeds, the 95% lower bounds of candidate - each
  baseline (RFT, the static user), sampled, are above zero (fewer seeds: NOT ENOUGH SEEDS, never a pass).

Episodes are read through the results API (`harness/results/results_api.py`); "pass" is `harness/stats.is_success`.
The markdown holds no clock time and no path, so a study resumed after a kill writes the same bytes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..harness.results.stats import (
    Estimate,
    PairedTest,
    bootstrap_ci,
    is_success,
    paired_bootstrap,
    paired_bootstrap_crossed,
)
from ..harness.results.store import write_atomic
from .study import BEFORE, KINDS, SFT, Plan, Study, Verdict, split_suffix

LEARNS_FAILED, BEATS_FAILED = 1, 4  # exit-code bits (2 stays mua's "bad input")
Comparison = tuple[str, str]  # (candidate stage, baseline stage)


@dataclass
class Scored:
    """One evaluation run: pass rate per task over its trials, and the episodes left out (errored or unscored)."""
    per_task: dict[str, float]
    left_out: int


def scored(run: Path) -> Scored:
    from ..harness.results.results_api import load_run

    passes: dict[str, list[float]] = {}
    left_out = 0
    for e in load_run(run).episodes():
        if e.error or e.reward is None:
            left_out += 1
            continue
        passes.setdefault(e.task_id, []).append(float(is_success(e.reward)))
    return Scored({t: sum(v) / len(v) for t, v in passes.items()}, left_out)


def estimate(s: Scored) -> Optional[Estimate]:
    return bootstrap_ci([list(s.per_task.values())], resamples=2000, seed=0) if s.per_task else None


def paired(base: dict[str, float], other: dict[str, float]) -> tuple[Optional[PairedTest], int]:
    """Paired bootstrap of other - base over the tasks both scored (in task order), or None when none."""
    common = sorted(set(base) & set(other))
    return (paired_bootstrap([[other[t] - base[t] for t in common]], seed=0) if common else None), len(common)


def crossed_rows(pairs: list[tuple[dict[str, float], dict[str, float]]]) -> tuple[list[list[float]], list[str]]:
    """Per seed (baseline's, candidate's pass rate per task): the rows of candidate - baseline over the tasks every
    seed scored in both, in task order (a set's order changes with the hash seed, and the resamples with it)."""
    common = set.intersection(*(set(a) & set(b) for a, b in pairs)) if pairs else set()
    tasks = sorted(common)
    return [[b[t] - a[t] for t in tasks] for a, b in pairs], tasks


def comparisons(study: Study) -> list[Comparison]:
    """Every arm against every baseline: each arm - SFT; the verdict's candidate (and every arm that is not a
    baseline) - each of the verdict's baselines."""
    found = [(a, SFT) for a in study.arms]
    if study.verdict is not None:
        baselines = [b for b in study.verdict.baselines if b != SFT]
        found += [(a, b) for a in study.arms if a not in baselines for b in baselines]
        if study.verdict.reference != SFT:
            found.append((study.verdict.candidate, study.verdict.reference))
    return list(dict.fromkeys(found))


@dataclass
class PackFigures:
    """One pack: per seed and stage, greedy and sampled runs scored; seeds whose stages are missing."""
    name: str
    seeds: dict[int, dict[str, dict[str, Scored]]] = field(default_factory=dict)  # seed -> stage -> kind -> run
    missing: dict[int, list[str]] = field(default_factory=dict)  # seed -> stages without a finished evaluation
    flat: dict[int, list[str]] = field(default_factory=dict)  # seed -> arms whose training never had a gradient


def gather(study: Study, plan: Plan, pack: str) -> PackFigures:
    figures = PackFigures(pack)
    for seed in study.seeds:
        stages: dict[str, dict[str, Scored]] = {}
        for stage in [BEFORE, SFT, *study.arms]:
            if stage == BEFORE and seed != study.seeds[0]:
                continue
            for kind in KINDS:
                if kind == "sampled" and (stage == BEFORE or not study.eval.sampled_trials):
                    continue
                run = plan.eval_run(pack, seed, stage, kind)
                if run is None:
                    figures.missing.setdefault(seed, []).append(f"{study.labels[stage]} ({kind})")
                else:
                    stages.setdefault(stage, {})[kind] = scored(run)
        figures.seeds[seed] = stages
        figures.flat[seed] = [a for a in study.arms if no_gradient(plan.train_output(pack, seed, a))]
    return figures


def no_gradient(output: Optional[Path]) -> bool:
    """Whether no GRPO group ever had a reward spread (every logged step flat): the weights never moved."""
    path = output / "metrics.jsonl" if output else None
    if path is None or not path.is_file():
        return False
    from .progress import is_flat

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return bool(rows) and all(is_flat(r) for r in rows)


def per_seed(f: PackFigures, pairs: list[Comparison]) -> dict[int, dict[tuple[str, str, str], tuple[PairedTest, int]]]:
    found: dict[int, dict[tuple[str, str, str], tuple[PairedTest, int]]] = {}
    for seed, stages in f.seeds.items():
        for a, b in pairs:
            for kind in KINDS:
                if kind in stages.get(a, {}) and kind in stages.get(b, {}):
                    test, n = paired(stages[b][kind].per_task, stages[a][kind].per_task)
                    if test is not None:
                        found.setdefault(seed, {})[(a, b, kind)] = (test, n)
    return found


def pooled(f: PackFigures, pairs: list[Comparison]) -> dict[tuple[str, str, str], tuple[PairedTest, int, int]]:
    """Each comparison pooled over the seeds that ran both stages (two or more): (a, b, kind) -> (interval, seeds,
    tasks)."""
    found = {}
    for a, b in pairs:
        for kind in KINDS:
            both = [(st[b][kind].per_task, st[a][kind].per_task) for st in f.seeds.values()
                    if kind in st.get(a, {}) and kind in st.get(b, {})]
            rows, tasks = crossed_rows(both)
            if len(rows) >= 2 and tasks:
                found[(a, b, kind)] = (paired_bootstrap_crossed(rows, seed=0), len(rows), len(tasks))
    return found


def at_ceiling(f: PackFigures, stage: str) -> list[tuple[int, str]]:
    """(seed, kind) where ``stage`` passed every task it scored: no paired gain over it can be above zero."""
    return [(seed, kind) for seed, stages in f.seeds.items() for kind in KINDS
            if (s := stages.get(stage, {}).get(kind)) and s.per_task and min(s.per_task.values()) == 1.0]


def verdict_word(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def learns(gains: dict[int, dict[str, PairedTest]], seeds: list[int], names: tuple[str, str]) -> tuple[bool, str]:
    """For every seed of ``seeds`` the paired lower bound of candidate - reference above zero, greedy AND sampled
    (``gains``: seed -> kind -> interval; an absent one fails)."""
    above = {kind: sum(1 for n in seeds if kind in gains.get(n, {}) and gains[n][kind].low > 0) for kind in KINDS}
    passed = bool(seeds) and all(count == len(seeds) for count in above.values())
    return passed, (f"{verdict_word(passed)}: the paired 95% interval of {names[0]} - {names[1]} is above zero in "
                    f"{above['greedy']} of {len(seeds)} seed(s) greedy, {above['sampled']} of {len(seeds)} sampled; "
                    f"PASS needs every seed, greedy and sampled")


def beats_baselines(found: dict[str, Optional[tuple[PairedTest, int, int]]], seeds: int, needed: int,
                    candidate: str) -> tuple[str, str]:
    """Pooled over at least ``needed`` seeds, the lower bound of candidate - each baseline of ``found`` (label ->
    its pooled sampled interval, or None), above zero: ("PASS" | "FAIL" | "NOT ENOUGH SEEDS", the line)."""
    least = min((f[1] for f in found.values() if f is not None), default=0)
    if not found or any(f is None for f in found.values()) or least < needed:
        ran = "; ".join(f"{b}: {f[1] if f else 0}" for b, f in found.items())
        return "NOT ENOUGH SEEDS", (f"NOT ENOUGH SEEDS: needs every baseline, sampled, on at least {needed} seeds "
                                    f"pooled ({seeds} finished; seeds pooled per baseline, a pooled interval needs "
                                    f"two or more: {ran}); never a pass")
    low = {b: f[0].low for b, f in found.items() if f is not None}
    word = "PASS" if all(v > 0 for v in low.values()) else "FAIL"
    cells = ", ".join(f"{candidate} - {b} lower bound {100 * v:+.1f}" for b, v in low.items())
    return word, f"{word}: pooled over {least} seeds, sampled: {cells}; PASS needs every one above zero"


def figure(s: Optional[Scored]) -> str:
    e = estimate(s) if s is not None else None
    if s is None or e is None:
        return ""
    return (f"{100 * e.value:.1f} [{100 * e.low:.1f}, {100 * e.high:.1f}] n={e.n}"
            + (f"   LEFT OUT: {s.left_out} errored or unscored" if s.left_out else ""))


def points(test: PairedTest) -> str:
    return f"{100 * test.delta:+.1f} points [{100 * test.low:+.1f}, {100 * test.high:+.1f}]"


class Out:
    """Each printed line, and the same figures as markdown."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.md: list[str] = []
        self.say_line = say

    def say(self, line: str = "", md: Optional[str] = None) -> None:
        self.say_line(line)
        if md is not None:
            self.md.append(md)


@dataclass
class PackVerdict:
    learns: bool
    beats: str  # PASS | FAIL | NOT ENOUGH SEEDS


def pack_report(study: Study, f: PackFigures, o: Out) -> Optional[PackVerdict]:
    """One pack's figures (printed, and as markdown tables) and, when the study declares one, its verdict."""
    label = f"pack {f.name}, {study.split} split"
    o.say(f"\npass^1 ({label}), 95% bootstrap interval over tasks; greedy | sampled at temperature 1:", f"## {label}")
    pairs = comparisons(study)
    notes = stage_rows(study, f, o)
    seeds = per_seed(f, pairs)
    paired_rows(study, seeds, pairs, o)
    together = pooled(f, pairs)
    pooled_rows(study, together, pairs, o)
    o.md += ["", *notes] if notes else [""]
    return judge(study, study.verdict, f, seeds, together, o) if study.verdict is not None else None


def stage_rows(study: Study, f: PackFigures, o: Out) -> list[str]:
    """Per seed, each stage's greedy | sampled pass^1 (a missing one named); the notes that go below the table."""
    lab, notes = study.labels, []
    o.md += ["", "| seed | stage | greedy pass^1 [95% CI] | sampled pass^1 [95% CI] |", "|---|---|---|---|"]
    for seed, stages in f.seeds.items():
        o.say(f" seed {seed}:")
        for stage, runs in stages.items():
            greedy, sampled = figure(runs.get("greedy")), figure(runs.get("sampled"))
            o.say(f"  {lab[stage]:28} {greedy}" + (f" | {sampled}" if sampled else ""),
                  f"| {seed} | {lab[stage]} | {greedy} | {sampled} |")
        for stage in f.missing.get(seed, []):
            o.say(f"  MISSING: {stage} (its job failed or did not run): counts as a fail",
                  f"| {seed} | MISSING: {stage} | | |")
        for arm in f.flat.get(seed, []):
            line = (f"no gradient was taken in {lab[arm]}: no group ever had a reward spread, so the weights stayed "
                    "the SFT ones")
            o.say(f"  {line}")
            notes.append(f"- seed {seed}: {line}")
    return notes


def paired_rows(study: Study, seeds: dict, pairs: list[Comparison], o: Out) -> None:
    lab = study.labels
    o.md += ["", "Paired over tasks (candidate - baseline, points, 95% bootstrap interval):", "",
             "| seed | comparison | greedy | sampled |", "|---|---|---|---|"]
    for seed, found in seeds.items():
        for a, b in pairs:
            cells = [f"{points(found[(a, b, k)][0])} n={found[(a, b, k)][1]}" if (a, b, k) in found else ""
                     for k in KINDS]
            if any(cells):
                o.md.append(f"| {seed} | {lab[a]} - {lab[b]} | {cells[0]} | {cells[1]} |")
        for (a, b, kind), (test, n) in found.items():
            o.say(f"  seed {seed}: {lab[a]} - {lab[b]} (paired, {kind}): {points(test)} over {n} tasks")


def pooled_rows(study: Study, together: dict, pairs: list[Comparison], o: Out) -> None:
    if not together:
        return
    lab = study.labels
    o.md += ["", "Pooled over seeds (bootstrap over seeds and tasks):", "",
             "| comparison | seeds | tasks | greedy | sampled |", "|---|---|---|---|---|"]
    for a, b in pairs:
        cells = [points(together[(a, b, k)][0]) if (a, b, k) in together else "" for k in KINDS]
        first = next((together[(a, b, k)] for k in KINDS if (a, b, k) in together), None)
        if first is not None:
            o.md.append(f"| {lab[a]} - {lab[b]} | {first[1]} | {first[2]} | {cells[0]} | {cells[1]} |")
    for (a, b, kind), (test, n_seeds, n_tasks) in together.items():
        o.say(f" pooled over {n_seeds} seeds (bootstrap over seeds and tasks): {lab[a]} - {lab[b]} ({kind}): "
              f"{points(test)} over {n_tasks} tasks")


def judge(study: Study, v: Verdict, f: PackFigures, seeds: dict, together: dict, o: Out) -> PackVerdict:
    lab = study.labels
    gains = {s: {k: t for (a, b, k), (t, _) in found.items() if (a, b) == (v.candidate, v.reference)}
             for s, found in seeds.items()}
    learned, learn_line = learns(gains, list(study.seeds), (lab[v.candidate], lab[v.reference]))
    full = at_ceiling(f, v.reference)
    if full and not learned:  # still a FAIL: the seed shows nothing learnt, but the reader should know why
        learn_line += (f"; {lab[v.reference]} already passes every task on " +
                       ", ".join(f"seed {s} {kind}" for s, kind in full) + " (nothing left to gain there)")
    base = {lab[b]: together.get((v.candidate, b, "sampled")) for b in v.baselines}
    finished = sum(1 for s in f.seeds if not f.missing.get(s))
    beats, beat_line = beats_baselines(base, finished, v.seeds, lab[v.candidate])
    for part in (f"learns: {learn_line}", f"beats baselines: {beat_line}"):
        o.say(f"  {part}", f"- {part}")
    ok = learned and beats == "PASS"
    line = f"verdict for pack {f.name}: {verdict_word(ok)}: learns {verdict_word(learned)}, beats baselines {beats}"
    o.say(line, f"\n**{line}**\n")
    return PackVerdict(learned, beats)


def report(study: Study, plan: Plan, failed: list[str], say: Callable[[str], None] = print,
           command: str = "") -> int:
    """Prints the figures and the two verdicts, writes OUT/report.md and OUT/PACK/study.png (report-test.md and
    study-test.png for the test split); the exit code: 0 when every pack learns and beats its baselines, else
    LEARNS_FAILED | BEATS_FAILED as they failed (a study without a verdict: 0 when every job finished, else 1)."""
    o = Out(say)
    o.md += [f"# Study {study.name}", "", "```", command or f"mua study {study.name}", "```", ""]
    verdicts = {}
    for pack in study.packs:
        figures = gather(study, plan, pack)
        verdicts[pack] = pack_report(study, figures, o)
        plot(study, figures, plan.root / pack / f"study{split_suffix(study.split)}.png")
    if failed:
        o.say(f"\n{len(failed)} job(s) failed or could not run: {', '.join(failed[:8])}"
              + (" ..." if len(failed) > 8 else ""), f"{len(failed)} job(s) failed or could not run.\n")
    code = 0
    if study.verdict is None:
        line = f"no verdict declared: every job finished: {'yes' if not failed else 'no'}"
        o.say(line, f"**{line}**")
        code = 1 if failed else 0
    else:
        judged = [p for p in verdicts.values() if p is not None]
        learned = bool(judged) and all(p.learns for p in judged)
        beats = bool(judged) and all(p.beats == "PASS" for p in judged)
        # too few seeds is not a pass, nor a FAIL: a pack that only lacks seeds must not read as beaten
        beat_word = "PASS" if beats else "FAIL" if not judged or any(p.beats == "FAIL" for p in judged) \
            else "NOT ENOUGH SEEDS"
        per = ", ".join(f"{name} {verdict_word(p.learns)}" for name, p in verdicts.items() if p is not None)
        per_beat = ", ".join(f"{name} {p.beats}" for name, p in verdicts.items() if p is not None)
        lines = [f"overall verdict: {verdict_word(learned and beats)}: learns {verdict_word(learned)}, beats "
                 f"baselines {beat_word}; PASS needs both on every pack",
                 f"learns: {verdict_word(learned)} ({per})", f"beats baselines: {beat_word} ({per_beat})"]
        o.md.append("")
        for line in lines:
            o.say(line, f"**{line}**  ")
        code = (0 if learned else LEARNS_FAILED) | (0 if beats else BEATS_FAILED)
    write_atomic(plan.root / f"report{split_suffix(study.split)}.md", "\n".join(o.md) + "\n")
    return code


def plot(study: Study, f: PackFigures, path: Path) -> None:
    """Each stage's pass^1 with its interval, per seed, greedy and sampled (skipped without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    names = list(dict.fromkeys(st for stages in f.seeds.values() for st in stages))
    if not names:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    for j, (seed, stages) in enumerate(f.seeds.items()):
        for kind, marker in (("greedy", "o"), ("sampled", "s")):
            xs, ys, lo, hi = [], [], [], []
            for i, name in enumerate(names):
                s = stages.get(name, {}).get(kind)
                e = estimate(s) if s is not None else None
                if e is None:
                    continue
                xs.append(i + 0.08 * j + (0.04 if kind == "sampled" else 0))
                ys.append(e.value)
                lo.append(e.value - e.low)
                hi.append(e.high - e.value)
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], fmt=marker, capsize=3, label=f"seed {seed}, {kind}")
    ax.set_xticks(range(len(names)), [study.labels[n].replace(", ", "\n") for n in names], fontsize=8)
    ax.set(ylabel="pass^1", title=f"pack {f.name}, {study.split} split, 95% bootstrap", ylim=(-0.05, 1.05))
    if ax.lines or ax.collections:
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


