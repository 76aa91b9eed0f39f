"""Anthropic's Messages API (``POST {base_url}/messages``) behind the ChatModel protocol; see providers.py for
why mua speaks it itself and how the conversation is translated."""
from __future__ import annotations

import json
from typing import Any, Optional

from ..types import Message, ToolCall, ToolSpec, Usage
from . import pools
from .openai_client import OpenAIChatModel, read_reply, token_count
from .translate import arguments, merged, sent_params, system_text, text, tool_choice

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_MAX_TOKENS = 8192


class AnthropicChatModel(OpenAIChatModel):
    """Anthropic's Messages API (``POST {base_url}/messages``, key in ``x-api-key``)."""

    backend = "anthropic"
    auth: pools.Auth = ("x-api-key", "", (("anthropic-version", ANTHROPIC_VERSION),))

    def endpoint_url(self) -> str:
        return self.base_url + "/messages"

    def request_body(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                     seed: Optional[int] = None) -> dict:
        return self._body(messages, tools, seed)

    def _body(self, messages: list[Message], tools: Optional[list[ToolSpec]], seed: Optional[int]) -> dict:
        params = sent_params(self.params, seed)
        params.pop("seed", None)  # the API has no seed
        params.pop("store", None)  # an OpenAI-only field of some benchmark protocols
        body: dict[str, Any] = {"model": self.model}
        if "max_tokens" not in self.params and "max_completion_tokens" not in self.params:
            body["max_tokens"] = ANTHROPIC_MAX_TOKENS  # the API requires one (a null param: not sent, as always)
        if system := system_text(messages):
            body["system"] = system
        body["messages"] = merged([t for m in messages if (t := self._turn(m))], "role", "content")
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in tools]
        choice = tool_choice(self.params)
        params.pop("tool_choice", None)
        if tools and choice is not None:
            body["tool_choice"] = _anthropic_choice(choice)
        if "max_completion_tokens" in params:
            params["max_tokens"] = params.pop("max_completion_tokens")
        if "stop" in params:
            stop = params.pop("stop")
            params["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        body.update(params)
        return body

    @staticmethod
    def _turn(m: Message) -> Optional[dict]:
        if m.role == "system":
            return None
        if m.role == "tool":
            return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                                                 "content": text(m.content)}]}
        blocks: list[dict] = [{"type": "text", "text": m.content}] if m.content else []
        role = "assistant" if m.role == "assistant" else "user"
        if role == "assistant":
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": arguments(c)}
                       for c in m.tool_calls or []]
        return {"role": role, "content": blocks} if blocks else None  # the API rejects empty text blocks

    def parse(self, data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
        return read_reply(_parse_anthropic, data, call_id_prefix)


def _anthropic_choice(choice: Any) -> dict:
    if isinstance(choice, dict):  # OpenAI's {"type": "function", "function": {"name": ...}}
        return {"type": "tool", "name": (choice.get("function") or {}).get("name", "")}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}.get(str(choice), str(choice))}


def _parse_anthropic(data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            args = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(ToolCall(id=str(block.get("id") or f"{call_id_prefix}_{len(calls)}"),
                                  name=str(block["name"]), arguments=args))
    usage = data.get("usage") or {}
    prompt = sum(token_count(usage, k) for k in ("input_tokens", "cache_creation_input_tokens",
                                                 "cache_read_input_tokens"))
    return (Message(role="assistant", content="".join(texts) if texts else None, tool_calls=calls or None),
            Usage(requests=1, prompt_tokens=prompt, completion_tokens=token_count(usage, "output_tokens")))
