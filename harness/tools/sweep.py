"""Sweeps: every model x benchmark entry of one YAML file is a cell, run as one `mua eval` run into its own
folder under one root. Cells run side by side, sharing one concurrency budget per endpoint (base URL): the
episodes in flight against an endpoint, summed over the cells using it, never exceed its budget. Re-running
the sweep resumes cell by cell as `mua eval` resumes a run (its one "same run?" rule, plan.py): a finished cell
(every episode recorded, none errored) is not run again and asks no endpoint; a partial one resumes.

    out: results/sweep           # the root (--out overrides)
    concurrency: 8               # episodes in flight per endpoint, shared by the cells using it
    endpoints: {"http://127.0.0.1:8000/v1": 32}   # per-endpoint budgets (optional)
    seed: 0
    trials: 1                    # optional; default: each benchmark's protocol
    models:                      # the agents; "gold" replays reference actions
      - {name: my-model, base_url: "http://127.0.0.1:8000/v1", params: {max_tokens: 2048}}
    user: {name: gpt-4.1, base_url: "https://api.openai.com/v1"}   # user simulator, where one is needed
    judge: null
    benchmarks:                  # one cell per entry and model
      - {benchmark: NAME, subsets: [A, B], split: S, limit: 10, task_ids: [..], trials: 4, data_dir: DIR}
"""
from __future__ import annotations

import asyncio
import os
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Optional

from ..errors import ConfigError, DataError, MuaError
from ..io.files import field as checked
from ..io.files import parse_yaml, read_text
from ..registry import benchmark_class
from ..results.runs import label_runs, read_run
from ..run.batch import RunPlan, run_eval  # the one entry point of a run; nothing else of batch is used
from ..run.build import GOLD, ModelSpec
from ..seeds import MAX_SEED

TOP_KEYS = ("out", "concurrency", "endpoints", "seed", "trials", "models", "user", "judge", "benchmarks")
MODEL_KEYS = ("name", "base_url", "api_key_env", "params")
LOCAL = "local:"  # the budget key of a local checkpoint: "local:" + its path
BENCHMARK_KEYS = ("benchmark", "subsets", "split", "all_tasks", "task_ids", "limit", "trials", "data_dir")


@dataclass
class Entry:
    """One benchmark line of a sweep: which tasks each model plays."""

    benchmark: str
    subsets: list[str] = field(default_factory=list)  # empty: every subset of the benchmark
    split: Optional[str] = None  # None: the benchmark's default split (unless all_tasks)
    all_tasks: bool = False
    task_ids: Optional[list[str]] = None
    limit: Optional[int] = None
    trials: Optional[int] = None
    data_dir: Optional[str] = None


@dataclass
class Sweep:
    models: list[ModelSpec]
    benchmarks: list[Entry]
    user: Optional[ModelSpec] = None
    judge: Optional[ModelSpec] = None
    concurrency: int = 8
    endpoints: dict[str, int] = field(default_factory=dict)
    seed: int = 0
    trials: Optional[int] = None
    out: Optional[str] = None


@dataclass
class Cell:
    name: str  # its folder under the root
    plan: RunPlan
    data_dir: Optional[str]
    endpoints: list[str]  # the endpoints its models use (budget keys)


# -- reading the file ----------------------------------------------------------------------------------------

def read_sweep(path: Path | str) -> Sweep:
    """The sweep file, checked: unknown keys, wrong types, non-finite numbers and bad URLs are refused with
    one line naming the file and the field."""
    where = str(path)
    data = parse_yaml(read_text(path, what="sweep file"), where=f"sweep file {where}")
    if not isinstance(data, dict):
        raise DataError(f"sweep file {where}: expected a mapping with keys {', '.join(TOP_KEYS)}")
    _known(data, TOP_KEYS, where)
    models = checked(data, "models", list, where=where)
    entries = checked(data, "benchmarks", list, where=where)
    if not models or not entries:
        raise DataError(f"sweep file {where}: 'models' and 'benchmarks' must each name at least one")
    endpoints = checked(data, "endpoints", dict, where=where, default={}, nullable=True) or {}
    budgets = {}
    for url, n in endpoints.items():
        budgets[_endpoint_key(str(url))] = _positive(n, f"{where}: endpoints[{url!r}]")
    sweep = Sweep(
        models=[_model(m, f"{where}: models[{i}]") for i, m in enumerate(models)],
        benchmarks=[_entry(b, f"{where}: benchmarks[{i}]") for i, b in enumerate(entries)],
        user=_optional_model(data, "user", where), judge=_optional_model(data, "judge", where),
        concurrency=_positive(checked(data, "concurrency", int, where=where, default=8), f"{where}: concurrency"),
        endpoints=budgets,
        seed=_seed(checked(data, "seed", int, where=where, default=0), where),
        trials=_optional_positive(data, "trials", where),
        out=checked(data, "out", str, where=where, default=None, nullable=True),
    )
    return sweep


def _seed(value: int, where: str) -> int:
    if not 0 <= value <= MAX_SEED:
        raise DataError(f"{where}: seed must be a whole number from 0 to {MAX_SEED}, found {str(value)[:40]}"
                        f"{'...' if len(str(value)) > 40 else ''}")
    return value


def _known(data: dict, keys: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in keys)
    if unknown:
        raise DataError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(keys)}")


def _positive(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(f"{where} must be a whole number of at least 1, found {value!r}")
    return value


def _optional_positive(data: dict, key: str, where: str) -> Optional[int]:
    value = data.get(key)
    return None if value is None else _positive(value, f"{where}: {key}")


def _model(data: Any, where: str) -> ModelSpec:
    from ..models.openai_client import check_base_url, check_client_options

    if data == GOLD:  # the bare word is the gold agent; a mapping {name: gold} is a model named "gold"
        return ModelSpec(name=GOLD, gold=True)
    if isinstance(data, str):
        data = {"name": data}
    if not isinstance(data, dict):
        raise DataError(f"{where}: expected a mapping with keys {', '.join(MODEL_KEYS)} (or a model name)")
    _known(data, MODEL_KEYS, where)
    name = checked(data, "name", str, where=where)
    base_url = checked(data, "base_url", str, where=where, default=None, nullable=True)
    if base_url is not None:
        base_url = check_base_url(base_url)
    params = dict(checked(data, "params", dict, where=where, default={}, nullable=True) or {})
    try:
        check_client_options(params)
    except ConfigError as e:
        raise DataError(f"{where}: params: {e}") from None
    api_key_env = checked(data, "api_key_env", str, where=where, default="OPENAI_API_KEY")
    return ModelSpec(name=name, base_url=base_url, params=params, api_key_env=api_key_env)


def _optional_model(data: dict, key: str, where: str) -> Optional[ModelSpec]:
    value = data.get(key)
    return None if value is None else _model(value, f"{where}: {key}")


def _entry(data: Any, where: str) -> Entry:
    if isinstance(data, str):
        data = {"benchmark": data}
    if not isinstance(data, dict):
        raise DataError(f"{where}: expected a mapping with keys {', '.join(BENCHMARK_KEYS)} (or a benchmark name)")
    _known(data, BENCHMARK_KEYS, where)
    subsets = checked(data, "subsets", (list, str), where=where, default=[], nullable=True) or []
    ids = checked(data, "task_ids", list, where=where, default=None, nullable=True)
    return Entry(
        benchmark=checked(data, "benchmark", str, where=where),
        subsets=[str(s) for s in ([subsets] if isinstance(subsets, str) else subsets)],
        split=checked(data, "split", str, where=where, default=None, nullable=True),
        all_tasks=checked(data, "all_tasks", bool, where=where, default=False),
        task_ids=None if ids is None else [str(i) for i in ids],
        limit=_optional_positive(data, "limit", where),
        trials=_optional_positive(data, "trials", where),
        data_dir=checked(data, "data_dir", str, where=where, default=None, nullable=True),
    )


# -- cells and budgets ---------------------------------------------------------------------------------------

def _endpoint_key(url: str) -> str:
    return url.rstrip("/")


def endpoint(spec: Optional[ModelSpec]) -> Optional[str]:
    """Where a model's requests go, as the budget key: its base URL (default as the client picks it), a local
    checkpoint's path, or None for the gold agent."""
    if spec is None or spec.gold:
        return None
    if spec.base_url:
        return _endpoint_key(spec.base_url)
    if Path(spec.name).expanduser().is_dir():
        return f"{LOCAL}{Path(spec.name).expanduser().resolve()}"
    from ..models.openai_client import LOCAL_BASE_URL

    return _endpoint_key(os.environ.get("OPENAI_BASE_URL") or LOCAL_BASE_URL)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip("._") or "model"


def cells(sweep: Sweep) -> list[Cell]:
    """Every model x benchmark entry, in file order (models outer)."""
    out, names = [], set()
    for model in sweep.models:
        for entry in sweep.benchmarks:
            cls = benchmark_class(entry.benchmark)
            subsets = entry.subsets or list(cls.subsets)
            name = f"{_slug(model.name)}__{entry.benchmark}" + (f"__{'+'.join(entry.subsets)}" if entry.subsets
                                                                  else "")
            if name in names:
                raise ConfigError(f"two cells of the sweep would share the folder {name}: the same model and "
                                  "benchmark entry are listed twice")
            names.add(name)
            plan = RunPlan(benchmark=entry.benchmark, subsets=subsets, agent=model, user=sweep.user,
                            judge=sweep.judge, split=None if entry.all_tasks else (entry.split or cls.default_split),
                            trials=entry.trials or sweep.trials, seed=sweep.seed, task_ids=entry.task_ids,
                            limit=entry.limit)
            used = [e for e in (endpoint(model), endpoint(sweep.user), endpoint(sweep.judge)) if e is not None]
            out.append(Cell(name, plan, entry.data_dir, sorted(set(used))))
    return out


class Budgets:
    """Episodes in flight per endpoint. A cell holds ``share`` slots of each endpoint it uses while it runs; it
    waits until all are free at once (so two cells never hold part of each other's need)."""

    def __init__(self, budgets: dict[str, int]):
        self.free = dict(budgets)
        self.changed = asyncio.Condition()

    @asynccontextmanager
    async def hold(self, need: dict[str, int]) -> AsyncIterator[None]:
        async with self.changed:
            await self.changed.wait_for(lambda: all(self.free[e] >= n for e, n in need.items()))
            for e, n in need.items():
                self.free[e] -= n
        try:
            yield
        finally:
            async with self.changed:
                for e, n in need.items():
                    self.free[e] += n
                self.changed.notify_all()


def plan_budgets(sweep: Sweep, all_cells: list[Cell]) -> tuple[dict[str, int], dict[str, int]]:
    """The budget of every endpoint, and each cell's concurrency: an even share of its most contended
    endpoint's budget among the cells using it (at least 1; a cell without endpoints gets the default)."""
    budget = {e: sweep.endpoints.get(e, sweep.concurrency) for c in all_cells for e in c.endpoints}
    # a local checkpoint is loaded by each cell that uses it: one such cell at a time, with the whole budget
    users = {e: 1 if e.startswith(LOCAL) else sum(1 for c in all_cells if e in c.endpoints) for e in budget}
    share = {c.name: min([max(1, budget[e] // users[e]) for e in c.endpoints] or [sweep.concurrency])
             for c in all_cells}
    return budget, share


# -- running -------------------------------------------------------------------------------------------------

@dataclass
class CellOutcome:
    cell: Cell
    status: str  # "finished before", "done", "incomplete", "failed"
    summary: Optional[dict] = None
    error: Optional[str] = None


async def run_sweep(sweep: Sweep, root: Path, data_dir: Callable[[Optional[str]], Path],
                    say: Callable[[str], None] = print, heartbeat_s: float = 60.0) -> list[CellOutcome]:
    """Run (or resume) every cell under ``root``. ``data_dir`` resolves a cell's data folder (its entry's
    ``data_dir``, else the default). A cell that fails (endpoint down, bad data) is reported; the others go on.
    Every ``heartbeat_s`` seconds (0: never) one line says how far the running cells are."""
    all_cells = cells(sweep)
    budget, share = plan_budgets(sweep, all_cells)
    budgets = Budgets(budget)
    root.mkdir(parents=True, exist_ok=True)
    running: dict[str, Path] = {}

    async def one(cell: Cell) -> CellOutcome:
        folder = root / cell.name
        concurrency = share[cell.name]
        async with budgets.hold({e: concurrency for e in cell.endpoints}):
            running[cell.name] = folder
            try:  # `mua eval`'s own resume: its one "same run?" rule decides whether the folder holds this cell
                outcome = await run_eval(cell.plan, folder, data_dir(cell.data_dir), concurrency=concurrency,
                                         progress=False,
                                         on_play=lambda: say(f"{cell.name}: running ({concurrency} in flight)"))
            except MuaError as e:
                say(f"{cell.name}: failed: {e}")
                return CellOutcome(cell, "failed", error=str(e))
            finally:
                running.pop(cell.name, None)
        if outcome.finished_before:
            say(f"{cell.name}: finished before, not run again")
            return CellOutcome(cell, "finished before", summary=outcome.summary)
        s = outcome.summary
        status = "done" if s["complete"] and not s["errors"] else "incomplete"
        say(f"{cell.name}: {status}, {s['finished']}/{s['expected_episodes']} episodes, {s['errors']} errors")
        return CellOutcome(cell, status, summary=s)

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(heartbeat_s)
            if running:
                say("progress: " + ", ".join(f"{name} {_recorded(folder)} episodes recorded"
                                             for name, folder in sorted(running.items())))

    beat = asyncio.create_task(heartbeat()) if heartbeat_s > 0 else None
    try:
        return list(await asyncio.gather(*(one(c) for c in all_cells)))
    finally:
        if beat is not None:
            beat.cancel()


def _recorded(folder: Path) -> int:
    """Lines in a cell's episodes.jsonl so far (a retried episode counts again): a progress figure only."""
    try:
        with open(folder / "episodes.jsonl", "rb") as f:
            return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return 0


def leaderboard(root: Path, outcomes: list[CellOutcome], wide: bool = False) -> tuple[str, list[str]]:
    """The leaderboard over every run folder in ``root`` (as `mua leaderboard ROOT` prints it: each run by its
    label, the table in blocks that fit 120 characters unless ``wide``), the sweep's cells first in sweep
    order; also the folders that could not be read, each with its reason."""
    from ..results.leaderboard import build_rows, columns, declarations
    from ..results.leaderboard_render import WIDTH, render

    ours = [root / o.cell.name for o in outcomes]
    others = sorted(d for d in root.iterdir() if d.is_dir() and d not in ours) if root.is_dir() else []
    runs, unreadable = [], []
    for folder in ours + others:
        if (folder / "config.json").is_file():
            try:
                runs.append(read_run(folder))
            except MuaError as e:
                unreadable.append(f"{folder.name}: not on the leaderboard: {e}")
    if not runs:
        return "no cell has results yet\n", unreadable
    label_runs(runs)
    rows = build_rows(runs)
    return render(rows, columns(rows, False, declarations(runs)), "plain", width=None if wide else WIDTH), unreadable
