"""`mua eval`: run a benchmark with an agent (a model, a local checkpoint, or the gold agent) into results/RUN."""
from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from ..errors import ConfigError
from ..io.data import resolve_data_dir
from ..io.outputs import check_output, is_mua_run
from ..registry import benchmark_names
from ..results.cost import user_table
from ..run.batch import RunPlan, run_eval
from ..run.build import GOLD, ModelSpec
from .common import (
    add_data_dir,
    add_model_flags,
    add_timeouts,
    finite,
    model_spec,
    non_negative_int,
    positive_int,
)

EXAMPLES = """examples (`mua tasks` lists the benchmarks NAME and their subsets):
  # offline: the gold agent replays every task's reference actions (no model)
  mua eval --benchmark NAME --subset SUBSET --agent gold --out results/NAME-gold
  # an endpoint model as the agent, GPT-4.1 as the user simulator, under the benchmark's own protocol
  mua eval --benchmark NAME --agent-model my-agent --agent-base-url http://127.0.0.1:8000/v1 \\
      --user-model gpt-4.1 --user-base-url https://api.openai.com/v1 --concurrency 32 --out results/my-agent
  # a local checkpoint, two tasks, one trial, replies capped at 128 tokens
  mua eval --benchmark NAME --agent-model runs/ckpt --agent-chat-template hermes \\
      --agent-params '{"max_tokens": 128}' --limit 2 --trials 1 --out results/ckpt-try
  # one model for every role, from a provider (its key from ANTHROPIC_API_KEY)
  mua eval --benchmark NAME --model anthropic/claude-sonnet-4-5 --out results/sonnet"""


class _ExamplesFormatter(argparse.HelpFormatter):
    """Wraps the description as usual and prints the examples (text with line breaks) as written; the installed
    benchmarks are named in --benchmark's help only when help is shown (looking them up is work a run skips)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return text if "\n" in text else super()._fill_text(text, width, indent)

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        return f"{text}{', '.join(benchmark_names())}" if action.dest == "benchmark" else text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="run a benchmark and score it", epilog=EXAMPLES,
                       formatter_class=_ExamplesFormatter,
                       description="Runs episodes concurrently into --out. Re-running the same command resumes: "
                                   "finished (task, trial) pairs are skipped and errored ones are retried.")
    p.add_argument("--benchmark", required=True, help="one of: ")
    p.add_argument("--subset", action="append", help="subset (repeatable; default: all of the benchmark's)")
    p.add_argument("--split", help="task split (default: the split the benchmark reports on)")
    p.add_argument("--all-tasks", action="store_true", help="ignore splits and run every task of the subsets")
    p.add_argument("--task-ids", help="comma-separated task ids to run")
    p.add_argument("--limit", type=positive_int, help="at most this many tasks per subset")
    p.add_argument("--agent", choices=("gold", "model"), default="model",
                   help="'gold' replays reference actions offline (no model); default: --agent-model")
    add_model_flags(p, {"agent": "agent model: endpoint model name or local checkpoint directory",
                        "user": "user simulator model (for benchmarks whose user is an LLM)",
                        "judge": "LLM judge for judged score components (skipped and flagged without one)"},
                    shared=True)
    p.add_argument("--trials", type=positive_int, help="trials per task (pass^k needs k trials; default: the benchmark "
                                             "protocol's, 1 for --agent gold)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="run seed; each episode gets a stable seed from it")
    p.add_argument("--concurrency", type=positive_int, default=8, help="episodes in flight")
    p.add_argument("--out", help="run directory (default: results/<benchmark>-<agent>)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--keep-errors", action="store_true", help="on resume, do not retry errored episodes")
    p.add_argument("--max-error-streak", type=non_negative_int, default=20, metavar="N",
                   help="stop the run after N consecutive episodes fail on the model endpoint (0: never)")
    p.add_argument("--prices", metavar="FILE", help='price table for the run\'s cost: {"models": {NAME: {"input": '
                   'USD, "output": USD}}} per million tokens, NAME as passed to --*-model (default: mua\'s '
                   "built-in table of provider/model prices)")
    add_timeouts(p)
    add_data_dir(p)
    p.set_defaults(func=run)


def plan_from_args(args: argparse.Namespace, bench_subsets, default_split) -> RunPlan:
    agent = ModelSpec(name=GOLD, gold=True) if args.agent == GOLD else model_spec(args, "agent")  # never by name
    if agent is None:
        raise ConfigError("choose an agent: --agent-model NAME_OR_PATH, or --agent gold")
    if (args.trials is not None and args.trials < 1) or args.concurrency < 1 or (
            args.limit is not None and args.limit < 1):
        raise ConfigError("--trials, --concurrency and --limit must be at least 1")
    return RunPlan(
        benchmark=args.benchmark,
        subsets=args.subset or list(bench_subsets),
        agent=agent,
        user=model_spec(args, "user"),  # decoding defaults: the benchmark's protocol (batch.with_protocol)
        user_shared=not args.user_model,  # from --model: a benchmark's own user model comes first (plan.user_spec)
        judge=model_spec(args, "judge"),
        split=None if args.all_tasks else (args.split or default_split),
        trials=args.trials,
        seed=args.seed,
        task_ids=[t.strip() for t in args.task_ids.split(",")] if args.task_ids else None,
        limit=args.limit,
        prices=args.prices,
    )


def run(args: argparse.Namespace) -> int:
    from ..registry import benchmark_class

    bench = benchmark_class(args.benchmark)
    plan = plan_from_args(args, bench.subsets, bench.default_split)
    user_table(plan.prices)  # a bad price table fails here, before the benchmark loads
    out = Path(args.out or Path("results") / f"{plan.benchmark}-{_slug(plan.agent.name)}")
    if not is_mua_run(out):  # a run is resumed; anything else (a checkpoint, a dataset, files) is left alone
        local = [s.name for s in (plan.agent, plan.user, plan.judge) if s is not None and s.base_url is None]
        check_output(out, flag="--out", overwrite=None, inputs=[n for n in local if Path(n).exists()])
    outcome = asyncio.run(run_eval(plan, out, resolve_data_dir(args.data_dir), concurrency=args.concurrency,
                                   progress=not args.no_progress, retry_errors=not args.keep_errors,
                                   max_error_streak=args.max_error_streak,
                                   stall_timeout_s=finite("--stall-timeout", args.stall_timeout) or 0.0))
    summary = outcome.summary
    print(f"{summary['benchmark']} / {summary['model']}: {summary['finished']}/{summary['expected_episodes']} "
          f"episodes, {summary['errors']} errors{'' if summary['complete'] else ' (INCOMPLETE)'} -> {out}")
    for subset, s in summary["subsets"].items():
        p1 = s.get("pass^1")
        extra = "" if not s["incomplete_components"] else f"  skipped: {', '.join(s['incomplete_components'])}"
        if s.get("unknown_rewards"):
            extra += f"  unknown reward (not scored): {s['unknown_rewards']} episodes"
        print(f"  {subset:28} tasks={s['tasks']:<4} pass^1={'-' if p1 is None else f'{p1:.3f}'}{extra}")
    if cost := summary.get("cost"):
        print(f"  cost: {cost_text(cost)}")
    for line in outcome.errors[:10]:
        print(f"  error: {line}")
    return 0 if summary["complete"] and not summary["errors"] else 1


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(name).name or name)


def cost_text(cost: dict) -> str:
    """summary.json's "cost" in one line: the total and each role's share, or which prices are unknown."""
    usd = lambda value: "?" if value is None else f"${value:.4f}"  # noqa: E731
    roles = ", ".join(f"{role} {usd(c['cost'])}" for role, c in cost["roles"].items())
    total = "unknown" if cost["total"] is None else usd(cost["total"])
    unknown = f"; no price for {', '.join(cost['unknown'])} (give --prices)" if cost["unknown"] else ""
    return f"{total} ({roles}){unknown}"
