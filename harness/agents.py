"""Agents: a chat model behind any client, and a scripted agent (the gold agent replays reference actions)."""
from __future__ import annotations

from typing import Optional

from .interfaces import Agent, ChatModel
from .types import Message, ToolSpec, Usage


class ModelAgent(Agent):
    """An agent played by a chat model. ``seed`` is passed on every request so reruns are reproducible."""

    def __init__(self, model: ChatModel, seed: Optional[int] = None):
        self.model = model
        self.seed = seed
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Message:
        reply, usage = await self.model.chat(messages, tools or None, seed=self.seed)
        self.usage.add(usage)
        return Message(role="assistant", content=reply.content, tool_calls=reply.tool_calls)


class ScriptedAgent(Agent):
    """Plays fixed assistant messages, one script per user turn.

    ``turns[i]`` is the list of assistant messages for user turn ``i``, emitted one per call; when a turn's
    script runs out the agent says ``fallback`` (a plain text answer, which ends its turn).
    """

    def __init__(self, turns: list[list[Message]], fallback: str = "Done."):
        self.turns = turns
        self.fallback = fallback
        self.usage = Usage()
        self._turn = -1
        self._pos = 0

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Message:
        turn = sum(1 for m in messages if m.role == "user") - 1
        if turn != self._turn:
            self._turn, self._pos = turn, 0
        script = self.turns[turn] if 0 <= turn < len(self.turns) else []
        if self._pos < len(script):
            self._pos += 1
            return script[self._pos - 1]
        return Message(role="assistant", content=self.fallback)
