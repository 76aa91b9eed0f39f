"""Leaderboard: model x benchmark metrics from run directories, with 95% bootstrap intervals over tasks,
and published reference numbers as clearly marked extra rows.

Which metrics, columns and column order a benchmark has comes from the metrics declaration its runs
recorded (metrics.py): pass^k per subset (k up to the fewest trials any task has, as tau2 caps it), or the
per-task mean of the success rate, the reward or a score component per subset, with an overall value that
averages the subsets (macro) or pools their tasks. Values are fractions in [0, 1] inside, percents when
printed. Runs with missing episodes or errors are flagged on every cell they feed, never hidden; so are runs
on a task selection (--task-ids, --limit): a subset with fewer tasks than its full split, whose size is the
declared size or, for an undeclared split, the most tasks any shown run of that benchmark, split and subset
has.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..errors import ConfigError, DataError
from ..io import files
from ..io.files import read_json, type_name
from ..metrics import PASS_HAT_K, Metric, MetricsDeclaration
from ..protocol import differences, stated_differences
from ..registry import benchmark_class, benchmark_names, installed_declaration
from .cost import recorded_total
from .runs import Run, SubsetResult
from .stats import Estimate, bootstrap_ci, max_k, pass_hat_k

# Flag letters shown after a cell value; the legend is printed under the table.
FLAG_INCOMPLETE, FLAG_ERRORS, FLAG_PARTIAL, FLAG_SKIPPED, FLAG_SELECTION = "*", "e", "p", "s", "t"
FLAG_TRAINED = "c"
FLAG_ORDER = (FLAG_INCOMPLETE, FLAG_ERRORS, FLAG_PARTIAL, FLAG_SKIPPED, FLAG_SELECTION, FLAG_TRAINED)
LEGEND = {FLAG_INCOMPLETE: "some expected episodes are missing (incomplete run)",
          FLAG_ERRORS: "some episodes errored, or their reward is not a number (a damaged file); they are "
                       "excluded from the value",
          FLAG_PARTIAL: "aggregate over fewer subsets than the benchmark has",
          FLAG_SKIPPED: "some checks were skipped (e.g. LLM-judged checks without --judge-model): episodes "
                        "whose verdict they could change have an unknown reward and are left out of the value",
          FLAG_SELECTION: "run on a task selection (--task-ids, --limit): fewer tasks than the subset's full "
                          "split, so not comparable with full runs",
          FLAG_TRAINED: "contaminated: the model was trained (mua train) on some of the tasks scored here, as its "
                        "train_config.json says"}
# Shown after a row's label when its run protocol departs from the benchmark's official one (for a published
# row: from what its source says it used); the departures are listed under the table.
FLAG_PROTOCOL = "†"


@dataclass
class Cell:
    value: float
    low: Optional[float] = None
    high: Optional[float] = None
    n: Optional[int] = None  # tasks behind the value; None for published numbers
    flags: str = ""


@dataclass
class Row:
    label: str
    published: bool
    source: str  # run directory names, or the citation of a published number
    cells: dict[str, Cell] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    protocol: list[str] = field(default_factory=list)  # departures from the official run protocol
    cost: Optional[float] = None  # USD its runs cost (summary.json "cost", cost.py); None: none known
    cost_unknown: bool = False  # some run of the row recorded a cost it could not price


@dataclass(frozen=True)
class Settings:
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0


SizeKey = tuple[str, Optional[str], str]  # (benchmark, split, subset)


def full_sizes(runs: Sequence[Run]) -> dict[SizeKey, int]:
    """Tasks in each subset's full split: the known size, raised to the most tasks any given run has."""
    sizes: dict[SizeKey, int] = {}
    for run in runs:
        for name, s in run.subsets.items():
            key = (run.benchmark, run.split, name)
            known = sizes.get(key, run.metrics.full_split_tasks(run.split, name) or 0)
            sizes[key] = max(known, len(s.tasks))
    return sizes


def _subset_flags(s: SubsetResult, full: int, trained: frozenset[str] = frozenset()) -> str:
    return ((FLAG_INCOMPLETE if s.missing else "") + (FLAG_ERRORS if s.errors or _damaged(s) else "")
            + (FLAG_SKIPPED if s.skipped or s.unknown else "") + (FLAG_SELECTION if len(s.tasks) < full else "")
            + (FLAG_TRAINED if _trained_here(s, trained) else ""))


def _damaged(s: SubsetResult) -> bool:
    return any(t.invalid for t in s.tasks.values())


def trained_tasks(run: Run) -> frozenset[str]:
    """The "subset/task id" keys the run's model was trained on, where `mua eval` recorded them (a checkpoint
    written by `mua train` on this benchmark)."""
    trained = (run.config.get("agent") or {}).get("trained_on") or {}
    if not isinstance(trained, dict) or trained.get("benchmark") != run.benchmark:
        return frozenset()
    return frozenset(str(k) for k in trained.get("trained_tasks") or [])


def _trained_here(s: SubsetResult, trained: frozenset[str]) -> int:
    return sum(f"{s.name}/{task_id}" in trained for task_id in s.tasks)


def _cell(groups: list[list[float]], flags: str, st: Settings, weighting: str = "pooled") -> Optional[Cell]:
    if not any(groups):
        return None
    e: Estimate = bootstrap_ci(groups, weighting=weighting, confidence=st.confidence,
                               resamples=st.resamples, seed=st.seed)
    return Cell(e.value, e.low, e.high, e.n, "".join(sorted(set(flags))))


def _pass_hat_k_cells(run: Run, metric: Metric, st: Settings, flags: Callable[[SubsetResult], str]) -> dict[str, Cell]:
    cells = {}
    for name, s in run.subsets.items():
        scored = [t for t in s.tasks.values() if t.scored]
        for k in range(1, max_k([len(t.rewards) for t in scored]) + 1):
            vals = [pass_hat_k(len(t.rewards), t.successes, k) for t in scored]
            cell = _cell([vals], flags(s), st)
            if cell:
                cells[metric.subset_column(run.metrics.label(name), k)] = cell
    return cells


def _mean_cells(run: Run, metric: Metric, st: Settings, flags: Callable[[SubsetResult], str]) -> dict[str, Cell]:
    """Per-subset cells of the per-task mean of ``metric.measure``, plus the overall cell when declared."""
    cells, groups, overall_flags = {}, [], ""
    for name, s in run.subsets.items():
        vals = s.values(metric.measure)
        cell = _cell([vals], flags(s), st)
        if cell:
            cells[metric.subset_column(run.metrics.label(name))] = cell
            groups.append(vals)
            overall_flags += flags(s)
    if metric.overall is None:
        return cells
    if groups and len(groups) < len(run.metrics.subsets):
        overall_flags += FLAG_PARTIAL
    overall = _cell(groups, overall_flags, st, weighting=metric.combine)
    if overall:
        cells[metric.overall] = overall
    return cells


def run_cells(run: Run, st: Settings = Settings(), sizes: Optional[dict[SizeKey, int]] = None) -> dict[str, Cell]:
    """The cells of every metric ``run`` declares. ``sizes``: full split sizes (see full_sizes), by default
    those known for this run alone."""
    sizes = full_sizes([run]) if sizes is None else sizes
    trained = trained_tasks(run)
    flags = lambda s: _subset_flags(s, sizes.get((run.benchmark, run.split, s.name), 0), trained)  # noqa: E731
    cells: dict[str, Cell] = {}
    for metric in run.metrics.metrics:
        cells.update(_pass_hat_k_cells(run, metric, st, flags) if metric.measure == PASS_HAT_K
                     else _mean_cells(run, metric, st, flags))
    return cells


def _selection_notes(run: Run, sizes: dict[SizeKey, int]) -> list[str]:
    notes = []
    trained = trained_tasks(run)
    for name, s in run.subsets.items():
        if overlap := _trained_here(s, trained):
            notes.append(f"{run.name}: the model was trained on {overlap} of the {len(s.tasks)} {name} tasks scored")
        full = sizes.get((run.benchmark, run.split, name), 0)
        if len(s.tasks) < full:
            split = f"{run.split} split" if run.split else "full set"
            notes.append(f"{run.name}: {name} has {len(s.tasks)} of the {full} tasks of its {split}")
    return notes


def build_rows(runs: Sequence[Run], st: Settings = Settings()) -> list[Row]:
    """One row per model; a second run filling a cell the model already has gets a row of its own."""
    rows: list[Row] = []
    sizes = full_sizes(runs)
    for run in runs:
        cells = run_cells(run, st, sizes)
        notes = [f"{run.name}: {p}" for p in run.problems()] + _selection_notes(run, sizes)
        departures = differences(run.config.get("protocol"))
        protocol = [f"{run.name}: {'; '.join(departures)}"] if departures else []
        row = next((r for r in rows if not r.published and r.label == run.model
                    and not set(r.cells) & set(cells)), None)
        if row is None:
            row = Row(run.model, False, run.name, dict(cells), notes, protocol)
            rows.append(row)
        else:
            row.source += f", {run.name}"
            row.cells.update(cells)
            row.notes += notes
            row.protocol += protocol
        total, recorded = recorded_total(run.path)
        row.cost_unknown |= recorded and total is None
        if total is not None:
            row.cost = (row.cost or 0.0) + total
    return rows


def fmt_cost(row: Row) -> str:
    """The "$" cell: USD, "?" when some run's price is unknown, "-" when none is recorded."""
    return "?" if row.cost_unknown else "-" if row.cost is None else f"{row.cost:.4f}"


def has_costs(rows: Sequence[Row]) -> bool:
    """Whether the "$" column is shown: some row knows (or flags) its cost."""
    return any(r.cost is not None or r.cost_unknown for r in rows)


def load_published(path: Path, sources: Optional[Sequence[str]] = None) -> list[Row]:
    """Reference rows from results/published.json (values stored in percent, as published)."""
    if not Path(path).exists():
        raise ConfigError(f"published numbers file {path} not found (use --published-file)")
    data = read_json(path, what="published numbers file", expect=dict)
    known = files.field(data, "sources", dict, where=str(path), default={})
    wanted = list(sources) if sources else list(known)
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise ConfigError(f"unknown published source(s) {', '.join(unknown)}; known: {', '.join(known)}")
    rows = []
    for i, entry in enumerate(files.field(data, "entries", list, where=str(path), default=[])):
        where = f"{path}: entries[{i}]"
        if not isinstance(entry, dict):
            raise DataError(f"{where}: expected an object, found {type_name(entry)}")
        if files.field(entry, "source", str, where=where) not in wanted:
            continue
        cite = files.field(known, entry["source"], dict, where=f"{path}: sources")
        metrics = files.field(entry, "metrics", dict, where=where)
        for name in metrics:
            files.field(metrics, name, float, where=f"{where}: metrics", nullable=True)
        cells = {k: Cell(float(v) / 100.0) for k, v in metrics.items() if v is not None}
        note = files.field(entry, "note", str, where=where, default=None, nullable=True)
        rows.append(Row(files.field(entry, "model", str, where=where), True,
                        f"published: {files.field(cite, 'short', str, where=f'{path}: sources')}", cells,
                        [note] if note else [], _published_protocol(cite, entry, cells)))
    return rows


def _published_protocol(source: dict, entry: dict, cells: dict) -> list[str]:
    """Per benchmark the row has values for: where what the source says it used (its "protocol", the entry's
    own on top) departs from the installed adapter's official protocol, or what it leaves unsaid."""
    out = []
    for name in benchmark_names():
        if not any(c.startswith(name) for c in cells):
            continue
        stated = {**(source.get("protocol") or {}).get(name, {}), **(entry.get("protocol") or {}).get(name, {})}
        if departures := stated_differences(stated, benchmark_class(name).declared_protocol()):
            out.append(f"{name}: {'; '.join(departures)}")
    return out


def declarations(runs: Sequence[Run], installed: bool = False) -> list[MetricsDeclaration]:
    """The metrics declarations behind a leaderboard: each benchmark's as its (first) run recorded it, and
    with ``installed`` also those of installed adapters without a run (published rows carry no declaration;
    this only orders their columns)."""
    found: dict[str, MetricsDeclaration] = {}
    for run in runs:
        found.setdefault(run.benchmark, run.metrics)
    if installed:
        for name in benchmark_names():
            if name not in found and (decl := installed_declaration(name)) is not None:
                found[name] = decl
    return sorted(found.values(), key=lambda d: (d.position, d.benchmark))


def columns(rows: Sequence[Row], detail: bool = False, decls: Sequence[MetricsDeclaration] = ()) -> list[str]:
    """Columns some row fills: the declared headline columns (benchmarks in ``position`` order), then with
    ``detail`` the declared detail columns; columns declared by none go last, sorted. Detail columns are
    left out without ``detail``."""
    present = {k for r in rows for k in r.cells}
    headline = [c for d in decls for c in d.headline]
    detailed = [c for d in decls for c in d.detail]
    order = headline + (detailed if detail else [])
    known = [k for k in dict.fromkeys(order) if k in present]
    rest = sorted(k for k in present if k not in headline and k not in detailed)
    return known + rest


def headline_cells(run: Run, st: Settings = Settings()) -> dict[str, Cell]:
    """The cells `mua leaderboard` prints for ``run`` alone (its declared headline columns), by column."""
    rows = build_rows([run], st)
    cols = columns(rows, detail=False, decls=declarations([run]))
    return {col: cell for row in rows for col in cols if (cell := row.cells.get(col)) is not None}


def fmt_cell(cell: Optional[Cell]) -> str:
    if cell is None:
        return "-"
    if cell.n is None or cell.low is None or cell.high is None:  # a published number: no interval
        return f"{100 * cell.value:.1f}"
    flags = f" {cell.flags}" if cell.flags else ""
    return f"{100 * cell.value:.1f} [{100 * cell.low:.1f}, {100 * cell.high:.1f}] n={cell.n}{flags}"


def legend(rows: Sequence[Row], cols: Sequence[str], confidence: float) -> list[str]:
    lines = [f"Cells: value [{confidence:.0%} bootstrap interval over tasks] n=tasks; percent. "
             "Rows marked (published) are reference numbers copied from their source, not measured here."]
    used = {f for r in rows for c in cols if c in r.cells for f in r.cells[c].flags}
    lines += [f"  {f} = {LEGEND[f]}" for f in FLAG_ORDER if f in used]
    lines += [f"  ! {r.label}: {n}" for r in rows if not r.published for n in r.notes]
    refs = protocol_refs(rows)
    if refs:
        lines.append(f"  {FLAG_PROTOCOL}N after a model = its run protocol departs from the benchmark's official "
                     "one (published rows: as their source states it):")
        lines += [f"  {FLAG_PROTOCOL}{n} {text}" for text, n in refs.items()]
    return lines


def protocol_refs(rows: Sequence[Row]) -> dict[str, int]:
    """Footnote numbers of the rows' protocol departures: rows that depart in the same way share one."""
    refs: dict[str, int] = {}
    for r in rows:
        if r.protocol:
            refs.setdefault(" | ".join(r.protocol), len(refs) + 1)
    return refs


def display_label(row: Row, refs: Optional[dict[str, int]] = None) -> str:
    """The row's label: marked (published) for published rows, and with its protocol footnote (``refs``,
    see protocol_refs) when its protocol departs from the official one."""
    label = f"{row.label} (published)" if row.published else row.label
    if refs and row.protocol:
        label += f" {FLAG_PROTOCOL}{refs[' | '.join(row.protocol)]}"
    return label
