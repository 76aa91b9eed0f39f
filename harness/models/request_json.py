"""JSON text of chat-completions request bodies, encoding the parts that repeat from request to request once.

An agent request re-sends the same tool list (tau2 retail: 12 KB) and system prompt (7 KB) every step; encoding
them again was a quarter of mua's CPU per episode against an instant endpoint. The text produced is byte for
byte ``json.dumps(body, ensure_ascii=False)`` (same separators at every level), so what an endpoint receives is
unchanged. ToolSpecs are treated as immutable once sent: a list is recognised by the identity of its objects.
"""
from __future__ import annotations

import json
import secrets
from typing import Any, Callable, Sequence

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
        self._nonce = f"\x00mua-body-{secrets.token_hex(8)}-"  # placeholder prefix no real text will hold

    def encode(self, body: dict[str, Any]) -> str:
        """``json.dumps(body, ensure_ascii=False)`` with ToolList values resolved. One encoder pass over the body
        with the cached parts stood in for by unique placeholder strings, which are then replaced by their cached
        encodings; should a placeholder's text occur anywhere else, the body is encoded plainly instead."""
        spliced: list[tuple[str, str]] = []

        def stand_in(encoded: str) -> str:
            mark = f"{self._nonce}{len(spliced)}"
            spliced.append((_encode(mark), encoded))
            return mark

        shallow = dict(body)
        for key, value in body.items():
            if isinstance(value, ToolList):
                shallow[key] = stand_in(self._tool_list(value.tools))
            elif key == "messages" and isinstance(value, list):
                shallow[key] = [self._message(m, stand_in) for m in value]
        text = _encode(shallow)
        if any(text.count(mark) != 1 for mark, _ in spliced):
            return _encode({k: v.to_openai() if isinstance(v, ToolList) else v for k, v in body.items()})
        pieces, at = [], 0
        for start, mark, encoded in sorted((text.index(mark), mark, encoded) for mark, encoded in spliced):
            pieces += [text[at:start], encoded]
            at = start + len(mark)
        pieces.append(text[at:])
        return "".join(pieces)

    @staticmethod
    def _message(message: Any, stand_in: Callable[[str], str]) -> Any:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or len(content) < LONG_TEXT:
            return message
        return {**message, "content": stand_in(_cached_text(content))}

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


_TEXTS: dict[str, str] = {}  # long message texts (system prompts) encoded, shared by all models


def _cached_text(text: str) -> str:
    hit = _TEXTS.get(text)
    if hit is None:
        if len(_TEXTS) >= MAX_ENTRIES:
            _TEXTS.clear()
        hit = _TEXTS[text] = _encode(text)
    return hit
