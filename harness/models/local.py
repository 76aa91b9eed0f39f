"""Local checkpoints as chat models: the part shared by the transformers and vLLM backends.

A :class:`LocalChatModel` renders the conversation with the checkpoint's chat template, queues the prompt
for the backend's batched generator, parses the completion into an assistant message with the tool-call
parser the template implies (or the one named), and records the turn's token ids and log-probabilities
(see :mod:`.trace`). Backends only implement ``_generate_batch``; :mod:`.checkpoint` picks one.

Multi-turn prompts are incremental, as in training (:mod:`.stream`): when the conversation extends one this
model replied to, the next prompt is that prompt, the reply's ids verbatim and the chat template's suffix for
the new messages; it is never re-rendered and re-tokenised, so a checkpoint sees the same tokens in
``mua eval`` as in RL, and backends can reuse the earlier turns' KV cache.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections import OrderedDict
from typing import Any, Optional

from ..errors import ConfigError, ModelError
from ..types import Message, ToolSpec, Usage
from .activity import METER, LengthWatch
from .batching import MicroBatcher
from .chat_template import encode_prompt, render_prompt
from .generation import GenerationRequest, GenerationResult
from .parsers import get_parser, parser_for_template
from .reply import assistant_reply, template_thinks
from .stream import StreamError, TemplateSuffixer, stop_text_of
from .trace import TurnRecord, emit

LOCAL_PARAMS = {"parser", "max_new_tokens", "temperature", "top_p", "max_batch", "default_seed", "chat_template"}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def check_local_params(params: dict[str, Any]) -> None:
    """Raise ConfigError naming the first shared local-model parameter with a wrong type or range (values
    usually come from ``--agent-params`` JSON, so "8" or 0 must be refused before a model is loaded)."""
    def bad(name: str, want: str) -> ConfigError:
        return ConfigError(f"local model parameter {name} must be {want}, got {params[name]!r}")

    for name in ("max_new_tokens", "max_batch"):
        if name in params and not (_is_int(params[name]) and params[name] >= 1):
            raise bad(name, "an integer >= 1")
    if "default_seed" in params and not (_is_int(params["default_seed"]) and params["default_seed"] >= 0):
        raise bad("default_seed", "an integer >= 0")
    if "temperature" in params and not (_is_number(params["temperature"]) and params["temperature"] >= 0):
        raise bad("temperature", "a number >= 0 (0 is greedy)")
    if "top_p" in params and not (_is_number(params["top_p"]) and 0 < params["top_p"] <= 1):
        raise bad("top_p", "a number in (0, 1]")
    if params.get("parser") is not None and not isinstance(params["parser"], str):
        raise bad("parser", "a parser name string")
    if params.get("chat_template") is not None and not isinstance(params["chat_template"], str):
        raise bad("chat_template", "hermes, llama3_json or a template file path")


def stop_ids_for(tokenizer, generation_config) -> set[int]:
    """Token ids that end a completion: the generation config's EOS ids and the tokenizer's EOS."""
    ids: set[int] = set()
    for value in (getattr(generation_config, "eos_token_id", None), getattr(tokenizer, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif value:
            ids.update(int(v) for v in value)
    return ids


class LocalChatModel:
    """Base class of the local backends (implements the ChatModel protocol).

    ``temperature`` 0 means greedy decoding. ``seed`` None in :meth:`chat` uses ``default_seed``, so every
    run is reproducible: the same seed and the same conversation give the same completion.
    """

    def __init__(self, tokenizer, *, stop_ids: set[int], max_context: Optional[int] = None,
                 parser: Optional[str] = None, max_new_tokens: int = 512, temperature: float = 0.0,
                 top_p: float = 1.0, max_batch: int = 16, default_seed: int = 0):
        check_local_params({"parser": parser, "max_new_tokens": max_new_tokens, "temperature": temperature,
                            "top_p": top_p, "max_batch": max_batch, "default_seed": default_seed})
        self.tokenizer = tokenizer
        self.stop_ids = set(stop_ids)
        self.max_context = max_context
        self.parser_name = parser or parser_for_template(getattr(tokenizer, "chat_template", None))
        try:
            self.parse = get_parser(self.parser_name)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.splits_reasoning = template_thinks(getattr(tokenizer, "chat_template", None))
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.default_seed = default_seed
        self.batcher: MicroBatcher[GenerationRequest, GenerationResult] = MicroBatcher(
            self._generate_batch, max_batch=max_batch)
        try:
            self.suffixer: Optional[TemplateSuffixer] = TemplateSuffixer(
                tokenizer, stop_text_of(tokenizer, self.stop_ids))
        except StreamError:  # a template whose turns cannot be appended: every prompt is rendered whole
            self.suffixer = None
        # conversation digest (through the model's reply) -> (token ids through the reply, reply closed)
        self._streams: OrderedDict[str, tuple[list[int], bool]] = OrderedDict()
        self.max_streams = 1024
        self.length_watch = LengthWatch("the local model")

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        raise NotImplementedError

    def prompt_ids(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None) -> list[int]:
        """The prompt for ``messages``: the kept stream of the conversation it extends, followed by the template
        suffix of the messages since (see the module docstring); else the whole conversation rendered."""
        digests = _prefix_digests(messages, tools)
        if self.suffixer is not None:
            for seen in range(len(messages) - 1, 0, -1):
                kept = self._streams.get(digests[seen])
                if kept is not None and messages[seen - 1].role == "assistant":
                    ids, closed = kept
                    try:
                        return ids + self.suffixer.suffix_ids(messages[seen:], closed)
                    except StreamError:
                        break
        return encode_prompt(self.tokenizer, render_prompt(self.tokenizer, messages, tools))

    def _keep_stream(self, messages: list[Message], tools: Optional[list[ToolSpec]], prompt: list[int],
                     completion: list[int], reply: Message) -> None:
        if self.suffixer is None:
            return
        stopped = bool(completion) and completion[-1] in self.stop_ids
        closed = stopped and self.suffixer.closes_turn(completion[-1])
        view = Message(role="assistant", content=reply.content, tool_calls=reply.tool_calls)  # as ModelAgent
        key = _prefix_digests(list(messages) + [view], tools)[-1]
        self._streams[key] = (prompt + list(completion), closed)
        self._streams.move_to_end(key)
        while len(self._streams) > self.max_streams:
            self._streams.popitem(last=False)

    def completion_text(self, token_ids: list[int]) -> str:
        """The completion as text for the parser: the trailing stop token dropped, special tokens kept (some
        formats mark tool calls with them)."""
        ids = token_ids[:-1] if token_ids and token_ids[-1] in self.stop_ids else token_ids
        return self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    async def chat(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                   seed: Optional[int] = None) -> tuple[Message, Usage]:
        prompt = self.prompt_ids(messages, tools)
        budget = self.max_new_tokens
        if self.max_context is not None:
            budget = min(budget, self.max_context - len(prompt))
            if budget < 1:
                raise ModelError(f"the prompt is {len(prompt)} tokens; the model's context is "
                                 f"{self.max_context} tokens")
        seed = self.default_seed if seed is None else seed
        METER.start_turn()
        finish: Optional[str] = None
        try:
            result = await self.batcher.submit(GenerationRequest(prompt, budget, self.temperature, self.top_p, seed))
            finish = result.finish_reason
        finally:
            METER.add_turn(finish)
        self.length_watch.saw(result.finish_reason, len(result.token_ids))
        text = self.completion_text(result.token_ids)
        reply = assistant_reply(text, self.parse, split_thinking=self.splits_reasoning, prompt_ids=prompt,
                                completion_ids=result.token_ids)
        self._keep_stream(messages, tools, prompt, result.token_ids, reply.message)
        emit(TurnRecord(prompt_ids=prompt, completion_ids=list(result.token_ids), logprobs=list(result.logprobs),
                        finish_reason=result.finish_reason, text=text, message=reply.message, seed=seed,
                        reasoning=reply.reasoning))
        usage = Usage(requests=1, prompt_tokens=len(prompt), completion_tokens=len(result.token_ids))
        return reply.message, usage


def _prefix_digests(messages: list[Message], tools: Optional[list[ToolSpec]]) -> list[str]:
    """``digests[k]`` identifies the tool list and ``messages[:k]``."""
    specs = [[t.name, t.description, t.parameters] for t in tools or []]
    running = hashlib.sha256(json.dumps(specs, sort_keys=True).encode())
    digests = [running.hexdigest()]
    for message in messages:
        running.update(json.dumps(message.to_dict(), sort_keys=True).encode() + b"\x00")
        digests.append(running.hexdigest())
    return digests

