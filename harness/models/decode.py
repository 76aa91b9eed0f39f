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

A model whose every layer is a W-token window (window.py) keeps only the last W - 1 columns of keys and values,
in the batch and in kept caches: a turn deep into a long conversation costs what the first one did.
"""
from __future__ import annotations

import inspect
from typing import Optional

import torch

from .activity import METER
from .generation import GenerationRequest, GenerationResult
from .window import every_layer_window


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
    place, so a multi-turn episode holds one entry. Episodes that said the same thing so far (a group of
    samples of one task, trials of one task) each keep their own entry under the same key: one of them taking
    it must not leave the others to re-read their whole conversation. At most ``max_entries`` are kept, least
    recently stored dropped first (finished episodes age out). Clear it whenever the model's weights change.
    """

    def __init__(self, max_entries: int = 32):
        self.max_entries = max_entries
        self._entries: dict[tuple[int, ...], list[Layers]] = {}  # key -> one kept copy per episode
        self._count = 0
        self.hits = 0  # prompt tokens served from the cache (for tests and benchmarks)
        self.misses = 0  # prompt tokens run through the model

    def clear(self) -> None:
        self._entries.clear()
        self._count = 0

    def __len__(self) -> int:
        return self._count

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
        copies = self._entries[best]
        layers = copies.pop()
        if not copies:
            del self._entries[best]
        self._count -= 1
        return len(best), layers

    def put(self, ids: list[int], layers: Layers) -> None:
        if not ids or self.max_entries < 1:
            return
        key = tuple(ids)
        self._entries[key] = self._entries.pop(key, []) + [layers]  # to the end: the most recent
        self._count += 1
        while self._count > self.max_entries:
            oldest = next(iter(self._entries))
            self._entries[oldest].pop(0)
            if not self._entries[oldest]:
                del self._entries[oldest]
            self._count -= 1


def _prefill_row(model, prompt: list[int], device, extra: dict, cache: Optional[PrefixCache], keep: Optional[int]):
    """One prompt alone (no padding): its last-position logits and its layers (at most ``keep`` columns), from a
    kept prefix if any."""
    start, kept, past = 0, None, None
    if cache is not None:
        start, kept = cache.take(prompt)
        cache.hits, cache.misses = cache.hits + start, cache.misses + len(prompt) - start
    if kept is not None:
        past = _plain_cache(kept)
    new = torch.tensor([prompt[start:]], dtype=torch.long, device=device)
    positions = torch.arange(start, len(prompt), device=device)[None]
    out = model(input_ids=new, position_ids=positions, past_key_values=past, use_cache=True, **extra)
    return out.logits[0, -1].float().cpu(), _last_columns(_cache_layers(out.past_key_values), keep)


def _last_columns(layers: Layers, keep: Optional[int]) -> Layers:
    if keep is None:
        return layers
    return [(k[:, :, -keep:], v[:, :, -keep:]) for k, v in layers]


def _plain_cache(layers: Layers):
    """A cache of full (not sliding) layers holding ``layers``: the mask then sees every column it holds, the
    window being applied by cropping (below) rather than inside the cache."""
    from transformers import DynamicCache

    cache = DynamicCache()
    for index, (k, v) in enumerate(layers):
        cache.update(k, v, index)
    return cache


def _crop(cache, mask: torch.Tensor, keep: Optional[int]):
    """Drop the columns no later query can attend to (only for a model whose every layer is a window): views,
    in place, so the next step's concatenation is the only copy."""
    if keep is None or mask.shape[1] <= keep:
        return cache, mask
    for layer in cache.layers:
        layer.keys, layer.values = layer.keys[:, :, -keep:], layer.values[:, :, -keep:]
    return cache, mask[:, -keep:]


def _prefill(model, requests: list[GenerationRequest], pad_id: int, device, extra: dict,
             prefix_cache: Optional[PrefixCache] = None, keep: Optional[int] = None):
    """Run the prompts; return the batch's last-position logits, its left-padded cache and its mask (at most
    ``keep`` columns when given)."""
    width = max(len(r.prompt_ids) for r in requests)
    if prefix_cache is None and width <= PADDED_PREFILL_MAX_TOKENS:
        mask = torch.zeros((len(requests), width), dtype=torch.long, device=device)
        ids = torch.full((len(requests), width), pad_id, dtype=torch.long, device=device)
        for i, r in enumerate(requests):
            mask[i, width - len(r.prompt_ids):] = 1
            ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids, dtype=torch.long)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **extra)
        logits = out.logits[:, -1].float().cpu()
        if keep is None:
            return logits, out.past_key_values, mask
        # a windowed model's own cache may already hold fewer columns than the prompt: the mask follows it
        layers = _last_columns(_cache_layers(out.past_key_values), keep)
        return logits, _plain_cache(layers), mask[:, mask.shape[1] - layers[0][0].shape[2]:]
    logits, rows = [], []
    for r in requests:
        row_logits, layers = _prefill_row(model, r.prompt_ids, device, extra, prefix_cache, keep)
        logits.append(row_logits)
        rows.append(layers)
    # a row's columns: its longest layer's (a hybrid model's windowed layers may hold fewer: they are padded
    # on the left like the row, and the window mask never reaches those columns)
    lengths = [max(k.shape[2] for k, _ in row) for row in rows]
    width = max(lengths)
    mask = torch.zeros((len(requests), width), dtype=torch.long, device=device)
    for i, length in enumerate(lengths):
        mask[i, width - length:] = 1

    def padded(t: torch.Tensor) -> torch.Tensor:  # (batch, heads, length, head_dim): pad the length on the left
        return torch.nn.functional.pad(t, (0, 0, width - t.shape[2], 0))

    layers = [(torch.cat([padded(row[index][0]) for row in rows]), torch.cat([padded(row[index][1]) for row in rows]))
              for index in range(len(rows[0]))]
    return torch.stack(logits), _plain_cache(layers), mask


@torch.inference_mode()
def generate_batch(model, requests: list[GenerationRequest], stop_ids: set[int], pad_id: int,
                   device: str | torch.device = "cpu",
                   prefix_cache: Optional[PrefixCache] = None) -> list[GenerationResult]:
    """Generate every request's completion. With ``prefix_cache``, prompts extending a kept sequence are
    prefilled from it, and each row's sequence (prompt and generated ids but the last) is kept after.

    A model whose every layer is a W-token window keeps only the last W - 1 columns of keys and values (all a
    next query can attend to): decoding then costs the same at any depth of a long conversation."""
    n = len(requests)
    gens = [torch.Generator().manual_seed(r.seed) for r in requests]
    results = [GenerationResult([], [], "length") for _ in requests]
    done = [False] * n
    extra = _logits_kwarg(model)
    window = every_layer_window(getattr(model, "config", None))
    keep = window - 1 if window is not None and window > 1 else None
    logits, cache, mask = _prefill(model, requests, pad_id, device, extra, prefix_cache, keep)
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
            if done[i] and prefix_cache is not None:
                _keep(prefix_cache, cache, i, r, results[i], keep)
            step.append(token)
        METER.add_tokens(fresh)  # the progress line's tokens/s, live while a long batch decodes
        if all(done):
            break
        cache, mask = _crop(cache, mask, keep)
        mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=mask.device)], dim=1)
        positions = positions + 1
        out = model(input_ids=torch.tensor(step, dtype=torch.long, device=device)[:, None], attention_mask=mask,
                    position_ids=positions, past_key_values=cache, use_cache=True, **extra)
        cache = out.past_key_values
        logits = out.logits[:, -1, :].float().cpu()
    return results


def _keep(prefix_cache: PrefixCache, cache, i: int, request: GenerationRequest, result: GenerationResult,
          keep: Optional[int]) -> None:
    """Store row i's keys and values for its prompt and generated ids but the last, when the row has just
    finished: the cache then ends with that row's last fed token (its last id was picked, not yet fed), and
    the row's sequence fills the cache's last columns (left padding; a windowed cache holds only the newest)."""
    kept = len(result.token_ids) - 1
    if kept < 0:
        return
    length = len(request.prompt_ids) + kept if keep is None else min(len(request.prompt_ids) + kept, keep)
    if length < 1:
        return
    row = [(k[i:i + 1, :, -length:].clone(), v[i:i + 1, :, -length:].clone()) for k, v in _cache_layers(cache)]
    prefix_cache.put(list(request.prompt_ids) + result.token_ids[:kept], row)
