"""What every adapter promises the harness, checked on the three real ones."""
import pytest

from mua.harness.registry import get_benchmark


@pytest.mark.parametrize("name", ["tau2", "bfcl_v3", "acebench"])
def test_budgets_read_without_starting_equal_the_started_episodes(name, data_dir):
    bench = get_benchmark(name)
    for subset in bench.subsets:
        task = bench.load_tasks(data_dir, subset, bench.default_split)[0]
        assert bench.limits(task) == bench.start(task).limits, (name, subset)


@pytest.mark.parametrize("name", ["tau2", "bfcl_v3", "acebench"])
def test_declared_metrics_name_the_adapter_and_its_subsets(name):
    bench = get_benchmark(name)
    decl = bench.metrics
    assert decl.benchmark == bench.name and decl.subsets == bench.subsets
    assert decl.default_split == bench.default_split
