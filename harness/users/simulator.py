"""Users: an LLM user simulator, and a scripted user (fixed turns; also the gold user)."""
from __future__ import annotations

from typing import Optional, Sequence

from ..interfaces import ChatModel, User
from ..seeds import turn_seed
from ..types import Message, ToolSpec, Usage


def user_view(system_prompt: str, messages: list[Message]) -> list[Message]:
    """The conversation from the simulated user's side: roles are flipped (the agent's text becomes the
    'user' turn of the simulator's model), the agent's tool traffic is hidden, and the user's own tool calls
    and their results are kept (tau2 telecom)."""
    own_calls: set[str] = set()
    view = [Message(role="system", content=system_prompt)]
    for m in messages:
        if m.role == "assistant":
            if m.content:  # tool-call-only steps are invisible to the user
                view.append(Message(role="user", content=m.content))
        elif m.role == "user":
            if m.tool_calls:
                own_calls.update(c.id for c in m.tool_calls)
            view.append(Message(role="assistant", content=m.content, tool_calls=m.tool_calls))
        elif m.role == "tool" and m.tool_call_id in own_calls:
            view.append(m)
    return view


class SimulatedUser(User):
    """A user played by a chat model from a system prompt (the task scenario plus the benchmark's user
    guidelines). The conversation ends when the user's message contains one of ``stop_markers``.

    ``seed`` is the episode's user seed; each request of the episode gets its own seed derived from it and
    the request's position, so a sampling user model does not repeat itself and reruns are identical."""

    def __init__(self, model: ChatModel, system_prompt: str, stop_markers: Sequence[str] = (),
                 seed: Optional[int] = None):
        self.model = model
        self.system_prompt = system_prompt
        self.stop_markers = tuple(stop_markers)
        self.seed = seed
        self.usage = Usage()
        self.requests = 0

    def view(self, messages: list[Message]) -> list[Message]:
        """The conversation as the user model is asked to continue it (``mua export --role user`` writes the same
        view, so a user model is trained on what it is later shown)."""
        return user_view(self.system_prompt, messages)

    def next_seed(self) -> Optional[int]:
        """The seed of the user model's next request in this episode."""
        self.requests += 1
        return None if self.seed is None else turn_seed(self.seed, self.requests - 1)

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        reply, usage = await self.model.chat(self.view(messages), tools or None,
                                             seed=self.next_seed())
        self.usage.add(usage)
        return Message(role="user", content=reply.content, tool_calls=reply.tool_calls)

    def is_stop(self, message: Message) -> bool:
        return any(marker in message.text for marker in self.stop_markers)


class ScriptedUser(User):
    """Says fixed messages in order (each a Message or a plain string), then stops.

    A scripted message may carry tool_calls (the gold user of tau2 telecom acts on the phone)."""

    def __init__(self, turns: Sequence[Message | str], stop_markers: Sequence[str] = ()):
        self.turns = [t if isinstance(t, Message) else Message(role="user", content=t) for t in turns]
        self.stop_markers = tuple(stop_markers)
        self.usage = Usage()
        self._pos = 0

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        if self._pos >= len(self.turns):
            return None
        self._pos += 1
        return self.turns[self._pos - 1]

    def is_stop(self, message: Message) -> bool:
        return any(marker in message.text for marker in self.stop_markers)



