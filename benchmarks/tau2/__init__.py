"""tau2-bench adapter: retail and airline here, telecom in ``telecom/``; see ``domain.py`` for the contract."""
from .benchmark import Tau2Benchmark

__all__ = ["Tau2Benchmark"]
