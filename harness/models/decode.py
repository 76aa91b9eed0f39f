"""Batched token generation for a transformers causal LM, with left padding and a KV cache.

Our own decoding loop rather than ``model.generate`` because each row needs its own random generator
(a request's sample must not depend on which other requests share its batch) and the log-probability of
every generated token.
"""
from __future__ import annotations

import inspect

import torch

from .local import GenerationRequest, GenerationResult


def _logits_kwarg(model) -> dict:
    """Ask the model for last-position logits only, under whichever name this transformers version uses."""
    params = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return {name: 1}
    return {}


def _pick(logits: torch.Tensor, req: GenerationRequest, gen: torch.Generator) -> tuple[int, float]:
    """Choose one token from a row of logits; returns it and its log-probability (see TurnRecord)."""
    if req.temperature <= 0:
        logp = torch.log_softmax(logits, dim=-1)
        token = int(torch.argmax(logp))
        return token, float(logp[token])
    logp = torch.log_softmax(logits / req.temperature, dim=-1)
    probs = logp.exp()
    if req.top_p < 1:
        sorted_p, order = torch.sort(probs, descending=True)
        # keep the smallest prefix whose mass reaches top_p (always at least the most likely token)
        drop = (torch.cumsum(sorted_p, dim=-1) - sorted_p) >= req.top_p
        sorted_p[drop] = 0
        probs = torch.zeros_like(probs).scatter(0, order, sorted_p)
    token = int(torch.multinomial(probs, 1, generator=gen))
    return token, float(logp[token])


@torch.inference_mode()
def generate_batch(model, requests: list[GenerationRequest], stop_ids: set[int], pad_id: int,
                   device: str | torch.device = "cpu") -> list[GenerationResult]:
    n = len(requests)
    width = max(len(r.prompt_ids) for r in requests)
    input_ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    for i, r in enumerate(requests):
        input_ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids, dtype=torch.long)
        mask[i, width - len(r.prompt_ids):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    input_ids, mask, positions = input_ids.to(device), mask.to(device), positions.to(device)
    gens = [torch.Generator().manual_seed(r.seed) for r in requests]
    results = [GenerationResult([], [], "length") for _ in requests]
    done = [False] * n
    extra = _logits_kwarg(model)
    out = model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True, **extra)
    for _ in range(max(r.max_new_tokens for r in requests)):
        logits = out.logits[:, -1, :].float().cpu()
        step = []
        for i, r in enumerate(requests):
            if done[i]:
                step.append(pad_id)
                continue
            token, logprob = _pick(logits[i], r, gens[i])
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
        positions = positions[:, -1:] + 1
        out = model(input_ids=torch.tensor(step, dtype=torch.long, device=mask.device)[:, None],
                    attention_mask=mask, position_ids=positions, past_key_values=out.past_key_values,
                    use_cache=True, **extra)
    return results
