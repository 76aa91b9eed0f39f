"""Batched token generation for a transformers causal LM, with left padding and a KV cache.

Our own decoding loop rather than ``model.generate`` because each row needs its own random generator
(a request's sample must not depend on which other requests share its batch) and the log-probability of
every generated token.

Short prompts are prefilled together, left-padded. Long ones are prefilled one at a time (plain causal
attention, no padding mask: a padded, masked prefill of long prompts is many times slower and larger on
CPU) and their caches are then left-padded into one batch. The new tokens are decoded together.
"""
from __future__ import annotations

import inspect

import torch

from .generation import GenerationRequest, GenerationResult


def _logits_kwarg(model) -> dict:
    """Ask the model for last-position logits only, under whichever name this transformers version uses."""
    params = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return {name: 1}
    return {}


def _pick(logits: torch.Tensor, requests: list[GenerationRequest], gens: list[torch.Generator],
          active: list[bool]) -> list[tuple[int, float]]:
    """Choose the next token of each active row; returns (token, log-probability) per row (see TurnRecord:
    the softmax after temperature, before top-p; greedy rows use temperature 1)."""
    temps = torch.tensor([r.temperature if r.temperature > 0 else 1.0 for r in requests])
    logp = torch.log_softmax(logits / temps[:, None], dim=-1)
    greedy = logp.argmax(dim=-1).tolist()
    picks = []
    for i, r in enumerate(requests):
        token = greedy[i]
        if active[i] and r.temperature > 0:
            probs = logp[i].exp()
            if r.top_p < 1:
                sorted_p, order = torch.sort(probs, descending=True)
                # keep the smallest prefix whose mass reaches top_p (always at least the most likely token)
                sorted_p[(torch.cumsum(sorted_p, dim=-1) - sorted_p) >= r.top_p] = 0
                probs = torch.zeros_like(probs).scatter(0, order, sorted_p)
            token = int(torch.multinomial(probs, 1, generator=gens[i]))
        picks.append((token, float(logp[i, token])))
    return picks


PADDED_PREFILL_MAX_TOKENS = 1024  # longest prompt for which a batch is prefilled in one padded pass


def _cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if hasattr(cache, "layers"):  # transformers >= 4.56
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache))


def _prefill(model, requests: list[GenerationRequest], pad_id: int, device, extra: dict):
    """Run the prompts; return the batch's last-position logits, its left-padded cache and its mask."""
    from transformers import DynamicCache

    width = max(len(r.prompt_ids) for r in requests)
    mask = torch.zeros((len(requests), width), dtype=torch.long, device=device)
    for i, r in enumerate(requests):
        mask[i, width - len(r.prompt_ids):] = 1
    if width <= PADDED_PREFILL_MAX_TOKENS:
        ids = torch.full((len(requests), width), pad_id, dtype=torch.long, device=device)
        for i, r in enumerate(requests):
            ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids, dtype=torch.long)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **extra)
        return out.logits[:, -1].float().cpu(), out.past_key_values, mask
    logits, rows = [], []
    for r in requests:
        out = model(input_ids=torch.tensor([r.prompt_ids], dtype=torch.long, device=device), use_cache=True,
                    **extra)
        logits.append(out.logits[0, -1].float().cpu())
        rows.append(_cache_layers(out.past_key_values))
    cache = DynamicCache()
    for index in range(len(rows[0])):
        keys, values = [], []
        for row in rows:
            k, v = row[index]
            pad = width - k.shape[2]  # (batch, heads, length, head_dim): pad the length on the left
            keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)))
            values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)))
        cache.update(torch.cat(keys), torch.cat(values), index)
    return torch.stack(logits), cache, mask


@torch.inference_mode()
def generate_batch(model, requests: list[GenerationRequest], stop_ids: set[int], pad_id: int,
                   device: str | torch.device = "cpu") -> list[GenerationResult]:
    n = len(requests)
    gens = [torch.Generator().manual_seed(r.seed) for r in requests]
    results = [GenerationResult([], [], "length") for _ in requests]
    done = [False] * n
    extra = _logits_kwarg(model)
    logits, cache, mask = _prefill(model, requests, pad_id, device, extra)
    positions = torch.tensor([[len(r.prompt_ids) - 1] for r in requests], dtype=torch.long, device=device)
    for _ in range(max(r.max_new_tokens for r in requests)):
        step = []
        picks = _pick(logits, requests, gens, [not d for d in done])
        for i, r in enumerate(requests):
            if done[i]:
                step.append(pad_id)
                continue
            token, logprob = picks[i]
            results[i].token_ids.append(token)
            results[i].logprobs.append(logprob)
            if token in stop_ids:
                results[i].finish_reason, done[i] = "stop", True
            elif len(results[i].token_ids) >= r.max_new_tokens:
                done[i] = True
            step.append(token)
        if all(done):
            break
        mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=mask.device)], dim=1)
        positions = positions + 1
        out = model(input_ids=torch.tensor(step, dtype=torch.long, device=device)[:, None], attention_mask=mask,
                    position_ids=positions, past_key_values=cache, use_cache=True, **extra)
        cache = out.past_key_values
        logits = out.logits[:, -1, :].float().cpu()
    return results
