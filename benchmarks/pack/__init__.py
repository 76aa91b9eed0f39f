"""Task packs: your own tasks in the tau2 shape, in a folder outside the repo, run by tau2's machinery.

A pack is a data directory (``mua eval --benchmark pack --data-dir PACK``); see ``loader.py`` for its files
and the README ("Bring your own tasks") for a minimal example."""
from .benchmark import PackBenchmark

__all__ = ["PackBenchmark"]
