import math

import pytest

from mua.harness.results.stats import (
    SUCCESS_TOLERANCE,
    bootstrap_ci,
    combine,
    is_success,
    max_k,
    paired_bootstrap,
    paired_permutation,
    pass_hat_k,
    quantile,
)


@pytest.mark.parametrize("n,c,k,expected", [
    (4, 2, 1, 0.5),
    (4, 2, 2, 1 / 6),  # C(2,2)/C(4,2)
    (4, 2, 3, 0.0),
    (4, 4, 4, 1.0),
    (4, 3, 2, 0.5),  # C(3,2)/C(4,2) = 3/6
    (3, 2, 2, 1 / 3),
    (5, 3, 3, 0.1),  # C(3,3)/C(5,3) = 1/10
])
def test_pass_hat_k_hand_checked(n, c, k, expected):
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-15)


def test_pass_hat_k_averages_over_tasks_like_tau2():
    # three tasks, 4 trials each, with 4, 2 and 0 successes: pass^2 = (1 + 1/6 + 0) / 3
    per_task = [pass_hat_k(4, c, 2) for c in (4, 2, 0)]
    assert sum(per_task) / 3 == pytest.approx(7 / 18)
    # pass^1 equals the plain success rate
    assert sum(pass_hat_k(4, c, 1) for c in (4, 2, 0)) / 3 == pytest.approx(6 / 12)


def test_pass_hat_k_rejects_k_above_trials():
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)
    with pytest.raises(ValueError):
        pass_hat_k(2, 3, 1)


def test_max_k_is_fewest_trials():
    assert max_k([4, 3, 4]) == 3
    assert max_k([]) == 0


def test_success_tolerance_is_pinned_to_tau2():
    # tau2's is_successful: (1 - 1e-6) <= reward <= (1 + 1e-6). Every "pass" in mua goes through is_success.
    assert SUCCESS_TOLERANCE == 1e-6
    assert is_success(1.0) and is_success(1 - 1e-6) and is_success(1 + 1e-6) and is_success(1 - 5e-7)
    assert not is_success(1 - 2e-6) and not is_success(1 + 2e-6)
    assert not is_success(0.999) and not is_success(0.0) and not is_success(None)


def test_every_pass_decision_uses_is_success():
    """No module decides "pass" on its own (a comparison of a reward with 1.0 or 1 - tolerance)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    own = re.compile(r"(>=|==|<=)\s*1(\.0)?\s*-\s*1e-6|reward[\]\"']*\s*==\s*1\.0|abs\(\w+ - 1\.0\)")
    offenders = [f"{p.relative_to(root)}:{i}" for folder in ("harness", "benchmarks", "training")
                 for p in sorted((root / folder).rglob("*.py")) if p.name != "stats.py"
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if own.search(line)]
    assert offenders == []


def test_quantile_linear_interpolation():
    assert quantile([0.0, 1.0, 2.0, 3.0], 0.5) == 1.5
    assert quantile([0.0, 1.0, 2.0, 3.0], 0.0) == 0.0
    assert quantile([0.0, 1.0, 2.0, 3.0], 1.0) == 3.0
    assert quantile([5.0], 0.3) == 5.0


def test_combine_pooled_vs_macro():
    assert combine([1.0, 0.0], [4, 1], "pooled") == pytest.approx(0.8)
    assert combine([1.0, 0.0], [4, 1], "macro") == pytest.approx(0.5)


def test_bootstrap_constant_values_have_zero_width():
    e = bootstrap_ci([[1.0] * 10])
    assert (e.value, e.low, e.high, e.n) == (1.0, 1.0, 1.0, 10)


def test_bootstrap_interval_is_deterministic_and_sensible():
    vals = [1.0] * 25 + [0.0] * 25
    a, b = bootstrap_ci([vals], seed=3), bootstrap_ci([vals], seed=3)
    assert a == b
    assert a.low < 0.5 < a.high
    # normal approximation: half-width ~ 1.96 * sqrt(.25/50) = 0.139
    assert 0.10 < (a.high - a.low) / 2 < 0.18
    spread = [i / 49 for i in range(50)]
    assert bootstrap_ci([spread], seed=4) != bootstrap_ci([spread], seed=5)


def test_bootstrap_macro_keeps_group_weights():
    e = bootstrap_ci([[1.0, 1.0, 1.0, 1.0], [0.0]], weighting="macro")
    assert e.value == 0.5 and e.low == 0.5 and e.high == 0.5  # each group is constant: no spread
    assert bootstrap_ci([[1.0, 1.0, 1.0, 1.0], [0.0]]).value == pytest.approx(0.8)


@pytest.mark.parametrize("test", [paired_bootstrap, paired_permutation])
def test_paired_tests_equal_runs_give_no_evidence(test):
    t = test([[0.0] * 30], resamples=500)
    assert t.delta == 0.0 and t.p_value == 1.0


@pytest.mark.parametrize("test", [paired_bootstrap, paired_permutation])
def test_paired_tests_detect_a_clear_drop(test):
    diffs = [-1.0] * 15 + [0.0] * 25
    t = test([diffs], resamples=2000)
    assert t.delta == pytest.approx(-15 / 40)
    assert t.p_value < 0.01
    assert t.high < 0


@pytest.mark.parametrize("test", [paired_bootstrap, paired_permutation])
def test_paired_tests_noise_is_not_significant(test):
    diffs = [-1.0] * 3 + [1.0] * 2 + [0.0] * 35
    t = test([diffs], resamples=2000)
    assert t.p_value > 0.2
    assert t.low < 0 < t.high


def test_margin_tolerates_small_drops():
    diffs = [-1.0] * 5 + [0.0] * 95  # a consistent 5-point drop
    assert paired_bootstrap([diffs], margin=0.0, resamples=2000).p_value < 0.05
    assert paired_bootstrap([diffs], margin=0.10, resamples=2000).p_value > 0.5
    assert paired_permutation([diffs], margin=0.10, resamples=2000).p_value > 0.5


def test_permutation_p_value_never_zero():
    t = paired_permutation([[-1.0] * 40], resamples=99)
    assert t.p_value == pytest.approx(1 / 100)
    assert not math.isnan(t.low)


def test_pass_hat_k_agrees_with_official_tau2_metrics_on_real_runs(make_run):
    """Fixture: the official tau2 compute_metrics run on 17 real results files (1 to 4 trials per task,
    partial runs included): our cells must give the same pass^k for every k it reports, and no other k."""
    import json
    from pathlib import Path

    from mua.harness.results.leaderboard import Settings, run_cells
    from mua.harness.results.runs import read_run

    fixture = json.loads((Path(__file__).parent / "fixtures" / "tau2_official_pass_hat_k.json").read_text())
    checked = 0
    for i, entry in enumerate(fixture["files"]):
        per_task: dict[str, dict[int, float]] = {}
        for task_id, trial, reward in entry["simulations"]:
            per_task.setdefault(task_id, {})[trial] = reward
        trials = max(len(t) for t in per_task.values())
        # trials renumbered 0..n-1 per task; tasks with fewer trials than others get "missing" rows
        results = {"airline": {t: list(rs.values()) + ["missing"] * (trials - len(rs)) for t, rs in per_task.items()}}
        cells = run_cells(read_run(make_run(f"f{i}", "tau2", results, trials=trials)), Settings(resamples=1))
        ours = {k.split("^")[1]: c.value for k, c in cells.items()}
        official = entry["official"]["pass_hat_ks"]
        assert ours.keys() == official.keys(), entry["file"]
        for k, v in official.items():
            assert ours[k] == pytest.approx(v, abs=1e-12), (entry["file"], k)
            checked += 1
    assert checked >= 25


def test_crossed_bootstrap_widens_with_the_spread_between_replicates():
    """Two seeds that disagree (one +1 on every task, one -1) have a mean of 0 and an interval that reaches both;
    the same figures with the seeds agreeing (every row +0.0 and the task spread kept) give a narrow one."""
    from mua.harness.results.stats import paired_bootstrap, paired_bootstrap_crossed

    split = [[1.0] * 20, [-1.0] * 20]
    test = paired_bootstrap_crossed(split, seed=0)
    assert test.delta == 0.0 and test.low == -1.0 and test.high == 1.0 and test.n == 40
    # averaging over seeds first (the seeds' models held fixed) hides that spread entirely
    fixed = paired_bootstrap([[(a + b) / 2 for a, b in zip(*split)]], seed=0)
    assert fixed.low == fixed.high == 0.0
    steady = paired_bootstrap_crossed([[1.0] * 10 + [0.0] * 10] * 5, seed=0)
    assert steady.delta == 0.5 and 0.2 < steady.low < 0.5 < steady.high < 0.8


def test_crossed_bootstrap_is_deterministic_and_refuses_ragged_rows():
    from mua.harness.results.stats import paired_bootstrap_crossed

    rows = [[0.0, 1.0, 1.0, 0.5], [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    assert paired_bootstrap_crossed(rows, seed=3) == paired_bootstrap_crossed(rows, seed=3)
    assert paired_bootstrap_crossed([[1.0, 1.0]] * 5).low == 1.0  # every replicate and task gained: p = 1
    with pytest.raises(ValueError, match="same tasks"):
        paired_bootstrap_crossed([[1.0, 0.0], [1.0]])
    with pytest.raises(ValueError, match="no paired"):
        paired_bootstrap_crossed([])
