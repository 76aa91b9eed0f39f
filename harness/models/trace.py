"""Per-turn token records from the local backends, for training without re-tokenising.

Every completion a local backend generates becomes a :class:`TurnRecord`: the exact prompt token ids the
model saw, the generated ids verbatim (the stop token included when one was produced) and the log-probability
of each generated id. To collect the records of one episode, run the episode inside :func:`record_turns`:

    with record_turns() as turns:
        result = await run_episode(benchmark, task, ModelAgent(model), user)
    # turns: every completion made for this episode, in order

The recorder is a context variable, so concurrent episodes (separate asyncio tasks) sharing one model each
see only their own turns.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator, Optional

from ..types import Message


@dataclass
class TurnRecord:
    """One generated turn. ``logprobs[i]`` is the log-probability of ``completion_ids[i]`` under the
    distribution it was sampled from: the model's softmax after temperature scaling and before top-p
    truncation (temperature 0, greedy, uses temperature 1). ``text`` is the decoded completion without its
    stop token, as the parser saw it; ``message`` is the parsed result."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" (a stop token was generated) or "length" (the token budget ran out)
    text: str
    message: Message
    seed: Optional[int] = None
    reasoning: Optional[str] = None  # thinking taken out of ``text`` before parsing (reasoning templates)


_current: ContextVar[Optional[list[TurnRecord]]] = ContextVar("mua_turn_records", default=None)


@contextmanager
def record_turns() -> Iterator[list[TurnRecord]]:
    """Collect the turns generated in this context (this asyncio task and the tasks it starts)."""
    turns: list[TurnRecord] = []
    token = _current.set(turns)
    try:
        yield turns
    finally:
        _current.reset(token)


def emit(record: TurnRecord) -> None:
    """Hand a record to the active recorder, if any."""
    turns = _current.get()
    if turns is not None:
        turns.append(record)
