"""Replaying a recorded trajectory through ``run_episode``: a replay agent and a replay user read their next
messages from the transcript, and the environment re-executes every tool call. Recorded tool results (and
system prompts) are dropped: they are never trusted."""
from __future__ import annotations

from collections import deque
from typing import Optional

from ..interfaces import Agent, User
from ..types import Message, ToolSpec, Usage


class Transcript:
    def __init__(self, messages: list[Message]):
        # (1-based position in the input, message), for error messages that point at the input
        self.queue = deque((i, m) for i, m in enumerate(messages, 1) if m.role in ("user", "assistant"))
        self._synced = False

    def take(self, role: str, played: list[Message]) -> Optional[Message]:
        if not self._synced:
            # The runner plays the benchmark's opening itself (tau2's greeting): a recorded copy is skipped.
            self._synced = True
            for m in played:
                if self.queue and _same(self.queue[0][1], m):
                    self.queue.popleft()
        if self.queue and self.queue[0][1].role == role:
            return self.queue.popleft()[1]
        return None

    def leftover(self) -> Optional[str]:
        """Why the runner could not consume the whole transcript, or None when it did."""
        if not self.queue:
            return None
        position, message = self.queue[0]
        return f"message {position} ({message.role}) was not played: the episode ended before it"


def _same(a: Message, b: Message) -> bool:
    return a.role == b.role and (a.content or "") == (b.content or "") and not a.tool_calls


class ReplayAgent(Agent):
    def __init__(self, transcript: Transcript):
        self.transcript = transcript
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        return self.transcript.take("assistant", messages)


class ReplayUser(User):
    def __init__(self, transcript: Transcript):
        self.transcript = transcript
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        return self.transcript.take("user", messages)
