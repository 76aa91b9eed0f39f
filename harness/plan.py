"""The run plan `mua eval` and `mua train` share, so that a policy is trained against the user simulator and
judge it is scored with: the benchmark's run protocol applied to the models a run names (request params, and
whether each request carries the episode's seed), which departures from it a run makes, and the
``"protocol"`` record both write (config.json, train_config.json). The other shared steps are task selection
(selection.py), opening the models (build.open_model) and seeds (seeds.py)."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Optional

from .build import ModelSpec
from .interfaces import Benchmark
from .protocol import RunProtocol, data_record, record, role_params


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
    official = bench.declared_protocol()
    prefixes = [p.format(subset=s) for p in official.data for s in subsets]
    used = json.loads(json.dumps(roles, ensure_ascii=False, default=str))
    return record(official, used, trials, {**official.limits, **(limits or {})}, overrides,
                  data_record(bench.data_dir, prefixes))
