"""`mua review RUN`: the run's failed episodes by class (harness/view/review.py), a table per class linked into
the run's view page, and a judge model's reason per episode where one is given."""
from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from ..errors import ConfigError
from ..results.results_api import load_run
from ..results.store import write_atomic
from ..run.build import open_model
from ..run.endpoints import with_judge
from ..view.page import episode_rows, explainer, write_view
from ..view.review import ask_judge, counts_text, render_review, review_rows
from .common import (
    add_data_dir,
    add_model_flags,
    add_timeouts,
    check_output_file,
    model_spec,
    positive_int,
)
from .view import ground_data_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="classify a run's failed episodes (wrong action, state mismatch, budget "
                                      "cut, ...) into tables linked to its view page",
                       description="Put each failed episode of RUN in one class from what the scorer found "
                                   "(wrong or missing action, wrong arguments, database/end state mismatch, "
                                   "policy violation, user stopped early, budget cut, tool error loop, other), "
                                   "print the counts and write RUN/review.html: a table per class, each episode "
                                   "linked to its row in RUN/view.html (written too). Errored episodes and "
                                   "unknown rewards are listed apart, never as failures. With --judge-model "
                                   "each failed episode also gets the judge's reason in a sentence or two.",
                       epilog="example: mua review results/my-agent --judge-model gpt-4.1-mini")
    p.add_argument("run", type=Path, metavar="RUN", help="run directory (written by `mua eval`)")
    p.add_argument("--out", type=Path, metavar="FILE.html", help="where to write the page (default RUN/review.html)")
    add_model_flags(p, {"judge": "model that writes a free-text reason for each failed episode (optional)"})
    p.add_argument("--concurrency", type=positive_int, default=4, help="judge requests at once (default 4)")
    add_timeouts(p)
    p.add_argument("--no-ground-truth", action="store_true",
                   help="write the view page without the benchmark's data (see `mua view --help`)")
    add_data_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    judge_spec = model_spec(args, "judge", default_temperature=0.0)
    run_ = load_run(args.run)  # one line when RUN is not a run
    out: Path = args.out or args.run / "review.html"
    check_output_file("--out", out)
    rows = episode_rows(args.run)
    items = review_rows(rows, explainer(run_.benchmark))
    if judge_spec is not None:
        asyncio.run(_judge(judge_spec, rows, items, args))
    view = write_view([args.run], args.run / "view.html", ground_data_dir(args), not args.no_ground_truth)
    href = Path(os.path.relpath(view.resolve(), out.parent.resolve())).as_posix()
    write_atomic(out, render_review(f"mua review: {args.run.name}", items, len(rows), href))
    print(counts_text(items, len(rows)))
    print(f"wrote {out} (each episode links into {view})")
    return 0


async def _judge(spec, rows: list[dict], items, args: argparse.Namespace) -> None:
    judge = open_model(spec)
    if judge is None:
        raise ConfigError("--judge-model gold is no model: name a served model or a checkpoint")
    await with_judge(judge, lambda j: ask_judge(judge, rows, items, args.concurrency), args.stall_timeout,
                     "Fix the judge's endpoint (or raise --stall-timeout) and re-run; nothing was written")
