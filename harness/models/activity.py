"""What models are doing while a run waits on them: the live part of the progress line, and a one-line report
when a model keeps generating until its token limit cuts it off.

Local backends count every generated token as it is decoded and every finished turn (:data:`METER`); the run's
progress line reads :meth:`GenerationMeter.text` between finished episodes, so a slow local model shows turns
and tokens per second instead of a bar that sits still. Endpoints and local models alike feed a
:class:`LengthWatch`, which says once, with the fix, when replies end at the token limit several times in a row
(a small model behind ``vllm serve`` without ``max_tokens`` generates until its context is full).
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Optional

LENGTH_STREAK = 3  # replies in a row cut at the token limit before the report


class GenerationMeter:
    """Replies and tokens of local models in this process, counted as they happen (decoding runs in worker
    threads): replies started and finished, tokens as each decoding step produces them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.turns = self.tokens = self.cut = self.generating = 0
        self.started: Optional[float] = None  # the first generated token

    def start_turn(self) -> None:
        with self._lock:
            self.generating += 1

    def add_tokens(self, count: int) -> None:
        with self._lock:
            if self.started is None:
                self.started = time.monotonic()
            self.tokens += count

    def add_turn(self, finish_reason: Optional[str]) -> None:
        """A reply ended (``finish_reason`` None: it failed)."""
        with self._lock:
            self.generating = max(0, self.generating - 1)
            self.turns += finish_reason is not None
            self.cut += finish_reason == "length"

    def tokens_per_s(self) -> Optional[float]:
        elapsed = time.monotonic() - self.started if self.started is not None else 0.0
        return self.tokens / elapsed if elapsed > 0 else None

    def text(self) -> str:
        """``"model replies 3 done, 2 generating, 1,234 tokens, 8.1 tok/s"`` (and replies cut at the limit), or ""
        before any local model was asked for a reply."""
        if not (self.turns or self.generating or self.tokens):
            return ""
        rate = self.tokens_per_s()
        speed = f", {rate:.1f} tok/s" if rate is not None else " (reading the prompt)"
        cut = f", {self.cut} cut at max tokens" if self.cut else ""
        return f"model replies {self.turns} done, {self.generating} generating, {self.tokens:,} tokens{speed}{cut}"


METER = GenerationMeter()


class LengthWatch:
    """Reports once when ``LENGTH_STREAK`` replies in a row of one model end at the token limit."""

    def __init__(self, model: str, streak: int = LENGTH_STREAK):
        self.model, self.streak = model, streak
        self.run = 0
        self.reported = False

    def saw(self, finish_reason: Optional[str], completion_tokens: int) -> None:
        self.run = self.run + 1 if finish_reason == "length" else 0
        if self.run >= self.streak and not self.reported:
            self.reported = True
            print(f"mua: warning: {self.model}: {self.run} replies in a row ran to the token limit "
                  f"(finish_reason \"length\", {completion_tokens} tokens): the model keeps generating until it is "
                  f"cut off; cap its replies with --agent-params '{{\"max_tokens\": 256}}' (or --user-params for "
                  "the user model)", file=sys.stderr, flush=True)
