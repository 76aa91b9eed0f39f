"""`mua view`: write one self-contained HTML page for a run (or two, compared) or a training output."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..view import write_view


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="write an HTML page to browse a run's episodes (or compare two runs)",
                       description="Write one static HTML file (no server, no network) with a sortable, "
                                   "filterable table of episodes, each episode's conversation and why it "
                                   "scored what it scored. With RUN2, the same tasks side by side, tasks "
                                   "that flipped first. A training output directory shows its curves and "
                                   "the sampled trajectories in samples/.")
    p.add_argument("run", type=Path, metavar="RUN", help="run directory (or training output directory)")
    p.add_argument("run2", type=Path, nargs="?", metavar="RUN2", help="a second run to compare with RUN")
    p.add_argument("--out", type=Path, metavar="FILE.html",
                   help="where to write the page (default: RUN/view.html, or RUN/compare.html with RUN2)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    paths = [args.run] + ([args.run2] if args.run2 else [])
    out = args.out or args.run / ("compare.html" if args.run2 else "view.html")
    write_view(paths, out)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB); open it in a browser")
    return 0
