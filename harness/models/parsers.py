"""Tool-call parsers: turn an open model's raw completion text into an assistant message.

Formats:

- ``hermes`` (also Qwen 2/2.5/3, NousResearch Hermes): each call is a JSON object ``{"name": ...,
  "arguments": {...}}`` inside ``<tool_call>...</tool_call>``. Text outside the blocks is the message's
  content. A final block cut off before ``</tool_call>`` (the token budget ran out) still counts when its
  JSON is complete.
- ``llama3_json`` (Llama 3.1/3.2/3.3 JSON tool calling): the whole completion is one or more JSON objects
  ``{"name": ..., "parameters": {...}}`` (``arguments`` is accepted too), separated by ``;`` or whitespace,
  optionally after ``<|python_tag|>``. Anything else is a plain text answer.
- ``none``: everything is text (models without tool support).

What malformed output becomes (an episode never crashes on model output):

- broken JSON, a call without a string ``name``, or (llama3_json) text mixed with the JSON: the whole
  completion is a plain text turn, verbatim, and ``ParsedCompletion.problem`` says why; this is what an
  OpenAI-compatible server (vLLM) returns for such output.
- an unknown tool name or arguments that are not a JSON object: kept as a tool call; the environment then
  answers with the benchmark's own error, as it would for an API model.

Reasoning models (Qwen3, DeepSeek-R1 distills) think inside ``<think>...</think>`` first. For checkpoints
whose chat template mentions ``<think>``, :func:`split_reasoning` takes the thinking out before parsing, so
it is neither shown to the user nor parsed for calls; a completion cut off while still thinking has no
answer (content None).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..types import ToolCall

PARSERS = ("hermes", "llama3_json", "none")
_ALIASES = {"qwen": "hermes", "qwen2": "hermes", "qwen3": "hermes", "llama3": "llama3_json",
            "llama": "llama3_json", "text": "none"}

_HERMES_OPEN, _HERMES_CLOSE = "<tool_call>", "</tool_call>"
_PYTHON_TAG = "<|python_tag|>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


@dataclass
class ParsedCompletion:
    """The parsed form of one completion. Call ids are left empty; the backend assigns them."""

    content: Optional[str]
    tool_calls: list[ToolCall] = field(default_factory=list)
    problem: Optional[str] = None  # why tool-call-looking output was kept as text


def _as_text(text: str, problem: Optional[str] = None) -> ParsedCompletion:
    return ParsedCompletion(content=text if text.strip() else None, problem=problem)


def _call_from_object(obj: Any, arg_keys: tuple[str, ...]) -> Optional[ToolCall]:
    """A call from one decoded JSON value, or None when it is not a call at all (no string name)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    args: Any = {}
    for key in arg_keys:
        if key in obj:
            args = obj[key]
            break
    # A string is passed through untouched, so the environment judges it exactly as it would judge an API
    # model's raw arguments string.
    raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return ToolCall(id="", name=obj["name"], arguments=raw)


def parse_hermes(text: str) -> ParsedCompletion:
    if _HERMES_OPEN not in text:
        return _as_text(text)
    # Each block's JSON is decoded from its opening tag on, so a "</tool_call>" inside a JSON string
    # does not end the block.
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    outside: list[str] = []
    pos = 0
    while (start := text.find(_HERMES_OPEN, pos)) >= 0:
        outside.append(text[pos:start])
        body = _skip_space(text, start + len(_HERMES_OPEN))
        try:
            obj, end = decoder.raw_decode(text, body)
        except (json.JSONDecodeError, RecursionError):
            return _as_text(text, f"tool call {len(calls) + 1} is not valid JSON")
        call = _call_from_object(obj, ("arguments", "parameters"))
        if call is None:
            return _as_text(text, f"tool call {len(calls) + 1} has no function name")
        end = _skip_space(text, end)
        if text.startswith(_HERMES_CLOSE, end):
            end += len(_HERMES_CLOSE)
        elif end < len(text):  # the block may only be cut off at the very end (token budget)
            return _as_text(text, f"tool call {len(calls) + 1} has text after its JSON")
        calls.append(call)
        pos = end
    outside.append(text[pos:])
    return ParsedCompletion(content="".join(outside).strip() or None, tool_calls=calls)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def parse_llama3_json(text: str) -> ParsedCompletion:
    body = text.strip()
    if body.startswith(_PYTHON_TAG):
        body = body[len(_PYTHON_TAG):].lstrip()
    if not body.startswith("{"):
        return _as_text(text)
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    pos = 0
    while pos < len(body):
        try:
            obj, pos = decoder.raw_decode(body, pos)
        except (json.JSONDecodeError, RecursionError):
            return _as_text(text, f"tool call {len(calls) + 1} is not valid JSON")
        call = _call_from_object(obj, ("parameters", "arguments"))
        if call is None:
            return _as_text(text, f"tool call {len(calls) + 1} has no function name")
        calls.append(call)
        while pos < len(body) and (body[pos].isspace() or body[pos] == ";"):
            pos += 1
    return ParsedCompletion(content=None, tool_calls=calls)


def split_reasoning(text: str) -> tuple[Optional[str], str]:
    """(reasoning, answer). The template may open the block itself, so a closing tag alone also counts."""
    end = text.find(THINK_CLOSE)
    if end < 0:
        start = text.find(THINK_OPEN)
        if start < 0:
            return None, text
        return text[start + len(THINK_OPEN):].strip(), ""  # still thinking when the budget ran out
    reasoning = text[:end]
    start = reasoning.find(THINK_OPEN)
    return reasoning[start + len(THINK_OPEN) if start >= 0 else 0:].strip(), text[end + len(THINK_CLOSE):]


def parse_none(text: str) -> ParsedCompletion:
    return _as_text(text)


_BY_NAME: dict[str, Callable[[str], ParsedCompletion]] = {
    "hermes": parse_hermes, "llama3_json": parse_llama3_json, "none": parse_none}


def get_parser(name: str) -> Callable[[str], ParsedCompletion]:
    """The parser called ``name`` (see ``PARSERS``; aliases such as ``qwen`` and ``llama3`` work)."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in _BY_NAME:
        raise ValueError(f"unknown tool-call parser {name!r}; choose one of: {', '.join(PARSERS)}")
    return _BY_NAME[key]


def parser_for_template(chat_template: Optional[str]) -> str:
    """Pick the parser a chat template implies: ``<tool_call>`` means hermes, Llama's ``<|python_tag|>`` /
    ``ipython`` role means llama3_json. Templates that show neither default to hermes, the most common
    open-model format; pass the parser explicitly to override."""
    template = chat_template or ""
    if _HERMES_OPEN in template:
        return "hermes"
    if _PYTHON_TAG in template or "ipython" in template:
        return "llama3_json"
    return "hermes"
