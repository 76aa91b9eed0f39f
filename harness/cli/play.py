"""`mua play`: a person plays one task at the terminal, as the agent or as the user; the episode is scored and
written to --out like any run's (config.json + episodes.jsonl)."""
from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

from ..errors import ConfigError
from ..interfaces import Benchmark
from ..io.data import resolve_data_dir
from ..io.lock import exclusive
from ..registry import open_benchmark
from ..results.episodes import EpisodeRecord
from ..results.store import RunDir
from ..run.build import Models, ModelSpec, open_model
from ..run.eval_episode import play_one, write_played
from ..run.plan import PERSON, RunPlan, planned, run_config
from ..runner import agent_view
from ..tools.catalog import find_task
from ..tools.play import HELP, Abandoned, Player, Terminal, TerminalAgent, TerminalUser
from ..types import Message, Task
from .common import add_data_dir, add_model_flags, add_timeouts, model_spec, non_negative_int

EXAMPLES = """examples:
  mua play BENCHMARK TASK_ID --subset SUBSET                 you are the agent; the benchmark's scripted user
  mua play BENCHMARK TASK_ID --user-model M --user-base-url URL   ... against its LLM user simulator
  mua play BENCHMARK TASK_ID --as user --agent-model M --agent-base-url URL   you are the user"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play one task yourself at the terminal, as the agent or as the user",
                       description="Plays one episode with you on one side, through the same runner and scorer\n"
                                   "as `mua eval`, and writes it to --out (`mua view` and `mua leaderboard` read "
                                   "it).\n\nWhat you type, one line at a time:\n" + HELP,
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark", metavar="BENCHMARK")
    p.add_argument("task_id", metavar="TASK_ID", help="a task id (`mua tasks BENCHMARK --subset SUBSET` lists them)")
    p.add_argument("--subset", help="the task's subset (needed when several subsets have the id)")
    p.add_argument("--as", dest="side", choices=("agent", "user"), default="agent",
                   help="which side you play (default: agent)")
    add_model_flags(p, {"agent": "with --as user: the agent model (endpoint model name or checkpoint)",
                        "user": "with --as agent: the user simulator model (default: the benchmark's own user "
                                "model where it names one, else its scripted user)",
                        "judge": "LLM judge for judged score components (skipped and flagged without one)"})
    p.add_argument("--seed", type=non_negative_int, default=0, help="run seed (the episode's seed derives from it)")
    p.add_argument("--out", help="run directory to write (default: results/play/BENCHMARK-SUBSET-TASK-SIDE, "
                                 "then -2, -3...)")
    add_timeouts(p, stall=False)
    add_data_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    bench = open_benchmark(args.benchmark, resolve_data_dir(args.data_dir))
    task = find_task(bench, args.task_id, args.subset)
    out = RunDir(Path(args.out) if args.out else _free(Path("results") / "play" / _slug(
        f"{bench.name}-{task.subset}-{task.id}-{args.side}")))
    plan, overrides = planned(bench, _plan(args, bench, task))
    created = not out.path.exists()
    try:
        out.path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {out.path}: cannot create it ({e.strerror or e})") from None
    try:  # held from the check to the write: an eval started on this folder while the person types is refused
        with exclusive(out.path, f"--out {out.path} is in use by another mua command: give another --out"):
            if out.config.exists() or (out.episodes.exists() and out.episodes.stat().st_size):
                raise ConfigError(f"--out {out.path} already holds a run; give another --out")
            terminal = Terminal()
            # asyncio.run's own Ctrl-C handling only cancels the episode once the blocked input() returns; a
            # handler of our own (asyncio then leaves it alone) makes Ctrl-C end the episode at once, mid-line
            previous = signal.signal(signal.SIGINT, _interrupt)
            try:
                record, config, player = asyncio.run(_play(bench, plan, overrides, task, terminal))
            except (Abandoned, KeyboardInterrupt) as e:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while saying goodbye: nothing
                why = "interrupted" if isinstance(e, KeyboardInterrupt) else str(e)
                terminal.say(f"\nmua play: episode abandoned ({why}); nothing written")
                return 130 if isinstance(e, KeyboardInterrupt) else 1
            finally:
                signal.signal(signal.SIGINT, previous)
            messages = [Message.from_dict(m) for m in record.messages]
            player.catch_up(messages if args.side == "user" else agent_view(messages))
            write_played(out, config, record)
    finally:
        if created and out.path.is_dir() and not any(out.path.iterdir()):
            out.path.rmdir()  # nothing played: the next play's default --out takes this name again
    if record.error is not None:  # a model endpoint failed (or a bug): recorded as `mua eval` records it
        terminal.say(f"\nepisode failed: {record.error}\nwritten to {out.episodes}")
        return 1
    terminal.say(f"\nepisode over: {record.termination}; reward {record.reward}"
                 + (f"; components {record.components}" if record.components else ""))
    for line in bench.explain(record.components, record.info):
        terminal.say(f"  {line}")
    terminal.say(f"written to {out.episodes}")
    return 0


def _plan(args: argparse.Namespace, bench: Benchmark, task: Task) -> RunPlan:
    """The run of one episode the flags name, with the person in the role they play (planned as `mua eval`
    plans a run: the user model named, else the benchmark's own; every model under the benchmark's protocol)."""
    agent = model_spec(args, "agent")
    if args.side == "agent" and agent is not None:
        raise ConfigError("--agent-model: you play the agent; to play the user against a model, add --as user")
    if args.side == "user" and agent is None:
        raise ConfigError("--as user: name the agent you talk to with --agent-model (and --agent-base-url)")
    return RunPlan(benchmark=bench.name, subsets=[task.subset], agent=agent or ModelSpec(PERSON),
                   user=model_spec(args, "user"), judge=model_spec(args, "judge"), split=task.split, trials=1,
                   seed=args.seed, task_ids=[task.id], person=args.side)


async def _play(bench: Benchmark, plan: RunPlan, overrides: list[str], task: Task,
                terminal: Terminal) -> tuple[EpisodeRecord, dict, Player]:
    """The episode through play_one, as `mua eval` plays one, with the person's player in their role; and the
    run's config.json record."""
    models = Models(agent=open_model(plan.agent if plan.person != "agent" else None), user=open_model(plan.user),
                    judge=open_model(plan.judge))
    player: Player
    if plan.person == "agent":
        player = TerminalAgent(terminal)
        if plan.user is None and bench.needs_user_model(task.subset):
            terminal.say("(the user is the benchmark's scripted user; --user-model plays its LLM simulator)")
    else:
        # the benchmark's scripted user knows its stop messages (e.g. a stop marker): typed, they end it too
        player = TerminalUser(terminal, bench.describe_task(task).scenario, stops=bench.gold_user(task).is_stop)
    models.person = player
    try:
        await models.check_alive()
        config = run_config(bench, plan, {task.subset: [task]}, models, overrides)
        record, _seconds = await play_one(bench, plan, models, task, 0)
    finally:
        await models.aclose()
    return record, config, player


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _free(path: Path) -> Path:
    """``path``, or the first of ``path-2``, ``path-3``... that does not exist yet (each play its own run)."""
    n = 1
    while (candidate := path if n == 1 else path.with_name(f"{path.name}-{n}")).exists():
        n += 1
    return candidate


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
