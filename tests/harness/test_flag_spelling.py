"""Every flag is accepted as --flag-name and --flag_name by every command, and the output directory as --out or
--output-dir whichever the command calls it."""
import json
from pathlib import Path

import pytest

from mua.harness.cli import main
from mua.harness.cli.spelling import one_spelling

PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def test_spellings_are_one_flag():
    assert one_spelling(["-v", "eval", "--data_dir", "d", "--output_dir=o", "--agent-params", '{"a_b": 1}']) == [
        "-v", "eval", "--data-dir", "d", "--out=o", "--agent-params", '{"a_b": 1}']
    assert one_spelling(["train", "--out", "o", "--max_steps", "2", "--", "x_y"]) == [
        "train", "--output-dir", "o", "--max-steps", "2", "--", "x_y"]


def test_eval_takes_trl_style_spellings(tmp_path):
    out = tmp_path / "gold"
    assert main(["eval", "--benchmark", "pack", "--data_dir", str(PACK), "--agent", "gold", "--split", "test",
                 "--limit", "1", "--output_dir", str(out), "--no_progress"]) == 0
    assert json.loads((out / "config.json").read_text())["split"] == "test"


def test_train_and_sft_take_out():
    pytest.importorskip("trl")
    from mua.training.config import parse_config
    from mua.training.sft_config import parse_sft_config

    assert parse_config(one_spelling(["train", "--out", "a"])[1:]).output_dir == "a"
    assert parse_sft_config(one_spelling(["sft", "--out", "b"])[1:]).output_dir == "b"
