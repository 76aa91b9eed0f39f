"""JSON text of chat-completions request bodies, encoding the parts that repeat from request to request once.

An agent request re-sends the same tool list (tau2 retail: 12 KB) and system prompt (7 KB) every step; encoding
them again was a quarter of mua's CPU per episode against an instant endpoint. The text produced is byte for
byte ``json.dumps(body, ensure_ascii=False)`` (same separators at every level), so what an endpoint receives is
unchanged. ToolSpecs are treated as immutable once sent: a list is recognised by the identity of its objects.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from ..types import ToolSpec

LONG_TEXT = 1024  # message texts at least this long are encoded once and looked up after
MAX_ENTRIES = 256  # per cache; cleared when full, so memory stays bounded in runs of any length

_encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(..., ensure_ascii=False), built once


class ToolList:
    """Marks a body's "tools" value: the encoder writes it from its cache."""

    __slots__ = ("tools",)

    def __init__(self, tools: Sequence[ToolSpec]):
        self.tools = tuple(tools)

    def to_openai(self) -> list[dict]:
        return [t.to_openai() for t in self.tools]


class BodyEncoder:
    def __init__(self) -> None:
        self._tools: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], str]] = {}
        self._texts: dict[str, str] = {}

    def encode(self, body: dict[str, Any]) -> str:
        """``json.dumps(body, ensure_ascii=False)`` with ToolList values resolved; "messages" encoded message by
        message."""
        parts = []
        for key, value in body.items():
            if isinstance(value, ToolList):
                text = self._tool_list(value.tools)
            elif key == "messages" and isinstance(value, list):
                text = "[" + ", ".join(self._message(m) for m in value) + "]"
            else:
                text = _encode(value)
            parts.append(_encode(key) + ": " + text)
        return "{" + ", ".join(parts) + "}"

    def _tool_list(self, tools: tuple[ToolSpec, ...]) -> str:
        key = tuple(id(t) for t in tools)
        hit = self._tools.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], tools)):
            return hit[1]
        text = _encode([t.to_openai() for t in tools])
        if len(self._tools) >= MAX_ENTRIES:
            self._tools.clear()
        self._tools[key] = (tools, text)  # holds the objects, so their ids cannot be reused while cached
        return text

    def _message(self, message: Any) -> str:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or len(content) < LONG_TEXT:
            return _encode(message)
        return "{" + ", ".join(_encode(k) + ": " + (self._text(v) if k == "content" else _encode(v))
                               for k, v in message.items()) + "}"

    def _text(self, text: str) -> str:
        hit = self._texts.get(text)
        if hit is None:
            if len(self._texts) >= MAX_ENTRIES:
                self._texts.clear()
            hit = self._texts[text] = _encode(text)
        return hit
