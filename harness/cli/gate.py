"""`mua gate`: fail (exit 1) when a candidate run regresses against a baseline run; see mua.harness.results.gate."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import ConfigError
from ..results.gate import METHODS, GateSettings, compare, format_verdict
from ..results.power import PowerSettings, format_power, smallest_detectable_drop
from ..results.runs import label_runs, read_run
from .common import add_label_flag, check_output_file, non_negative_int, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gate", help="CI regression gate: compare a candidate run with a baseline run",
                       description="Exit 0 when the candidate passes; 1 when either run is incomplete, the "
                                   "candidate lacks some of the baseline's tasks or subsets, the runs differ "
                                   "in split or judge model or run protocol (config.json: decoding per role, "
                                   "limits, trials, data checksums; their scores mean different things; "
                                   "--allow-protocol-mismatch), the candidate errors too often, or it is worse "
                                   "than the baseline by more than --margin with --confidence (paired test "
                                   "over the tasks both runs scored); 2 on a usage error (e.g. different "
                                   "benchmarks). A different user simulator model only prints a warning line.")
    p.add_argument("--baseline", type=Path, metavar="RUN_A", help="baseline run directory")
    p.add_argument("--candidate", type=Path, metavar="RUN_B", help="candidate run directory")
    p.add_argument("--metric", default=None, help="per-task value compared: reward, success, or a score "
                   "component name (see a run's episodes.jsonl); default: the benchmark's declared headline "
                   "measure (success for pass^k benchmarks, else the measure its headline column reports)")
    p.add_argument("--margin", type=float, default=0.0, help="tolerated drop as a fraction of the metric "
                   "(0.02 = 2 points; default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence required to call a regression")
    p.add_argument("--method", choices=sorted(METHODS), default="bootstrap", help="paired test over tasks")
    p.add_argument("--resamples", type=positive_int, default=10000, help="resamples of the paired test")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the paired test")
    p.add_argument("--max-error-rate", type=float, default=0.02,
                   help="fail when more than this fraction of the candidate's episodes errored (default 0.02)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="do not fail when either run has missing episodes (compare what both finished)")
    p.add_argument("--allow-partial", action="store_true",
                   help="do not fail when the candidate covers only some of the baseline's tasks or subsets "
                        "(a --task-ids/--limit/--subset run); compare the shared tasks only")
    p.add_argument("--allow-protocol-mismatch", action="store_true",
                   help="compare runs made under different protocols (request params, seeds, limits, trials or "
                        "data files differ): the differences are printed as warnings instead of failing")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the verdict as JSON")
    power = p.add_argument_group("power", "--power: the smallest drop this gate flags, by simulation with the "
                                 "same paired test (no candidate needed); tasks, trials and pass rate come from "
                                 "--baseline or the flags below")
    power.add_argument("--power", action="store_true", help="print the smallest drop flagged with "
                       "--target-power and the false-alarm rate, instead of comparing runs")
    power.add_argument("--tasks", type=positive_int, help="number of tasks (default: the baseline's)")
    power.add_argument("--trials", type=positive_int, help="trials per task (default: the baseline's)")
    power.add_argument("--pass-rate", type=float, help="baseline pass rate in (0, 1] (default: the baseline's)")
    power.add_argument("--target-power", type=float, default=0.8, help="share of regressions to catch (0.8)")
    power.add_argument("--simulations", type=positive_int, default=200, help="simulated run pairs per drop (200)")
    add_label_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.power:
        return run_power(args)
    if args.baseline is None or args.candidate is None:
        raise ConfigError("mua gate needs --baseline RUN_A and --candidate RUN_B (or --power)")
    if args.json:
        check_output_file("--json", args.json)
    baseline, candidate = read_run(args.baseline), read_run(args.candidate)
    label_runs([baseline, candidate], dict(args.label))
    settings = GateSettings(args.metric, args.margin, args.confidence, args.method, args.resamples, args.seed,
                            args.max_error_rate, args.allow_incomplete, args.allow_partial,
                            args.allow_protocol_mismatch)
    verdict = compare(baseline, candidate, settings)
    sys.stdout.write(format_verdict(verdict, baseline, candidate))
    if args.json:
        try:
            args.json.write_text(json.dumps(verdict.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot write --json {args.json}: {e.strerror or e}") from None
    return 0 if verdict.passed else 1


def run_power(args: argparse.Namespace) -> int:
    groups: tuple[int, ...] = (args.tasks,) if args.tasks is not None else ()
    trials, rate = args.trials, args.pass_rate
    if args.baseline is not None:
        base = read_run(args.baseline)
        groups = groups or tuple(len(s.tasks) for s in base.subsets.values() if s.tasks)
        trials = trials or base.trials
        if rate is None:
            values = [v for s in base.subsets.values() for v in s.values("success")]
            rate = sum(values) / len(values) if values else None
    if not groups or trials is None or rate is None:
        raise ConfigError("mua gate --power needs --baseline RUN, or --tasks, --trials and --pass-rate")
    settings = PowerSettings(groups, trials, rate, args.margin, args.confidence, args.target_power, args.method,
                             min(args.resamples, 1000), args.simulations, args.seed)
    def progress(drop: float, share: float) -> None:  # the bisection takes a few seconds per step
        if sys.stderr.isatty():
            sys.stderr.write(f"  simulated drop {100 * drop:.0f} points: {share:.0%} flagged\n")

    sys.stdout.write(format_power(smallest_detectable_drop(settings, progress)))
    return 0
