"""Domains by name, each loaded once per process and data directory (the parsed DB is shared read-only)."""
from __future__ import annotations

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


def get_domain(name: str, data_dir: Path) -> Tau2Domain:
    return _load(name, str(Path(data_dir).resolve()))
