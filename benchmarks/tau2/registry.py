"""Domains by name, each loaded once per process and data directory (the parsed DB is shared read-only)."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from mua.harness.errors import ConfigError

from .domain import Tau2Domain


def _domain_class(name: str) -> type[Tau2Domain] | None:
    """The domain's class, importing only that domain (each costs 10-15 ms to import at start-up)."""
    if name == "retail":
        from .retail.environment import RetailDomain
        return RetailDomain
    if name == "airline":
        from .airline.environment import AirlineDomain
        return AirlineDomain
    if name == "telecom":
        try:  # telecom is built separately in benchmarks/tau2/telecom/
            from .telecom import TelecomDomain
        except ImportError:
            return None
        return TelecomDomain
    return None


@lru_cache(maxsize=None)
def _load(name: str, data_dir: str) -> Tau2Domain:
    cls = _domain_class(name)
    if cls is None:
        available = [n for n in ("airline", "retail", "telecom") if _domain_class(n) is not None]
        raise ConfigError(f"tau2: unknown or unavailable domain {name!r}; available: {', '.join(available)}")
    return cls.load(Path(data_dir))


@lru_cache(maxsize=64)
def _resolved(data_dir: str, cwd: str) -> str:
    return str(Path(cwd, data_dir).resolve())


def get_domain(name: str, data_dir: Path) -> Tau2Domain:
    # called a few times per episode: resolving the path each time was a tenth of a millisecond per call
    return _load(name, _resolved(str(data_dir), os.getcwd()))
