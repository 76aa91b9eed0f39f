"""`mua sweep SWEEP.yaml`: every model x benchmark cell of a sweep file, each a run folder under one root, with
one concurrency budget per endpoint; re-running resumes cell by cell; ends with the leaderboard over the root
(every run folder in it, the sweep's cells first)."""
from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Optional

from ..io.data import resolve_data_dir
from ..tools.sweep import __doc__ as SWEEP_DOC
from ..tools.sweep import cells, leaderboard, plan_budgets, read_sweep, run_sweep
from .common import add_data_dir, add_wide_flag, finite, non_negative_float


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run models x benchmarks from one YAML file, then print the leaderboard",
                       description=SWEEP_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", type=Path, metavar="SWEEP.yaml")
    p.add_argument("--out", type=Path, metavar="ROOT", help="root folder of the cells' runs (default: the file's "
                                                            "'out', else results/sweep-<file name>)")
    p.add_argument("--list", action="store_true", help="print the cells and endpoint budgets; run nothing")
    p.add_argument("--heartbeat", type=non_negative_float, default=60.0, metavar="S",
                   help="print how far the running cells are every S seconds (default 60; 0: never)")
    add_data_dir(p)
    add_wide_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sweep = read_sweep(args.file)
    root = args.out or Path(sweep.out or Path("results") / f"sweep-{args.file.stem}")
    if args.list:
        all_cells = cells(sweep)
        budget, share = plan_budgets(sweep, all_cells)
        for cell in all_cells:
            print(f"{root / cell.name}  ({share[cell.name]} in flight; endpoints: "
                  f"{', '.join(cell.endpoints) or 'none'})")
        for url, n in budget.items():
            print(f"endpoint {url}: {n} episodes in flight at most")
        return 0

    def data_dir(given: Optional[str]) -> Path:
        return resolve_data_dir(given or args.data_dir)

    heartbeat = finite("--heartbeat", args.heartbeat)
    outcomes = asyncio.run(run_sweep(sweep, root, data_dir, heartbeat_s=max(0.0, heartbeat or 0.0)))
    print()
    table, unreadable = leaderboard(root, outcomes, wide=args.wide)
    print(table.rstrip("\n"))
    for line in unreadable:
        print(line)
    bad = [o for o in outcomes if o.status in ("failed", "incomplete")]
    for o in bad:
        print(f"{o.cell.name}: {o.status}" + (f": {o.error}" if o.error else "; re-run the same command to resume"))
    return 1 if bad else 0
