"""`mua model tiny` then `mua eval --agent-model CHECKPOINT` on tau2 retail, the mock server playing the user."""
import json

import pytest
from helpers.responders import user as mock_user
from mock_openai import MockOpenAI

from mua.harness.cli import main

pytest.importorskip("torch", reason="local checkpoints need the 'local' extra")
pytest.importorskip("transformers", reason="local checkpoints need the 'local' extra")


def test_tiny_checkpoint_plays_tau2_retail_on_cpu(tmp_path, data_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ckpt = tmp_path / "tiny"
    assert main(["model", "tiny", str(ckpt)]) == 0
    assert (ckpt / "config.json").exists() and (ckpt / "tokenizer_config.json").exists()
    out = tmp_path / "run"
    with MockOpenAI(mock_user) as url:
        code = main(["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "2",
                     "--agent-model", str(ckpt), "--agent-params", json.dumps({"max_tokens": 8}),
                     "--user-model", "user", "--user-base-url", url, "--concurrency", "2", "--trials", "1",
                     "--no-progress", "--data-dir", str(data_dir), "--out", str(out)])
    assert code == 0
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None for r in rows)
    assert all(r["usage"]["agent"]["completion_tokens"] > 0 for r in rows)
    config = json.loads((out / "config.json").read_text())
    assert config["agent"]["name"] == str(ckpt)
