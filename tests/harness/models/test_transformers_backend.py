import asyncio

import pytest

torch = pytest.importorskip("torch", reason="local backends need torch (pip install 'mua[local]')")

from mua.harness.errors import ConfigError, ModelError  # noqa: E402
from mua.harness.models.chat_template import render_prompt  # noqa: E402
from mua.harness.models.checkpoint import make_local_chat_model  # noqa: E402
from mua.harness.models.generation import GenerationResult  # noqa: E402
from mua.harness.models.trace import record_turns  # noqa: E402
from mua.harness.models.transformers_backend import TransformersChatModel  # noqa: E402
from mua.harness.types import Message, ToolCall, ToolSpec  # noqa: E402

TOOLS = [ToolSpec("get_order", "Look up an order.",
                  {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]})]


def convo(i: int = 0) -> list[Message]:
    return [Message("system", "You help customers."), Message("user", "Where is my order " + "#W1 " * i + "?"),
            Message("assistant", None, [ToolCall("c1", "get_order", '{"order_id": "#W1"}')]),
            Message("tool", '{"status": "pending"}', tool_call_id="c1", name="get_order")]


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return TransformersChatModel(tiny_checkpoint, max_new_tokens=8, device="cpu")


def chat_turns(model, conversations, seeds=None, **settings):
    """Run one chat per conversation concurrently; each in its own recorder. Returns (message, usage, turns)."""
    for name, value in settings.items():
        setattr(model, name, value)

    async def one(messages, seed):
        with record_turns() as turns:
            message, usage = await model.chat(messages, TOOLS, seed=seed)
        return message, usage, turns

    async def main():
        return await asyncio.gather(*[one(m, s) for m, s in zip(conversations, seeds or [None] * len(conversations))])

    try:
        return asyncio.run(main())
    finally:
        model.temperature, model.top_p = 0.0, 1.0


def test_turn_record_round_trips_to_the_rendered_conversation(model, tiny_tokenizer):
    [(message, usage, turns)] = chat_turns(model, [convo()])
    [turn] = turns
    rendered = render_prompt(tiny_tokenizer, convo(), TOOLS)
    decode = lambda ids: tiny_tokenizer.decode(ids, skip_special_tokens=False)  # noqa: E731
    assert decode(turn.prompt_ids) == rendered
    assert decode(turn.prompt_ids + turn.completion_ids) == rendered + decode(turn.completion_ids)
    assert rendered.endswith("<|im_start|>assistant\n") and '"name": "get_order"' in rendered
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (
        1, len(turn.prompt_ids), len(turn.completion_ids))
    assert len(turn.logprobs) == len(turn.completion_ids) and all(lp <= 0 for lp in turn.logprobs)
    assert turn.message == message and message.role == "assistant"
    assert turn.finish_reason in ("stop", "length")


@pytest.mark.parametrize("padded_prefill", [True, False])
def test_logprobs_match_a_full_forward_pass_under_left_padding(model, monkeypatch, padded_prefill):
    from mua.harness.models import decode
    if not padded_prefill:  # long prompts: prefilled one by one, caches padded afterwards
        monkeypatch.setattr(decode, "PADDED_PREFILL_MAX_TOKENS", 0)
    results = chat_turns(model, [convo(0), convo(7), convo(3)])
    assert max(model.batcher.batch_sizes) > 1  # the three requests shared a batch
    for _, _, [turn] in results:
        ids = torch.tensor([turn.prompt_ids + turn.completion_ids])
        with torch.no_grad():
            logp = torch.log_softmax(model.model(input_ids=ids).logits[0].float(), dim=-1)
        start = len(turn.prompt_ids)
        expected = [float(logp[start - 1 + k, t]) for k, t in enumerate(turn.completion_ids)]
        assert turn.completion_ids == [int(logp[start - 1 + k].argmax()) for k in range(len(expected))]
        assert turn.logprobs == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("padded_prefill", [True, False])
def test_batched_results_equal_one_at_a_time(model, monkeypatch, padded_prefill):
    from mua.harness.models import decode
    if not padded_prefill:
        monkeypatch.setattr(decode, "PADDED_PREFILL_MAX_TOKENS", 0)
    conversations = [convo(i) for i in range(6)]
    batched = chat_turns(model, conversations, seeds=list(range(6)), temperature=1.0)
    single = [chat_turns(model, [c], seeds=[s], temperature=1.0)[0] for s, c in enumerate(conversations)]
    assert [t[0].completion_ids for *_, t in batched] == [t[0].completion_ids for *_, t in single]


def test_seeded_sampling_is_reproducible(model):
    same = chat_turns(model, [convo(), convo()], seeds=[11, 11], temperature=1.0)
    other = chat_turns(model, [convo()], seeds=[12], temperature=1.0)
    again = chat_turns(model, [convo()], seeds=[11], temperature=1.0)
    ids = lambda r: r[2][0].completion_ids  # noqa: E731
    assert ids(same[0]) == ids(same[1]) == ids(again[0])
    assert ids(other[0]) != ids(same[0])
    assert same[0][0] == again[0][0]


def test_tiny_top_p_keeps_only_the_most_likely_token(model):
    greedy = chat_turns(model, [convo()])
    nucleus = chat_turns(model, [convo()], seeds=[5], temperature=1.0, top_p=1e-6)
    assert nucleus[0][2][0].completion_ids == greedy[0][2][0].completion_ids


def test_concurrent_episodes_record_only_their_own_turns(model):
    results = chat_turns(model, [convo(i) for i in range(4)])
    prompts = [turns[0].prompt_ids for *_, turns in results]
    assert all(len(turns) == 1 for *_, turns in results) and len({len(p) for p in prompts}) == 4


class CannedModel(TransformersChatModel):
    """The tiny checkpoint, but generation returns fixed text (to exercise parsing and call ids)."""

    replies: list[str] = []

    def _generate_batch(self, requests):
        out = []
        for _ in requests:
            ids = self.tokenizer(self.replies.pop(0), add_special_tokens=False)["input_ids"] + [min(self.stop_ids)]
            out.append(GenerationResult(ids, [-0.5] * len(ids), "stop"))
        return out


def test_completions_are_parsed_into_tool_calls_with_stable_ids(tiny_checkpoint):
    model = CannedModel(tiny_checkpoint)
    call = 'Checking.<tool_call>\n{"name": "get_order", "arguments": {"order_id": "#W1"}}\n</tool_call>'
    model.replies = [call, call, 'Sure <tool_call>{"name": "get_order", "arguments": {</tool_call>']
    first = chat_turns(model, [convo()])[0][0]
    second = chat_turns(model, [convo()])[0][0]
    broken = chat_turns(model, [convo()])[0][0]
    assert first.content == "Checking." and first.tool_calls[0].name == "get_order"
    assert first.tool_calls[0].arguments == '{"order_id": "#W1"}'
    assert first.tool_calls[0].id.startswith("call_") and first.tool_calls[0].id == second.tool_calls[0].id
    assert broken.tool_calls is None and broken.content.startswith("Sure <tool_call>")


def test_thinking_is_kept_out_of_the_message_for_reasoning_templates(tiny_checkpoint):
    model = CannedModel(tiny_checkpoint)
    assert not model.splits_reasoning  # the tiny template has no <think>: output is taken as is
    model.splits_reasoning = True
    model.replies = ['<think>\nThe user wants order #W1.\n</think>\n\n<tool_call>{"name": "get_order", '
                     '"arguments": {"order_id": "#W1"}}</tool_call>']
    [(message, _, [turn])] = chat_turns(model, [convo()])
    assert message.content is None and message.tool_calls[0].name == "get_order"
    assert turn.reasoning == "The user wants order #W1." and turn.text.startswith("<think>")


def test_prompt_longer_than_the_context_is_a_model_error(tiny_checkpoint):
    model = TransformersChatModel(tiny_checkpoint, max_new_tokens=4, device="cpu")
    model.max_context = 50
    with pytest.raises(ModelError, match="context"):
        chat_turns(model, [convo()])


def test_factory_and_bad_settings(tiny_checkpoint, tmp_path):
    model = make_local_chat_model(tiny_checkpoint, max_tokens=3, temperature=0.5)
    assert (model.max_new_tokens, model.temperature, model.parser_name) == (3, 0.5, "hermes")
    with pytest.raises(ConfigError, match="unknown parameter"):
        make_local_chat_model(tiny_checkpoint, frequency_penalty=1.0)
    with pytest.raises(ConfigError, match="unknown local backend"):
        make_local_chat_model(tiny_checkpoint, backend="onnx")
    with pytest.raises(ConfigError, match="not a checkpoint directory"):
        TransformersChatModel(tmp_path)
    with pytest.raises(ConfigError, match="dtype must be one of"):
        TransformersChatModel(tiny_checkpoint, dtype="float7")
    with pytest.raises(ConfigError, match="unknown tool-call parser"):
        TransformersChatModel(tiny_checkpoint, parser="xml")


def test_parser_follows_the_checkpoint_template_unless_named(tiny_checkpoint, tmp_path):
    import shutil
    llama_like = tmp_path / "llama_like"
    shutil.copytree(tiny_checkpoint, llama_like)
    template = (llama_like / "chat_template.jinja").read_text()
    (llama_like / "chat_template.jinja").write_text("{# ipython results; calls may start with <|python_tag|> #}"
                                                    + template.replace("<tool_call>", "<function_call>")
                                                    .replace("</tool_call>", "</function_call>"))
    model = CannedModel(llama_like)
    assert model.parser_name == "llama3_json"
    model.replies = ['{"name": "get_order", "parameters": {"order_id": "#W1"}}']
    [(message, _, _)] = chat_turns(model, [convo()])
    assert message.tool_calls[0].name == "get_order" and message.content is None
    assert CannedModel(llama_like, parser="hermes").parser_name == "hermes"


BAD_PARAMS = [("max_new_tokens", "8"), ("max_new_tokens", 0), ("max_new_tokens", True), ("max_tokens", 2.5),
              ("max_batch", 0), ("max_batch", "16"), ("temperature", "0.7"), ("temperature", -1),
              ("temperature", float("nan")), ("top_p", 0), ("top_p", 1.5), ("top_p", None),
              ("default_seed", -1), ("default_seed", "1"), ("parser", 3), ("dtype", "int8"),
              ("dtype", "float64"), ("dtype", 16), ("device", "gpu0"), ("device", "cuda:99"), ("device", 0)]


@pytest.mark.parametrize("name, value", BAD_PARAMS, ids=[f"{n}={v!r}" for n, v in BAD_PARAMS])
def test_bad_parameter_is_a_config_error_naming_it(tiny_checkpoint, name, value):
    with pytest.raises(ConfigError, match=name.replace("max_tokens", "max_new_tokens")):
        make_local_chat_model(tiny_checkpoint, **{name: value})


def test_cuda_device_without_a_gpu_is_a_config_error(tiny_checkpoint, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(ConfigError, match="device is 'cuda' but torch sees no CUDA GPU"):
        make_local_chat_model(tiny_checkpoint, device="cuda")
    assert make_local_chat_model(tiny_checkpoint, max_new_tokens=2).device == "cpu"


def test_allowed_dtypes_load(tiny_checkpoint):
    for dtype, expected in [("auto", torch.float32), ("bfloat16", torch.bfloat16)]:
        model = TransformersChatModel(tiny_checkpoint, dtype=dtype, device="cpu")
        assert next(model.model.parameters()).dtype == expected


def test_on_turn_hook_is_gone(tiny_checkpoint):
    with pytest.raises(ConfigError, match="unknown parameter"):
        make_local_chat_model(tiny_checkpoint, on_turn=print)
