"""BFCL v3 multi-turn adapter (entry point ``bfcl_v3``)."""
from .benchmark import BfclBenchmark

__all__ = ["BfclBenchmark"]
