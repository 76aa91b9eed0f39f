"""The run plan `mua eval`, `mua train` and `mua play` share, so that a policy is trained against the user
simulator and judge it is scored with: which user model a run plays (the one it names, else the benchmark's
own), the benchmark's run protocol applied to the models a run names (request params, and whether each request
carries the episode's seed), which departures from it a run makes, and the ``"protocol"`` record all write
(config.json, train_config.json). The other shared steps are task selection
(selection.py), opening the models (build.open_model) and seeds (seeds.py)."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from .build import ModelSpec
from .errors import ConfigError
from .interfaces import Benchmark
from .protocol import RunProtocol, data_record, record, role_params


def default_user_model(bench: Benchmark, subsets: list[str]) -> Optional[str]:
    """The benchmark's own user model for a run of ``subsets`` (``Benchmark.default_user_model`` of the subsets
    that play an LLM user), or None; one model per run."""
    names = sorted({name for s in subsets if bench.needs_user_model(s) and (name := bench.default_user_model(s))})
    if len(names) > 1:
        raise ConfigError(f"{bench.name} {'/'.join(subsets)}: the subsets name different user models "
                          f"({', '.join(names)}); run them one at a time, or name one with --user-model")
    return names[0] if names else None


def run_protocol(bench: Benchmark, subsets: list[str]) -> RunProtocol:
    """The official protocol of a run of ``subsets``: the benchmark's declared one, with the benchmark's own
    user model (if it names one) as the user role's default model, so a run that plays another records it
    as a departure (protocol.differences)."""
    official = bench.declared_protocol()
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
    from .models.providers import key_env  # lazy: planning a run needs no client

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


def departures(overrides: list[str]) -> list[str]:
    """The overrides that change what a model is asked (client options such as timeouts and retries do not)."""
    from .models import ENDPOINT_ONLY  # lazy: reading or planning a run needs no client

    return [o for o in overrides if o.split(".", 1)[-1] not in ENDPOINT_ONLY]


def role_record(spec: Optional[ModelSpec]) -> Optional[dict]:
    """What a role sent, as the protocol record holds it (None where no model played the role)."""
    return None if spec is None else {"model": spec.name, "params": spec.params, "seed": spec.seed}


def protocol_record(bench: Benchmark, roles: dict[str, Optional[dict]], trials: int, subsets: list[str],
                    overrides: list[str], limits: Optional[dict[str, Any]] = None) -> dict:
    """The ``"protocol"`` record of a run: what each role sent, the budgets (the benchmark's, with ``limits``
    a run adds), trials, overrides and the checksums of the data files of ``subsets``, beside the official
    protocol."""
    official = run_protocol(bench, subsets)
    prefixes = [p.format(subset=s) for p in official.data for s in subsets]
    used = json.loads(json.dumps(roles, ensure_ascii=False, default=str))
    return record(official, used, trials, {**official.limits, **(limits or {})}, overrides,
                  data_record(bench.data_dir, prefixes))
