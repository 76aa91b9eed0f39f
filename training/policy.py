"""The training policy: a chat model for one episode that keeps the episode's exact token stream.

The runner sees an ordinary :class:`~mua.harness.interfaces.ChatModel` (wrapped in the same ``ModelAgent``
that ``mua eval`` uses): the agent's view of the conversation in, an assistant message out. Inside, the first
call renders and encodes the prompt; every later call appends only the template suffix of the messages that
arrived since its previous reply (see :mod:`.stream`) and generates from the stream's ids.

Budgets: ``max_turn_tokens`` caps one reply (a cut reply is still parsed and played, and counted as
clipped); ``max_completion_tokens`` caps the stream after the prompt (generated and context tokens). When
the next reply would have no room left, :class:`BudgetExhausted` is raised; the rollout catches it and marks
the episode truncated (the runner loop is not duplicated or bypassed).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

from mua.harness.interfaces import Agent
from mua.harness.models.chat_template import encode_prompt, render_prompt
from mua.harness.models.generation import GenerationRequest
from mua.harness.models.parsers import ParsedCompletion
from mua.harness.models.reply import assistant_reply, template_thinks
from mua.harness.models.stream import StreamError, TemplateSuffixer, TokenStream
from mua.harness.seeds import turn_seed
from mua.harness.types import Message, ToolSpec, Usage

from .backends import Backend
from .credit import TurnRecord


class BudgetExhausted(Exception):
    """The episode's completion-token budget is spent; the episode ends truncated."""


@dataclass
class Budget:
    max_turn_tokens: int = 256
    max_completion_tokens: int = 2048


@dataclass
class Sampling:
    temperature: float = 1.0
    top_p: float = 1.0


class StreamPolicy:
    """One episode's policy. ``seed`` makes every request's sample reproducible and distinct per turn."""

    def __init__(self, backend: Optional[Backend], tokenizer, suffixer: TemplateSuffixer, stop_ids: set[int],
                 parse: Callable[[str], ParsedCompletion], budget: Budget, sampling: Sampling, seed: int,
                 max_context: Optional[int] = None, withheld_reply: Optional[str] = None):
        self.backend, self.tokenizer, self.suffixer = backend, tokenizer, suffixer
        # with a text here, each turn also records its context with the user's reply replaced by this text
        # (the counterfactual of the information-gain turn reward, training/credit.py)
        self.withheld_reply = withheld_reply
        self.turn_records: list[TurnRecord] = []  # each reply's place in the stream
        # a tree branch's shared prefix (training/tree.py): the generated ids of the first turns, replayed as
        # context (trained once, in the episode they came from) before the policy samples its own turns
        self.replay: list[list[int]] = []
        self._withheld: Optional[tuple[int, list[int]]] = None
        self.stop_ids, self.parse, self.budget, self.sampling = set(stop_ids), parse, budget, sampling
        self.seed, self.max_context = seed, max_context
        self._thinks = template_thinks(getattr(tokenizer, "chat_template", None))
        self.stream: Optional[TokenStream] = None
        self.turns = 0
        self.clipped_turns = 0  # replies cut by max_turn_tokens
        self.last_view: list[Message] = []
        self._tools: Optional[list[str]] = None
        self._seen = 0
        self._stopped = True  # the latest reply ended in a stop token
        self._closed = True  # ... in the template's own end-of-turn token, so the stream needs no closing
        self._last_reply: Optional[Message] = None

    @property
    def last_reply_cut(self) -> bool:
        """Whether the latest reply was cut by the token budget (no stop token)."""
        return not self._stopped

    def _advance(self, messages: list[Message], tools: Optional[list[ToolSpec]]) -> None:
        """Bring the stream up to ``messages`` (the agent's view, system prompt first)."""
        names = [t.name for t in tools or []]
        self.last_view = list(messages)
        if self.stream is None:
            self._tools = names
            text = render_prompt(self.tokenizer, messages, tools)
            self.stream = TokenStream(encode_prompt(self.tokenizer, text))
            return
        if len(messages) <= self._seen or messages[self._seen - 1] != self._last_reply:
            raise StreamError("the conversation given to the policy does not extend its previous reply")
        tools_turn = ""
        if names != self._tools:  # tools added mid-episode: the template's tools turn comes first (masked)
            system = [m for m in messages[:1] if m.role == "system"]
            tools_turn, self._tools = self.suffixer.tools_turn(system, list(tools or [])), names
        new = messages[self._seen:]
        kept = len(self.live_stream.ids)
        self.live_stream.add_context(self.suffixer.suffix_ids(new, self._closed, tools_turn))
        replied = [i for i, m in enumerate(new) if m.role == "user" and m.content]
        if self.withheld_reply is not None and replied:
            masked = [replace(m, content=self.withheld_reply) if i in replied else m for i, m in enumerate(new)]
            self._withheld = (kept, self.suffixer.suffix_ids(masked, self._closed, tools_turn))

    @property
    def live_stream(self) -> TokenStream:
        """The episode's stream, which exists once the policy has seen the conversation (``_advance``)."""
        if self.stream is None:
            raise StreamError("the policy has not seen the conversation yet")
        return self.stream

    def _room(self) -> int:
        stream = self.live_stream
        room = min(self.budget.max_turn_tokens, self.budget.max_completion_tokens - len(stream.completion_ids))
        if self.max_context is not None:
            room = min(room, self.max_context - len(stream.ids))
        if room < 1:
            raise BudgetExhausted(f"completion budget of {self.budget.max_completion_tokens} tokens spent "
                                  f"after {self.turns} replies")
        return room

    def _reply(self, ids: list[int], messages: list[Message], stopped: bool) -> Message:
        """The assistant message of the generated ``ids``. A reply that ended in another stop token than the
        template's end of turn (Qwen's <|endoftext|>) keeps that token in the stream and is closed like a
        cut reply: the template's end-of-turn text follows as context, so the stream stays what the chat
        template renders for a reply whose text ends in that token."""
        body = ids[:-1] if stopped else ids
        text = self.tokenizer.decode(body, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        prompt = self.live_stream.ids[:len(self.live_stream.ids) - len(ids)]
        reply = assistant_reply(text, self.parse, split_thinking=self._thinks, prompt_ids=prompt,
                                completion_ids=ids).message  # as `mua eval` reads a local model's completion
        self.turns += 1
        self.clipped_turns += not stopped
        self._stopped, self._seen, self._last_reply = stopped, len(messages) + 1, reply
        self._closed = stopped and self.suffixer.closes_turn(ids[-1])
        return reply

    def _record_turn(self, generated: int) -> None:
        """The coming reply's span in the completion (and its counterfactual context, if one was built)."""
        start = len(self.live_stream.completion_ids)
        self.turn_records.append(TurnRecord(start, start + generated, self._withheld))
        self._withheld = None

    async def chat(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                   seed: Optional[int] = None) -> tuple[Message, Usage]:
        if self.backend is None:
            raise StreamError("this policy only replays a teacher's messages: it has no backend to generate with")
        self._advance(messages, tools)
        if self.turns < len(self.replay):
            ids = self.replay[self.turns]
            self._withheld = None
            self.live_stream.add_context(ids)
            return self._reply(ids, messages, bool(ids) and ids[-1] in self.stop_ids), Usage()
        request = GenerationRequest(self.live_stream.ids, self._room(), self.sampling.temperature,
                                    self.sampling.top_p, turn_seed(self.seed, self.turns))
        result = await self.backend.generate(request)
        self._record_turn(len(result.token_ids))
        self.live_stream.add_generated(list(result.token_ids), list(result.logprobs))
        stopped = bool(result.token_ids) and result.token_ids[-1] in self.stop_ids
        reply = self._reply(list(result.token_ids), messages, stopped)
        return reply, Usage(requests=1, prompt_tokens=len(request.prompt_ids),
                            completion_tokens=len(result.token_ids))

    def force(self, messages: list[Message], tools: Optional[list[ToolSpec]], target: Message) -> Message:
        """Teacher forcing: append the template's own ids for ``target`` as if generated (log-prob 0)."""
        self._advance(messages, tools)
        ids = self.suffixer.assistant_ids(target)
        self._record_turn(len(ids))
        self.live_stream.add_generated(ids, [0.0] * len(ids))
        return self._reply(ids, messages, stopped=True)


class TeacherForcedAgent(Agent):
    """Plays ``teacher``'s messages (e.g. a benchmark's gold agent) through a policy's token stream, to
    build supervised warm-up data with exactly the tokens the policy will later generate from."""

    def __init__(self, teacher: Agent, policy: StreamPolicy):
        self.teacher, self.policy = teacher, policy
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Message:
        target = await self.teacher.respond(messages, tools)
        return self.policy.force(messages, tools or None, target)
