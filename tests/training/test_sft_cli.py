"""`mua sft` reads its settings with TRL's parser (every SFTConfig field, LoRA under TRL's names), leaves the
device and precision to TRL, checkpoints atomically, stops on Ctrl-C at a step end and resumes from there."""
from __future__ import annotations

import json
import os
import signal
from unittest import mock

import pytest

from mua.harness.cli import main

pytest.importorskip("trl")
pytest.importorskip("datasets")


def _args(policy, dataset, out, *extra) -> list[str]:
    return ["--policy", str(policy), "--dataset", str(dataset), "--output-dir", str(out), "--batch-size", "2",
            "--no-progress", *map(str, extra)]


def test_help_lists_mua_then_lora_then_trl_settings(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["sft", "--help-all"])  # every setting; --help is the short list
    assert stop.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--policy", "--dataset", "--use_peft", "--lora_r", "--lora_target_modules", "--lr_scheduler_type",
                 "--gradient_accumulation_steps", "--report_to", "--resume_from_checkpoint", "--bf16"):
        assert flag in text, flag
    assert text.index("mua sft's settings") < text.index("--policy") < text.index("LoRA") \
        < text.index("--use_peft") < text.index("TRL's SFTConfig settings") < text.index("--lr_scheduler_type")


def test_both_flag_spellings_and_a_config_file(tmp_path):
    from mua.training.sft_config import parse_sft_config

    (tmp_path / "sft.yaml").write_text("policy: p\ndataset: d\nlearning_rate: 1.0e-4\nlr_scheduler_type: cosine\n"
                                       "use_peft: true\nlora_r: 4\nlora_target_modules: [q_proj, v_proj]\n")
    cfg = parse_sft_config(["--config", str(tmp_path / "sft.yaml"), "--output_dir", "a", "--max-steps", "3"])
    assert (cfg.output_dir, cfg.max_steps, cfg.learning_rate, cfg.lora_r) == ("a", 3, 1e-4, 4)
    assert cfg.lr_scheduler_type.value == "cosine" and cfg.lora_target_modules == ["q_proj", "v_proj"]
    assert cfg.peft_config().r == 4
    assert parse_sft_config(["--output-dir", "b"]).output_dir == "b"


def test_bad_settings_are_one_line(tmp_path, capsys):
    (tmp_path / "bad.yaml").write_text("policy: p\nlearning_rat: 1\n")
    assert main(["sft", "--config", str(tmp_path / "bad.yaml")]) == 2
    assert "unknown sft setting in the config file" in capsys.readouterr().err
    assert main(["sft", "--policy", "p", "--learning-rate", "x"]) == 2
    assert "learning_rate" in capsys.readouterr().err


def _cuda_machine():
    """torch and transformers see a bf16-capable GPU (the config is checked, nothing runs on it)."""
    import torch
    import transformers.training_args as targs

    return [mock.patch.object(torch.cuda, "is_available", return_value=True),
            mock.patch.object(targs, "is_torch_bf16_gpu_available", return_value=True),
            mock.patch.object(targs.TrainingArguments, "device", new=property(lambda self: torch.device("cuda")))]


def test_a_gpu_is_used_when_there_is_one_with_trl_precision():
    from mua.training.sft_config import parse_sft_config

    on_cpu = parse_sft_config(["--policy", "p"])
    assert on_cpu.use_cpu and not on_cpu.bf16  # no CUDA here: float32 on the CPU unless asked
    patches = _cuda_machine()
    for p in patches:
        p.start()
    try:
        default = parse_sft_config(["--policy", "p"])
        assert not default.use_cpu and default.bf16  # TRL's default on a GPU
        assert parse_sft_config(["--policy", "p", "--bf16", "true"]).bf16
        off = parse_sft_config(["--policy", "p", "--bf16", "false"])
        assert not off.use_cpu and not off.bf16
    finally:
        for p in reversed(patches):
            p.stop()
    assert parse_sft_config(["--policy", "p", "--bf16", "true"]).bf16  # asked for on the CPU too


def _interrupting_trainer(at_step: int):
    from transformers import TrainerCallback
    from trl import SFTTrainer

    class Interrupt(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == at_step:
                os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C during that step

    class Trainer(SFTTrainer):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.add_callback(Interrupt())

    return Trainer


def _weights(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def test_ctrl_c_saves_the_step_and_the_same_command_resumes_to_the_same_weights(tiny_checkpoint, exported,
                                                                                 tmp_path, capsys):
    from mua.training.sft import SftInterrupted, sft_train
    from mua.training.sft_config import parse_sft_config

    ds = exported / "ds"
    straight = tmp_path / "straight"
    assert main(["sft", *_args(tiny_checkpoint, ds, straight, "--max-steps", 3, "--save-steps", 10)]) == 0
    assert "3 steps" in capsys.readouterr().out

    out = tmp_path / "stopped"
    cfg = parse_sft_config(_args(tiny_checkpoint, ds, out, "--max-steps", 3, "--save-steps", 10))
    with pytest.raises(SftInterrupted, match="checkpoint-1"):
        sft_train(cfg, trainer_cls=_interrupting_trainer(1))
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("checkpoint-")) == ["checkpoint-1"]
    assert not (out / ".saving").exists() and not (out / "model.safetensors").exists()
    assert json.loads((out / "sft_config.json").read_text())["max_steps"] == 3

    assert main(["sft", *_args(tiny_checkpoint, ds, out, "--max-steps", 3, "--save-steps", 10)]) == 0
    captured = capsys.readouterr()
    assert "resuming the run" in captured.err and "checkpoint-1" in captured.err and "3 steps" in captured.out
    a, b = _weights(straight), _weights(out)
    assert a.keys() == b.keys() and all(a[k].equal(b[k]) for k in a)

    # another setting that changes what is trained is refused, naming it
    assert main(["sft", *_args(tiny_checkpoint, ds, out, "--max-steps", 3, "--learning-rate", 1e-3)]) == 2
    assert "learning_rate" in capsys.readouterr().err


def test_the_example_config_reads():
    from pathlib import Path

    from mua.training.sft_config import parse_sft_config

    example = Path(__file__).resolve().parents[2] / "training/configs/sft.yaml"
    cfg = parse_sft_config(["--config", str(example)])
    assert cfg.use_peft and cfg.peft_config().r == 16 and cfg.min_reward == 1.0 and cfg.max_steps == 300


def test_an_interrupted_run_exits_130_saying_how_to_resume(monkeypatch, capsys):
    from mua.training import sft

    def interrupted(cfg):
        raise sft.SftInterrupted("interrupted: checkpoint-1 (the last finished step) is in o; re-run the same "
                                 "command to resume from it")
    monkeypatch.setattr(sft, "sft_train", interrupted)
    assert main(["sft", "--policy", "p", "--dataset", "d"]) == 130
    assert "mua sft: interrupted: checkpoint-1" in capsys.readouterr().err


def test_a_resume_on_changed_data_is_refused_in_one_line_before_the_model_loads(tiny_checkpoint, exported, tmp_path,
                                                                                 capsys, monkeypatch):
    """sft_config.json records the dataset's checksums (as a run protocol records its data); a resumed `mua sft`
    compares them by the one "same run?" rule (plan.run_differences), as a resumed `mua train` compares its tasks."""
    import shutil

    from mua.training import sft

    ds, out = tmp_path / "ds", tmp_path / "out"
    shutil.copytree(exported / "ds", ds)
    assert main(["sft", *_args(tiny_checkpoint, ds, out, "--max-steps", 1, "--save-steps", 1)]) == 0
    recorded = json.loads((out / "sft_config.json").read_text())["data"]["files"]
    assert sorted(recorded) == sorted(f"ds/{p.name}" for p in ds.iterdir()) and all(len(v) == 64 for v in
                                                                                     recorded.values())
    capsys.readouterr()
    rows = sft.read_rows(ds)[:4]  # the same path now holds other rows
    shutil.rmtree(ds)
    import datasets

    datasets.Dataset.from_list(rows).save_to_disk(str(ds))
    capsys.readouterr()  # the save's progress bar

    def no_model(*a, **k):
        raise AssertionError("the model loaded before the data was compared")
    monkeypatch.setattr(sft, "load_policy", no_model)
    assert main(["sft", *_args(tiny_checkpoint, ds, out, "--max-steps", 1, "--save-steps", 1)]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds a run trained on other data than" in err and "\n" not in err
