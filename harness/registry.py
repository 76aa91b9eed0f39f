"""Benchmarks by name. Adapters register through the ``mua.benchmarks`` entry-point group (see
pyproject.toml), so the harness never imports adapter internals and third-party adapters plug in alike."""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import entry_points
from typing import Optional

from .errors import ConfigError
from .interfaces import Benchmark
from .metrics import MetricsDeclaration

GROUP = "mua.benchmarks"


@lru_cache(maxsize=None)
def _entry_points() -> dict:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


_instances: dict[str, Benchmark] = {}


def register_benchmark(benchmark: Benchmark) -> None:
    """Register an adapter instance in-process (tests, notebooks); entry points are the normal way."""
    _instances[benchmark.name] = benchmark


def benchmark_names() -> list[str]:
    return sorted(set(_entry_points()) | set(_instances))


def get_benchmark(name: str) -> Benchmark:
    if name not in _instances:
        eps = _entry_points()
        if name not in eps:
            known = ", ".join(benchmark_names()) or "none (is mua installed with `pip install -e .`?)"
            raise ConfigError(f"unknown benchmark {name!r}; known benchmarks: {known}")
        _instances[name] = eps[name].load()()
    return _instances[name]


def installed_declaration(name: str) -> Optional[MetricsDeclaration]:
    """The metrics declaration of the installed adapter ``name``; None when there is no such adapter."""
    try:
        return get_benchmark(name).metrics
    except (ConfigError, ImportError):
        return None
