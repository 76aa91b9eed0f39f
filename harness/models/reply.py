"""How a local completion becomes the assistant's turn: reasoning split off, tool calls parsed, call ids
derived from the token streams. Shared by evaluation (LocalChatModel) and training (the policy)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Callable, Optional

from ..types import Message, ToolCall
from .parsers import THINK_OPEN, ParsedCompletion, split_reasoning


def call_id(prompt_ids: list[int], completion_ids: list[int], index: int) -> str:
    """A tool-call id that depends only on the token streams, so reruns give the same ids."""
    key = json.dumps([len(prompt_ids), prompt_ids[-256:], completion_ids, index]).encode()
    return "call_" + hashlib.sha256(key).hexdigest()[:24]


@dataclass
class AssistantReply:
    """A completion read as the assistant's turn."""

    message: Message
    reasoning: Optional[str]  # thinking taken out before parsing (reasoning templates), else None
    problem: Optional[str]  # why tool-call-looking output was kept as text (see ParsedCompletion)


def assistant_reply(text: str, parse: Callable[[str], ParsedCompletion], *, split_thinking: bool,
                    prompt_ids: list[int], completion_ids: list[int]) -> AssistantReply:
    """The one way a local completion becomes an assistant message (evaluation and training alike).
    ``text`` is the decoded completion without its stop token; ``split_thinking`` is
    ``template_thinks(chat_template)``; call ids come from the token streams (see :func:`call_id`)."""
    reasoning, answer = split_reasoning(text) if split_thinking else (None, text)
    parsed = parse(answer)
    calls = [ToolCall(id=call_id(prompt_ids, completion_ids, i), name=c.name, arguments=c.arguments)
             for i, c in enumerate(parsed.tool_calls)]
    message = Message(role="assistant", content=parsed.content, tool_calls=calls or None)
    return AssistantReply(message=message, reasoning=reasoning, problem=parsed.problem)


def template_thinks(chat_template: Optional[str]) -> bool:
    """Whether a chat template is a reasoning model's (mentions ``<think>``): its completions are split."""
    return THINK_OPEN in (chat_template or "")
