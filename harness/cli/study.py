"""`mua study STUDY.yaml`: a learning study (arms x seeds x packs, each stage a `mua model` / `mua sft` /
`mua train` / `mua eval` / `mua export` job), resumable, in parallel, ending in a report and two verdicts
(mua.training.study; docs/learning-check.md)."""
from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path

from ..errors import ConfigError
from .common import positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="a learning study from one YAML file: train arms x seeds x packs, evaluate, "
                                     "report every arm against every baseline with a verdict",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", type=Path, metavar="STUDY.yaml")
    p.add_argument("--out", type=Path, metavar="DIR", help="the study's folder (default: results/study-<file name>; "
                                                           "re-running with it resumes)")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="jobs run at once (default 2 on 2 or more cores, else 1)")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="torch threads per job (default: cores // jobs)")
    p.add_argument("--smoke", action="store_true",
                   help="the file's smoke: settings laid over it (tiny steps, one seed, few tasks): runs, proves "
                        "nothing")
    p.add_argument("--packs", default=None, metavar="NAME,NAME", help="only these packs of the file")
    p.add_argument("--arms", default=None, metavar="NAME,NAME",
                   help="only these arms of the file (the verdict's arms must be among them)")
    p.add_argument("--seeds", type=positive_int, default=None, help="training seeds (default: the file's)")
    p.add_argument("--split", default=None, choices=("validation", "test"),
                   help="evaluation split (default: the file's; tune on validation, report test once)")
    p.add_argument("--user-model", type=Path, default=None, metavar="CKPT",
                   help="the user model of the arms that declare user_model: required (without it they do not run)")
    p.add_argument("--list", action="store_true", help="print the jobs and whether each finished; run nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ...training.study import Plan, default_jobs, load_study, read_done, run_plan, split_suffix, threads_per_job
    from ...training.study_report import report

    if args.user_model is not None and not (args.user_model / "config.json").is_file():
        raise ConfigError(f"--user-model: {args.user_model} is not a checkpoint folder (no config.json)")
    packs = [p.strip() for p in args.packs.split(",") if p.strip()] if args.packs else None
    arms = [a.strip() for a in args.arms.split(",") if a.strip()] if args.arms else None
    study = load_study(args.file, smoke=args.smoke, packs=packs, seeds=args.seeds, split=args.split,
                       user_model=args.user_model.resolve() if args.user_model else None, only_arms=arms)
    out = (args.out or Path("results") / f"study-{args.file.stem}{'-smoke' if args.smoke else ''}").resolve()
    plan = Plan(study, out)
    if args.list:
        for name, job in plan.jobs.items():
            print(f"{'done' if read_done(job.folder) else 'todo'}  {name}")
        return 0
    jobs = args.jobs or default_jobs()
    started = time.monotonic()
    failed = run_plan(plan, jobs, args.threads or threads_per_job(jobs), say=lambda line: print(line, flush=True))
    command = shown_command(args)
    code = report(study, plan, failed, say=lambda line: print(line, flush=True), command=command)
    print(f"wall time of this command: {time.monotonic() - started:.0f} s")
    print(f"report: {out / f'report{split_suffix(study.split)}.md'}")
    return code


def shown_command(args: argparse.Namespace) -> str:
    """The command as the report heads it: what decides the figures, never --out, --jobs or --threads (the report
    stays the same wherever and however fast it ran)."""
    parts = ["mua", "study", str(args.file), *(["--smoke"] if args.smoke else []),
             *(["--packs", args.packs] if args.packs else []), *(["--arms", args.arms] if args.arms else []),
             *(["--seeds", str(args.seeds)] if args.seeds else []),
             *(["--split", args.split] if args.split else []),
             *(["--user-model", str(args.user_model)] if args.user_model else [])]
    return " ".join(map(shlex.quote, parts))
