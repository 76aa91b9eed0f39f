"""tau2-bench adapter (retail, airline; telecom in ``telecom/``). ``Tau2Benchmark`` lands in ``benchmark.py``."""
