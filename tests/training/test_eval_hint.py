"""The command `mua train` prints at the end scores the trained model on the held-out tasks, and runs as
printed: the pack's data directory, tau2's test split and user simulator, a split file's held-out ids."""
from __future__ import annotations

import json
import shlex
import shutil

import pytest
from training_fakes import BOOKINGS_PACK

from mua.harness.cli import build_parser, main

pytest.importorskip("trl")


def _small_pack(tmp_path):
    """The bookings pack with 2 train tasks and 1 test task, so the printed command runs in seconds."""
    pack = tmp_path / "pack"
    shutil.copytree(BOOKINGS_PACK, pack, ignore=shutil.ignore_patterns("__pycache__"))
    splits = json.loads((pack / "splits.json").read_text())
    (pack / "splits.json").write_text(json.dumps({"train": splits["train"][:2], "test": splits["test"][:1]}))
    return pack


def test_the_printed_command_runs_as_printed_on_a_pack(tiny_checkpoint, tmp_path, capsys, monkeypatch):
    pack, out = _small_pack(tmp_path), tmp_path / "grpo"
    assert main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data-dir", str(pack),
                 "--split", "train", "--output-dir", str(out), "--max-steps", "1", "--num-generations", "2",
                 "--batch-size", "2", "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--save-steps",
                 "10", "--no-progress"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    argv = shlex.split(printed)
    assert argv[:2] == ["mua", "eval"] and ["--data-dir", str(pack)] == argv[argv.index("--data-dir"):][:2]
    monkeypatch.chdir(tmp_path)  # the default --out (results/...) lands here
    assert main(argv[1:] + ["--agent-params", '{"max_tokens": 8}']) in (0, 1)  # reply length only: speed
    run = next((tmp_path / "results").iterdir())
    config = json.loads((run / "config.json").read_text())
    assert config["split"] == "test" and config["tasks"] == {"tasks": [json.loads(
        (pack / "splits.json").read_text())["test"][0]]}
    assert all(json.loads(line)["error"] is None for line in (run / "episodes.jsonl").read_text().splitlines())


def _eval_plan(argv: list[str]):
    from mua.harness.cli.eval import plan_from_args
    from mua.harness.registry import benchmark_class

    assert argv[:2] == ["mua", "eval"]
    args = build_parser().parse_args(argv[1:])
    bench = benchmark_class(args.benchmark)
    return plan_from_args(args, bench.subsets, bench.default_split), args


def test_tau2_command_scores_the_test_split_with_the_training_user(data_dir, tmp_path):
    from mua.harness.registry import open_benchmark
    from mua.training.config import TrainConfig
    from mua.training.hint import eval_command

    bench = open_benchmark("tau2", data_dir)
    cfg = TrainConfig(benchmark="tau2", subsets=["retail"], data_dir=str(data_dir), user_model="gpt-4.1-mini",
                      user_base_url="http://10.0.0.1:8000/v1", judge_model="judge", output_dir=str(tmp_path))
    (tmp_path / "out").mkdir()
    plan, args = _eval_plan(eval_command(cfg, bench, tmp_path / "out"))
    assert plan.split == "test" and plan.subsets == ["retail"] and args.data_dir == str(data_dir)
    assert plan.user.name == "gpt-4.1-mini" and plan.user.base_url == "http://10.0.0.1:8000/v1"
    assert plan.judge.name == "judge" and plan.agent.name == str(tmp_path / "out")
    trained = {t.id for t in bench.load_tasks("retail", "train")}
    assert trained and not trained & {t.id for t in bench.load_tasks("retail", "test")}


def test_split_file_command_scores_the_held_out_ids(data_dir, tmp_path):
    from mua.harness.registry import open_benchmark
    from mua.training.config import TrainConfig
    from mua.training.hint import eval_command

    (tmp_path / "split.json").write_text(json.dumps({"train": ["a"], "held_out": ["b", "c"]}))
    bench = open_benchmark("acebench", data_dir)
    cfg = TrainConfig(benchmark="acebench", subsets=["agent_multi_turn_en"], split=None, user_model="u",
                      split_file=str(tmp_path / "split.json"), output_dir=str(tmp_path),
                      allow_protocol_departure=True, user_params={"temperature": 0.0})
    (tmp_path / "out").mkdir()
    plan, _ = _eval_plan(eval_command(cfg, bench, tmp_path / "out"))
    assert plan.task_ids == ["b", "c"] and plan.split is None
    assert plan.user.params == {"temperature": 0.0}  # the departure training made, so eval plays the same user
