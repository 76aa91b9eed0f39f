"""CI smoke of tests/perf/learning_check.py (2 SFT and 2 GRPO steps, 4 tasks: it runs end to end and prints
its figures; the verdict needs the full run), and its verdict on made-up runs: it can pass and can fail."""
import importlib.util
import json
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


@pytest.mark.slow
def test_smoke_runs_end_to_end(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke", "--seeds", "2"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    for line in ("pass^1 (pack bookings, validation split)", "before SFT", " seed 0:", " seed 1:", "SFT",
                 "GRPO, user in the loop", "GRPO, static user", "RFT (rejection sampling)",
                 "GRPO, user in the loop - SFT (paired, greedy)", "GRPO, user in the loop - SFT (paired, sampled)",
                 "GRPO, static user - SFT (paired, greedy)", "RFT (rejection sampling) - SFT (paired, greedy)",
                 "pooled over 2 seeds: GRPO, user in the loop - SFT (greedy)", "book_table.hour", "asked 'time'",
                 "gold conversations of split train", "teacher-forced copy, seed 1, SFT: book_table.name",
                 "verdict: "):
        assert line in done.stdout, (line, done.stdout[-3000:])
    assert "bookings test" not in done.stdout and "asked for the time" not in done.stdout
    assert (tmp_path / "learning.png").stat().st_size > 0
    assert len((tmp_path / "seed-0" / "grpo" / "metrics.jsonl").read_text().splitlines()) == 2
    assert len((tmp_path / "seed-1" / "grpo-static" / "metrics.jsonl").read_text().splitlines()) == 2


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


def test_verdict_passes_only_on_a_paired_gain_in_every_seed(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    better = fake_run(tmp_path / "better", [1] * 30 + [0] * 10)
    same = fake_run(tmp_path / "same", [1] * 10 + [0] * 30)
    assert check.report([seed(check, 0, sft, better)], tmp_path, time.monotonic()) == 0
    assert "+50.0 points" in capsys.readouterr().out
    assert check.report([seed(check, 0, sft, same)], tmp_path, time.monotonic()) == 1
    assert "verdict: FAIL" in capsys.readouterr().out
    # one seed without a gain fails the verdict, whatever the others and the pooled figure say
    assert check.report([seed(check, 0, sft, better), seed(check, 1, sft, better), seed(check, 2, sft, same)],
                        tmp_path, time.monotonic()) == 1
    out = capsys.readouterr().out
    assert "pooled over 3 seeds: GRPO, user in the loop - SFT (greedy): +33.3 points" in out
    assert "verdict: FAIL" in out and "above zero in 2 of 3 seed(s)" in out


def test_no_gradient_is_said_when_no_group_had_a_reward_spread(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    grpo_dir = tmp_path / "grpo"
    grpo_dir.mkdir()
    (grpo_dir / "metrics.jsonl").write_text("".join(json.dumps({"step": i, "reward": 0.0, "frac_reward_zero_std": 1.0})
                                                    + "\n" for i in (1, 2)))
    assert check.report([seed(check, 0, sft, sft, grpo_dir)], tmp_path, time.monotonic()) == 1
    out = capsys.readouterr().out
    assert "no gradient was taken" in out and "verdict: FAIL (no gradient was taken)" in out
    (grpo_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5, "frac_reward_zero_std": 0.5}) + "\n")
    assert check.report([seed(check, 0, sft, sft, grpo_dir)], tmp_path, time.monotonic()) == 1
    assert "no gradient" not in capsys.readouterr().out


def test_sampled_runs_average_trials_per_task_and_get_their_own_paired_interval(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    assert check.per_task(fake_run(tmp_path / "s4", [1, 0], trials=4)) == {"t0": 1.0, "t1": 0.0}
    sampled_sft = fake_run(tmp_path / "ss", [1] * 20 + [0] * 20, trials=2)
    sampled_grpo = fake_run(tmp_path / "sg", [1] * 20 + [0] * 20, trials=2)
    s = check.Seed(0, {check.SFT: check.Stage(sft, sampled_sft),
                       check.GRPO: check.Stage(fake_run(tmp_path / "g", [1] * 30 + [0] * 10), sampled_grpo)})
    assert check.report([s], tmp_path, time.monotonic()) == 0
    out = capsys.readouterr().out
    assert "(paired, greedy): +50.0 points" in out and "(paired, sampled): +0.0 points" in out


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
    check.behaviour([check.Seed(0, {check.SFT: check.Stage(run)})], {"t0": task})
    out = capsys.readouterr().out
    assert "book 0%, book.name 100%, book.hour 0%, asked 'name' 100%, asked 'time' 0%" in out


def test_unscored_and_errored_episodes_are_left_out_and_flagged(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    grpo = fake_run(tmp_path / "grpo", [1] * 30 + [0] * 8 + [None] * 2)  # two unknown rewards: not failures
    rows = (grpo / "episodes.jsonl").read_text().splitlines()
    rows[0] = json.dumps({"task_id": "t0", "reward": 0.0, "error": "endpoint down"})
    (grpo / "episodes.jsonl").write_text("\n".join(rows) + "\n")
    assert set(check.per_task(grpo)) == {f"t{i}" for i in range(1, 38)}
    assert check.report([seed(check, 0, sft, grpo)], tmp_path, time.monotonic()) == 0
    out = capsys.readouterr().out
    assert "n=37" in out and "LEFT OUT: 3 errored or unscored" in out and "over 37 tasks" in out
    assert "  SFT " in out and out.count("LEFT OUT") == 1


def test_gold_conversations_that_do_not_fit_stop_the_check_before_training(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--max-turn-tokens", "16"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert ("800 of 800 gold conversations of split train do not fit the token budgets (max_turn_tokens 16, "
            "max_completion_tokens 64): first book-000, a reply of") in done.stdout
    assert not (tmp_path / "sft").exists() and not (tmp_path / "gold").exists()


class Oracle:
    """A stand-in model whose argmax is the next token of the input, except where ``wrong(token)``."""

    def __init__(self, tokenizer, wrong=lambda text: False):
        import types

        self.tokenizer, self.wrong = tokenizer, wrong
        self.generation_config = types.SimpleNamespace(eos_token_id=tokenizer.eos_token_id)

    def eval(self):
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
