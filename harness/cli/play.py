"""`mua play`: a person plays one task at the terminal, as the agent or as the user; the episode is scored and
written to --out like any run's (config.json + episodes.jsonl)."""
from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

from ..agents import ModelAgent
from ..errors import ConfigError
from ..interfaces import Agent, Benchmark, User
from ..io.data import resolve_data_dir
from ..protocol import data_location
from ..registry import open_benchmark
from ..results.store import JsonlAppender, RunDir, write_json
from ..run.build import Models, describe, make_user, open_model
from ..run.eval_episode import episode_record
from ..run.plan import mua_version, protocol_record, role_record, roles_under_protocol, run_protocol, user_spec
from ..runner import EpisodeResult, agent_view, run_episode
from ..seeds import episode_seed
from ..tools.catalog import find_task
from ..tools.play import HELP, Abandoned, Player, Terminal, TerminalAgent, TerminalUser
from ..types import Task
from .common import add_data_dir, add_model_flags, add_request_timeout, model_spec, non_negative_int

PERSON = "person (mua play)"
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
    add_model_flags(p, "agent", "with --as user: the agent model (endpoint model name or checkpoint)")
    add_model_flags(p, "user", "with --as agent: the user simulator model (default: the benchmark's own user "
                               "model where it names one, else its scripted user)")
    add_model_flags(p, "judge", "LLM judge for judged score components (skipped and flagged without one)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="run seed (the episode's seed derives from it)")
    p.add_argument("--out", help="run directory to write (default: results/play/BENCHMARK-SUBSET-TASK-SIDE, "
                                 "then -2, -3...)")
    add_request_timeout(p)
    add_data_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    bench = open_benchmark(args.benchmark, resolve_data_dir(args.data_dir))
    task = find_task(bench, args.task_id, args.subset)
    out = RunDir(Path(args.out) if args.out else _free(Path("results") / "play" / _slug(
        f"{bench.name}-{task.subset}-{task.id}-{args.side}")))
    if out.config.exists() or (out.episodes.exists() and out.episodes.stat().st_size):
        raise ConfigError(f"--out {out.path} already holds a run; give another --out")
    terminal = Terminal()
    # asyncio.run's own Ctrl-C handling only cancels the episode once the blocked input() returns; a handler of
    # our own (asyncio then leaves it alone) makes Ctrl-C end the episode at once, even mid-line
    previous = signal.signal(signal.SIGINT, _interrupt)
    try:
        result, config, player = asyncio.run(_play(args, bench, task, terminal))
    except (Abandoned, KeyboardInterrupt) as e:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while saying goodbye changes nothing
        why = "interrupted" if isinstance(e, KeyboardInterrupt) else str(e)
        terminal.say(f"\nmua play: episode abandoned ({why}); nothing written")
        return 130 if isinstance(e, KeyboardInterrupt) else 1
    finally:
        signal.signal(signal.SIGINT, previous)
    player.catch_up(result.messages if args.side == "user" else agent_view(result.messages))
    seed = episode_seed(args.seed, task.subset, task.id, 0)
    _write(out, config, episode_record(bench, task, 0, seed, result).row)
    score = result.score
    assert score is not None
    terminal.say(f"\nepisode over: {result.termination}; reward {score.reward}"
                 + (f"; components {score.components}" if score.components else ""))
    for line in bench.explain(score.components, score.info):
        terminal.say(f"  {line}")
    terminal.say(f"written to {out.episodes}")
    return 0


async def _play(args: argparse.Namespace, bench: Benchmark, task: Task,
                terminal: Terminal) -> tuple[EpisodeResult, dict, Player]:
    official = run_protocol(bench, [task.subset])
    seed = episode_seed(args.seed, task.subset, task.id, 0)
    named = {role: model_spec(args, role) for role in ("agent", "user", "judge")}
    chosen: list[str] = []
    if args.side == "agent":  # the user model named, else the benchmark's own, as in mua eval
        named["user"], chosen = user_spec(bench, [task.subset], named["user"])
    specs, changed = roles_under_protocol(official, named)  # as mua eval runs them (plan.py)
    overrides = [f"{args.side}.played_by_person", *chosen, *changed]
    if args.side == "agent" and specs["agent"] is not None:
        raise ConfigError("--agent-model: you play the agent; to play the user against a model, add --as user")
    if args.side == "user" and specs["agent"] is None:
        raise ConfigError("--as user: name the agent you talk to with --agent-model (and --agent-base-url)")
    if args.side == "user":
        specs["user"] = None
    models = Models(agent=open_model(specs["agent"]), user=open_model(specs["user"]), judge=open_model(specs["judge"]))
    try:
        await models.check_alive()
        agent: Agent
        user: User
        player: Player
        if args.side == "agent":
            agent = player = TerminalAgent(terminal)
            user = make_user(bench, task, models.user, seed, scripted=models.user is None)
            if models.user is None and bench.needs_user_model(task.subset):
                terminal.say("(the user is the benchmark's scripted user; --user-model plays its LLM simulator)")
        else:
            assert models.agent is not None
            agent = ModelAgent(models.agent, seed=seed)
            # the benchmark's scripted user knows its stop messages (e.g. a stop marker): typed, they end it too
            user = player = TerminalUser(terminal, bench.describe_task(task).scenario,
                                         stops=bench.gold_user(task).is_stop)
        result = await run_episode(bench, task, agent, user, judge=models.judge)
    finally:
        await models.aclose()
    # what each model sent; None where no model played the role (the person's side, as for the gold agent)
    roles = {role: None if role == args.side else role_record(spec) for role, spec in specs.items()}
    person = {"name": PERSON}
    config = {
        "mua_version": mua_version(),
        "benchmark": bench.name,
        "subsets": [task.subset],
        "split": task.split,
        "trials": 1,
        "seed": args.seed,
        "played": args.side,
        "agent": person if args.side == "agent" else describe(specs["agent"], models.agent),
        "user": person if args.side == "user" else describe(specs["user"], models.user),
        "judge": describe(specs["judge"], models.judge),
        "tasks": {task.subset: [task.id]},
        "metrics": bench.declared_metrics().to_dict(),
        "protocol": protocol_record(bench, roles, 1, [task.subset], overrides),
        **data_location(bench.data_dir),
    }
    return result, config, player


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _write(out: RunDir, config: dict, row: dict) -> None:
    out.path.mkdir(parents=True, exist_ok=True)
    write_json(out.config, config)
    episodes = JsonlAppender(out.episodes)
    try:
        episodes.append(row)
    finally:
        episodes.close()  # flush + fsync


def _free(path: Path) -> Path:
    """``path``, or the first of ``path-2``, ``path-3``... that does not exist yet (each play its own run)."""
    n = 1
    while (candidate := path if n == 1 else path.with_name(f"{path.name}-{n}")).exists():
        n += 1
    return candidate


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
