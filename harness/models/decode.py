"""Batched token generation for a transformers causal LM, with left padding and a KV cache.

Our own decoding loop rather than ``model.generate`` because each row needs its own random generator
(a request's sample must not depend on which other requests share its batch) and the log-probability of
every generated token.

Short prompts are prefilled together, left-padded. Long ones are prefilled one at a time (plain causal
attention, no padding mask: a padded, masked prefill of long prompts is many times slower and larger on
CPU) and their caches are then left-padded into one batch. The new tokens are decoded together.

No re-reading: with a :class:`PrefixCache`, each row's keys and values are kept after generation, and a
later prompt that extends a kept token sequence (the next turn of the same episode: its stream only grows)
is prefilled from that cache, only its new tokens run through the model.
"""
from __future__ import annotations

import inspect
from typing import Optional

import torch

from .activity import METER
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


Layers = list[tuple[torch.Tensor, torch.Tensor]]


class PrefixCache:
    """Per-sequence KV caches kept between generation calls, keyed by the token ids they cover.

    An entry is taken (removed) by the call whose prompt extends it, which stores the longer sequence in its
    place, so a multi-turn episode holds one entry. At most ``max_entries`` are kept, least recently stored
    dropped first (finished episodes age out). Clear it whenever the model's weights change.
    """

    def __init__(self, max_entries: int = 32):
        self.max_entries = max_entries
        self._entries: dict[tuple[int, ...], Layers] = {}
        self.hits = 0  # prompt tokens served from the cache (for tests and benchmarks)
        self.misses = 0  # prompt tokens run through the model

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def take(self, prompt: list[int]) -> tuple[int, Optional[Layers]]:
        """The longest kept sequence that is a proper prefix of ``prompt``: (its length, its layers), removed
        from the cache; (0, None) when there is none."""
        best: Optional[tuple[int, ...]] = None
        for key in self._entries:
            if len(key) < len(prompt) and (best is None or len(key) > len(best)) and \
                    tuple(prompt[:len(key)]) == key:
                best = key
        if best is None:
            return 0, None
        return len(best), self._entries.pop(best)

    def put(self, ids: list[int], layers: Layers) -> None:
        if not ids or self.max_entries < 1:
            return
        self._entries.pop(tuple(ids), None)
        self._entries[tuple(ids)] = layers
        while len(self._entries) > self.max_entries:
            del self._entries[next(iter(self._entries))]


def _prefill_row(model, prompt: list[int], device, extra: dict, cache: Optional[PrefixCache]):
    """One prompt alone (no padding): its last-position logits and its layers, from a kept prefix if any."""
    from transformers import DynamicCache

    start, kept, past = 0, None, None
    if cache is not None:
        start, kept = cache.take(prompt)
        cache.hits, cache.misses = cache.hits + start, cache.misses + len(prompt) - start
    if kept is not None:
        past = DynamicCache()
        for index, (k, v) in enumerate(kept):
            past.update(k, v, index)
    new = torch.tensor([prompt[start:]], dtype=torch.long, device=device)
    positions = torch.arange(start, len(prompt), device=device)[None]
    out = model(input_ids=new, position_ids=positions, past_key_values=past, use_cache=True, **extra)
    return out.logits[0, -1].float().cpu(), _cache_layers(out.past_key_values)


def _prefill(model, requests: list[GenerationRequest], pad_id: int, device, extra: dict,
             prefix_cache: Optional[PrefixCache] = None):
    """Run the prompts; return the batch's last-position logits, its left-padded cache and its mask."""
    from transformers import DynamicCache

    width = max(len(r.prompt_ids) for r in requests)
    mask = torch.zeros((len(requests), width), dtype=torch.long, device=device)
    for i, r in enumerate(requests):
        mask[i, width - len(r.prompt_ids):] = 1
    if prefix_cache is None and width <= PADDED_PREFILL_MAX_TOKENS:
        ids = torch.full((len(requests), width), pad_id, dtype=torch.long, device=device)
        for i, r in enumerate(requests):
            ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids, dtype=torch.long)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **extra)
        return out.logits[:, -1].float().cpu(), out.past_key_values, mask
    logits, rows = [], []
    for r in requests:
        row_logits, layers = _prefill_row(model, r.prompt_ids, device, extra, prefix_cache)
        logits.append(row_logits)
        rows.append(layers)
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
                   device: str | torch.device = "cpu",
                   prefix_cache: Optional[PrefixCache] = None) -> list[GenerationResult]:
    """Generate every request's completion. With ``prefix_cache``, prompts extending a kept sequence are
    prefilled from it, and each row's sequence (prompt and generated ids but the last) is kept after."""
    n = len(requests)
    gens = [torch.Generator().manual_seed(r.seed) for r in requests]
    results = [GenerationResult([], [], "length") for _ in requests]
    done = [False] * n
    extra = _logits_kwarg(model)
    logits, cache, mask = _prefill(model, requests, pad_id, device, extra, prefix_cache)
    width = mask.shape[1]
    positions = torch.tensor([[len(r.prompt_ids) - 1] for r in requests], dtype=torch.long, device=device)
    for _ in range(max(r.max_new_tokens for r in requests)):
        step, fresh = [], 0
        picks = _pick(logits, requests, gens, [not d for d in done])
        for i, r in enumerate(requests):
            if done[i]:
                step.append(pad_id)
                continue
            token, logprob = picks[i]
            results[i].token_ids.append(token)
            results[i].logprobs.append(logprob)
            fresh += 1
            if token in stop_ids:
                results[i].finish_reason, done[i] = "stop", True
            elif len(results[i].token_ids) >= r.max_new_tokens:
                done[i] = True
            step.append(token)
        METER.add_tokens(fresh)  # the progress line's tokens/s, live while a long batch decodes
        if all(done):
            break
        mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=mask.device)], dim=1)
        positions = positions + 1
        out = model(input_ids=torch.tensor(step, dtype=torch.long, device=device)[:, None], attention_mask=mask,
                    position_ids=positions, past_key_values=cache, use_cache=True, **extra)
        cache = out.past_key_values
        logits = out.logits[:, -1, :].float().cpu()
    if prefix_cache is not None:
        _keep(prefix_cache, cache, requests, results, width)
    return results


def _keep(prefix_cache: PrefixCache, cache, requests: list[GenerationRequest], results: list[GenerationResult],
          width: int) -> None:
    """Store each row's keys and values for its prompt and generated ids but the last (whose are computed
    only when decoding went on after it). Row i's prompt ends at column ``width`` (left padding) and its
    k-th generated id was fed at column ``width + k``."""
    layers = _cache_layers(cache)
    for i, (r, res) in enumerate(zip(requests, results)):
        kept = len(res.token_ids) - 1
        if kept < 0:
            continue
        start, end = width - len(r.prompt_ids), width + kept
        row = [(k[i:i + 1, :, start:end].clone(), v[i:i + 1, :, start:end].clone()) for k, v in layers]
        prefix_cache.put(list(r.prompt_ids) + res.token_ids[:kept], row)
