"""What every adapter promises the harness, checked on the three real ones."""
import pytest

from mua.harness.registry import benchmark_class, open_benchmark


@pytest.mark.parametrize("name", ["tau2", "bfcl_v3", "acebench"])
def test_budgets_read_without_starting_equal_the_started_episodes(name, data_dir):
    bench = open_benchmark(name, data_dir)
    for subset in bench.subsets:
        task = bench.load_tasks(subset, bench.default_split)[0]
        assert bench.limits(task) == bench.start(task).limits, (name, subset)


@pytest.mark.parametrize("name", ["tau2", "bfcl_v3", "acebench"])
def test_declared_metrics_name_the_adapter_and_its_subsets(name):
    cls = benchmark_class(name)
    decl = cls.declared_metrics()
    assert decl.benchmark == cls.name and decl.subsets == cls.subsets
    assert decl.default_split == cls.default_split


@pytest.mark.parametrize("name, subset", [("tau2", "retail"), ("acebench", "agent_multi_turn_en")])
def test_a_task_not_loaded_by_the_adapter_is_a_clear_error(name, subset, data_dir):
    from mua.harness.errors import ConfigError
    from mua.harness.types import Task

    with pytest.raises(ConfigError, match="not loaded through its benchmark's load_tasks"):
        open_benchmark(name, data_dir).start(Task("x", name, subset))
