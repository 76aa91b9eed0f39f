"""Rendering a conversation with the tokenizer's own chat template, tools included.

Messages go to the template in the Hugging Face chat shape: assistant tool calls carry their arguments as a
decoded object (templates serialise it themselves) or, when the model produced arguments that are not a
JSON object, as the raw string, so the model sees again exactly what it wrote.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from ..errors import ModelError
from ..types import Message, ToolCall, ToolSpec


def _template_call(call: ToolCall) -> dict:
    try:
        args: Any = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        args = call.arguments
    if not isinstance(args, dict):
        args = call.arguments
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": args}}


def template_messages(messages: list[Message]) -> list[dict]:
    """The conversation as chat-template input."""
    out = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content if m.content is not None else ""}
        if m.tool_calls:
            d["tool_calls"] = [_template_call(c) for c in m.tool_calls]
        if m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        if m.name is not None:
            d["name"] = m.name
        out.append(d)
    return out


def render_prompt(tokenizer, messages: list[Message], tools: Optional[list[ToolSpec]] = None) -> str:
    """The prompt text for the next assistant turn (generation prompt appended)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ModelError("this tokenizer has no chat template; local backends need a chat model checkpoint")
    try:
        return tokenizer.apply_chat_template(
            template_messages(messages), tools=[t.to_openai() for t in tools] if tools else None,
            tokenize=False, add_generation_prompt=True)
    except Exception as exc:  # jinja TemplateError and friends: the template refuses this conversation
        raise ModelError(f"the model's chat template could not render the conversation: {exc}") from exc


def encode_prompt(tokenizer, text: str) -> list[int]:
    """Token ids of a rendered prompt. The template already wrote any BOS token, so none is added."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
