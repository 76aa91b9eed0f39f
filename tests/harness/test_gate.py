import json

import pytest

from mua.harness.cli import main
from mua.harness.results.gate import GateSettings, compare
from mua.harness.results.runs import read_run

FAST = dict(resamples=2000)


def outcomes(pattern: str) -> dict:
    """'1101...' -> {"t0": [1], "t1": [1], ...}; 'm' = missing, 'e' = error."""
    code = {"1": 1, "0": 0, "m": "missing", "e": "error"}
    return {f"t{i}": [code[ch]] for i, ch in enumerate(pattern)}


BASE = "1" * 30 + "0" * 10  # 40 tasks, 75%


def gate(make_run, base, cand, *args, benchmark="tau2", subset="retail"):
    a = make_run("base", benchmark, {subset: outcomes(base)})
    b = make_run("cand", benchmark, {subset: outcomes(cand)}, model="model-b")
    return main(["gate", "--baseline", str(a), "--candidate", str(b), "--resamples", "2000", *args])


@pytest.mark.parametrize("method", ["bootstrap", "permutation"])
def test_clearly_worse_candidate_fails(make_run, capsys, method):
    worse = "1" * 15 + "0" * 25  # loses 15 of the baseline's 30 successes
    assert gate(make_run, BASE, worse, "--method", method) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "worse than baseline" in out and "-37.5 points over 40 paired tasks" in out


@pytest.mark.parametrize("method", ["bootstrap", "permutation"])
def test_equal_candidate_passes(make_run, capsys, method):
    assert gate(make_run, BASE, BASE, "--method", method) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS") and "no regression" in out and "+0.0 points" in out


@pytest.mark.parametrize("method", ["bootstrap", "permutation"])
def test_noisy_but_not_significantly_worse_candidate_passes(make_run, capsys, method):
    # three baseline successes lost, two baseline failures gained: -2.5 points, well within noise
    noisy = "000" + "1" * 27 + "11" + "0" * 8
    assert gate(make_run, BASE, noisy, "--method", method) == 0
    assert "-2.5 points" in capsys.readouterr().out


def test_incomplete_candidate_fails_even_when_scores_match(make_run, capsys):
    partial = BASE[:-3] + "mmm"
    assert gate(make_run, BASE, partial) == 1
    out = capsys.readouterr().out
    assert "candidate is incomplete: 37/40 episodes" in out and "retail/t37#0" in out
    assert gate(make_run, BASE, partial, "--allow-incomplete") == 0


def test_error_rate_threshold(make_run, capsys):
    with_errors = "e" + BASE[1:]
    assert gate(make_run, BASE, with_errors) == 1  # 1/40 = 2.5% > default 2%
    assert "error rate 2.5%" in capsys.readouterr().out
    assert gate(make_run, BASE, with_errors, "--max-error-rate", "0.05") == 0


def test_margin_allows_a_small_consistent_drop(make_run):
    base = "1" * 100
    cand = "0" * 5 + "1" * 95
    assert gate(make_run, base, cand) == 1
    assert gate(make_run, base, cand, "--margin", "0.10") == 0


def test_compares_only_tasks_both_scored(make_run):
    base = make_run("base", "tau2", {"retail": outcomes("1e11")})
    cand = make_run("cand", "tau2", {"retail": outcomes("11e1")})
    v = compare(read_run(base), read_run(cand), GateSettings(max_error_rate=1.0, **FAST))
    assert v.test.n == 2 and v.test.delta == 0.0 and v.passed
    assert any("baseline 1 episode errors" in n for n in v.notes)


def test_paired_by_task_id_and_stratified_by_subset(make_run):
    base = make_run("base", "bfcl_v3", {"multi_turn_base": outcomes("10"), "multi_turn_miss_func": outcomes("1")})
    cand = make_run("cand", "bfcl_v3", {"multi_turn_base": outcomes("10"), "multi_turn_miss_func": outcomes("0")})
    v = compare(read_run(base), read_run(cand), GateSettings(**FAST))
    assert [(d.subset, d.tasks, d.baseline, d.candidate) for d in v.subsets] == [
        ("multi_turn_base", 2, 0.5, 0.5), ("multi_turn_miss_func", 1, 1.0, 0.0)]
    assert v.test.delta == pytest.approx(-1 / 3)


def test_component_metric(make_run):
    def ep(proc):
        return {"reward": 0.0, "components": {"end_state": 0.0, "process": proc}}
    base = make_run("base", "acebench", {"agent_multi_turn_en": {f"t{i}": [ep(1.0)] for i in range(20)}})
    cand = make_run("cand", "acebench", {"agent_multi_turn_en": {f"t{i}": [ep(0.2)] for i in range(20)}})
    assert compare(read_run(base), read_run(cand), GateSettings(**FAST)).passed  # rewards equal
    v = compare(read_run(base), read_run(cand), GateSettings(metric="process", **FAST))
    assert not v.passed and v.test.delta == pytest.approx(-0.8)


def test_gate_tests_the_declared_headline_measure(make_run):
    """ACEBench's headline is end_state: equal rewards do not hide an end_state drop; tau2's is pass^k, so a
    partial reward that rises while successes fall is a regression."""
    def ace(end_state):
        return {"reward": 0.5, "components": {"end_state": end_state, "process": 1.0}}
    base = make_run("base", "acebench", {"agent_multi_turn_en": {f"t{i}": [ace(1.0)] for i in range(20)}})
    cand = make_run("cand", "acebench", {"agent_multi_turn_en": {f"t{i}": [ace(0.0)] for i in range(20)}})
    v = compare(read_run(base), read_run(cand), GateSettings(**FAST))
    assert v.metric == "end_state" and not v.passed and v.test.delta == pytest.approx(-1.0)
    assert compare(read_run(base), read_run(cand), GateSettings(metric="reward", **FAST)).passed

    base = make_run("tb", "tau2", {"retail": {f"t{i}": [{"reward": 1.0}] for i in range(20)}})
    cand = make_run("tc", "tau2", {"retail": {f"t{i}": [{"reward": 1.0 if i < 5 else 0.99}] for i in range(20)}})
    v = compare(read_run(base), read_run(cand), GateSettings(**FAST))
    assert v.metric == "success" and not v.passed and v.test.delta == pytest.approx(-0.75)
    assert compare(read_run(base), read_run(cand), GateSettings(metric="reward", margin=0.02, **FAST)).passed


def test_mismatched_benchmarks_is_a_usage_error(make_run, capsys):
    a = make_run("a", "tau2", {"retail": outcomes("1")})
    b = make_run("b", "bfcl_v3", {"multi_turn_base": outcomes("1")})
    assert main(["gate", "--baseline", str(a), "--candidate", str(b)]) == 2
    assert "cannot compare" in capsys.readouterr().err


def test_json_verdict_and_determinism(make_run, tmp_path, capsys):
    a = make_run("a", "tau2", {"retail": outcomes(BASE)})
    b = make_run("b", "tau2", {"retail": outcomes("1" * 20 + "0" * 20)})
    args = ["gate", "--baseline", str(a), "--candidate", str(b), "--resamples", "500"]
    assert main(args + ["--json", str(tmp_path / "v1.json")]) == 1
    assert main(args + ["--json", str(tmp_path / "v2.json")]) == 1
    one, two = (tmp_path / "v1.json").read_text(), (tmp_path / "v2.json").read_text()
    assert one == two and json.loads(one)["passed"] is False
    out = capsys.readouterr().out
    assert out.count("FAIL") == 2


def test_candidate_on_a_task_selection_fails(make_run, capsys):
    """A candidate made with --task-ids 1 must not pass "over 1 paired tasks" against a full baseline."""
    assert gate(make_run, BASE, "1") == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "candidate lacks 39 of the baseline's 40 tasks" in out
    assert "retail: 39 of 40, e.g. t1, t2, t3" in out and "--allow-partial" in out
    assert gate(make_run, BASE, "1", "--allow-partial") == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS") and "over 1 paired tasks" in out and "lacks 39" in out


def test_candidate_missing_a_subset_fails(make_run, capsys):
    base = make_run("base", "tau2", {"retail": outcomes("11"), "airline": outcomes("101")})
    cand = make_run("cand", "tau2", {"retail": outcomes("11")}, model="model-b")
    assert main(["gate", "--baseline", str(base), "--candidate", str(cand), "--resamples", "100"]) == 1
    assert "lacks 3 of the baseline's 5 tasks (1 of its 2 subsets entirely: airline (3 tasks))" in \
        capsys.readouterr().out


def test_incomplete_baseline_fails(make_run, capsys):
    assert gate(make_run, BASE[:-2] + "mm", BASE) == 1
    out = capsys.readouterr().out
    assert "baseline is incomplete: 38/40 episodes" in out and "retail/t38#0" in out
    assert gate(make_run, BASE[:-2] + "mm", BASE, "--allow-incomplete") == 0


def gate_configs(make_run, base_kw, cand_kw):
    a = make_run("base", "tau2", {"retail": outcomes(BASE)}, **base_kw)
    b = make_run("cand", "tau2", {"retail": outcomes(BASE)}, model="model-b", **cand_kw)
    return compare(read_run(a), read_run(b), GateSettings(**FAST))


def test_runs_scored_under_different_conditions_fail(make_run):
    v = gate_configs(make_run, {}, {"split": "test"})
    assert not v.passed and any("different splits (baseline base, candidate test)" in f for f in v.failures)
    assert gate_configs(make_run, {}, {"split": "base"}).passed  # null split is tau2's default, base
    v = gate_configs(make_run, {"judge": "gpt-4.1"}, {})
    assert not v.passed and any("different judge models (baseline gpt-4.1 (temperature=0.0), candidate none)" in f
                                for f in v.failures)
    assert gate_configs(make_run, {"judge": "j", "user": "u"}, {"judge": "j", "user": "u"}).passed


def test_different_user_simulator_warns(make_run, capsys):
    a = make_run("base", "tau2", {"retail": outcomes(BASE)}, user="gpt-4.1")
    b = make_run("cand", "tau2", {"retail": outcomes(BASE)}, model="model-b", user="qwen")
    assert main(["gate", "--baseline", str(a), "--candidate", str(b), "--resamples", "100"]) == 0
    assert ("! warning: runs use different user simulators (baseline gpt-4.1 (temperature=0.0), candidate qwen "
            "(temperature=0.0))") in capsys.readouterr().out


def test_unwritable_json_path_is_a_usage_error_before_any_verdict(make_run, tmp_path, capsys):
    a = make_run("a", "tau2", {"retail": outcomes("1")})
    args = ["gate", "--baseline", str(a), "--candidate", str(a), "--resamples", "10"]
    assert main(args + ["--json", str(tmp_path / "nonexistent" / "x.json")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "folder" in cap.err and "does not exist" in cap.err
    assert main(args + ["--json", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_help_documents_the_opt_outs(capsys):
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--allow-partial" in out and "--allow-incomplete" in out
    assert "split or judge model" in out and "user simulator" in out and "warning" in out
