"""The user side of ACEBench episodes, and upstream's loop counting.

Upstream runs one loop of at most 40 iterations; each adds one dialogue message (user, agent, or one execution
message answering all calls of an agent message). After the loop index passes 1, a new message containing
``finish conversation`` ends the dialogue, whoever says it. In mua terms one dialogue message is a user message,
an assistant message, or the run of tool messages that follow one assistant message; the first user message is
upstream's initial message, outside the loop. Both users below apply the finish rule at the exact loop index.

- multi_turn, :class:`AceSimulatedUser`: a SimulatedUser with the official prompt. Upstream's simulator first sees
  its system prompt and the greeting "Is there anything you need help with today?" as a user turn and answers it;
  that answer is the dialogue's first message. It then sees only the agent's text replies (with a leading
  ``user:``/``agent:`` removed), never tool traffic. Its own earlier replies are sent back with role
  ``assistant`` (upstream uses ``system``, which many chat templates reject mid-conversation).
- multi_step, :class:`MultiStepUser`: says the request once. Upstream hands every agent message to the executor;
  a text reply that is not a call list gets the official "Please do not ask me any questions..." answer, which
  mua sends as the next user message, so the agent keeps working until it says ``finish conversation``.
"""
from __future__ import annotations

from typing import Optional

from mua.harness.interfaces import ChatModel
from mua.harness.types import Message, ToolSpec
from mua.harness.users.simulator import ScriptedUser, SimulatedUser

from .data import FINISH
from .environment import NOT_EXECUTED as NUDGE  # the official decode-failure answer

MAX_DIALOG_TURNS = 40  # protocol_constants limits.max_dialog_turns


def dialogue_length(messages: list[Message]) -> int:
    """Upstream dialogue messages in a mua trajectory (the initial user message included)."""
    count = 0
    previous_role = None
    for m in messages:
        if m.role in ("user", "assistant") or (m.role == "tool" and previous_role != "tool"):
            count += 1
        previous_role = m.role
    return count


def agent_finished(messages: list[Message]) -> bool:
    """The last message is an agent text saying ``finish conversation`` at a loop index above 1."""
    if not messages or messages[-1].role != "assistant" or messages[-1].tool_calls:
        return False
    return FINISH in messages[-1].text and dialogue_length(messages) - 2 > 1


def _strip_role_prefix(text: str) -> str:
    for prefix in ("user:", "agent:"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


class AceSimulatedUser(SimulatedUser):
    def __init__(self, model: ChatModel, system_prompt: str, greeting: str, seed: Optional[int] = None):
        super().__init__(model, system_prompt, stop_markers=(FINISH,), seed=seed)
        self.greeting = greeting
        self._stopping: Optional[Message] = None

    def view(self, messages: list[Message]) -> list[Message]:
        view = [Message(role="system", content=self.system_prompt), Message(role="user", content=self.greeting)]
        for m in messages:
            if m.role == "user":  # upstream (multi_turn/APIModel_user.py) keeps its own replies as "system"
                view.append(Message(role="system", content=m.content))
            elif m.role == "assistant" and not m.tool_calls and m.content:
                view.append(Message(role="user", content=_strip_role_prefix(m.content)))
        return view

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        if agent_finished(messages):
            return None
        reply, usage = await self.model.chat(self.view(messages), None, seed=self.next_seed())
        self.usage.add(usage)
        message = Message(role="user", content=reply.content)
        if FINISH in message.text and dialogue_length(messages) - 1 > 1:
            self._stopping = message
        return message

    def is_stop(self, message: Message) -> bool:
        return message is self._stopping


class MultiStepUser(ScriptedUser):
    def __init__(self, request: str):
        super().__init__([request])

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        if not messages:
            return await super().respond(messages, tools)
        if agent_finished(messages):
            return None
        return Message(role="user", content=NUDGE)


class GoldMultiTurnUser(ScriptedUser):
    """The gold user: states the instruction, then ends the dialogue once the agent has replied."""

    def __init__(self, instruction: str):
        super().__init__([instruction, FINISH], stop_markers=(FINISH,))
