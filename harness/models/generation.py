"""What a local backend is asked to generate and what it returns: plain data shared by the backends, the
local chat model and training."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GenerationRequest:
    prompt_ids: list[int]
    max_new_tokens: int
    temperature: float
    top_p: float
    seed: int


@dataclass
class GenerationResult:
    token_ids: list[int]  # generated ids, verbatim, the stop token included when one was generated
    logprobs: list[float]
    finish_reason: str  # "stop" or "length"
