"""Domains by name, each loaded once per process and data directory (the parsed DB is shared read-only)."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from mua.harness.errors import ConfigError

from .domain import Tau2Domain


def _domain_classes() -> dict[str, type[Tau2Domain]]:
    from .airline.environment import AirlineDomain
    from .retail.environment import RetailDomain
    classes: dict[str, type[Tau2Domain]] = {"retail": RetailDomain, "airline": AirlineDomain}
    try:  # telecom is built separately in benchmarks/tau2/telecom/
        from .telecom import TelecomDomain
        classes["telecom"] = TelecomDomain
    except ImportError:
        pass
    return classes


@lru_cache(maxsize=None)
def _load(name: str, data_dir: str) -> Tau2Domain:
    classes = _domain_classes()
    if name not in classes:
        raise ConfigError(f"tau2: unknown or unavailable domain {name!r}; available: {', '.join(sorted(classes))}")
    return classes[name].load(Path(data_dir))


@lru_cache(maxsize=64)
def _resolved(data_dir: str, cwd: str) -> str:
    return str(Path(cwd, data_dir).resolve())


def get_domain(name: str, data_dir: Path) -> Tau2Domain:
    # called a few times per episode: resolving the path each time was a tenth of a millisecond per call
    return _load(name, _resolved(str(data_dir), os.getcwd()))
