"""No re-reading: a local model's multi-turn prompts extend the previous turn's tokens (as in training), and
the transformers backend prefills only the tokens added since, from the kept KV cache."""
import asyncio

import pytest

pytest.importorskip("torch", reason="local backends need torch (pip install 'mua[local]')")

from mua.harness.models.chat_template import encode_prompt, render_prompt  # noqa: E402
from mua.harness.models.decode import PrefixCache, generate_batch  # noqa: E402
from mua.harness.models.generation import GenerationRequest  # noqa: E402
from mua.harness.models.trace import record_turns  # noqa: E402
from mua.harness.models.transformers_backend import TransformersChatModel  # noqa: E402
from mua.harness.types import Message  # noqa: E402


def test_kept_cache_gives_the_same_tokens_and_logprobs_as_a_full_prefill(tiny_checkpoint):
    model = TransformersChatModel(tiny_checkpoint, device="cpu")
    first = [GenerationRequest(list(range(5, 40)), 6, 0.0, 1.0, 0),
             GenerationRequest(list(range(50, 60)), 6, 1.0, 1.0, 1)]
    cache = PrefixCache()
    out = generate_batch(model.model, first, model.stop_ids, model.pad_id, "cpu", cache)
    assert len(cache) == 2
    # the next turn of each row: its prompt, its reply and some new tokens
    second = [GenerationRequest(r.prompt_ids + o.token_ids + [70, 71, 72], 8, r.temperature, 1.0, 7)
              for r, o in zip(first, out)]
    hits = cache.hits
    reused = generate_batch(model.model, second, model.stop_ids, model.pad_id, "cpu", cache)
    assert cache.hits - hits == sum(len(r.prompt_ids) + len(o.token_ids) - 1 for r, o in zip(first, out))
    full = generate_batch(model.model, second, model.stop_ids, model.pad_id, "cpu")
    for a, b in zip(reused, full):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


def test_eval_prompts_extend_the_previous_turn_verbatim(tiny_checkpoint):
    model = TransformersChatModel(tiny_checkpoint, device="cpu", max_new_tokens=12, temperature=1.0)
    convo = [Message(role="system", content="Be brief."), Message(role="user", content="hi")]

    async def play():
        with record_turns() as turns:
            for text in ("set it to 3", "thanks"):
                reply, _ = await model.chat(convo, None, seed=3)
                convo.extend([Message(role="assistant", content=reply.content, tool_calls=reply.tool_calls),
                              Message(role="user", content=text)])
            await model.chat(convo, None, seed=3)
        return turns

    turns = asyncio.run(play())
    assert len(turns) == 3
    for before, after in zip(turns, turns[1:]):
        grown = before.prompt_ids + before.completion_ids
        assert after.prompt_ids[:len(grown)] == grown  # the generated ids verbatim, never re-tokenised
    assert model.prefix_cache.hits > 0
    # a conversation the model did not write is rendered whole
    other = [Message(role="user", content="hi"), Message(role="assistant", content="made up"),
             Message(role="user", content="ok")]
    assert model.prompt_ids(other) == encode_prompt(model.tokenizer, render_prompt(model.tokenizer, other, None))
