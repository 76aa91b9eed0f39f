"""A user model end to end on the CPU (CI smoke): the user's side of a gold run exported (`mua export --role user`),
the tiny model fine-tuned on it (`mua sft`), then GRPO (`mua train`) with that checkpoint as the user in the loop
beside the tiny policy, recorded in train_config.json like any model. About a minute on two cores."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from training_fakes import BOOKINGS_PACK

from mua.harness.cli import main

pytest.importorskip("trl", reason="training needs trl")


def llm_pack(tmp_path: Path) -> Path:
    """The bookings pack with two train tasks, its user an LLM (pack.json "user": "llm")."""
    pack = tmp_path / "pack"
    shutil.copytree(BOOKINGS_PACK, pack, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    splits = json.loads((pack / "splits.json").read_text())
    (pack / "splits.json").write_text(json.dumps({"train": splits["train"][:2], "test": splits["test"][:1]}))
    meta = json.loads((pack / "pack.json").read_text())
    (pack / "pack.json").write_text(json.dumps({**meta, "user": "llm", "max_messages": 8}))
    return pack


def test_grpo_with_a_user_model_trained_on_the_user_side(tiny_checkpoint, tmp_path, capsys):
    pack = llm_pack(tmp_path)
    gold, data, user = tmp_path / "gold", tmp_path / "user.jsonl", tmp_path / "user-model"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent", "gold", "--split", "train",
                 "--out", str(gold), "--no-progress"]) == 0  # the gold agent plays the scripted user
    assert main(["export", str(gold), "--role", "user", "--format", "jsonl", "--out", str(data),
                 "--data-dir", str(pack)]) == 0
    assert main(["sft", "--policy", str(tiny_checkpoint), "--dataset", str(data), "--output-dir", str(user),
                 "--max-steps", "30", "--batch-size", "2", "--learning-rate", "5e-3", "--no-progress",
                 "--save-steps", "100", "--report-to", "none"]) == 0
    # enough for the user to say words (a random model greedily says only newlines: no reply, a user error)
    assert "trained on 2 episodes, 30 steps" in capsys.readouterr().out
    out = tmp_path / "grpo"
    assert main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data-dir", str(pack),
                 "--user-model", str(user), "--user-params", '{"max_tokens": 8}', "--allow-protocol-departure",
                 "--split", "train", "--output-dir", str(out), "--max-steps", "1", "--num-generations", "2",
                 "--batch-size", "2", "--max-turn-tokens", "8", "--max-completion-tokens", "40", "--save-steps", "10",
                 "--no-progress", "--report-to", "none"]) == 0
    saved = json.loads((out / "train_config.json").read_text())
    assert saved["user_model"] == str(user)
    assert saved["protocol"]["roles"]["user"]["model"] == str(user)  # recorded like the agent's model
    assert "--user-model " + str(user) in capsys.readouterr().out  # the eval command printed plays it too
    samples = [json.loads(line) for f in sorted((out / "samples").iterdir()) for line in f.read_text().splitlines()]
    assert samples and all(any(m["role"] == "user" for m in s["messages"]) for s in samples)
