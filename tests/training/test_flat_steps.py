"""A GRPO step in which every group scored the same learns nothing: `mua train` says so on the step's line, and
after ``stop_after_flat_steps`` such steps in a row stops with advice, its checkpoint and model saved."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from mua.training.progress import NO_GRADIENT, StepLog, is_flat

pytest.importorskip("trl", reason="GRPO training needs trl")

BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def _log(step_log: StepLog, step: int, share: float) -> SimpleNamespace:
    control = SimpleNamespace(should_training_stop=False, should_save=False)
    state = SimpleNamespace(is_world_process_zero=True, global_step=step)
    step_log.on_log(None, state, control, logs={"reward": 0.0, "frac_reward_zero_std": share})
    return control


def test_flat_steps_are_counted_in_a_row_and_a_spread_starts_again(tmp_path, capsys):
    log = StepLog(tmp_path, echo=True, stop_after_flat=3)
    assert not _log(log, 1, 1.0).should_training_stop
    assert not _log(log, 2, 1.0).should_training_stop
    assert not _log(log, 3, 0.5).should_training_stop  # one group had a spread: the count starts again
    lines = capsys.readouterr().out.splitlines()
    assert [NO_GRADIENT in line for line in lines] == [True, True, False]
    assert lines[0].startswith("step 1: reward=0")
    assert not _log(log, 4, 1.0).should_training_stop and not _log(log, 5, 1.0).should_training_stop
    control = _log(log, 6, 1.0)
    assert control.should_training_stop and control.should_save and log.stopped_flat == 6
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [is_flat(r) for r in rows] == [True, True, False, True, True, True]


def test_a_row_covering_several_steps_counts_them_and_zero_never_stops(tmp_path):
    log = StepLog(tmp_path, echo=False, stop_after_flat=4)
    log.on_train_begin(None, SimpleNamespace(global_step=10), None)  # resumed at step 10
    assert not _log(log, 12, 1.0).should_training_stop  # logging_steps 2: the row covers steps 11 and 12
    assert _log(log, 14, 1.0).should_training_stop
    never = StepLog(tmp_path / "b", echo=False, stop_after_flat=0)
    assert not any(_log(never, step, 1.0).should_training_stop for step in range(1, 30))


def test_a_negative_setting_is_refused():
    from mua.harness.errors import ConfigError
    from mua.training.config import TrainConfig

    with pytest.raises(ConfigError, match="stop_after_flat_steps must be >= 0, got -1"):
        TrainConfig(stop_after_flat_steps=-1)


@pytest.mark.slow
def test_mua_train_stops_after_flat_steps_with_a_checkpoint_and_one_final_line(tiny_checkpoint, tmp_path, capsys):
    """The untrained tiny policy fails every bookings task: every group scores 0 at every step."""
    from mua.harness.cli import main
    from mua.training.checkpoints import last_complete_checkpoint

    out = tmp_path / "out"
    code = main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data_dir", str(BOOKINGS),
                 "--split", "train", "--limit", "2", "--output_dir", str(out), "--max_steps", "5",
                 "--num_generations", "2", "--batch_size", "2", "--max_turn_tokens", "8", "--max_turns", "1",
                 "--bf16", "false", "--save_steps", "100", "--stop_after_flat_steps", "2"])
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 3, captured.err[-2000:]
    assert err[-1].startswith("mua train: stopped at step 2 of 5: 2 steps in a row had every group score the same")
    assert "--num_generations" in err[-1] and "--stop_after_flat_steps 0" in err[-1]
    steps = [line for line in captured.out.splitlines() if line.startswith("step ")]
    assert len(steps) == 2 and all(NO_GRADIENT in line for line in steps)
    assert Path(str(last_complete_checkpoint(out))).name == "checkpoint-2"
    assert (out / "config.json").is_file() and list(out.glob("*.safetensors"))  # the final model, loadable
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and all(is_flat(r) for r in rows)
