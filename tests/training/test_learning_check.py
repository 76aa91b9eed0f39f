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
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_smoke_runs_end_to_end(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--smoke"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    for line in ("before SFT", "after SFT", "after GRPO", "user out of the loop", "GRPO - SFT (paired)",
                 "needing the user", "verdict: "):
        assert line in done.stdout, done.stdout[-3000:]
    assert (tmp_path / "learning.png").stat().st_size > 0
    assert len((tmp_path / "grpo" / "metrics.jsonl").read_text().splitlines()) == 2


def fake_run(folder: Path, passes: list) -> Path:
    folder.mkdir()
    rows = [{"task_id": f"t{i}", "reward": None if p is None else float(p), "error": None}
            for i, p in enumerate(passes)]
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_verdict_passes_only_on_a_paired_gain(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    better = fake_run(tmp_path / "better", [1] * 30 + [0] * 10)
    same = fake_run(tmp_path / "same", [1] * 10 + [0] * 30)
    assert check.report({"after SFT": sft, "after GRPO": better}, tmp_path, time.monotonic()) == 0
    assert "+50.0 points" in capsys.readouterr().out
    assert check.report({"after SFT": sft, "after GRPO": same}, tmp_path, time.monotonic()) == 1
    assert "verdict: FAIL" in capsys.readouterr().out


def test_unscored_and_errored_episodes_are_left_out_and_flagged(tmp_path, capsys):
    check = load_script()
    sft = fake_run(tmp_path / "sft", [1] * 10 + [0] * 30)
    grpo = fake_run(tmp_path / "grpo", [1] * 30 + [0] * 8 + [None] * 2)  # two unknown rewards: not failures
    rows = (grpo / "episodes.jsonl").read_text().splitlines()
    rows[0] = json.dumps({"task_id": "t0", "reward": 0.0, "error": "endpoint down"})
    (grpo / "episodes.jsonl").write_text("\n".join(rows) + "\n")
    assert set(check.per_task(grpo)) == {f"t{i}" for i in range(1, 38)}
    assert check.report({"after SFT": sft, "after GRPO": grpo}, tmp_path, time.monotonic()) == 0
    out = capsys.readouterr().out
    assert "n=37" in out and "LEFT OUT: 3 errored or unscored" in out and "over 37 tasks" in out
    assert "  after SFT" in out and out.count("LEFT OUT") == 1


def test_gold_conversations_that_do_not_fit_stop_the_check_before_training(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--max-turn-tokens", "16"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert ("800 of 800 gold conversations of split train do not fit the token budgets (max_turn_tokens 16, "
            "max_completion_tokens 64): first book-000, a reply of") in done.stdout
    assert not (tmp_path / "sft").exists() and not (tmp_path / "gold").exists()
