"""`mua view`: write one self-contained HTML page for a run (or two, compared) or a training output, or serve
it on this machine while the run is going (--watch)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from ..io.data import resolve_data_dir
from ..view.index import write_index
from ..view.page import source_kind, write_view
from .common import add_data_dir, check_output_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="write an HTML page to browse a run's episodes (or compare two runs)",
                       description="Write one static HTML file (no server, no network) with the run's "
                                   "leaderboard cells, models and protocol departures, a sortable, filterable "
                                   "table of episodes, each episode's conversation, why it scored what it "
                                   "scored and the task's ground truth (instructions, expected actions, the "
                                   "database difference against the gold end state; read from the data folder "
                                   "the run recorded, or --data-dir). "
                                   "With RUN2, the same tasks side by side, tasks that flipped first. A "
                                   "training output directory (mua train) shows its curves, reward spread per "
                                   "step and the sampled trajectories. --watch serves the page on 127.0.0.1 "
                                   "and keeps it current while the run goes on.")
    p.add_argument("run", type=Path, metavar="RUN",
                   help="run directory (or training output directory); a folder holding runs (at any depth) "
                        "gets one page listing them all (FOLDER/index.html), each run's own page beside it")
    p.add_argument("run2", type=Path, nargs="?", metavar="RUN2", help="a second run to compare with RUN")
    p.add_argument("--out", type=Path, metavar="FILE.html",
                   help="where to write the page (default: RUN/view.html, or RUN/compare.html with RUN2)")
    p.add_argument("--watch", action="store_true",
                   help="serve the page on http://127.0.0.1:PORT/ (this machine only) and keep it current as "
                        "episodes finish; Ctrl-C stops")
    p.add_argument("--port", type=int, default=8765, help="port for --watch (default 8765; 0: any free port)")
    p.add_argument("--no-ground-truth", action="store_true",
                   help="do not open the benchmark's data (no task instructions, expected actions, database "
                        "differences or reconstructed requests); faster for huge runs")
    add_data_dir(p, run=True)
    p.set_defaults(func=run)


def ground_data_dir(args: argparse.Namespace):
    """The data directory named with --data-dir (it must exist); None: each run's own (the folder it
    recorded, else the usual search; the page says when there is none)."""
    if args.no_ground_truth or not args.data_dir:
        return None
    return resolve_data_dir(args.data_dir)


def run(args: argparse.Namespace) -> int:
    paths = [args.run] + ([args.run2] if args.run2 else [])
    data_dir, ground = ground_data_dir(args), not args.no_ground_truth
    if args.run.is_dir() and source_kind(args.run) is None:
        return _folder(args, data_dir, ground)
    if args.watch:
        from ..view.watch import serve

        if args.out:
            raise ConfigError("--watch serves the page instead of writing it: drop --out")
        if not 0 <= args.port <= 65535:
            raise ConfigError(f"--port must be between 0 and 65535, got {args.port}")
        serve(paths, data_dir, args.port, ground)
        return 0
    out = args.out or args.run / ("compare.html" if args.run2 else "view.html")
    write_view(paths, out, data_dir, ground)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB); open it in a browser")
    return 0


def _folder(args: argparse.Namespace, data_dir: Optional[Path], ground: bool) -> int:
    """A folder of runs: each run's page (RUN/view.html, as `mua view RUN` writes it) and the index."""
    if args.run2 or args.watch:
        raise ConfigError(f"{args.run} is a folder of runs: it takes neither RUN2 nor --watch")
    if args.out is not None:
        check_output_file("--out", args.out)

    def run_page(run: Path) -> Path:
        return write_view([run], run / "view.html", data_dir, ground)

    out, count = write_index(args.run, args.out, run_page)
    print(f"wrote {out} listing {count} runs (each run's page: RUN/view.html); open it in a browser")
    return 0

