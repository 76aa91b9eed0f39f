"""The run plan, resolved once: what a run is (:class:`RunPlan`: benchmark, subsets, models, trials, seed,
selection, prices), the plan as it runs (the user model it plays: the one it names, else the benchmark's own;
the benchmark's run protocol applied to the models it names, with the departures it makes), the tasks it
selects, the one record of it (config.json's fields and the ``"protocol"`` record every command writes:
config.json, train_config.json) and the one rule that decides whether a run folder holds the same run (resume).
`mua eval`, `mua sweep`, `mua play` and `mua train` take their plan from here, so a policy is trained against the
user simulator and judge it is scored with. The other shared steps: opening the models (build.open_model) and
seeds (seeds.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Optional

from ..errors import ConfigError
from ..interfaces import Benchmark
from ..protocol import ROLES, RunProtocol, data_location, data_record, record, role_params
from ..results.cost import prices_record, user_table
from ..results.store import RunDir, write_json
from ..types import Task
from .build import Models, ModelSpec, trained_on


def default_user_model(bench: Benchmark, subsets: list[str]) -> Optional[str]:
    """The benchmark's own user model for a run of ``subsets`` (``Benchmark.default_user_model`` of the subsets
    that play an LLM user), or None; one model per run."""
    names = sorted({name for s in subsets if bench.needs_user_model(s) and (name := bench.default_user_model(s))})
    if len(names) > 1:
        raise ConfigError(f"{bench.name} {'/'.join(subsets)}: the subsets name different user models "
                          f"({', '.join(names)}); run them one at a time, or name one with --user-model")
    return names[0] if names else None


def run_protocol(bench: Benchmark, subsets: list[str], declared: Optional[RunProtocol] = None) -> RunProtocol:
    """The official protocol of a run of ``subsets``: the benchmark's declared one (``declared``: as the run
    already resolved it), with the benchmark's own user model (if it names one) as the user role's default
    model, so a run that plays another records it as a departure (protocol.differences)."""
    official = declared or bench.declared_protocol()
    model = default_user_model(bench, subsets)
    return official if model is None else replace(official, user=replace(official.user, model=model))


def user_spec(bench: Benchmark, subsets: list[str], named: Optional[ModelSpec],
              shared: bool = False) -> tuple[Optional[ModelSpec], list[str]]:
    """The user model a run plays, before the protocol applies: the one the run names (``--user-model``), else
    the benchmark's own (:func:`default_user_model`), which also takes the place of one model named for every
    role at once (``shared``: ``--model``). Also returns the override ``"user.model"`` when the run's own
    replaces the benchmark's."""
    default = default_user_model(bench, subsets)
    if default is None or (named is not None and not shared):
        if default is None or named is None or named.name == default:
            return named, []
        if _same_folder(named.name, default):  # the benchmark's checkpoint, spelled another way
            return replace(named, name=default), []
        return named, ["user.model"]
    from ..models.providers import key_env  # lazy: planning a run needs no client

    return ModelSpec(default, api_key_env=key_env(default)), []


def _same_folder(a: str, b: str) -> bool:
    """Whether two model names are one existing local folder."""
    pa, pb = Path(a).expanduser(), Path(b).expanduser()
    return pa.is_dir() and pb.is_dir() and pa.resolve() == pb.resolve()


def under_protocol(official: RunProtocol, role: str, spec: Optional[ModelSpec]) -> tuple[Optional[ModelSpec],
                                                                                           list[str]]:
    """``spec`` as it runs in ``role`` under the protocol: the official request params with the spec's own on
    top, the seed sent as the protocol says; and the overrides (``"user.temperature"``...)."""
    if spec is None:
        return None, []
    params, changed = role_params(official.role(role), spec.params)
    return replace(spec, params=params, seed=official.role(role).seed), [f"{role}.{k}" for k in changed]


def roles_under_protocol(official: RunProtocol, specs: dict[str, Optional[ModelSpec]]
                         ) -> tuple[dict[str, Optional[ModelSpec]], list[str]]:
    """Each role's model as the run plays it (:func:`under_protocol`; the gold agent and roles no model plays
    as they are), for every command that plays one (eval, sweep, play, train), and the overrides in role order."""
    out: dict[str, Optional[ModelSpec]] = {}
    overrides: list[str] = []
    for role, spec in specs.items():
        if spec is None or spec.gold:
            out[role] = spec
            continue
        out[role], changed = under_protocol(official, role, spec)
        overrides += changed
    return out, overrides


def departures(overrides: list[str]) -> list[str]:
    """The overrides that change what a model is asked (client options such as timeouts and retries do not)."""
    from ..models import ENDPOINT_ONLY  # lazy: reading or planning a run needs no client

    return [o for o in overrides if o.split(".", 1)[-1] not in ENDPOINT_ONLY]


def role_record(spec: Optional[ModelSpec]) -> Optional[dict]:
    """What a role sent, as the protocol record holds it (None where no model played the role)."""
    return None if spec is None else {"model": spec.name, "params": spec.params, "seed": spec.seed}


def protocol_record(bench: Benchmark, roles: dict[str, Optional[dict]], trials: int, subsets: list[str],
                    overrides: list[str], limits: Optional[dict[str, Any]] = None,
                    declared: Optional[RunProtocol] = None) -> dict:
    """The ``"protocol"`` record of a run: what each role sent, the budgets (the benchmark's, with ``limits``
    a run adds), trials, overrides and the checksums of the data files of ``subsets``, beside the official
    protocol (``declared``: the benchmark's, as the run already resolved it)."""
    official = run_protocol(bench, subsets, declared)
    prefixes = [p.format(subset=s) for p in official.data for s in subsets]
    used = json.loads(json.dumps(roles, ensure_ascii=False, default=str))
    return record(official, used, trials, {**official.limits, **(limits or {})}, overrides,
                  data_record(bench.data_dir, prefixes))


# -- what a run is, as it runs, and its record ------------------------------------------------------------

PERSON = "person (mua play)"  # what the record names a role a person plays at the terminal


@dataclass(frozen=True)
class RunPlan:
    """What a run is, as flags, a config file or a sweep cell name it (immutable: :func:`planned` gives the
    plan as it runs)."""

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
    # the role a person plays at the terminal (`mua play`: "agent" or "user"), played by ``Models.person``; its
    # spec (the agent's: a placeholder) is never opened, put under the protocol or priced
    person: Optional[str] = None


def planned(bench: Benchmark, plan: RunPlan) -> tuple[RunPlan, list[str]]:
    """The plan as it runs: its user model chosen as every command chooses it (:func:`user_spec`: the one named,
    else the benchmark's own; none for the gold agent, which plays with the scripted user), then under the
    protocol of the run (:func:`with_protocol`). Also returns the overrides (a person's role first:
    ``"agent.played_by_person"``)."""
    chosen: list[str] = []
    if plan.person == "user":
        plan = replace(plan, user=None, user_shared=False)
    elif not plan.agent.gold:
        user, chosen = user_spec(bench, plan.subsets, plan.user, shared=plan.user_shared)
        plan = replace(plan, user=user, user_shared=False)
    plan, overrides = with_protocol(plan, run_protocol(bench, plan.subsets))
    return plan, ([f"{plan.person}.played_by_person"] if plan.person else []) + chosen + overrides


def with_protocol(plan: RunPlan, official: RunProtocol) -> tuple[RunPlan, list[str]]:
    """The plan as it runs under the benchmark's official protocol: each model role's request params are
    the official ones with the plan's (flags) on top, its seed sent as the protocol says, trials the
    protocol's unless given (one for the gold agent: it replays the same actions every trial; a person plays
    one). Also returns the overrides ("agent.temperature", "trials", ...)."""
    roles, overrides = roles_under_protocol(official, {role: getattr(plan, role) for role in ROLES
                                                       if role != plan.person})
    specs: dict[str, Any] = dict(roles)  # role -> Optional[ModelSpec], as RunPlan's fields
    trials = plan.trials
    if trials is None:
        trials = 1 if plan.agent.gold else official.trials
    elif trials != official.trials and not plan.agent.gold and plan.person is None:
        overrides.append("trials")
    return replace(plan, trials=trials, **specs), overrides


def _protocol(bench: Benchmark, plan: RunPlan, tasks: dict[str, list[Task]], overrides: list[str]) -> dict:
    """config.json's "protocol": what this run sends per role, its budgets, trials and data checksums, beside
    the benchmark's official protocol (see protocol.py)."""
    user_played = not plan.agent.gold and any(bench.needs_user_model(s) for s in tasks)
    roles = {}
    for role in ROLES:
        spec = getattr(plan, role)
        played = spec is not None and not spec.gold and role != plan.person and (role != "user" or user_played)
        roles[role] = role_record(spec) if played else None
    return protocol_record(bench, roles, plan.trials or 1, list(tasks), overrides)


def run_config(bench: Benchmark, plan: RunPlan, tasks: dict[str, list[Task]], models: Models,
            overrides: Optional[list[str]] = None) -> dict:
    # "prices" (cost.py), for runs that play a model; nothing for the others, nor for a person's play (`mua play`
    # has never recorded prices: one episode, no summary or cost is read from it)
    prices = None if plan.person else prices_record({"agent": plan.agent, "user": plan.user, "judge": plan.judge},
                                                    user_table(plan.prices))
    return {
        "benchmark": plan.benchmark,
        "subsets": plan.subsets,
        "split": plan.split,
        "trials": plan.trials,
        "seed": plan.seed,
        **({"played": plan.person} if plan.person else {}),
        "agent": _described(plan, "agent", models.agent),
        "user": _described(plan, "user", models.user),
        "judge": _described(plan, "judge", models.judge),
        "tasks": {s: [t.id for t in ts] for s, ts in tasks.items()},
        "metrics": bench.declared_metrics().to_dict(),  # how results are read without the adapter (see metrics.py)
        "protocol": _protocol(bench, plan, tasks, overrides or []),
        **data_location(bench.data_dir),
        **({"prices": prices} if prices else {}),
    }


def _described(plan: RunPlan, role: str, model: Any) -> Optional[dict]:
    """config.json's record of the model of ``role`` (a person: its name alone): the spec plus what the client
    reports (never a key)."""
    if role == plan.person:
        return {"name": PERSON}
    spec = getattr(plan, role)
    if spec is None:
        return None
    info = spec.to_dict()
    if model is not None and hasattr(model, "describe"):
        info["client"] = model.describe()
    if not spec.gold and (trained := trained_on(spec.name)):  # the gold agent is no checkpoint
        info["trained_on"] = trained
    return info


def write_config(run: RunDir, config: dict) -> None:
    """config.json: the run's record (:func:`run_config`) under the version of mua that wrote it; every command's
    record is written here."""
    try:
        mua = version("mua")
    except PackageNotFoundError:
        mua = "unknown"
    write_json(run.config, {"mua_version": mua, **config})


# What mua records about itself (its version, the benchmark's declaration) may change between versions without
# changing which episodes the run is made of; it is rewritten with the current one. prices: what the cost is
# computed at, not what was played; data_dir: where the same data (checksums in "protocol") lies now
NOT_THE_RUN = ("mua_version", "metrics", "prices", "data_dir")


def run_differences(old: dict, new: dict) -> list[str]:
    """The one "same run?" rule: the fields in which two records of a run differ in what it plays (config.json's
    for eval and sweep; the tasks and ``"protocol"`` of train_config.json for a resumed `mua train`)."""
    return sorted(k for k in set(old) | set(new) if k not in NOT_THE_RUN and old.get(k) != new.get(k))


def check_resumable(run: RunDir, config: dict) -> None:
    old = run.read_config()
    if old is None:
        return
    diff = run_differences(old, config)
    if "protocol" in diff and "protocol" not in old:
        raise ConfigError(f"{run.path} was written before mua recorded run protocols (its requests may have used "
                          "other decoding settings); finish it with that mua version, or use another --out")
    if diff:
        raise ConfigError(f"{run.path} already holds a different run (differs in: {', '.join(diff)}); "
                          "use another --out, or the same options to resume it")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (anything else as its text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
