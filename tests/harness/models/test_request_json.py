"""Request bodies encoded with cached parts are byte for byte json.dumps(body, ensure_ascii=False)."""
from __future__ import annotations

import json

from mua.harness.models import OpenAIChatModel, request_json
from mua.harness.models.request_json import LONG_TEXT, MAX_ENTRIES, BodyEncoder
from mua.harness.types import Message, ToolCall, ToolSpec

LONG = "Politique « vérifiée » — \"quoted\"\n\t\\ " * (LONG_TEXT // 20)


def tools(n: int, tag: str = "") -> list[ToolSpec]:
    return [ToolSpec(f"get_{tag}{i}", f"Tool {i} ✓ {tag}", {"type": "object", "properties": {"x": {"type": "integer"}},
                                                            "required": ["x"]}) for i in range(n)]


def conversation(system: str = LONG) -> list[Message]:
    return [Message(role="system", content=system), Message(role="assistant", content="Hi! 你好"),
            Message(role="user", content=LONG[::-1]),
            Message(role="assistant", tool_calls=[ToolCall("c1", "get_0", '{"x": 1}')]),
            Message(role="tool", content="{\"ok\": true}" * 200, tool_call_id="c1", name="get_0"),
            Message(role="user", content=None)]


def same(model: OpenAIChatModel, messages, tool_list=None, seed=None) -> bool:
    expected = json.dumps(model.request_body(messages, tool_list, seed), ensure_ascii=False).encode()
    return model.request_payload(messages, tool_list, seed) == expected


def test_payload_matches_json_dumps_across_params_tools_and_seeds():
    spec = tools(3)
    for params in ({}, {"temperature": 0.0, "max_tokens": 64}, {"tool_choice": None, "seed": 3},
                   {"tools": [{"type": "function", "function": {"name": "override"}}]},
                   {"messages": "other", "x": None}):
        model = OpenAIChatModel("agent-ü", "http://127.0.0.1:9/v1", **params)
        for tool_list in (None, [], spec):
            for seed in (None, 0, 12345):
                assert same(model, conversation(), tool_list, seed)
                assert same(model, conversation(), tool_list, seed)  # second time from the caches


def test_changed_tool_list_or_text_is_encoded_anew():
    model = OpenAIChatModel("m", "http://127.0.0.1:9/v1")
    first, second = tools(2, "a"), tools(2, "b")
    assert same(model, conversation(), first) and same(model, conversation(), second)
    assert same(model, conversation(), first[:1]) and same(model, conversation(), first + second)
    assert same(model, conversation(LONG + "!"), first) and same(model, conversation("short"), first)


def test_caches_stay_bounded():
    enc = BodyEncoder()
    for i in range(MAX_ENTRIES * 2 + 5):
        text = f"{i}" + "x" * LONG_TEXT
        assert enc.encode({"messages": [{"role": "system", "content": text}]}) == json.dumps(
            {"messages": [{"role": "system", "content": text}]}, ensure_ascii=False)
    assert len(request_json._TEXTS) <= MAX_ENTRIES


def test_a_text_holding_a_placeholder_is_still_encoded_exactly():
    model = OpenAIChatModel("m", "http://127.0.0.1:9/v1")
    trap = [Message(role="system", content=LONG),
            Message(role="user", content=f"{model._encoder._nonce}0"), Message(role="user", content="x")]
    assert same(model, trap, tools(2)) and same(model, trap + conversation(), tools(2))
