"""ACEBench agent subsets (multi_turn / multi_step, en / zh) for mua."""
from .benchmark import AceBenchmark

__all__ = ["AceBenchmark"]
