"""The token stream of one episode, built once and never re-tokenised.

The first agent prompt is rendered with the chat template and encoded. After that the stream only grows:
the ids the policy generated are appended verbatim (mask 1, with their sampling log-probabilities), and
everything that happens between two agent turns (tool results, the user's reply) is appended as the chat
template's *suffix* for those messages (mask 0). Decoding the generated ids and re-encoding the whole
conversation would not give the same ids back (tokenisation is not a bijection), and the log-probabilities
the trainer recomputes would then no longer match the ones the sampler used.

Suffix text comes from rendering the new messages after a fixed two-message stub and cutting the stub's
rendering off the front, so templates that treat the first turn specially (system text, tool lists) do not
leak into it. The text the template writes after an assistant turn's stop token (``"\\n"`` in ChatML) is
written in front of the suffix, as the template would.
"""
from __future__ import annotations

from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..types import Message, ToolSpec
from .chat_template import encode_prompt, template_messages

_STUB = [Message(role="user", content="."), Message(role="assistant", content=".")]
# Suffixes and replies whose ids a memoising suffixer keeps (the most recent): SFT data repeats the same questions
# and suffixes thousands of times (a resampled lesson differs in its names only), and rendering plus encoding them
# is most of building the data. Live episodes repeat little, so their suffixers keep none.
MEMO_SIZE = 4096


class StreamError(RuntimeError):
    """The conversation can no longer be appended to the token stream (history edited, a template that
    cannot render a suffix)."""


@dataclass
class TokenStream:
    """``prompt_ids`` is the first rendered prompt; ``completion_ids`` everything after it, with
    ``env_mask`` 1 on generated ids and 0 on template suffixes, and ``logprobs`` (0.0 where masked out)."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    def add_generated(self, ids: list[int], logprobs: list[float]) -> None:
        if len(ids) != len(logprobs):
            raise ValueError(f"{len(ids)} generated ids but {len(logprobs)} log-probabilities")
        self.completion_ids += ids
        self.env_mask += [1] * len(ids)
        self.logprobs += [float(x) for x in logprobs]

    def add_context(self, ids: list[int]) -> None:
        self.completion_ids += ids
        self.env_mask += [0] * len(ids)
        self.logprobs += [0.0] * len(ids)

    @property
    def ids(self) -> list[int]:
        """What the policy conditions on next: the prompt followed by the completion so far."""
        return self.prompt_ids + self.completion_ids

    @property
    def generated_tokens(self) -> int:
        return sum(self.env_mask)

    def trimmed(self) -> "TokenStream":
        """The stream cut after its last generated id: trailing context carries no training signal, and the
        trainer judges truncation by the last token (a stop token means the last turn finished)."""
        end = len(self.env_mask)
        while end and not self.env_mask[end - 1]:
            end -= 1
        return TokenStream(list(self.prompt_ids), self.completion_ids[:end], self.env_mask[:end],
                           self.logprobs[:end])


class TemplateSuffixer:
    """Renders the text that follows an assistant turn, with the tokenizer's own chat template (``memo``: keeping
    the ids of recent suffixes and replies, for building SFT data)."""

    def __init__(self, tokenizer, stop_text: str, memo: bool = False):
        self.tokenizer = tokenizer
        self.memo = memo
        self.stop_text = stop_text
        stub = self._render(_STUB, generation_prompt=False)
        cut = stub.rfind(stop_text)
        if cut < 0:
            raise StreamError(f"the chat template does not end assistant turns with {stop_text!r}")
        self._stub = stub
        self.after_stop = stub[cut + len(stop_text):]  # e.g. "\n" in ChatML
        ids = encode_prompt(tokenizer, stop_text)
        self.stop_id: Optional[int] = ids[0] if len(ids) == 1 else None
        self._before_reply = self._render(_STUB[:1], generation_prompt=True)
        self._memo: OrderedDict[tuple, array] = OrderedDict()

    def _remembered(self, key: tuple, build: Callable[[], list[int]]) -> list[int]:
        """``build()``'s ids; with ``memo``, kept for the MEMO_SIZE most recent keys (bounded, 4 bytes an id)."""
        if not self.memo:
            return build()
        ids = self._memo.get(key)
        if ids is None:
            ids = self._memo[key] = array("i", build())
            if len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(key)
        return list(ids)

    def closes_turn(self, token_id: int) -> bool:
        """Whether generating ``token_id`` ends the assistant turn as the template does (its stop token)."""
        return self.stop_id is None or token_id == self.stop_id

    def _render(self, messages: list[Message], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(template_messages(messages), tokenize=False,
                                                  add_generation_prompt=generation_prompt)

    def suffix_text(self, new_messages: list[Message], stopped: bool, tools_turn: str = "") -> str:
        """Text that closes the previous assistant turn (``stopped``: whether it ended in the template's own
        stop token) and renders ``new_messages`` up to the next assistant generation prompt, after
        ``tools_turn`` (see :meth:`tools_turn`) when the agent's tools changed."""
        full = self._render(_STUB + list(new_messages), generation_prompt=True)
        if not full.startswith(self._stub):
            raise StreamError("the chat template renders earlier turns differently once later turns follow; "
                              "its suffixes cannot be appended to a token stream")
        head = self.after_stop if stopped else self.stop_text + self.after_stop
        return head + tools_turn + full[len(self._stub):]

    def suffix_ids(self, new_messages: list[Message], stopped: bool, tools_turn: str = "") -> list[int]:
        return self._remembered(("suffix", repr(new_messages), stopped, tools_turn), lambda: encode_prompt(
            self.tokenizer, self.suffix_text(new_messages, stopped, tools_turn)))

    def tools_turn(self, system: list[Message], tools: list[ToolSpec]) -> str:
        """The turn in which the chat template presents ``tools`` (with the ``system`` message, if any), as it
        renders it at the start of a conversation: how a tool list that changed mid-episode (BFCL miss_func)
        enters the stream. The prompt at the top keeps the earlier tools; this turn follows as context."""
        user = _STUB[:1]  # templates render no conversation without a message: one user turn, cut off again
        try:
            text = self.tokenizer.apply_chat_template(template_messages(list(system) + user),
                                                      tools=[t.to_openai() for t in tools], tokenize=False,
                                                      add_generation_prompt=False)
        except Exception as exc:  # jinja TemplateError and friends
            raise StreamError(f"the chat template cannot present a changed tool list: {exc}") from None
        user_turn = self._render(_STUB + user, generation_prompt=False)[len(self._stub):]
        if not user_turn or not text.endswith(user_turn):
            raise StreamError("the chat template does not present tools in a turn of their own; a tool list that "
                              "changes mid-episode cannot be appended to the stream")
        text = text[:len(text) - len(user_turn)]
        # The sequence's BOS is already at the start of the stream; drop it only where the template writes it
        # before the first turn (Llama). SmolLM2's BOS is <|im_start|>, which opens every turn and must stay.
        alone = self._render(user, generation_prompt=False)
        lead = alone[:len(alone) - len(user_turn)] if alone.endswith(user_turn) else alone
        bos = getattr(self.tokenizer, "bos_token", None)
        if bos and lead.startswith(bos) and text.startswith(bos):
            text = text[len(bos):]
        if not text:
            raise StreamError("the chat template renders no tool list; a changed tool list cannot be shown")
        return text

    def assistant_ids(self, message: Message) -> list[int]:
        """The template's own token ids for an assistant message, through its stop token (teacher forcing)."""
        return self._remembered(("reply", repr(message)), lambda: self._assistant_ids(message))

    def _assistant_ids(self, message: Message) -> list[int]:
        before = self._before_reply
        full = self._render(_STUB[:1] + [message], generation_prompt=False)
        if not full.startswith(before):
            raise StreamError("the chat template's generation prompt is not a prefix of the assistant turn")
        body = full[len(before):]
        cut = body.rfind(self.stop_text)
        if cut < 0:
            raise StreamError(f"assistant turn rendered without {self.stop_text!r}")
        return encode_prompt(self.tokenizer, body[:cut + len(self.stop_text)])


def stop_text_of(tokenizer, stop_ids: set[int]) -> str:
    """The text of the stop token that ends assistant turns (the tokenizer's EOS when it is a stop id)."""
    eos: Optional[int] = getattr(tokenizer, "eos_token_id", None)
    token = eos if eos in stop_ids else min(stop_ids)
    return tokenizer.decode([token], skip_special_tokens=False)
