"""Domains by name, each loaded once per process and data directory (the parsed DB is shared read-only)."""
from __future__ import annotations

from importlib import import_module
from pathlib import Path

from mua.harness.errors import ConfigError

from .domain import Tau2Domain

# name -> (module, class), imported only when that domain is used (each costs 10-15 ms to import at start-up);
# telecom is built separately in benchmarks/tau2/telecom/
_DOMAINS = {"airline": (".airline.environment", "AirlineDomain"), "retail": (".retail.environment", "RetailDomain"),
            "telecom": (".telecom", "TelecomDomain")}
_loaded: dict[tuple[str, Path], Tau2Domain] = {}


def _domain_class(name: str) -> type[Tau2Domain] | None:
    if name not in _DOMAINS:
        return None
    module, cls = _DOMAINS[name]
    try:
        return getattr(import_module(module, __package__), cls)
    except ImportError:
        if name != "telecom":  # only telecom may be missing from an install
            raise
        return None


def get_domain(name: str, data_dir: Path) -> Tau2Domain:
    """The domain ``name`` with its database under ``data_dir``, loaded on first use (a benchmark keeps the
    ones it uses: this resolves the path on every call)."""
    key = (name, Path(data_dir).resolve())
    if key not in _loaded:
        cls = _domain_class(name)
        if cls is None:
            available = [n for n in _DOMAINS if _domain_class(n) is not None]
            raise ConfigError(f"tau2: unknown or unavailable domain {name!r}; available: {', '.join(available)}")
        _loaded[key] = cls.load(key[1])
    return _loaded[key]
