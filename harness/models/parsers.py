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
  OpenAI-compatible server (vLLM) returns for such output. JSON that Python cannot turn into values (an
  integer over the interpreter's digit limit, nesting deeper than ``MAX_NESTING``) counts as broken too, and
  so does a call whose name or arguments hold a lone surrogate escape (``"\\ud800"``): such text cannot be
  encoded as UTF-8, so neither the results file, nor the tokenizer on the next turn, could take it. These are
  the rules of the reader every endpoint reply goes through (``harness/io/jsonl.py``); arguments given as a
  string are held to them too (``unsafe_json``), as an endpoint's arguments text is. Object arguments are
  re-serialised with ``ensure_ascii=False`` (as vLLM's server does), so a call's name and arguments are always
  valid UTF-8.
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

from ..io.jsonl import MAX_DEPTH, BadLine, check_untrusted, unsafe_json
from ..types import ToolCall

PARSERS = ("hermes", "llama3_json", "none")
_ALIASES = {"qwen": "hermes", "qwen2": "hermes", "qwen3": "hermes", "llama3": "llama3_json",
            "llama": "llama3_json", "text": "none"}

_HERMES_OPEN, _HERMES_CLOSE = "<tool_call>", "</tool_call>"
_PYTHON_TAG = "<|python_tag|>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# Deeper arguments are malformed: later json.loads/dumps of them (chat template, environment) would hit
# Python's recursion limit and crash the episode instead of answering the model.
MAX_NESTING = MAX_DEPTH


@dataclass
class ParsedCompletion:
    """The parsed form of one completion. Call ids are left empty; the backend assigns them."""

    content: Optional[str]
    tool_calls: list[ToolCall] = field(default_factory=list)
    problem: Optional[str] = None  # why tool-call-looking output was kept as text


def _as_text(text: str, problem: Optional[str] = None) -> ParsedCompletion:
    return ParsedCompletion(content=text if text.strip() else None, problem=problem)


class _Malformed(Exception):
    """A decoded call that must not become a tool call; the message is ParsedCompletion.problem's tail."""


def _usable(value: Any, what: str) -> None:
    """_Malformed unless ``value`` keeps the untrusted reader's rules (nesting, valid Unicode; NaN and Infinity
    are read as json.loads reads them)."""
    try:
        check_untrusted(value, MAX_NESTING, finite=False)
    except BadLine as e:
        raise _Malformed(f"has {what} that cannot be used ({e.about('the value')})") from None


def _call_from_object(obj: Any, arg_keys: tuple[str, ...]) -> ToolCall:
    """The call in one decoded JSON value; raises _Malformed when it is not a usable call."""
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        raise _Malformed("has no function name")
    try:
        check_untrusted(obj["name"])
    except BadLine:
        raise _Malformed("has a function name that is not valid Unicode") from None
    args: Any = {}
    for key in arg_keys:
        if key in obj:
            args = obj[key]
            break
    if isinstance(args, str):
        # Passed through untouched, so the environment judges it exactly as it would judge an API
        # model's raw arguments string (held to the same rules as that string).
        _usable(args, "arguments")
        if (bad := unsafe_json(args, MAX_NESTING)) is not None:
            raise _Malformed(f"has arguments that cannot be used ({bad.about('the text')})")
        return ToolCall(id="", name=obj["name"], arguments=args)
    _usable(args, "arguments")
    return ToolCall(id="", name=obj["name"], arguments=json.dumps(args, ensure_ascii=False))


def _decode_call(decoder: json.JSONDecoder, text: str, pos: int,
                 arg_keys: tuple[str, ...]) -> tuple[ToolCall, int]:
    """Decode the call whose JSON starts at ``pos``; returns it and the end position. Raises _Malformed."""
    try:
        obj, end = decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):  # JSONDecodeError, int digit limit, deep nesting
        raise _Malformed("is not valid JSON") from None
    return _call_from_object(obj, arg_keys), end


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
            call, end = _decode_call(decoder, text, body, ("arguments", "parameters"))
        except _Malformed as why:
            return _as_text(text, f"tool call {len(calls) + 1} {why}")
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
            call, pos = _decode_call(decoder, body, pos, ("parameters", "arguments"))
        except _Malformed as why:
            return _as_text(text, f"tool call {len(calls) + 1} {why}")
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
