"""Mock Anthropic (``POST /v1/messages``) and Gemini (``POST /v1beta/models/MODEL:generateContent``) servers on
127.0.0.1, for testing mua's provider adapters offline.

Each speaks its provider's wire format and checks what that API checks before answering (the key header,
Anthropic's version header and ``max_tokens``, alternating turns, every tool result answering a call of the
turn before); a request that breaks a rule gets the API's 400. The conversation is then read back into the
OpenAI chat shape, so the responders of mock_openai.py (``by_model``, ``text_reply``, ``tool_call_reply``) drive
both, and their OpenAI-shaped answers are written back in the provider's format with the usage they carry.
Every request body is kept in ``bodies`` (and its headers in ``headers``) for assertions.
"""
from __future__ import annotations

import json
import re
from typing import Optional

from mock_openai import HTTPReply, MockOpenAI, _encode

GEMINI_PATH = re.compile(r"^/v1beta/models/([^/:]+):generateContent$")


def _bad(message: str) -> HTTPReply:
    return HTTPReply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})


class _ProviderMock(MockOpenAI):
    key_header = ""

    def __init__(self, responder=None, key: Optional[str] = None, **kw):
        super().__init__(responder, **kw)
        self.key = key  # when set, requests must carry it
        self.bodies: list[dict] = []

    def _check_key(self) -> Optional[HTTPReply]:
        sent = self.headers[-1].get(self.key_header) if self.headers else None
        if self.key is not None and sent != self.key:
            return HTTPReply(401, {"error": {"message": f"missing or wrong {self.key_header}"}})
        return None

    def _answer(self, path: str, body: dict) -> Optional[HTTPReply | dict]:
        raise NotImplementedError

    async def _respond(self, method: str, path: str, body: bytes, reader, writer) -> bool:
        if method != "POST":
            return await super()._respond(method, path, body, reader, writer)
        self.requests += 1
        try:
            request = json.loads(body)
        except ValueError:
            writer.write(_encode(400, {"error": {"message": "request body is not JSON"}}))
            return True
        self.bodies.append(request)
        try:
            reply = self._check_key() or self._answer(path, request)
        except Exception as e:  # a broken test script: say so (400 is not retried)
            reply = _bad(f"mock raised {type(e).__name__}: {e}")
        if reply is None:
            writer.write(_encode(404, {"error": {"message": f"no route {method} {path}"}}))
        elif isinstance(reply, HTTPReply):
            writer.write(_encode(reply.status, reply.body, reply.headers))
        else:
            self.succeeded += 1
            writer.write(_encode(200, reply))
        return True

    def _ask(self, openai_request: dict):
        """The responder's OpenAI-shaped answer (or its HTTPReply)."""
        return self.responder(openai_request)


class MockAnthropic(_ProviderMock):
    key_header = "x-api-key"

    def _answer(self, path, body):
        if path.split("?", 1)[0] != "/v1/messages":
            return None
        if self.headers[-1].get("anthropic-version") != "2023-06-01":
            return _bad("anthropic-version header is required")
        if not isinstance(body.get("max_tokens"), int):
            return _bad("max_tokens: Field required")
        messages = body["messages"]  # may open with the assistant (tau2's greeting), as LiteLLM sends it
        if not messages:
            return _bad("messages: at least one message is required")
        for a, b in zip(messages, messages[1:]):
            if a["role"] == b["role"]:
                return _bad("messages: roles must alternate between \"user\" and \"assistant\"")
        for prev, m in zip([None] + messages, messages):
            results = [c["tool_use_id"] for c in m["content"] if c.get("type") == "tool_result"]
            calls = {c["id"] for c in (prev or {}).get("content", []) if c.get("type") == "tool_use"}
            if any(r not in calls for r in results):
                return _bad("tool_result block(s) provided without a matching tool_use in the previous message")
        reply = self._ask({"model": body["model"], "messages": _openai_from_anthropic(body),
                           "tools": body.get("tools")})
        return reply if isinstance(reply, HTTPReply) else _anthropic_reply(reply)


class MockGemini(_ProviderMock):
    key_header = "x-goog-api-key"

    def _answer(self, path, body):
        if "key=" in path:
            return _bad("this mock wants the key in the x-goog-api-key header, never in the URL")
        match = GEMINI_PATH.match(path.split("?", 1)[0])
        if match is None:
            return None
        contents = body["contents"]
        for a, b in zip(contents, contents[1:]):
            if a["role"] == b["role"]:
                return _bad("contents: roles must alternate between \"user\" and \"model\"")
        reply = self._ask({"model": match.group(1), "messages": _openai_from_gemini(body), "tools": body.get("tools")})
        return reply if isinstance(reply, HTTPReply) else _gemini_reply(reply)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1beta"


def _openai_from_anthropic(body: dict) -> list[dict]:
    out = [{"role": "system", "content": body["system"]}] if body.get("system") else []
    for m in body["messages"]:
        text = "".join(c["text"] for c in m["content"] if c["type"] == "text")
        if m["role"] == "assistant":
            calls = [{"id": c["id"], "type": "function",
                      "function": {"name": c["name"], "arguments": json.dumps(c["input"])}}
                     for c in m["content"] if c["type"] == "tool_use"]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        out += [{"role": "tool", "tool_call_id": c["tool_use_id"], "content": c["content"]}
                for c in m["content"] if c["type"] == "tool_result"]
        if text:
            out.append({"role": "user", "content": text})
    return out


def _openai_from_gemini(body: dict) -> list[dict]:
    system = body.get("systemInstruction")
    out = [{"role": "system", "content": system["parts"][0]["text"]}] if system else []
    for m in body["contents"]:
        text = "".join(p.get("text", "") for p in m["parts"])
        if m["role"] == "model":
            called = [p["functionCall"] for p in m["parts"] if "functionCall" in p]
            calls = [{"id": f"g{i}", "type": "function",
                      "function": {"name": f["name"], "arguments": json.dumps(f["args"])}}
                     for i, f in enumerate(called)]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for p in m["parts"]:
            if "functionResponse" in p:
                resp = p["functionResponse"]["response"]
                out.append({"role": "tool", "name": p["functionResponse"]["name"],
                            "content": resp["content"] if set(resp) == {"content"} else json.dumps(resp)})
        if text:
            out.append({"role": "user", "content": text})
    return out


def _anthropic_reply(reply: dict) -> dict:
    message, usage = reply["choices"][0]["message"], reply.get("usage") or {}
    content = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    calls = message.get("tool_calls") or []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": c["function"]["name"],
                 "input": json.loads(c["function"]["arguments"])} for i, c in enumerate(calls)]
    return {"id": "msg_mock", "type": "message", "role": "assistant", "model": reply.get("model", "mock"),
            "content": content, "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn",
            "usage": {"input_tokens": usage.get("prompt_tokens", 0),
                      "output_tokens": usage.get("completion_tokens", 0)}}


def _gemini_reply(reply: dict) -> dict:
    message, usage = reply["choices"][0]["message"], reply.get("usage") or {}
    parts = [{"text": message["content"]}] if message.get("content") else []
    parts += [{"functionCall": {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}}
              for c in message.get("tool_calls") or []]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": usage.get("prompt_tokens", 0),
                              "candidatesTokenCount": usage.get("completion_tokens", 0),
                              "totalTokenCount": usage.get("total_tokens", 0)}}
