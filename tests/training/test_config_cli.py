"""`mua train` settings: YAML plus flags, the test-split refusal, and a resumable run through the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers.counter_bench import CounterBenchmark

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.registry import register_benchmark
from mua.training.config import TrainConfig, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "training" / "configs"


def test_yaml_then_flags_and_unknown_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"benchmark": "tau2", "subsets": ["retail"], "max_steps": 5}))
    cfg = load_config(str(path), {"max_steps": 9, "subsets": "retail,airline", "seed": None})
    assert (cfg.benchmark, cfg.max_steps, cfg.subsets, cfg.seed) == ("tau2", 9, ["retail", "airline"], 0)
    with pytest.raises(ConfigError, match="unknown training setting 'max_step'"):
        load_config(None, {"max_step": 3})


def test_shipped_example_config_loads():
    cfg = load_config(str(CONFIGS / "example.yaml"), {})
    assert cfg.split == "train" and cfg.batch_size % cfg.num_generations == 0
    for name in ("accelerate_ddp.yaml", "accelerate_zero2.yaml", "accelerate_zero3.yaml"):
        assert yaml.safe_load((CONFIGS / name).read_text())["num_processes"] >= 1


def test_test_split_is_refused_unless_forced(tmp_path):
    base = dict(policy=str(tmp_path), benchmark="tau2")
    for split in ("test", None):
        with pytest.raises(ConfigError, match="evaluation reports"):
            TrainConfig(split=split, **base).validate(("test", None))
    TrainConfig(split="test", allow_test_split=True, **base).validate(("test", None))
    TrainConfig(split="train", **base).validate(("test", None))


@pytest.mark.parametrize("bad, message", [
    ({"num_generations": 1}, "at least 2"), ({"batch_size": 6, "num_generations": 4}, "multiple"),
    ({"generation": "vllm_server"}, "vllm_server_url"), ({"temperature": 0.0}, "temperature"),
    ({"generation": "sglang"}, "generation must be")])
def test_invalid_settings(tmp_path, bad, message):
    with pytest.raises(ConfigError, match=message):
        TrainConfig(policy=str(tmp_path), benchmark="x", **bad).validate()


@pytest.mark.slow
def test_cli_trains_resumes_and_writes_a_loadable_checkpoint(tiny_checkpoint, tmp_path, capsys):
    register_benchmark(CounterBenchmark(n_tasks=2))
    out = tmp_path / "run"
    args = ["train", "--benchmark", "counter", "--policy", str(tiny_checkpoint), "--output-dir", str(out),
            "--subsets", "easy", "--user-model", "scripted", "--num-generations", "2", "--batch-size", "4",
            "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--save-steps", "1", "--no-progress",
            "--data-dir", str(tmp_path)]
    assert main(args + ["--split", "test"]) == 2
    assert "refusing to train" in capsys.readouterr().err
    assert main(args + ["--max-steps", "1"]) == 0
    assert (out / "checkpoint-1").is_dir()
    assert main(args + ["--max-steps", "2"]) == 0  # resumes from checkpoint-1
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2]
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    assert "mua eval" in capsys.readouterr().out
    # the output is a normal checkpoint: the eval backend loads it with its chat template
    from mua.harness.models.transformers_backend import TransformersChatModel

    model = TransformersChatModel(out, max_new_tokens=4)
    assert model.tokenizer.chat_template and (out / "config.json").is_file()
