"""A scripted generation backend: replies with fixed texts, encoded once (as a model would emit ids)."""
from __future__ import annotations

from pathlib import Path

from mua.harness.models.generation import GenerationRequest, GenerationResult


class ScriptedBackend:
    """Returns the ids of ``texts`` in order (cycling), each followed by the stop token unless it is cut by the
    request's ``max_new_tokens``. Log-probabilities are a made-up function of position."""

    def __init__(self, tokenizer, texts: list[str], stop_id: int):
        self.replies = [list(tokenizer(t, add_special_tokens=False)["input_ids"]) + [stop_id] for t in texts]
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        ids = self.replies[len(self.requests) % len(self.replies)]
        self.requests.append(request)
        cut = ids[:request.max_new_tokens]
        return GenerationResult(cut, [-0.01 * (i + 1) for i in range(len(cut))],
                                "stop" if len(cut) == len(ids) else "length")

    def session(self):
        from contextlib import nullcontext
        return nullcontext()


# the example task pack the training tests play and train on
BOOKINGS_PACK = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
