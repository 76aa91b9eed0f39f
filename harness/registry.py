"""Benchmarks by name. Adapters register through the ``mua.benchmarks`` entry-point group (see
pyproject.toml), so the harness never imports adapter internals and third-party adapters plug in alike.
An entry point names the adapter class; :func:`open_benchmark` makes an instance bound to a data directory."""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Optional

from .errors import ConfigError
from .interfaces import Benchmark
from .metrics import MetricsDeclaration

GROUP = "mua.benchmarks"


@lru_cache(maxsize=None)
def _entry_points() -> dict:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


_classes: dict[str, type[Benchmark]] = {}
_options: dict[str, dict[str, Any]] = {}  # constructor options of in-process registrations
_instances: dict[tuple[str, Path], Benchmark] = {}


def register_benchmark(cls: type[Benchmark], **options: Any) -> None:
    """Register an adapter class in-process (tests, notebooks; entry points are the normal way); ``options``
    go to its constructor after the data directory. Replaces an earlier registration of the same name."""
    _classes[cls.name] = cls
    _options[cls.name] = options
    for key in [k for k in _instances if k[0] == cls.name]:
        del _instances[key]


def benchmark_names() -> list[str]:
    return sorted(set(_entry_points()) | set(_classes))


def benchmark_class(name: str) -> type[Benchmark]:
    """The adapter class registered as ``name``; ConfigError naming the known ones when there is none."""
    if name not in _classes:
        eps = _entry_points()
        if name not in eps:
            known = ", ".join(benchmark_names()) or "none (is mua installed with `pip install -e .`?)"
            raise ConfigError(f"unknown benchmark {name!r}; known benchmarks: {known}")
        _classes[name] = eps[name].load()
    return _classes[name]


def open_benchmark(name: str, data_dir: Path) -> Benchmark:
    """The adapter ``name`` bound to ``data_dir`` (one instance per name and directory)."""
    key = (name, Path(data_dir).resolve())
    if key not in _instances:
        _instances[key] = benchmark_class(name)(Path(data_dir), **_options.get(name, {}))
    return _instances[key]


def installed_declaration(name: str) -> Optional[MetricsDeclaration]:
    """The metrics declaration of the installed adapter ``name``; None when there is no such adapter."""
    try:
        return benchmark_class(name).declared_metrics()
    except (ConfigError, ImportError):
        return None
