"""CI smoke of tests/perf/learning_check.py (2 SFT and 2 GRPO steps, 4 tasks, every example pack (four), one seed: it
runs end to end, in worker processes, and prints its figures; the verdict needs the full run), the same on the
real SmolLM2 checkpoint (--policy), and on made-up runs: its verdict can pass and can fail, report.md says what
is printed, finished jobs are reused, a failed job is named and fails its pack."""
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("trl")
SCRIPT = Path(__file__).resolve().parents[1] / "perf" / "learning_check.py"


def load_script():
    spec = importlib.util.spec_from_file_location("learning_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SMOKE_LINES = ("before SFT", " seed 0:", "SFT", "GRPO, user in the loop", "GRPO, static user",
               "RFT (rejection sampling)", "GRPO, user in the loop - SFT (paired, greedy)",
               "GRPO, user in the loop - SFT (paired, sampled)", "GRPO, static user - SFT (paired, greedy)",
               "RFT (rejection sampling) - SFT (paired, greedy)", "teacher-forced copy, seed 0, SFT: ",
               "overall verdict: ", "wall time of this command: ")


def assert_smoke(done, out: Path, packs: list[str]) -> None:
    assert done.returncode in (0, 1), (done.stdout[-3000:], done.stderr[-3000:])
    for line in SMOKE_LINES:
        assert line in done.stdout, (line, done.stdout[-3000:])
    for pack in packs:
        assert f"pass^1 (pack {pack}, validation split)" in done.stdout
        assert f"learning check: pack {pack}: " in done.stdout  # its budget line
        assert f"verdict for pack {pack}: " in done.stdout and f"wall time of pack {pack}: " in done.stdout
        assert (out / pack / "learning.png").stat().st_size > 0
        assert json.loads((out / pack / "seed-0" / "done.json").read_text())["seed"] == 0
        assert len((out / pack / "seed-0" / "grpo" / "metrics.jsonl").read_text().splitlines()) == 2
        assert len((out / pack / "seed-0" / "grpo-static" / "metrics.jsonl").read_text().splitlines()) == 2
    assert "asked for the time" not in done.stdout
    report = (out / "report.md").read_text()
    assert report.splitlines()[3].startswith("python tests/perf/learning_check.py --out ")
    assert "overall verdict: " in report


@pytest.mark.slow
def test_smoke_runs_every_pack_end_to_end(tmp_path):
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke"],
                          capture_output=True, text=True, timeout=1800)
    assert_smoke(done, tmp_path, ["bookings", "refills", "appointments", "salon"])
    assert "book_table.hour" in done.stdout and "asked 'time'" in done.stdout  # from the bookings pack's data
    print(f"smoke, 4 packs x 1 seed: {time.monotonic() - started:.0f} s")
    again = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke"],
                           capture_output=True, text=True, timeout=600)  # every job finished: reused, none rerun
    assert "4 finished job(s) reused, 0 to run" in again.stdout and "started" not in again.stdout
    assert again.returncode == done.returncode


@pytest.mark.slow
def test_smoke_on_the_real_model(smollm2_checkpoint, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke", "--packs", "bookings",
                           "--seeds", "1", "--jobs", "1", "--policy", str(smollm2_checkpoint),
                           "--chat-template", "hermes"], capture_output=True, text=True, timeout=1800)
    assert_smoke(done, tmp_path, ["bookings"])
    assert not (tmp_path / "bookings" / "seed-0" / "tiny").exists()  # started from the checkpoint


def fake_run(folder: Path, passes: list, trials: int = 1) -> Path:
    folder.mkdir()
    rows = [{"task_id": f"t{i}", "trial": k, "reward": None if p is None else float(p), "error": None}
            for i, p in enumerate(passes) for k in range(trials)]
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def seed(check, n: int, sft: Path, grpo: Path, grpo_dir=None):
    s = check.Seed(n, {check.SFT: check.Stage(sft), check.GRPO: check.Stage(grpo)})
    if grpo_dir is not None:
        s.grpo_dirs[check.GRPO] = grpo_dir
    return s


def report(check, tmp_path, *seeds, missing=(), tasks=None) -> int:
    return check.report([check.PackResult("p", "pack p, validation split", list(seeds), list(missing), tasks or {})],
                        tmp_path, time.monotonic(), "python tests/perf/learning_check.py --packs p")


def test_the_pooled_interval_is_the_same_whatever_the_hash_seed(tmp_path):
    """Pooling goes over the tasks in their order, not a set's, which changes from one process to the next."""
    import random

    rng = random.Random(0)
    for name in ("sft0", "grpo0", "sft1", "grpo1", "sft2", "grpo2"):
        fake_run(tmp_path / name, [rng.random() < 0.5 for _ in range(97)], trials=3)
    code = (f"import importlib.util, sys; spec = importlib.util.spec_from_file_location('lc', {str(SCRIPT)!r}); "
            "m = importlib.util.module_from_spec(spec); sys.modules['lc'] = m; spec.loader.exec_module(m); "
            "from pathlib import Path; p = Path(sys.argv[1]); "
            "print([(k, t, n, c) for k, (t, n, c) in m.pooled([m.Seed(n, {m.SFT: m.Stage(p / f'sft{n}'), "
            "m.GRPO: m.Stage(p / f'grpo{n}')}) for n in (0, 1, 2)]).items()])")
    lines = {subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONHASHSEED": hash_seed}, check=True).stdout
             for hash_seed in ("1", "2", "3", "4")}
    assert len(lines) == 1 and "bootstrap over rows and tasks', resamples=2000), 3, 97)" in lines.pop()


def full_seed(check, folder: Path, n: int, greedy: dict, sampled: dict):
    """A seed with every stage: ``greedy`` and ``sampled`` map a stage to its passes (sampled: 2 trials)."""
    runs = {name: check.Stage(fake_run(folder / f"{n}-{name}-g", greedy[name]),
                              fake_run(folder / f"{n}-{name}-s", sampled[name], trials=2))
            for name in (check.SFT, check.GRPO, check.STATIC, check.RFT)}
    return check.Seed(n, runs)


LOW, HIGH = [1] * 10 + [0] * 30, [1] * 30 + [0] * 10  # 25% and 75% of 40 tasks, the same first ten passing


def stages(check, sft=LOW, grpo=HIGH, static=LOW, rft=LOW) -> dict:
    return {check.SFT: sft, check.GRPO: grpo, check.STATIC: static, check.RFT: rft}


def test_verdict_passes_only_when_grpo_learns_greedy_and_sampled_and_beats_both_baselines(tmp_path, capsys):
    check = load_script()
    five = [full_seed(check, tmp_path, n, stages(check), stages(check)) for n in range(5)]
    assert report(check, tmp_path, *five) == 0
    out = capsys.readouterr().out
    assert "learns: PASS: the paired 95% interval of GRPO, user in the loop - SFT is above zero in 5 of 5 seed(s) " \
           "greedy, 5 of 5 sampled" in out
    assert "beats baselines: PASS: pooled over 5 seeds, sampled: GRPO, user in the loop - RFT (rejection " \
           "sampling) lower bound +" in out and "verdict for pack p: PASS: learns PASS, beats baselines PASS" in out
    # every comparison, per seed and pooled (seeds and tasks resampled), greedy and sampled, with its interval
    for a, b in check.COMPARISONS:
        if a not in five[0].stages:  # the model-user arm runs only with --user-model
            continue
        for kind in ("greedy", "sampled"):
            assert f"pooled over 5 seeds (bootstrap over seeds and tasks): {a} - {b} ({kind}): " in out
            assert f"{a} - {b} (paired, {kind}): " in out
    assert "GRPO, user in the loop - RFT (rejection sampling) (paired, sampled): +50.0 points" in out


def test_a_greedy_gain_alone_fails_learns(tmp_path, capsys):
    """GRPO moves the greedy choice and the sampled policy is no better (sampled +0.0): learns FAILS."""
    check = load_script()
    five = [full_seed(check, tmp_path, n, stages(check), stages(check, grpo=LOW)) for n in range(5)]
    assert report(check, tmp_path, *five) == 1
    out = capsys.readouterr().out
    assert "(paired, greedy): +50.0 points" in out and "SFT (paired, sampled): +0.0 points" in out
    assert "learns: FAIL: " in out and "in 5 of 5 seed(s) greedy, 0 of 5 sampled" in out
    assert "verdict for pack p: FAIL: learns FAIL" in out


def test_learning_without_beating_a_baseline_fails_and_fewer_than_five_seeds_is_never_a_pass(tmp_path, capsys):
    check = load_script()
    # RFT as good as GRPO, sampled: GRPO learns but does not beat its baselines
    tie = [full_seed(check, tmp_path, n, stages(check), stages(check, rft=HIGH)) for n in range(5)]
    assert report(check, tmp_path, *tie) == 1
    out = capsys.readouterr().out
    assert "learns: PASS" in out and "beats baselines: FAIL: pooled over 5 seeds" in out
    assert "verdict for pack p: FAIL: learns PASS, beats baselines FAIL" in out
    # GRPO beating both on four seeds is not enough seeds
    (tmp_path / "four").mkdir()
    four = [full_seed(check, tmp_path / "four", n, stages(check), stages(check)) for n in range(4)]
    assert report(check, tmp_path, *four) == 1
    out = capsys.readouterr().out
    assert "beats baselines: NOT ENOUGH SEEDS: needs both baselines, sampled, on at least 5 seeds pooled (4 " \
           "finished" in out and "beats baselines NOT ENOUGH SEEDS" in out


def test_one_seed_without_a_gain_fails_learns_whatever_the_pooled_figure(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", LOW)
    better = fake_run(tmp_path / "better", HIGH)
    same = fake_run(tmp_path / "same", LOW)
    assert report(check, tmp_path, seed(check, 0, sft, same)) == 1
    assert "verdict for pack p: FAIL" in capsys.readouterr().out
    assert report(check, tmp_path, seed(check, 0, sft, better), seed(check, 1, sft, better),
                  seed(check, 2, sft, same)) == 1
    out = capsys.readouterr().out
    assert "pooled over 3 seeds (bootstrap over seeds and tasks): GRPO, user in the loop - SFT (greedy): +33.3 " \
           "points" in out
    assert "verdict for pack p: FAIL" in out and "above zero in 2 of 3 seed(s) greedy" in out


def test_the_pure_verdicts_can_pass_and_fail():
    from mua.harness.stats import PairedTest

    check = load_script()

    def interval(low):
        return PairedTest(low + 0.1, low, low + 0.2, 1.0, 40, "bootstrap", 2000)

    up, flat = interval(0.05), interval(-0.05)
    assert check.learns({0: {"greedy": up, "sampled": up}}, [0])[0]
    assert not check.learns({0: {"greedy": up, "sampled": flat}}, [0])[0]
    assert not check.learns({0: {"greedy": up}}, [0])[0]  # no sampled run: not a pass
    assert not check.learns({0: {"greedy": up, "sampled": up}}, [0, 1])[0]  # a missing seed fails
    assert not check.learns({}, [])[0]
    pooled = {(check.GRPO, check.RFT, "sampled"): (up, 5, 40), (check.GRPO, check.STATIC, "sampled"): (up, 5, 40)}
    assert check.beats_baselines(pooled, 5)[0] == "PASS"
    assert check.beats_baselines({**pooled, (check.GRPO, check.RFT, "sampled"): (flat, 5, 40)}, 5)[0] == "FAIL"
    assert check.beats_baselines({**pooled, (check.GRPO, check.RFT, "sampled"): (up, 4, 40)}, 5)[0] == \
        "NOT ENOUGH SEEDS"
    assert check.beats_baselines({(check.GRPO, check.RFT, "sampled"): (up, 5, 40)}, 5)[0] == "NOT ENOUGH SEEDS"
    # greedy gains over the baselines do not count
    greedy = {(check.GRPO, b, "greedy"): (up, 5, 40) for b in (check.RFT, check.STATIC)}
    assert check.beats_baselines(greedy, 5)[0] == "NOT ENOUGH SEEDS"


def test_crossed_rows_keep_the_tasks_every_seed_scored_in_task_order():
    check = load_script()
    rows, tasks = check.crossed_rows([({"b": 0.0, "a": 1.0, "c": 0.0}, {"a": 1.0, "b": 1.0, "c": 0.5}),
                                      ({"a": 0.0, "b": 0.0}, {"a": 1.0, "b": 0.0, "c": 1.0})])
    assert tasks == ["a", "b"] and rows == [[0.0, 1.0], [1.0, 0.0]]
    assert check.crossed_rows([]) == ([], [])


def test_rft_samples_exactly_grpos_episode_budget():
    """GRPO's 24 steps x 32 episodes: 768 RFT episodes on every example pack's train split (640 before, on 640
    tasks), as many tasks as equal trials allow."""
    check = load_script()
    for n_tasks, plan in ((800, (1, 768)), (640, (2, 384)), (200, (4, 192)), (4, (192, 4)), (1000, (1, 768)),
                          (96, (8, 96))):
        trials, tasks = check.rft_sampling(768, n_tasks)
        assert (trials, tasks) == plan and trials * tasks == 768 and tasks <= n_tasks
    assert check.rft_sampling(4, 4) == (1, 4)  # the smoke's 2 steps x 2
    for budget in range(1, 200):
        for n_tasks in (1, 7, 50, 300):
            trials, tasks = check.rft_sampling(budget, n_tasks)
            assert trials * tasks == budget and 1 <= tasks <= n_tasks
    with pytest.raises(ValueError):
        check.rft_sampling(0, 5)


def test_no_gradient_is_said_when_no_group_had_a_reward_spread(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    grpo_dir = tmp_path / "grpo"
    grpo_dir.mkdir()
    (grpo_dir / "metrics.jsonl").write_text("".join(json.dumps({"step": i, "reward": 0.0, "frac_reward_zero_std": 1.0})
                                                    + "\n" for i in (1, 2)))
    assert report(check, tmp_path, seed(check, 0, sft, sft, grpo_dir)) == 1
    out = capsys.readouterr().out
    assert "no gradient was taken" in out and "verdict for pack p: FAIL (no gradient was taken)" in out
    (grpo_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5, "frac_reward_zero_std": 0.5}) + "\n")
    assert report(check, tmp_path, seed(check, 0, sft, sft, grpo_dir)) == 1
    assert "no gradient" not in capsys.readouterr().out


def test_sampled_runs_average_trials_per_task_and_get_their_own_paired_interval(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    assert check.per_task(fake_run(tmp_path / "s4", [1, 0], trials=4)) == {"t0": 1.0, "t1": 0.0}
    sampled_sft = fake_run(tmp_path / "ss", [1] * 20 + [0] * 20, trials=2)
    sampled_grpo = fake_run(tmp_path / "sg", [1] * 20 + [0] * 20, trials=2)
    s = check.Seed(0, {check.SFT: check.Stage(sft, sampled_sft),
                       check.GRPO: check.Stage(fake_run(tmp_path / "g", [1] * 30 + [0] * 10), sampled_grpo)})
    # a greedy gain with the sampled policy no better is not learning (this asserted PASS before the sampled rule)
    assert report(check, tmp_path, s) == 1
    out = capsys.readouterr().out
    assert "(paired, greedy): +50.0 points" in out and "(paired, sampled): +0.0 points" in out
    assert "learns: FAIL" in out and "1 of 1 seed(s) greedy, 0 of 1 sampled" in out


def test_behaviour_table_is_per_expected_action_and_fact(tmp_path, capsys):
    check = load_script()
    task = {"id": "t0", "user_scenario": {"replies": [{"when": ["name"], "say": "Vera."},
                                                      {"when": ["time"], "say": "At 8 pm."}]},
            "evaluation_criteria": {"actions": [{"name": "book", "arguments": {"name": "Vera", "hour": 8}}]}}
    call = {"function": {"name": "book", "arguments": json.dumps({"name": "Vera", "hour": 7})}}
    run = tmp_path / "r"
    run.mkdir()
    (run / "episodes.jsonl").write_text(json.dumps({
        "task_id": "t0", "reward": 0.0, "error": None,
        "messages": [{"role": "assistant", "content": "What is your name?"},
                     {"role": "assistant", "content": None, "tool_calls": [call]}]}) + "\n")
    lines = check.behaviour([check.Seed(0, {check.SFT: check.Stage(run)})], {"t0": task})
    assert "book 0%, book.name 100%, book.hour 0%, asked 'name' 100%, asked 'time' 0%" in lines[1]
    # the sampled episodes of the same stage beside each greedy share: a tipping point shows
    sampled = tmp_path / "s"
    sampled.mkdir()
    right = {"function": {"name": "book", "arguments": json.dumps({"name": "Vera", "hour": 8})}}
    (sampled / "episodes.jsonl").write_text("".join(json.dumps({
        "task_id": "t0", "trial": k, "reward": 1.0, "error": None,
        "messages": [{"role": "assistant", "content": "What is your name? What time would you like?"},
                     {"role": "assistant", "content": None, "tool_calls": [c]}]}) + "\n" for k, c in
        enumerate([call, right, right, right])))
    lines = check.behaviour([check.Seed(0, {check.SFT: check.Stage(run, sampled)})], {"t0": task})
    assert ("book 0% (sampled 75%), book.name 100% (sampled 100%), book.hour 0% (sampled 75%), "
            "asked 'name' 100% (sampled 100%), asked 'time' 0% (sampled 100%)") in lines[1]


def test_unscored_and_errored_episodes_are_left_out_and_flagged(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    grpo = fake_run(tmp_path / "grpo", [1] * 30 + [0] * 8 + [None] * 2)  # two unknown rewards: not failures
    rows = (grpo / "episodes.jsonl").read_text().splitlines()
    rows[0] = json.dumps({"task_id": "t0", "reward": 0.0, "error": "endpoint down"})
    (grpo / "episodes.jsonl").write_text("\n".join(rows) + "\n")
    assert set(check.per_task(grpo)) == {f"t{i}" for i in range(1, 38)}
    # greedy only, one seed: the verdict fails now (it needs sampled runs and 5 seeds with baselines); the point
    # here is the count of what was left out
    assert report(check, tmp_path, seed(check, 0, sft, grpo)) == 1
    out = capsys.readouterr().out
    assert "n=37" in out and "LEFT OUT: 3 errored or unscored" in out and "over 37 tasks" in out
    assert "  SFT " in out and out.count("LEFT OUT") == 1


def test_gold_conversations_that_do_not_fit_stop_the_check_before_training(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--max-turn-tokens", "16"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert ("learning check: pack bookings: 800 of 800 gold conversations of split train do not fit the token "
            "budgets (max_turn_tokens 16, max_completion_tokens 64): first book-000, a reply of") in done.stdout
    assert not (tmp_path / "bookings").exists() and not (tmp_path / "refills").exists()  # no gold, no job


class Oracle:
    """A stand-in model whose argmax is the next token of the input, except where ``wrong(token)``."""

    def __init__(self, tokenizer, wrong=lambda text: False):
        import types

        self.tokenizer, self.wrong = tokenizer, wrong
        self.generation_config = types.SimpleNamespace(eos_token_id=tokenizer.eos_token_id)

    def eval(self):
        return self

    def to(self, device):
        return self

    def __call__(self, ids):
        import torch

        row = ids[0].tolist()
        logits = torch.zeros(1, len(row), len(self.tokenizer))
        for i, nxt in enumerate(row[1:] + [0]):
            logits[0, i, (nxt + 1) % len(self.tokenizer) if self.wrong(self.tokenizer.decode([nxt])) else nxt] = 1.0
        return type("Out", (), {"logits": logits})()


def test_teacher_forced_copy_accuracy_is_per_argument(tiny_checkpoint, monkeypatch):
    import types

    import transformers
    from transformers import AutoTokenizer

    check = load_script()
    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint)
    args = types.SimpleNamespace(pack=SCRIPT.parents[2] / "benchmarks/pack/examples/refills", split="validation",
                                 eval_tasks=5)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", lambda *a, **k: Oracle(tokenizer))
    assert check.teacher_forced_copy(tiny_checkpoint, args) == {
        "quote_refill.surname": 1.0, "quote_refill.medicine": 1.0, "order_refill.quote": 1.0,
        "order_refill.branch": 1.0}
    digits = Oracle(tokenizer, wrong=lambda text: any(c.isdigit() for c in text))  # cannot copy digits
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", lambda *a, **k: digits)
    assert check.teacher_forced_copy(tiny_checkpoint, args) == {
        "quote_refill.surname": 1.0, "quote_refill.medicine": 1.0, "order_refill.quote": 0.0,
        "order_refill.branch": 1.0}


def test_report_md_holds_the_printed_figures_and_a_missing_job_fails_its_pack(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    better = fake_run(tmp_path / "better", [1] * 30 + [0] * 10)
    sampled = fake_run(tmp_path / "sampled", [1] * 20 + [0] * 20, trials=2)
    s0 = check.Seed(0, {check.SFT: check.Stage(sft, sampled), check.GRPO: check.Stage(better, sampled)}, wall_s=60)
    s1 = check.Seed(1, {check.SFT: check.Stage(sft), check.GRPO: check.Stage(better)}, wall_s=30)
    packs = [check.PackResult("a", "pack a, test split", [s0, s1]),
             check.PackResult("b", "pack b, test split", [s0], missing=[1])]
    assert check.report(packs, tmp_path, time.monotonic(), "python tests/perf/learning_check.py --packs a,b") == 1
    out, err = capsys.readouterr()
    md = (tmp_path / "report.md").read_text()
    assert md.splitlines()[3] == "python tests/perf/learning_check.py --packs a,b"
    assert "verdict for pack a: FAIL: learns FAIL" in out  # seed 1 has no sampled run, and 2 seeds are too few
    assert "wall time of pack a: 90 s (the sum of its 2 finished job(s))" in out
    assert "seed 1: MISSING" in out and "verdict for pack b: FAIL" in out and "missing: seed 1" in out
    assert "overall verdict: FAIL: 0 of 2 pack(s) pass (a FAIL, b FAIL); PASS needs every pack" in out
    assert "| 0 | GRPO, user in the loop | 75.0 [" in md and "| 1 | MISSING" in md
    rows = [r for r in md.splitlines() if r.startswith("| 0 | GRPO, user in the loop")]
    greedy, sampled, g_diff, s_diff = [c.strip() for c in rows[0].split("|")[3:7]]
    assert f"{greedy} | {sampled}" in out and f"(paired, greedy): {g_diff} over 40 tasks" in out
    assert f"(paired, sampled): {s_diff} over 40 tasks" in out and g_diff.startswith("+50.0 points")
    # every number printed in a figure line is in report.md
    import re

    for line in out.splitlines():
        if "pooled over" in line or "verdict" in line or "wall time" in line or "[" in line:
            for number in re.findall(r"[+-]?\d+\.\d", line):
                assert number in md, (number, line)


def test_a_finished_job_is_reused_and_one_with_other_settings_refused(tmp_path, capsys):
    check = load_script()
    args = check.parse_args(["--out", str(tmp_path), "--packs", "bookings", "--seeds", "2", "--smoke"])
    pack_out = tmp_path / "bookings"
    (pack_out / "seed-0").mkdir(parents=True)
    run = fake_run(pack_out / "seed-0" / "eval-sft", [1, 0])
    s = check.Seed(0, {check.SFT: check.Stage(run)}, {check.GRPO: pack_out / "seed-0" / "grpo"},
                   {check.SFT: {"a.b": 0.5}}, 12.0)
    check.write_done(s, pack_out, check.settings(args))
    assert not (pack_out / "seed-0" / "done.tmp").exists()
    back, recorded = check.read_done(pack_out, 0)
    assert back == s and recorded == check.settings(args)
    finished, todo = check.finished_jobs({"bookings": pack_out}, range(0, 2), args)
    assert list(finished) == [("bookings", 0)] and todo == [("bookings", 1)]
    other = check.parse_args(["--out", str(tmp_path), "--packs", "bookings", "--smoke", "--grpo-lr", "1e-3"])
    with pytest.raises(SystemExit) as stop:
        check.finished_jobs({"bookings": pack_out}, range(0, 2), other)
    assert stop.value.code == 2 and "other settings (grpo_lr)" in capsys.readouterr().err


def test_a_job_recorded_before_digit_places_existed_counts_as_digit_places_0(tmp_path, capsys):
    check = load_script()
    args = check.parse_args(["--out", str(tmp_path), "--packs", "bookings", "--seeds", "1", "--smoke"])
    pack_out = tmp_path / "bookings"
    (pack_out / "seed-0").mkdir(parents=True)
    s = check.Seed(0, {check.SFT: check.Stage(fake_run(pack_out / "seed-0" / "eval-sft", [1]))}, {}, {}, 1.0)
    old = {k: v for k, v in check.settings(args).items() if k != "digit_places"}
    check.write_done(s, pack_out, old)
    with pytest.raises(SystemExit):  # the default is 8 places now: another setting
        check.finished_jobs({"bookings": pack_out}, range(1), args)
    assert "other settings (digit_places)" in capsys.readouterr().err
    plain = check.parse_args(["--out", str(tmp_path), "--packs", "bookings", "--seeds", "1", "--smoke",
                              "--digit-places", "0"])
    assert list(check.finished_jobs({"bookings": pack_out}, range(1), plain)[0]) == [("bookings", 0)]


def test_a_failed_job_is_named_with_its_log_and_the_others_go_on(tmp_path, capsys):
    check = load_script()
    args = check.parse_args(["--out", str(tmp_path), "--jobs", "2"])
    args.argv = ["--out", str(tmp_path), "--no-such-flag"]  # every worker refuses its flags at once
    check.claim_out(tmp_path)
    (tmp_path / "a" / "seed-0").mkdir(parents=True)
    (tmp_path / "a" / "seed-0" / "job.log").write_text("from a crashed run")
    (tmp_path / "a" / "seed-0" / "stale").write_text("from a crashed run")
    failed = check.run_jobs([("a", 0), ("a", 1), ("b", 0)], args)
    assert sorted(failed) == [("a", 0), ("a", 1), ("b", 0)]
    err = capsys.readouterr().err
    assert "pack a, seed 0: FAILED (exit 2)" in err and "pack b, seed 0: FAILED (exit 2)" in err
    assert "unrecognized arguments: --no-such-flag" in err
    assert not (tmp_path / "a" / "seed-0" / "stale").exists()  # an unfinished job's folder is cleared


def test_flags_packs_alias_and_smoke_defaults(capsys):
    check = load_script()
    assert check.parse_args([]).packs == "bookings,refills,appointments,salon"
    assert check.parse_args([]).max_turn_tokens == 96 and check.parse_args([]).seeds == 5
    assert check.parse_args(["--pack", "refills"]).packs == "refills"
    smoke = check.parse_args(["--smoke"])
    assert (smoke.seeds, smoke.sft_steps, smoke.sft_batch, smoke.grpo_steps, smoke.eval_tasks) == (1, 2, 2, 2, 4)
    assert check.parse_args([]).sft_batch is None  # TRL's default
    assert list(check.pack_folders("bookings,refills")) == ["bookings", "refills"]
    assert check.pack_folders(str(SCRIPT.parents[2] / "benchmarks/pack/examples/appointments")) == {
        "appointments": SCRIPT.parents[2] / "benchmarks/pack/examples/appointments"}
    for bad in (["--packs", "nowhere"], ["--packs", "bookings,bookings"], ["--pack", "a", "--packs", "b"],
                ["--jobs", "0"], ["--chat-template", "hermes"], ["--policy", "/no/such/checkpoint"]):
        with pytest.raises(SystemExit) as stop:
            check.pack_folders(check.parse_args(bad).packs)
        assert stop.value.code == 2, bad
        assert capsys.readouterr().err.startswith("learning check: "), bad


def test_every_training_call_has_no_gradient_checkpointing_and_policy_replaces_the_tiny_model(tmp_path,
                                                                                                monkeypatch):
    check = load_script()
    calls = []
    monkeypatch.setattr(check, "mua", lambda *argv: calls.append([str(a) for a in argv]))
    monkeypatch.setattr(check, "teacher_forced_copy", lambda ckpt, args: {})
    monkeypatch.setattr(check, "episodes", lambda run: [])
    bookings = SCRIPT.parents[2] / "benchmarks/pack/examples/bookings"

    def job(*flags):
        calls.clear()
        args = check.parse_args(["--out", str(tmp_path), "--smoke", *flags])
        args.pack, args.out = bookings, tmp_path / "bookings"
        check.one_seed(0, args)
        return calls

    for argv in job():
        if argv[0] in ("sft", "train"):
            assert argv[argv.index("--gradient_checkpointing") + 1] == "false"
            assert argv[argv.index("--bf16") + 1] == "false"  # no GPU here: float32
    assert {a[0] for a in calls} >= {"model", "sft", "train", "eval"}
    policy = tmp_path / "ckpt"
    policy.mkdir()
    calls = job("--policy", str(policy), "--chat-template", "hermes")
    assert not any(a[:2] == ["model", "tiny"] for a in calls)
    sft = next(a for a in calls if a[0] == "sft")
    assert sft[sft.index("--policy") + 1] == str(policy) and sft[sft.index("--chat-template") + 1] == "hermes"
    before = next(a for a in calls if a[0] == "eval" and a[a.index("--out") + 1].endswith("eval-before"))
    assert before[before.index("--agent-model") + 1] == str(policy) and "--agent-chat-template" in before


# A stand-in worker: records its torch threads (the --job-threads it got) and OMP_NUM_THREADS, then finishes its job.
RECORDING_WORKER = """import json, os, sys, time
folder = sys.argv[1]
time.sleep(3 if "slow" in folder else 0)
open(os.path.join(folder, "threads"), "w").write(sys.argv[2] + " " + os.environ["OMP_NUM_THREADS"])
open(os.path.join(folder, "done.json"), "w").write("{}")
"""


def fake_workers(check, monkeypatch, body: str) -> None:
    """Workers that run ``body`` (Python; argv: the job's folder, its threads) instead of a job."""
    monkeypatch.setattr(check, "worker_argv", lambda name, seed, threads, args: [
        sys.executable, "-c", body, str(args.out / name / f"seed-{seed}"), str(threads)])


def test_jobs_left_fewer_than_jobs_share_all_the_cores(tmp_path, monkeypatch, capsys):
    check = load_script()
    fake_workers(check, monkeypatch, RECORDING_WORKER)
    monkeypatch.setattr(check.os, "cpu_count", lambda: 8)

    def threads(jobs: int, todo: list) -> list[str]:
        args = check.parse_args(["--out", str(tmp_path / f"{jobs}-{len(todo)}"), "--jobs", str(jobs)])
        args.argv = []
        check.claim_out(args.out)
        assert check.run_jobs(todo, args) == []
        return [(args.out / n / f"seed-{s}" / "threads").read_text() for n, s in todo]

    assert threads(2, [("a", 0)]) == ["8 8"]  # the lone job left gets every core, not half of them
    assert threads(4, [("a", 0), ("a", 1), ("b", 0)]) == ["2 2"] * 3  # 3 left: 8 // 3
    # as many left as --jobs, or more: 8 // 2; b starts when a is done and slow still runs: 2 left
    assert threads(2, [("slow", 0), ("a", 0), ("b", 0)]) == ["4 4"] * 3
    assert "pack a, seed 0: started with 4 thread(s)" in capsys.readouterr().out


def test_a_worker_sets_the_threads_it_was_given(tmp_path, monkeypatch):
    import torch

    check = load_script()
    args = check.parse_args(["--out", str(tmp_path), "--packs", "bookings", "--jobs", "2"])
    args.argv = ["--out", str(tmp_path), "--packs", "bookings"]
    argv = check.worker_argv("bookings", 1, 3, args)
    assert argv[-4:] == ["--job", "bookings:1", "--job-threads", "3"]
    worker = check.parse_args(argv[2:])
    assert check.settings(worker) == check.settings(args)  # the share of the cores is no setting of the job
    got = []
    monkeypatch.setattr(torch, "set_num_threads", got.append)
    monkeypatch.setattr(check, "one_seed", lambda seed, a: check.Seed(seed))
    (tmp_path / "bookings" / "seed-1").mkdir(parents=True)
    assert check.run_job("bookings:1", {"bookings": tmp_path}, worker) == 0
    assert got == [3] and (tmp_path / "bookings" / "seed-1" / "done.json").is_file()


def test_the_costliest_pack_starts_first(tmp_path, capsys):
    check = load_script()
    job_settings = {"grpo_steps": 24}
    # a pack's gold run on the train split: what counts is how long a conversation is, not how many there are
    for name, chars, count in (("short", 10, 500), ("long", 1000, 1), ("middle", 100, 20)):
        (tmp_path / name / "gold").mkdir(parents=True)
        (tmp_path / name / "gold" / "episodes.jsonl").write_text("".join(
            json.dumps({"task_id": f"t{i}", "messages": [{"role": "user", "content": "x" * chars}]}) + "\n"
            for i in range(count)))
    todo = [("short", 0), ("short", 1), ("long", 0), ("middle", 0), ("long", 1)]
    assert check.longest_first(todo, tmp_path, job_settings) == [("long", 0), ("long", 1), ("middle", 0),
                                                                 ("short", 0), ("short", 1)]
    assert "jobs start longest first by gold conversation length: long, middle, short" in capsys.readouterr().out

    def finished(name: str, seed: int, wall: float, settings: dict) -> None:
        (tmp_path / name / f"seed-{seed}").mkdir()
        (tmp_path / name / f"seed-{seed}" / "done.json").write_text(json.dumps({"wall_s": wall, "settings": settings}))

    finished("short", 5, 900.0, job_settings)
    finished("long", 5, 100.0, job_settings)
    # seconds for two packs and characters for the third cannot be compared: the proxy decides
    assert check.longest_first(todo, tmp_path, job_settings)[0] == ("long", 0)
    finished("middle", 5, 500.0, job_settings)
    finished("middle", 6, 9999.0, {"grpo_steps": 2})  # other settings: not this cost
    assert check.longest_first(todo, tmp_path, job_settings) == [("short", 0), ("short", 1), ("middle", 0),
                                                                 ("long", 0), ("long", 1)]
    assert "by measured wall time: short, middle, long" in capsys.readouterr().out


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_job_past_its_time_limit_is_killed_with_its_children_and_left_unfinished(tmp_path, monkeypatch, capsys):
    check = load_script()
    # a stuck worker that started a child of its own and wrote done.json early: the limit kills both
    fake_workers(check, monkeypatch, """import os, subprocess, sys, time
folder = sys.argv[1]
if "stuck" in folder:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open(os.path.join(folder, "child"), "w").write(str(child.pid))
    open(os.path.join(folder, "done.json"), "w").write("{}")
    time.sleep(120)
open(os.path.join(folder, "done.json"), "w").write("{}")
""")
    args = check.parse_args(["--out", str(tmp_path), "--jobs", "2", "--job-timeout", "2"])
    args.argv = []
    check.claim_out(tmp_path)
    started = time.monotonic()
    assert check.run_jobs([("stuck", 0), ("quick", 0)], args) == [("stuck", 0)]
    assert time.monotonic() - started < 30
    out, err = capsys.readouterr()
    assert "pack stuck, seed 0: FAILED: still running after --job-timeout 2 s, so killed" in err
    assert "pack quick, seed 0: done in" in out
    assert not (tmp_path / "stuck" / "seed-0" / "done.json").exists()  # unfinished: the next run redoes it
    child = int((tmp_path / "stuck" / "seed-0" / "child").read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child)
    # bounded by default (a hung job never holds the run forever); 0 lifts the limit
    assert check.parse_args([]).job_timeout == 4 * 3600 and check.parse_args(["--job-timeout", "0"]).job_timeout == 0
    assert check.settings(check.parse_args(["--job-timeout", "60"])) == check.settings(check.parse_args([]))
    with pytest.raises(SystemExit) as stop:
        check.parse_args(["--job-timeout", "-1"])
    assert stop.value.code == 2


def test_stopping_a_worker_that_ignores_sigterm_does_not_wait_forever():
    import signal

    check = load_script()
    proc = subprocess.Popen([sys.executable, "-c", "import signal, sys, time; signal.signal(signal.SIGTERM, "
                             "signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline() == "ready\n"
    started = time.monotonic()
    check.stop(proc, signal.SIGTERM, grace=1.0)
    assert proc.returncode == -signal.SIGKILL and time.monotonic() - started < 10


def listing(folder: Path) -> list[tuple[str, str]]:
    return sorted((str(p.relative_to(folder)), p.read_text() if p.is_file() else "") for p in folder.rglob("*"))


def test_a_folder_that_is_not_the_checks_own_is_never_written_or_cleared(tmp_path, capsys):
    check = load_script()
    theirs = tmp_path / "theirs"
    (theirs / "bookings" / "seed-0").mkdir(parents=True)
    (theirs / "bookings" / "seed-0" / "thesis.tex").write_text("four years of work")
    before = listing(theirs)
    with pytest.raises(SystemExit) as stop:  # before any model, gold run or job
        check.main(["--out", str(theirs), "--packs", "bookings", "--smoke"])
    assert stop.value.code == 2 and listing(theirs) == before
    err = capsys.readouterr().err
    assert err.startswith(f"learning check: --out {theirs} is not empty and holds no .mua-learning-check")
    assert err.count("\n") == 1
    args = check.parse_args(["--out", str(theirs)])
    with pytest.raises(SystemExit) as stop:  # run_jobs itself clears nothing in an unmarked folder
        check.run_jobs([("bookings", 0)], args)
    assert stop.value.code == 2 and listing(theirs) == before
    # a new or empty folder becomes the check's; claiming it again is fine
    ours = tmp_path / "ours"
    check.claim_out(ours)
    assert (ours / ".mua-learning-check").read_text() == "format 1\n"
    check.claim_out(ours)
    # even in a marked folder, a job folder the check did not make (no job.log) is left alone
    (ours / "bookings" / "seed-0").mkdir(parents=True)
    (ours / "bookings" / "seed-0" / "notes.txt").write_text("mine")
    args = check.parse_args(["--out", str(ours)])
    with pytest.raises(SystemExit) as stop:
        check.run_jobs([("bookings", 0)], args)
    assert stop.value.code == 2 and (ours / "bookings" / "seed-0" / "notes.txt").read_text() == "mine"
    assert "seed-0 is not a learning check's job folder (it has no job.log)" in capsys.readouterr().err
    (ours / ".mua-learning-check").write_text("format 99\n")  # a later version's folder
    with pytest.raises(SystemExit) as stop:
        check.claim_out(ours)
    assert stop.value.code == 2 and "another version of the learning check" in capsys.readouterr().err


def test_a_crashed_job_ends_its_log_with_one_line_the_parent_shows(tmp_path, monkeypatch, capsys):
    check = load_script()
    args = check.parse_args(["--out", str(tmp_path), "--packs", "bookings"])

    def crash(seed, a):
        raise ValueError("no such column: 'hour'\nsecond line")

    monkeypatch.setattr(check, "one_seed", crash)
    (tmp_path / "bookings" / "seed-0").mkdir(parents=True)
    assert check.run_job("bookings:0", {"bookings": tmp_path}, args) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Traceback (most recent call last):"
    assert err[-1] == "job bookings seed 0 failed: ValueError: no such column: 'hour'"
    assert not (tmp_path / "bookings" / "seed-0" / "done.json").exists()

    def step_failed(seed, a):
        raise SystemExit("learning check: `mua sft ...` exited 2")

    monkeypatch.setattr(check, "one_seed", step_failed)
    assert check.run_job("bookings:0", {"bookings": tmp_path}, check.parse_args(["--out", str(tmp_path)])) == 1
    assert capsys.readouterr().err == "job bookings seed 0 failed: learning check: `mua sft ...` exited 2\n"
    # the parent names the failure in its FAILED line, the log's end below it
    fake_workers(check, monkeypatch, """import sys
print("Traceback (most recent call last):\\n  ...\\nValueError: boom", file=sys.stderr)
print("job a seed 0 failed: ValueError: boom", file=sys.stderr)
sys.exit(1)
""")
    out = tmp_path / "parent"
    check.claim_out(out)
    args = check.parse_args(["--out", str(out)])
    args.argv = []
    assert check.run_jobs([("a", 0)], args) == [("a", 0)]
    err = capsys.readouterr().err
    assert "learning check: pack a, seed 0: FAILED (exit 1): job a seed 0 failed: ValueError: boom; the other" in err


@pytest.mark.slow
def test_smoke_with_the_tokenizer_learnt_from_the_packs_conversations(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke", "--packs", "refills",
                           "--tokenizer-corpus", "train"], capture_output=True, text=True, timeout=1800)
    assert_smoke(done, tmp_path, ["refills"])
    corpus = (tmp_path / "refills" / "tokenizer-corpus.txt").read_text(encoding="utf-8")
    assert corpus.count("<|im_start|>system") == 640  # every gold train conversation, rendered
    # checked twice: with the built-in tokenizer before any gold run, with the pack's own once its corpus exists
    assert done.stdout.count("gold conversations of split train") == 2
    vocab = json.loads((tmp_path / "refills" / "seed-0" / "tiny" / "tokenizer.json").read_text())["model"]["vocab"]
    assert "Ġrefill" in vocab or "refill" in vocab  # a word of the pack's became a token
    settings = json.loads((tmp_path / "refills" / "seed-0" / "done.json").read_text())["settings"]
    assert settings["tokenizer_corpus"] == "train"


def test_the_last_jobs_running_take_the_cores_of_finished_ones(tmp_path, monkeypatch, capsys):
    """No job left to start: a running job is told (THREADS_FILE in its folder) to use the freed cores, and takes
    them before its next step, never fewer than it has."""
    import torch

    check = load_script()
    waits = """import os, sys, time
folder = sys.argv[1]
while "slow" in folder and not os.path.exists(os.path.join(folder, "threads-wanted")):
    time.sleep(0.1)
open(os.path.join(folder, "done.json"), "w").write("{}")
"""
    fake_workers(check, monkeypatch, waits)
    monkeypatch.setattr(check.os, "cpu_count", lambda: 8)
    args = check.parse_args(["--out", str(tmp_path / "o"), "--jobs", "2", "--job-timeout", "60"])
    args.argv = []
    check.claim_out(args.out)
    assert check.run_jobs([("slow", 0), ("a", 0)], args) == []  # slow ends only once told
    folder = args.out / "slow" / "seed-0"
    assert (folder / check.THREADS_FILE).read_text() == "8\n"
    got = []
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    monkeypatch.setattr(torch, "set_num_threads", got.append)
    monkeypatch.setenv(check.JOB_FOLDER_ENV, str(folder))
    check.take_more_threads()
    (folder / check.THREADS_FILE).write_text("2\n")
    check.take_more_threads()  # never fewer
    assert got == [8] and "now 8 threads" in capsys.readouterr().out


def test_tuning_rfts_learning_rate_reads_validation_only_and_trains_every_rate_on_the_same_samples(tmp_path,
                                                                                                 monkeypatch, capsys):
    check = load_script()
    for argv, why in ((["--tune-rft-lr", "1e-4", "--split", "test"], "validation split only"),
                      (["--tune-rft-lr", "fast"], "not a comma-separated list"), (["--tune-rft-lr", "0"], "above 0")):
        with pytest.raises(SystemExit) as stop:
            check.parse_args(argv)
        assert stop.value.code == 2 and why in capsys.readouterr().err
    calls = []

    def fake_mua(*argv):
        calls.append([str(a) for a in argv])
        if argv[0] == "export":
            Path(argv[argv.index("--out") + 1]).mkdir(parents=True)

    monkeypatch.setattr(check, "mua", fake_mua)
    monkeypatch.setattr(check, "episodes", lambda run: [{"reward": 1.0}])
    args = check.parse_args(["--out", str(tmp_path), "--smoke", "--tune-rft-lr", "1e-3,1e-4"])
    assert args.tune_rft_lr == [1e-4, 1e-3] and check.settings(args)["tune_rft_lr"] == [1e-4, 1e-3]
    args.pack, args.out = SCRIPT.parents[2] / "benchmarks/pack/examples/bookings", tmp_path / "bookings"
    result = check.one_seed(0, args)
    assert list(result.stages) == [check.SFT, "RFT at learning rate 0.0001", "RFT at learning rate 0.001"]
    assert not any(a[0] == "train" for a in calls)  # no GRPO while tuning
    samples = [a for a in calls if a[0] == "eval" and a[a.index("--out") + 1].endswith("rft-samples")]
    assert len(samples) == 2 and samples[0] == samples[1]  # the same run: the second finds it complete
    assert sum(a[0] == "export" for a in calls) == 1
    rates = [a[a.index("--learning-rate") + 1] for a in calls if a[0] == "sft" and "rft-dataset" in " ".join(a)]
    assert rates == ["0.0001", "0.001"]
    assert all(a[a.index("--split") + 1] in ("validation", "train") for a in calls if a[0] == "eval")


def test_tuning_reports_the_rate_with_the_best_sampled_score(tmp_path, capsys):
    check = load_script()
    seeds = []
    for n in range(2):
        stages = {check.SFT: check.Stage(fake_run(tmp_path / f"sft{n}", LOW), fake_run(tmp_path / f"ss{n}", LOW))}
        for lr, sampled in ((1e-4, LOW), (3e-4, HIGH), (1e-3, [1] * 20 + [0] * 20)):
            name = check.rft_stage(lr)
            stages[name] = check.Stage(fake_run(tmp_path / f"g{n}-{lr}", HIGH),
                                       fake_run(tmp_path / f"s{n}-{lr}", sampled, trials=2))
        seeds.append(check.Seed(n, stages))
    pack = check.PackResult("p", "pack p, validation split", seeds, tune_rft_lr=[1e-4, 3e-4, 1e-3])
    assert check.report([pack], tmp_path, time.monotonic()) == 0
    out = capsys.readouterr().out
    assert "RFT learning rate 0.0003: sampled pass^1 75.0, greedy 75.0 (mean over 2 seed(s), validation)" in out
    assert "tuning for pack p: best RFT learning rate 0.0003 by sampled pass^1 on validation" in out
    assert "tuning (no verdict): every job finished for 1 of 1 pack(s)" in out and "overall verdict" not in out
    pack.missing = [2]
    assert check.report([pack], tmp_path, time.monotonic()) == 1
    # a tie at the top names no rate
    assert check.tuned(seeds, [1e-4, 3e-4])[1] == 3e-4 and check.tuned(seeds, [1e-4])[1] == 1e-4
    for s in seeds:
        s.stages[check.rft_stage(1e-2)] = s.stages[check.rft_stage(3e-4)]
    assert check.tuned(seeds, [1e-4, 3e-4, 1e-2])[1] is None
    assert check.tuned(seeds, [1e-4, 3e-4, 1e-2, 1e-3])[1] is None  # a lower rate after the tie keeps it tied


def test_the_model_user_arm_trains_against_the_user_model_on_an_llm_user_copy(tmp_path, monkeypatch, capsys):
    """--user-model CKPT adds "GRPO, model user in the loop": `mua train` on a copy of the pack whose user is an LLM,
    played by CKPT, then evaluated as every stage; without it, no such arm. A folder that is no checkpoint: exit 2."""
    check = load_script()
    calls = []
    monkeypatch.setattr(check, "mua", lambda *argv: calls.append([str(a) for a in argv]))
    monkeypatch.setattr(check, "teacher_forced_copy", lambda ckpt, args: {})
    monkeypatch.setattr(check, "episodes", lambda run: [])
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.json").write_text("{}")
    args = check.parse_args(["--out", str(tmp_path / "out"), "--smoke", "--no-baselines", "--user-model", str(user)])
    args.pack, args.out = SCRIPT.parents[2] / "benchmarks/pack/examples/bookings", tmp_path / "out" / "bookings"
    result = check.one_seed(0, args)
    assert check.MODEL_USER in result.stages and check.MODEL_USER in check.METHODS
    plain, modelled = [a for a in calls if a[0] == "train"]
    assert "--user_model" not in plain
    assert modelled[modelled.index("--user_model") + 1] == str(user.resolve())
    copy = Path(modelled[modelled.index("--data_dir") + 1])
    assert json.loads((copy / "pack.json").read_text())["user"] == "llm" and (copy / "tasks.json").is_file()
    assert check.parse_args([]).user_model is None
    with pytest.raises(SystemExit) as stop:
        check.parse_args(["--user-model", str(tmp_path)])
    assert stop.value.code == 2 and "--user-model: " in capsys.readouterr().err
