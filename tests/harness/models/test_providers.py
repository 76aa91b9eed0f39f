"""Provider-prefixed model names reach a mock speaking that provider's wire format (Anthropic Messages, Gemini
generateContent) on 127.0.0.1: text, tool calls and tool results round-trip, usage is read, keys travel only
in their header."""
import asyncio
import json
import re

import pytest
from mock_openai import HTTPReply, MockOpenAI, text_reply, tool_call_reply, usage
from mock_providers import MockAnthropic, MockGemini

from mua.harness.errors import ModelError
from mua.harness.models import make_chat_model
from mua.harness.models.providers import AnthropicChatModel, GeminiChatModel, key_env, provider_of, route
from mua.harness.types import Message, ToolCall, ToolSpec

FAST = {"max_attempts": 2, "initial_wait_s": 0.001, "max_wait_s": 0.01, "max_total_s": 10}
TOOLS = [ToolSpec("get_order", "Look an order up.", {"type": "object", "properties": {"order_id": {"type": "string"}},
                                                     "required": ["order_id"]})]
CONVERSATION = [
    Message("system", "You are a shop assistant."),
    Message("user", "Where is order #1?"),
    Message("assistant", None, tool_calls=[ToolCall("call_a", "get_order", '{"order_id": "#1"}'),
                                           ToolCall("call_b", "get_order", '{"order_id": "#2"}')]),
    Message("tool", '{"status": "shipped"}', tool_call_id="call_a"),
    Message("tool", "plain text result", tool_call_id="call_b"),
]


def test_names_route_by_their_provider_prefix(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert provider_of("Qwen/Qwen3-8B") is None and provider_of("anthropic/") is None
    r = route("anthropic/claude-sonnet-4-5")
    assert (r.wire, r.model, r.base_url, r.key_env) == ("anthropic", "claude-sonnet-4-5",
                                                       "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY")
    assert route("gemini/gemini-2.5-flash", "http://127.0.0.1:9/v1beta").base_url == "http://127.0.0.1:9/v1beta"
    assert route("openai/gpt-4o").base_url == "https://api.openai.com/v1"
    # a server one names may serve a model called openai/...: the name is then sent as given
    assert route("openai/gpt-oss-20b", "http://127.0.0.1:8000/v1") is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert route("openai/gpt-oss-20b") is None and route("groq/llama-3.3-70b").base_url.startswith("https://api.groq")
    assert key_env("gemini/x") == "GEMINI_API_KEY" and key_env("my-model") == "OPENAI_API_KEY"
    model = make_chat_model("anthropic/claude-haiku-4-5")
    assert isinstance(model, AnthropicChatModel) and model.api_key_env == "ANTHROPIC_API_KEY"
    assert make_chat_model("gemini/g", api_key_env="MY_KEY").api_key_env == "MY_KEY"


def _chat(model, messages, tools=TOOLS, seed=None):
    async def go():
        try:
            return await model.chat(messages, tools, seed=seed)
        finally:
            await model.aclose()
    return asyncio.run(go())


def _call_then_text(request):
    if request["messages"][-1]["role"] == "tool":
        seen = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        return text_reply("results: " + " | ".join(seen), usage_=usage(120, 30))
    return tool_call_reply([("get_order", {"order_id": "#1"})], usage_=usage(100, 20))


@pytest.mark.parametrize("mock_cls, prefix, key_var", [(MockAnthropic, "anthropic", "ANTHROPIC_API_KEY"),
                                                        (MockGemini, "gemini", "GEMINI_API_KEY")])
def test_provider_round_trip_through_its_wire_format(monkeypatch, mock_cls, prefix, key_var):
    monkeypatch.setenv(key_var, "sk-provider-secret-123")
    mock = mock_cls(_call_then_text, key="sk-provider-secret-123")
    with mock as url:
        model = make_chat_model(f"{prefix}/model-x", base_url=url, retry=FAST, temperature=0.0, max_tokens=512)
        call, use = _chat(model, CONVERSATION[:2], seed=7)
        answer, use2 = _chat(model, CONVERSATION)
    assert call.tool_calls[0].name == "get_order" and json.loads(call.tool_calls[0].arguments) == {"order_id": "#1"}
    assert (use.prompt_tokens, use.completion_tokens) == (100, 20)
    assert answer.content == 'results: {"status": "shipped"} | plain text result'
    assert (use2.prompt_tokens, use2.completion_tokens) == (120, 30)
    first, second = mock.bodies
    if prefix == "anthropic":
        assert first["system"] == "You are a shop assistant." and first["max_tokens"] == 512
        assert "seed" not in first and first["tools"][0]["input_schema"] == TOOLS[0].parameters
        # both tool results in one user turn, after the assistant's tool_use
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
        assert [b["type"] for b in second["messages"][2]["content"]] == ["tool_result", "tool_result"]
    else:
        assert first["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 512, "seed": 7}
        assert first["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == TOOLS[0].parameters
        assert second["contents"][2]["parts"][0]["functionResponse"] == {"name": "get_order",
                                                                         "response": {"status": "shipped"}}
    assert all(h.get(mock.key_header) == "sk-provider-secret-123" for h in mock.headers)
    assert "sk-provider" not in json.dumps(model.describe()) and model.describe()["backend"] == prefix


@pytest.mark.parametrize("mock_cls, prefix, key_var", [(MockAnthropic, "anthropic", "ANTHROPIC_API_KEY"),
                                                        (MockGemini, "gemini", "GEMINI_API_KEY")])
def test_provider_error_is_one_redacted_line(monkeypatch, mock_cls, prefix, key_var):
    monkeypatch.setenv(key_var, "sk-provider-secret-456")
    refuse = lambda request: HTTPReply(400, {"error": {"message": "bad key sk-provider-secret-456"}})  # noqa: E731
    with mock_cls(refuse) as url:
        with pytest.raises(ModelError) as err:
            _chat(make_chat_model(f"{prefix}/m", base_url=url, retry=FAST), CONVERSATION[:2])
    assert "sk-provider-secret-456" not in str(err.value) and "***" in str(err.value)


def test_anthropic_mock_rejects_what_the_api_rejects():
    """The mock is strict (a check that could not fail would prove nothing): a request without max_tokens, or
    with a tool result that answers no call, gets a 400."""
    with MockAnthropic(lambda r: text_reply("x")) as url:
        model = AnthropicChatModel("m", url, retry=FAST, max_tokens=None)
        with pytest.raises(ModelError, match="max_tokens"):
            _chat(model, CONVERSATION[:2])
        orphan = [Message("user", "hi"), Message("assistant", "ok"), Message("tool", "x", tool_call_id="nope")]
        with pytest.raises(ModelError, match="tool_result"):
            _chat(AnthropicChatModel("m", url, retry=FAST), orphan)


def test_openai_prefix_keeps_mua_own_client(monkeypatch):
    """openai/NAME with a base URL is an OpenAI-compatible server's model name, sent verbatim."""
    seen = []
    with MockOpenAI(lambda r: seen.append(r["model"]) or text_reply("hi")) as url:
        model = make_chat_model("openai/gpt-oss-20b", base_url=url, retry=FAST)
        assert type(model).__name__ == "OpenAIChatModel"
        _chat(model, CONVERSATION[:2])
    assert seen == ["openai/gpt-oss-20b"]


def test_gemini_reply_without_content_is_an_empty_turn_and_ids_are_unique():
    reply = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "thinking...", "thought": True},
        {"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "b", "args": {"x": 1}}}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "thoughtsTokenCount": 3}}
    model = GeminiChatModel("g", "http://127.0.0.1:9/v1beta")
    message, use = model.parse(reply, "call_4")
    assert message.content is None and [c.id for c in message.tool_calls] == ["call_4_0", "call_4_1"]
    assert use.completion_tokens == 5  # thinking tokens are billed as output
    blocked, _ = model.parse({"candidates": [{"finishReason": "SAFETY"}]}, "c")
    assert blocked.content is None and blocked.tool_calls is None


@pytest.mark.parametrize("cls", [AnthropicChatModel, GeminiChatModel])
def test_a_null_tool_choice_is_not_sent(cls):
    """Benchmarks whose official runner sends no tool_choice (BFCL, ACEBench) set it null: not sent here either."""
    body = cls("m", "http://127.0.0.1:9/v1", tool_choice=None, temperature=0.5).request_body(CONVERSATION, TOOLS)
    assert "tool_choice" not in body and "toolConfig" not in body
    body = cls("m", "http://127.0.0.1:9/v1").request_body(CONVERSATION, TOOLS)
    auto = ({"tool_choice": {"type": "auto"}} if cls is AnthropicChatModel
            else {"toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}})
    assert auto.items() <= body.items()


@pytest.mark.parametrize("cls", [AnthropicChatModel, GeminiChatModel])
def test_empty_turns_are_left_out_and_neighbours_merged(cls):
    messages = [Message("user", "hi"), Message("assistant", ""), Message("user", "anyone?")]
    body = cls("m", "http://127.0.0.1:9/v1").request_body(messages)
    turns = body.get("messages") or body["contents"]
    assert len(turns) == 1 and len(turns[0].get("content") or turns[0]["parts"]) == 2


def test_litellm_route_reaches_the_mock_and_prices_from_its_map(monkeypatch):
    """litellm/PROVIDER/MODEL goes through LiteLLM (the optional `providers` extra) to the same strict mock."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as litellm_client sets it: nothing fetched
    pytest.importorskip("litellm", reason="the providers extra is not installed")
    from mua.harness.models.litellm_client import LiteLLMChatModel
    from mua.harness.results.price_table import price_of

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-litellm-secret-789")
    with MockAnthropic(_call_then_text, key="sk-litellm-secret-789") as url:
        model = make_chat_model("litellm/anthropic/claude-sonnet-4-5", base_url=url.rsplit("/v1", 1)[0],
                                retry={"max_attempts": 1})
        assert isinstance(model, LiteLLMChatModel)
        call, use = _chat(model, CONVERSATION[:2])
        answer, _ = _chat(model, CONVERSATION)
    assert call.tool_calls[0].name == "get_order" and (use.prompt_tokens, use.completion_tokens) == (100, 20)
    assert answer.content.startswith("results: ")
    price = price_of("litellm/anthropic/claude-sonnet-4-5")
    assert (price.input, price.output) == (3.0, 15.0) and "installed" in price.source
    assert "sk-litellm" not in json.dumps(model.describe())


def _camel(value):
    """Gemini's JSON accepts proto field names in snake_case (LiteLLM's) or camelCase (mua's): compare as one."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}
    return [_camel(v) for v in value] if isinstance(value, list) else value


@pytest.mark.parametrize("mock_cls, name", [(MockAnthropic, "anthropic/claude-sonnet-4-5"),
                                            (MockGemini, "gemini/gemini-2.5-flash")])
def test_same_conversation_on_the_wire_as_litellm(monkeypatch, mock_cls, name):
    """Fidelity: for one conversation with parallel tool calls and results, mua's adapter and LiteLLM (what
    tau2 sends through) put the same turns, blocks and system text on the wire."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as litellm_client sets it: nothing fetched
    pytest.importorskip("litellm", reason="the providers extra is not installed")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k" * 10)
    monkeypatch.setenv("GEMINI_API_KEY", "k" * 10)
    mock = mock_cls(lambda request: text_reply("ok"))
    with mock as url:
        _chat(make_chat_model(name, base_url=url), CONVERSATION)
        via = url if mock_cls is MockGemini else url.rsplit("/v1", 1)[0]
        _chat(make_chat_model(f"litellm/{name}", base_url=via), CONVERSATION)
    mine, theirs = (_camel(b) for b in mock.bodies)
    if mock_cls is MockAnthropic:
        assert mine["messages"] == theirs["messages"]
        assert [{"type": "text", "text": mine["system"]}] == theirs["system"]
    else:
        assert mine["contents"] == theirs["contents"] and mine["systemInstruction"] == theirs["systemInstruction"]


def test_litellm_replies_are_held_to_the_same_reader(monkeypatch):
    """What LiteLLM decoded goes through the reader's checks too (a fake LiteLLM here: the extra is optional)."""
    from types import SimpleNamespace

    from mua.harness.models import litellm_client

    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    good = tool_call_reply([("get_order", {"order_id": "#1"})], usage_=usage(100, 20))
    replies = {"good": good, "deep": {**good, "extra": deep}, "inf usage": {**good, "usage": {"prompt_tokens": 1e309}},
               "surrogate": text_reply("half \ud800"),
               "deep arguments": tool_call_reply([("get_order", "[" * 10_000 + "]" * 10_000)]),
               "raises RecursionError": RecursionError("maximum recursion depth exceeded")}

    async def acompletion(*, model, **request):
        reply = replies[model]
        if isinstance(reply, Exception):
            raise reply
        return SimpleNamespace(model_dump=lambda: reply)

    monkeypatch.setattr(litellm_client, "load_litellm", lambda: SimpleNamespace(acompletion=acompletion))
    call, use = _chat(litellm_client.LiteLLMChatModel("good"), CONVERSATION[:2])
    assert call.tool_calls[0].name == "get_order" and (use.prompt_tokens, use.completion_tokens) == (100, 20)
    for name, reason in [("deep", "nested deeper than 100"), ("inf usage", "inf, which is not finite"),
                         ("surrogate", "lone surrogate"), ("deep arguments", "tool call 1's arguments"),
                         ("raises RecursionError", "RecursionError")]:
        with pytest.raises(ModelError, match=reason) as err:
            _chat(litellm_client.LiteLLMChatModel(name), CONVERSATION[:2])
        assert "\n" not in str(err.value)
