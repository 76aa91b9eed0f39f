"""`mua gate --power`: simulated power of the gate's own paired test, checked against the normal approximation
(one-sided 5% test, 80% power: drop ~ (1.645 + 0.842) * sd of the mean paired difference)."""
import math

import pytest

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.results.power import PowerSettings, flagged_share, smallest_detectable_drop


def normal_drop(tasks: int, trials: int, rate: float) -> float:
    # the candidate's rate is rate - drop; solve drop = z * sd(drop) by iteration
    drop = 0.1
    for _ in range(50):
        var = (rate * (1 - rate) + (rate - drop) * (1 - rate + drop)) / trials
        drop = (1.645 + 0.842) * math.sqrt(var / tasks)
    return drop


@pytest.mark.parametrize("trials", [1, 4])
def test_flagged_share_matches_the_normal_approximation(trials):
    s = PowerSettings((114,), trials, 0.7, simulations=100, resamples=500)
    drop = normal_drop(114, trials, 0.7)
    assert flagged_share(s, 0.0) <= 0.15  # false alarms near the nominal 5%
    assert 0.6 <= flagged_share(s, round(drop, 2)) <= 0.95  # about 80% at the predicted drop
    assert flagged_share(s, 2 * drop) >= 0.97


def test_more_trials_see_smaller_drops_and_the_margin_shifts_them():
    one = smallest_detectable_drop(PowerSettings((60,), 1, 0.5, simulations=40, resamples=300))
    four = smallest_detectable_drop(PowerSettings((60,), 4, 0.5, simulations=40, resamples=300))
    margin = smallest_detectable_drop(PowerSettings((60,), 4, 0.5, margin=0.05, simulations=40, resamples=300))
    assert one.drop is not None and four.drop is not None and margin.drop is not None
    assert four.drop < one.drop and margin.drop > four.drop
    assert dict(one.curve)[one.drop] >= 0.8


def test_too_few_tasks_detect_nothing():
    r = smallest_detectable_drop(PowerSettings((3,), 1, 0.2, simulations=30, resamples=200))
    assert r.drop is None


@pytest.mark.parametrize("bad", [dict(pass_rate=0.0), dict(pass_rate=1.5), dict(trials=0), dict(groups=()),
                                 dict(margin=2.0), dict(power=1.0), dict(simulations=5), dict(method="t")])
def test_bad_settings_are_one_clear_error(bad):
    fields = dict(groups=(10,), trials=1, pass_rate=0.5) | bad
    with pytest.raises(ConfigError):
        smallest_detectable_drop(PowerSettings(**fields))


def test_cli_prints_the_smallest_drop(capsys):
    assert main(["gate", "--power", "--tasks", "114", "--trials", "4", "--pass-rate", "0.7",
                 "--simulations", "40"]) == 0
    out = capsys.readouterr().out
    assert "114 tasks, 4 trial(s)" in out and "smallest drop flagged with 80% power" in out
    assert "false alarms" in out


@pytest.mark.parametrize("argv", [["gate", "--power"], ["gate", "--power", "--tasks", "10", "--trials", "1",
                                                        "--pass-rate", "nan"], ["gate"]])
def test_cli_usage_errors(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "mua gate: error:" in err and "Traceback" not in err
