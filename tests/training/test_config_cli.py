"""`mua train` settings: YAML plus flags, the test-split refusal, and a resumable run through the CLI."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from helpers.counter_bench import CounterBenchmark

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.registry import open_benchmark, register_benchmark
from mua.training.config import TrainConfig, parse_config

CONFIGS = Path(__file__).resolve().parents[2] / "training" / "configs"


def load_config(path, flags=()):
    return parse_config((["--config", str(path)] if path else []) + list(flags))


def test_yaml_then_flags_and_unknown_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"benchmark": "tau2", "subsets": ["retail"], "max_steps": 5, "bf16": True}))
    cfg = load_config(path, ["--max-steps", "9", "--subsets", "retail,airline", "--bf16", "false"])
    assert (cfg.benchmark, cfg.max_steps, cfg.subsets, cfg.seed, cfg.bf16) == ("tau2", 9, ["retail", "airline"], 0,
                                                                               False)
    with pytest.raises(ConfigError, match="unknown train setting in the config file: .*max_step"):
        path.write_text("max_step: 3\n")
        load_config(path)
    path.write_text("max_steps: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read the config file"):
        load_config(path.with_name("missing.yaml"))
    path.write_text("- a list\n")
    with pytest.raises(ConfigError, match="must contain a YAML mapping"):
        load_config(path)
    with pytest.raises(ConfigError, match="unknown flags: .*--max-step"):
        load_config(None, ["--max-step", "3"])


def test_every_trl_option_is_a_setting_and_mua_names_stand_for_trl_fields(tmp_path):
    """TRL's own fields (scheduler, warm-up, weight decay, loggers) need no copying: YAML keys and flags."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"benchmark": "x", "lr_scheduler_type": "cosine", "warmup_steps": 3,
                                    "weight_decay": 0.1, "report_to": ["tensorboard"], "batch_size": 6,
                                    "num_generations": 3, "max_turn_tokens": 32}))
    cfg = load_config(path, ["--adam_beta2", "0.95", "--generation", "transformers", "--no-progress"])
    assert (cfg.lr_scheduler_type.value, cfg.warmup_steps, cfg.weight_decay, cfg.report_to, cfg.adam_beta2) == (
        "cosine", 3, 0.1, ["tensorboard"], 0.95)
    assert (cfg.per_device_train_batch_size, cfg.max_completion_length, cfg.disable_tqdm) == (6, 32, True)
    from trl import GRPOConfig

    assert isinstance(cfg, GRPOConfig)  # handed to GRPOTrainer as its args, nothing copied


def test_shipped_example_config_loads():
    cfg = load_config(CONFIGS / "example.yaml")
    assert cfg.split == "train" and cfg.batch_size % cfg.num_generations == 0
    for name in ("accelerate_ddp.yaml", "accelerate_zero2.yaml", "accelerate_zero3.yaml"):
        assert yaml.safe_load((CONFIGS / name).read_text())["num_processes"] >= 1


@pytest.mark.parametrize("bench_name, split", [
    ("tau2", "test"), ("tau2", None), ("tau2", "base"), ("tau2", ""), ("tau2", "full"),
    ("bfcl_v3", "train"), ("bfcl_v3", ""), ("bfcl_v3", None), ("bfcl_v3", "v3"), ("bfcl_v3", "v4"),
    ("bfcl_v3", "base"), ("acebench", None), ("acebench", "train")])
def test_only_a_train_split_passes_the_guard(tiny_checkpoint, bench_name, split):
    """An allow-list: every split but the benchmark's own train split is refused (BFCL and ACEBench have
    none), unless forced or divided by a split file."""
    bench = open_benchmark(bench_name, Path("."))
    base = dict(policy=str(tiny_checkpoint), benchmark=bench_name, split=split, user_model="m")
    with pytest.raises(ConfigError, match="refusing to train on .*only a train split passes"):
        TrainConfig(**base).validate_for(bench)
    TrainConfig(allow_test_split=True, **base).validate_for(bench)


def test_tau2_train_split_passes(tiny_checkpoint):
    TrainConfig(policy=str(tiny_checkpoint), benchmark="tau2", split="train", user_model="m").validate_for(
        open_benchmark("tau2", Path(".")))


def test_split_file_trains_only_on_its_train_ids(tiny_checkpoint, tmp_path, data_dir):
    from mua.training.grpo import load_training_tasks

    bench = open_benchmark("bfcl_v3", data_dir)
    split = tmp_path / "split.yaml"
    split.write_text(yaml.safe_dump({"train": ["multi_turn_base_1", "multi_turn_base_3"],
                                     "held_out": ["multi_turn_base_0"]}))
    cfg = TrainConfig(policy=str(tiny_checkpoint), benchmark="bfcl_v3", split=None, split_file=str(split),
                      subsets=["multi_turn_base"]).validate_for(bench)
    assert [t.id for t in load_training_tasks(bench, cfg)] == ["multi_turn_base_1", "multi_turn_base_3"]
    assert parse_config(["--split", "", "--split-file", str(split)]).split is None  # a flag's "no split"
    cfg.task_ids = ["multi_turn_base_0"]
    with pytest.raises(ConfigError, match="not among the train ids"):
        load_training_tasks(bench, cfg)
    ace = open_benchmark("acebench", data_dir)
    split.write_text(json.dumps({"train": ["agent_multi_step_1"], "held_out": ["agent_multi_step_0"]}))
    cfg = TrainConfig(policy=str(tiny_checkpoint), benchmark="acebench", split=None, split_file=str(split),
                      subsets=["agent_multi_step_en"], user_model="m").validate_for(ace)
    assert [t.id for t in load_training_tasks(ace, cfg)] == ["agent_multi_step_1"]
    for bad, message in [({"train": ["a"], "held_out": ["a"]}, "both in train and held_out"),
                         ({"train": ["a"]}, "exactly the keys"), ({"train": [], "held_out": []}, "names no task")]:
        split.write_text(yaml.safe_dump(bad))
        with pytest.raises(ConfigError, match=message):
            TrainConfig(policy=str(tiny_checkpoint), benchmark="bfcl_v3", split_file=str(split)).validate_for(bench)


@pytest.mark.parametrize("bad, message", [
    ({"num_generations": 1}, "at least 2"), ({"batch_size": 6, "num_generations": 4}, "multiple"),
    ({"generation": "vllm_server"}, "vllm_server_url"), ({"temperature": 0.0}, "temperature"),
    ({"generation": "sglang"}, "generation must be"), ({"limit": 0}, "limit must be at least 1"),
    ({"limit": -1}, "limit must be at least 1"), ({"max_turns": 0}, "max_turns must be at least 1"),
    ({"top_p": 1.5}, "top_p"), ({"num_generations": "4"}, "num_generations must be an integer"),
    ({"loss_type": "ppo"}, "loss_type must be one of grpo, dr_grpo, dapo"),
    ({"dynamic_sampling": -1}, "dynamic_sampling must be >= 0")])
def test_invalid_settings(tiny_checkpoint, bad, message):
    with pytest.raises(ConfigError, match=message):
        TrainConfig(policy=str(tiny_checkpoint), benchmark="x", **bad).validate()


@pytest.mark.parametrize("text, key, expected", [
    ("learning_rate: 1e-6", "learning_rate", 1e-6),  # PyYAML reads 1e-6 as a string
    ("temperature: '1'", "temperature", 1.0), ("task_ids: [105, '7']", "task_ids", ["105", "7"]),
    ("split: null", "split", None), ("subsets: retail, airline", "subsets", ["retail", "airline"])])
def test_values_are_converted_to_their_setting_type(tmp_path, text, key, expected):
    path = tmp_path / "c.yaml"
    path.write_text(text + "\n")
    value = getattr(load_config(path), key)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text, message", [
    ("num_generations: four", "argument --num_generations/--num-generations: invalid int value: 'four'"),
    ("limit: [3]", "limit must be an integer, or null; got [3]"),
    ("subsets: 5", "subsets must be a list of strings"), ("max_steps: 1.5", "max_steps must be an integer"),
    ("beta: null", "beta must be a number, not null"), ("user_params: hot", "user_params must be a mapping"),
    ("learning_rate: fast", "--learning_rate/--learning-rate: invalid float value"),
    ("learning_rate: .nan", "learning_rate"), ("bf16: 'maybe'", "argument --bf16: Truthy value expected"),
    ("bf16: 2", "bf16 must be true or false"), ("task_ids: [1.5]", "task_ids must be a list of strings"),
    ("resume: 1", "resume must be true or false")])
def test_values_of_the_wrong_type_name_the_key(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(path)


def test_scripted_user_is_refused_where_the_benchmark_needs_a_user_model(tiny_checkpoint):
    tau2 = open_benchmark("tau2", Path("."))
    base = dict(policy=str(tiny_checkpoint), benchmark="tau2", subsets=["telecom"])
    with pytest.raises(ConfigError, match="needs a user model: set user_model.*performs the fixes itself"):
        TrainConfig(**base).validate_for(tau2)
    with pytest.raises(ConfigError, match="scripted refused.*allow_scripted_user"):
        TrainConfig(user_model="scripted", **base).validate_for(tau2)
    TrainConfig(user_model="scripted", allow_scripted_user=True, **base).validate_for(tau2)
    TrainConfig(user_model="gpt-4.1-mini", **base).validate_for(tau2)
    with pytest.raises(ConfigError, match="no subset 'shop'"):
        TrainConfig(**{**base, "subsets": ["shop"]}).validate_for(tau2)


def test_cli_refuses_the_scripted_user_and_bad_policy_dirs_before_writing(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--benchmark", "tau2", "--subsets", "telecom", "--output-dir", str(out), "--limit", "1",
            "--num-generations", "2", "--batch-size", "2", "--max-steps", "1", "--data-dir", str(tmp_path)]
    assert main(args + ["--policy", str(tiny_checkpoint)]) == 2
    assert "needs a user model" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(args + ["--policy", str(empty), "--user-model", "m"]) == 2
    assert "not a model checkpoint: no config.json" in capsys.readouterr().err
    (empty / "config.json").write_text("{}")
    assert main(args + ["--policy", str(empty), "--user-model", "m"]) == 2
    assert "no tokenizer files" in capsys.readouterr().err
    assert not out.exists()


def test_unloadable_checkpoint_is_a_config_error_and_nothing_is_written(tmp_path):
    from mua.training.grpo import train

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text('{"model_type": "no-such-architecture"}')
    (bad / "tokenizer_config.json").write_text("{}")
    cfg = TrainConfig(policy=str(bad), benchmark="counter", output_dir=str(tmp_path / "run"), subsets=["easy"],
                      allow_scripted_user=True, num_generations=2, batch_size=2).validate()
    with pytest.raises(ConfigError, match=f"policy {bad}: cannot load"):
        train(cfg, CounterBenchmark(n_tasks=1))
    assert not (tmp_path / "run" / "train_config.json").exists()


def test_unknown_task_ids_are_refused(tiny_checkpoint):
    from mua.training.grpo import load_training_tasks

    bench = CounterBenchmark(n_tasks=3)
    cfg = TrainConfig(policy=str(tiny_checkpoint), benchmark="counter", subsets=["easy"], task_ids=["1", "99"])
    with pytest.raises(ConfigError, match="task ids not found in counter easy \\(split train\\): 99"):
        load_training_tasks(bench, cfg)
    cfg.task_ids, cfg.limit = ["1", "2"], 1
    assert [t.id for t in load_training_tasks(bench, cfg)] == ["1"]


@pytest.mark.slow
def test_cli_trains_resumes_and_writes_a_loadable_checkpoint(tiny_checkpoint, tmp_path, capsys):
    register_benchmark(CounterBenchmark, n_tasks=2)
    out = tmp_path / "run"
    args = ["train", "--benchmark", "counter", "--policy", str(tiny_checkpoint), "--output-dir", str(out),
            "--subsets", "easy", "--allow-scripted-user", "--num-generations", "2", "--batch-size", "4",
            "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--save-steps", "1", "--no-progress",
            "--data-dir", str(tmp_path), "--lr-scheduler-type", "constant"]  # a TRL flag; lets max_steps grow
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
    # one directory, one run: no silent restart over it, no resume with other settings
    assert main(args + ["--max-steps", "1", "--no-resume"]) == 2
    assert "--no-resume does not delete it" in capsys.readouterr().err
    assert main(args + ["--max-steps", "3", "--num-generations", "4"]) == 2
    assert "num_generations: 2 -> 4" in capsys.readouterr().err
    # a run killed after logging step 3 but before saving it: the resumed run logs step 3 once
    with (out / "metrics.jsonl").open("a") as f:
        f.write(json.dumps({"step": 3, "reward": 9.0}) + "\n")
    assert main(args + ["--max-steps", "3"]) == 0
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3] and metrics[-1]["reward"] != 9.0
    recorded = json.loads((out / "train_config.json").read_text())
    assert recorded["max_steps"] == 3 and recorded["trained_tasks"] == ["easy/0", "easy/1"]
    # an evaluation of the trained model records which split it was trained on
    from mua.harness.run.build import trained_on

    assert trained_on(str(out)) == {
        "benchmark": "counter", "subsets": ["easy"], "split": "train", "split_file": None,
        "allow_test_split": False, "trained_tasks": ["easy/0", "easy/1"]}
    # the output is a normal checkpoint: the eval backend loads it with its chat template
    from mua.harness.models.transformers_backend import TransformersChatModel

    model = TransformersChatModel(out, max_new_tokens=4)
    assert model.tokenizer.chat_template and (out / "config.json").is_file()


def test_a_busy_master_port_is_one_line(tmp_path):
    """Under torchrun TRL's parser joins torch.distributed; a port already taken is the user's to fix."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        env = dict(os.environ, RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(busy.getsockname()[1]), PYTHONWARNINGS="ignore")
        done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; "
                               "sys.exit(main(sys.argv[1:]))", "train", "--benchmark", "counter",
                               "--output_dir", str(tmp_path / "out")], env=env, capture_output=True, text=True,
                              timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert "torch.distributed could not start at MASTER_ADDR:MASTER_PORT 127.0.0.1:" in lines[0]


@pytest.mark.parametrize("loss_type", ["dr_grpo", "dapo", "grpo", "bnpo"])
def test_trls_loss_variants_and_dynamic_sampling_are_settings_that_reach_the_trainer(tiny_checkpoint, tmp_path,
                                                                                     loss_type):
    """TRL's own loss_type (Dr. GRPO, DAPO, ...) is a `mua train` flag or YAML key: no mua code in between; mua's
    dynamic_sampling reaches the rollout function with the group size."""
    from mua.benchmarks.pack import PackBenchmark
    from mua.training.grpo import build_trainer

    bookings = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
    cfg = load_config(None, ["--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data_dir", str(bookings),
                             "--loss_type", loss_type, "--output_dir", str(tmp_path / "out"), "--max_steps", "1",
                             "--batch_size", "2", "--num_generations", "2", "--max_turn_tokens", "16",
                             "--dynamic_sampling", "3"])
    assert cfg.loss_type == loss_type
    bench = PackBenchmark(bookings)
    trainer, rollout = build_trainer(cfg, bench, bench.load_tasks("tasks", "train")[:2])
    assert trainer.loss_type == loss_type and trainer.args.loss_type == loss_type
    assert (rollout.dynamic_sampling, rollout.group) == (3, 2)
