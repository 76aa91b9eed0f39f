"""`mua leaderboard`: a model x benchmark table (and optional chart) from run directories."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ConfigError
from ..io.outputs import check_not_inside
from ..results.leaderboard import Settings, build_rows, columns, declarations, load_published
from ..results.leaderboard_render import FORMATS, WIDTH, check_plot_path, plot, render
from ..results.runs import label_runs, read_run
from .common import add_label_flag, add_wide_flag, check_output_file, non_negative_int, positive_int

# results/published.json beside the package folders (a source checkout or an editable install).
DEFAULT_PUBLISHED = Path(__file__).resolve().parents[2] / "results" / "published.json"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="table of metrics with bootstrap intervals over tasks",
                       description="Reads config.json and episodes.jsonl of each run (not summary.json), so "
                                   "crashed runs are read correctly and flagged.")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                   help="run directories, or folders holding run directories")
    p.add_argument("--format", choices=FORMATS, default="plain", help="plain text, GitHub markdown, or CSV "
                   "(one line per model and metric)")
    p.add_argument("--out", type=Path, help="write the table here instead of stdout")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="also draw the comparison as a chart")
    p.add_argument("--published", nargs="*", metavar="SOURCE", help="add published reference rows (all "
                   "sources, or the named ones, e.g. mua-rl)")
    p.add_argument("--published-file", type=Path, default=DEFAULT_PUBLISHED, help="published numbers (JSON)")
    p.add_argument("--detail", action="store_true",
                   help="add the per-subset columns a benchmark keeps out of the headline; CSV always has them")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed (default 0)")
    add_label_flag(p)
    add_wide_flag(p)
    p.set_defaults(func=run)


def run_dirs(paths: list[Path]) -> list[Path]:
    out = []
    for path in paths:
        if (path / "config.json").is_file():
            out.append(path)
        elif path.is_dir() and (subs := sorted(d for d in path.iterdir() if (d / "config.json").is_file())):
            out.extend(subs)
        else:
            raise ConfigError(f"{path} is not a run directory (no config.json) and holds none")
    return out


def run(args: argparse.Namespace) -> int:
    if not 0.5 <= args.confidence < 1.0 or args.resamples < 1:
        raise ConfigError("--confidence must be in [0.5, 1) and --resamples at least 1")
    settings = Settings(args.confidence, args.resamples, args.seed)
    if args.plot is not None:
        check_plot_path(args.plot)
    folders = run_dirs(args.runs)
    for flag, path in (("--out", args.out), ("--plot", args.plot)):
        if path is not None:
            check_output_file(flag, path)
            check_not_inside(path, flag=flag, folders=folders, what="the run")
    runs = [read_run(d) for d in folders]
    label_runs(runs, dict(args.label))
    rows = build_rows(runs, settings)
    if args.published is not None:
        rows += load_published(args.published_file, args.published)
    decls = declarations(runs, installed=args.published is not None)
    cols = columns(rows, args.detail or args.format == "csv", decls)  # CSV is for machines: every metric
    text = render(rows, cols, args.format, args.confidence, None if args.wide else WIDTH)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.plot:
        plot(rows, cols, args.plot, args.confidence)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0
