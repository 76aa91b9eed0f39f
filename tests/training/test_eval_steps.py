"""`mua train --eval-steps N` (training/evaluation.py): every N steps the policy is scored on the held-out
(validation) tasks by `mua eval`'s own runner into OUTPUT/evals/step-N, the scores land in metrics.jsonl with
the step and are drawn in the training curves. The tiny policy on CPU, two steps, evaluation every step."""
from __future__ import annotations

import json
import shutil

import pytest
from training_fakes import BOOKINGS_PACK

from mua.harness.cli import main
from mua.harness.results.results_api import load_runs
from tests.helpers.browser import dump_dom

pytest.importorskip("trl", reason="mua train needs trl")


def _small_pack(tmp_path):
    pack = tmp_path / "pack"
    shutil.copytree(BOOKINGS_PACK, pack, ignore=shutil.ignore_patterns("__pycache__"))
    splits = json.loads((pack / "splits.json").read_text())
    (pack / "splits.json").write_text(json.dumps({"train": splits["train"][:2], "validation": splits["validation"][:3],
                                                  "test": splits["test"][:1]}))
    return pack, splits["validation"][:3]


def _train(tiny_checkpoint, pack, out, *extra: str) -> int:
    return main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data-dir", str(pack),
                 "--split", "train", "--output-dir", str(out), "--max-steps", "2", "--num-generations", "2",
                 "--batch-size", "2", "--max-turn-tokens", "8", "--max-completion-tokens", "24", "--save-steps",
                 "10", "--no-progress", *extra])


def test_eval_steps_scores_the_validation_split_through_the_eval_runner(tiny_checkpoint, tmp_path, capsys):
    pack, validation = _small_pack(tmp_path)
    out = tmp_path / "grpo"
    assert _train(tiny_checkpoint, pack, out, "--eval-steps", "1", "--eval-limit", "2") == 0
    assert "every 1 steps, 2 held-out tasks are scored" in capsys.readouterr().err
    runs = load_runs(out / "evals")  # each evaluation is a `mua eval` run directory
    assert [r.path.name for r in runs] == ["step-1", "step-2"]
    for run in runs:
        assert run.config["split"] == "validation" and run.config["tasks"] == {"tasks": validation[:2]}
        assert run.run.finished == 2 and run.summary is not None and run.summary["complete"]
        assert run.config["agent"]["params"]["max_tokens"] == 8  # replies as long as in training
    assert not (out / "evals" / ".policy").exists()  # the snapshot the evaluation loaded is removed
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in rows if "eval/reward" in r]
    assert [r["step"] for r in evals] == [1, 2]
    for row, run in zip(evals, runs):  # metrics.jsonl says what summary.json says
        assert row["eval/reward"] == run.summary["overall"]["mean_reward"]
        assert row["eval/pass_rate"] == run.summary["overall"]["pass^1"] and row["eval/episodes"] == 2
    assert [r["step"] for r in rows if "reward" in r] == [1, 2]  # the training rows are still there
    plain = tmp_path / "plain"  # the same training without evaluations: the very same steps and weights
    assert _train(tiny_checkpoint, pack, plain) == 0
    def trained(path) -> list[dict]:  # the training rows, without the wall clock
        rows = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if k != "step_time"} for r in rows if "reward" in r]

    assert trained(out) == trained(plain) and len(trained(out)) == 2
    assert (out / "model.safetensors").read_bytes() == (plain / "model.safetensors").read_bytes()
    assert main(["view", str(out)]) == 0  # the training page's metrics table shows the held-out columns
    dom = dump_dom(out / "view.html")
    metrics = dom[dom.index('class="metrics"'):]
    assert "<th>eval/reward</th>" in metrics and "<th>eval/pass_rate</th>" in metrics


def test_eval_curves_and_bad_settings(tiny_checkpoint, tmp_path, capsys):
    from mua.harness.view.curves import PANELS

    assert ("eval/reward", "held-out mean reward (eval_steps)") in dict(PANELS)["reward"]
    pytest.importorskip("matplotlib", reason="curves.png needs the plot extra")
    from mua.harness.view.curves import render_curves

    train_rows = [{"step": 1, "reward": 0.5}, {"step": 2, "reward": 0.6}]
    eval_rows = [{"step": 1, "eval/reward": 0.2, "eval/pass_rate": 0.0}, {"step": 2, "eval/reward": 0.4}]
    assert render_curves(train_rows + eval_rows) != render_curves(train_rows)  # the held-out line is drawn
    pack, _ = _small_pack(tmp_path)
    for flags, said in ((["--eval-steps", "0"], "eval_steps must be at least 1"),
                        (["--eval-steps", "1.5"], "whole number"),
                        (["--eval-strategy", "steps"], "set eval_steps: N"),
                        (["--eval-steps", "1", "--eval-split", "nope"], "unknown split 'nope'")):
        assert main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data-dir", str(pack),
                     "--output-dir", str(tmp_path / "o"), *flags]) == 2, flags
        assert said in capsys.readouterr().err, flags
    assert not (tmp_path / "o").exists()  # refused before anything was written
