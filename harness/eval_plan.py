"""What an evaluation is: the plan (benchmark, subsets, models, trials, seed, selection), the plan as it runs
under the benchmark's official protocol, the tasks it selects, and the config.json that records all of it
(and decides whether an existing run folder is the same run, so it can be resumed)."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Optional

from .build import Models, ModelSpec, describe
from .cost import prices_record, user_table
from .errors import ConfigError
from .interfaces import Benchmark
from .plan import protocol_record, role_record, run_protocol, under_protocol, user_spec
from .protocol import ROLES, RunProtocol, data_location
from .results import RunDir
from .selection import TaskSelection
from .selection import select_tasks as select
from .types import Task


@dataclass
class EvalPlan:
    benchmark: str
    subsets: list[str]
    agent: ModelSpec
    user: Optional[ModelSpec] = None
    # the user model came from --model (one model for every role): a benchmark's own user model comes first
    user_shared: bool = False
    judge: Optional[ModelSpec] = None
    split: Optional[str] = None
    trials: Optional[int] = None  # None: the benchmark protocol's trials (1 for the gold agent)
    seed: int = 0
    task_ids: Optional[list[str]] = None
    limit: Optional[int] = None
    prices: Optional[str] = None  # a user's price table file (cost.py); mua's built-in table otherwise


def mua_version() -> str:
    try:
        return version("mua")
    except PackageNotFoundError:
        return "unknown"


def select_tasks(bench: Benchmark, plan: EvalPlan) -> dict[str, list[Task]]:
    # a missing or malformed data file surfaces here (load_tasks checks what episodes will read), before any run
    return select(bench, TaskSelection(plan.subsets, plan.split, plan.task_ids or [], plan.limit))


def planned(bench: Benchmark, plan: EvalPlan) -> tuple[EvalPlan, list[str]]:
    """The plan as it runs: its user model chosen as every command chooses it (plan.user_spec: the one named,
    else the benchmark's own; none for the gold agent, which plays with the scripted user), then under the
    protocol of the run (:func:`with_protocol`). Also returns the overrides."""
    chosen: list[str] = []
    if not plan.agent.gold:
        user, chosen = user_spec(bench, plan.subsets, plan.user, shared=plan.user_shared)
        plan = replace(plan, user=user, user_shared=False)
    plan, overrides = with_protocol(plan, run_protocol(bench, plan.subsets))
    return plan, chosen + overrides


def with_protocol(plan: EvalPlan, official: RunProtocol) -> tuple[EvalPlan, list[str]]:
    """The plan as it runs under the benchmark's official protocol: each model role's request params are
    the official ones with the plan's (flags) on top, its seed sent as the protocol says, trials the
    protocol's unless given (one for the gold agent: it replays the same actions every trial). Also returns
    the overrides ("agent.temperature", "trials", ...)."""
    overrides: list[str] = []
    specs: dict[str, Any] = {}  # role -> Optional[ModelSpec]
    for role in ROLES:
        spec = getattr(plan, role)
        if spec is None or spec.gold:
            specs[role] = spec
            continue
        specs[role], changed = under_protocol(official, role, spec)  # the plan `mua train` applies too
        overrides += changed
    trials = plan.trials
    if trials is None:
        trials = 1 if plan.agent.gold else official.trials
    elif trials != official.trials and not plan.agent.gold:
        overrides.append("trials")
    return replace(plan, trials=trials, **specs), overrides


def _protocol(bench: Benchmark, plan: EvalPlan, tasks: dict[str, list[Task]], overrides: list[str]) -> dict:
    """config.json's "protocol": what this run sends per role, its budgets, trials and data checksums, beside
    the benchmark's official protocol (see protocol.py)."""
    user_played = not plan.agent.gold and any(bench.needs_user_model(s) for s in tasks)
    roles = {}
    for role in ROLES:
        spec = getattr(plan, role)
        played = spec is not None and not spec.gold and (role != "user" or user_played)
        roles[role] = role_record(spec) if played else None
    return protocol_record(bench, roles, plan.trials or 1, list(tasks), overrides)


def run_config(bench: Benchmark, plan: EvalPlan, tasks: dict[str, list[Task]], models: Models,
            overrides: Optional[list[str]] = None) -> dict:
    return {
        "benchmark": plan.benchmark,
        "subsets": plan.subsets,
        "split": plan.split,
        "trials": plan.trials,
        "seed": plan.seed,
        "agent": describe(plan.agent, models.agent),
        "user": describe(plan.user, models.user),
        "judge": describe(plan.judge, models.judge),
        "tasks": {s: [t.id for t in ts] for s, ts in tasks.items()},
        "metrics": bench.declared_metrics().to_dict(),  # how results are read without the adapter (see metrics.py)
        "protocol": _protocol(bench, plan, tasks, overrides or []),
        **data_location(bench.data_dir),
        **_prices(plan),
    }


def _prices(plan: EvalPlan) -> dict:
    """config.json's "prices" (cost.py), for runs that play a model; nothing for the others."""
    prices = prices_record({"agent": plan.agent, "user": plan.user, "judge": plan.judge}, user_table(plan.prices))
    return {"prices": prices} if prices else {}


def check_resumable(run: RunDir, config: dict) -> None:
    old = run.read_config()
    if old is None:
        return
    # What mua records about itself (its version, the benchmark's declaration) may change between versions
    # without changing which episodes the run is made of; it is rewritten with the current one.
    # prices: what the cost is computed at, not what was played; data_dir: where the same data (checksums in
    # "protocol") lies now
    derived = ("mua_version", "metrics", "prices", "data_dir")
    diff = sorted(k for k in set(old) | set(config) if k not in derived and old.get(k) != config.get(k))
    if "protocol" in diff and "protocol" not in old:
        raise ConfigError(f"{run.path} was written before mua recorded run protocols (its requests may have used "
                          "other decoding settings); finish it with that mua version, or use another --out")
    if diff:
        raise ConfigError(f"{run.path} already holds a different run (differs in: {', '.join(diff)}); "
                          "use another --out, or the same options to resume it")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (anything else as its text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
