"""Metrics declarations: recorded in config.json, read back without the adapter, and the fallbacks for run
directories written before the declaration existed."""
import json

import pytest

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.metrics import PASS_HAT_K, REWARD, SUCCESS, Metric, MetricsDeclaration, SplitSize, generic
from mua.harness.registry import benchmark_class
from mua.harness.results.leaderboard import Settings, run_cells
from mua.harness.results.runs import declaration_of, read_run

FAST = Settings(resamples=200)
GHOST = MetricsDeclaration(
    benchmark="ghost", subsets=("a", "b"), default_split="main", position=5,
    metrics=(Metric(PASS_HAT_K, "ghost/{subset} pass^{k}"),
             Metric(SUCCESS, "ghost/{subset} ok", overall="ghost ok", combine="pooled", summary="ok", digits=2)),
    full_splits=(SplitSize("main", {"a": 2, "b": 3}),), subset_labels={"a": "A"},
    headline=("ghost ok",), detail=("ghost/A ok",))


def test_declaration_round_trips_through_json():
    assert MetricsDeclaration.from_dict(json.loads(json.dumps(GHOST.to_dict()))) == GHOST
    for name in ("tau2", "bfcl_v3", "acebench", "pack"):  # a run's summary takes the adapter's own (schedule.py)
        decl = benchmark_class(name).declared_metrics()
        assert MetricsDeclaration.from_dict(decl.to_dict()) == decl


def test_metric_rejects_unknown_combination_rules():
    with pytest.raises(ValueError, match="combine"):
        Metric(REWARD, "x/{subset}", overall="x", combine="median")
    with pytest.raises(ValueError, match="per subset only"):
        Metric(PASS_HAT_K, "x/{subset} pass^{k}", overall="x")


def _with_metrics(path, decl):
    config = json.loads((path / "config.json").read_text())
    config["metrics"] = decl.to_dict()
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_recorded_declaration_is_read_without_the_adapter(make_run):
    """"ghost" has no installed adapter: its cells, flags and default split come from config.json alone."""
    path = _with_metrics(make_run("g", "ghost", {"a": {"0": [1, 1], "1": [1, 0]}, "b": {"0": [0, 0]}}, trials=2,
                                  metrics=False), GHOST)
    run = read_run(path)
    assert run.split == "main"  # recorded null: the declared default split
    cells = run_cells(run, FAST)
    assert cells["ghost/A pass^2"].value == pytest.approx(0.5)
    assert cells["ghost/A ok"].value == pytest.approx(0.75) and cells["ghost/b ok"].value == 0.0
    assert cells["ghost ok"].value == pytest.approx(0.5)  # pooled over 3 tasks: (1 + 0.5 + 0) / 3
    assert cells["ghost/b ok"].flags == "t"  # 1 of the declared 3 tasks of b in split "main"


def test_old_run_without_declaration_reads_as_the_installed_adapter_declares(make_run):
    results = {"retail": {"r0": [1, 1], "r1": [1, 0]}}
    old = read_run(make_run("old", "tau2", results, trials=2, metrics=False))
    new = read_run(make_run("new", "tau2", results, trials=2))
    assert "metrics" not in old.config and old.metrics == new.metrics == benchmark_class("tau2").declared_metrics()
    assert run_cells(old, FAST) == run_cells(new, FAST)
    assert old.split == "base"


def test_old_run_of_an_unknown_benchmark_gets_the_generic_mean_reward_rule(make_run):
    run = read_run(make_run("u", "nobench", {"s1": {"0": [1.0], "1": [0.5]}, "s2": {"0": [0.0]}}, metrics=False))
    assert run.metrics == generic("nobench") and run.split is None
    cells = run_cells(run, FAST)
    assert cells["nobench/s1 reward"].value == pytest.approx(0.75)
    assert cells["nobench mean reward"].value == pytest.approx((0.75 + 0.0) / 2)  # subsets count once


def test_malformed_declaration_is_one_clear_error(make_run, capsys):
    path = make_run("bad", "tau2", {"retail": {"r0": [1]}})
    config = json.loads((path / "config.json").read_text())
    config["metrics"] = {"benchmark": "tau2", "subsets": ["retail"], "metrics": [{"measure": "reward"}]}
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="bad metrics declaration"):
        read_run(path)
    assert main(["leaderboard", str(path)]) != 0
    assert "bad metrics declaration" in capsys.readouterr().err


def test_declaration_of_prefers_the_recorded_one():
    recorded = {"benchmark": "tau2", "metrics": GHOST.to_dict()}
    assert declaration_of(recorded) == GHOST
    assert declaration_of({"benchmark": "tau2"}) == benchmark_class("tau2").declared_metrics()
