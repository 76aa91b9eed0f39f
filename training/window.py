"""Dropping the head of a training sequence that no loss term can see.

In a model whose every layer attends only to the last W tokens (position q sees keys k with q - W < k <= q,
transformers' sliding-window mask), one layer carries information W - 1 tokens forward, so the logits at
position p depend only on tokens in [p - L*(W - 1), p] for L layers. With rotary position embeddings (relative)
and nothing absolute, shifting every position by the same amount leaves those logits unchanged up to float
rounding. So the tokens more than that reach before the first position whose logits are used can be dropped
exactly: the loss (and the log-probs TRL re-reads) stay the same, and the training forward pass gets shorter
(the tiny model's conversations are mostly system prompt, and only the agent's replies carry loss).
"""
from __future__ import annotations

from typing import Any, Optional

from mua.harness.models.window import OFF_ENV, every_layer_window

from .compat import attention_implementation

__all__ = ["OFF_ENV", "reach", "trim", "trim_start"]


def reach(config: Any) -> Optional[int]:
    """How many tokens before a position its logits can depend on, when every layer is sliding-window attention
    with relative (rotary, unscaled) positions; None otherwise (then nothing may be trimmed)."""
    window = every_layer_window(config)
    if window is None:
        return None
    # rope types other than the plain one may scale with the sequence length (dynamic NTK, ...): not shift-proof
    rope = getattr(config, "rope_parameters", None) or {}
    if not isinstance(rope, dict) or rope.get("rope_type", "default") != "default":
        return None
    return config.num_hidden_layers * (window - 1)


def trim_start(first_used: int, reach_: Optional[int]) -> int:
    """The first token to keep when the logits at ``first_used`` (and after) are the first ones read."""
    if reach_ is None or first_used < 0:
        return 0
    return max(0, first_used - reach_)


def trim(ids: list[int], mask: list[int], reach_: Optional[int]) -> tuple[list[int], list[int]]:
    """``ids`` and its loss ``mask`` (1 on tokens that carry loss) without the leading tokens no loss term can
    see: the loss on token t is read from the logits at t - 1, which depend on tokens from t - 1 - reach on.
    Unchanged when ``reach_`` is None or nothing carries loss."""
    first = next((i for i, m in enumerate(mask) if m), None)
    if reach_ is None or first is None:
        return ids, mask
    start = trim_start(first - 1, reach_)
    return ids[start:], mask[start:]


WINDOW_ATTENTION = "mua_window_blocks"  # the attention implementation's registered name (never saved)


def _window_attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
                      sliding_window=None, **kwargs):
    """SDPA over blocks of W queries, each against the 2W - 1 keys its window can reach, instead of every query
    against every key (a windowed training pass of n tokens then costs about n * 2W, not n * n). Exact: a
    block's slice of the mask allows the same keys as the whole mask does, the rest are outside the window.
    Only for a whole sequence read at once (training, a prefill without a cache); else plain SDPA."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    n = query.shape[2]
    if not sliding_window or attention_mask is None or attention_mask.dim() != 4 or n <= sliding_window \
            or key.shape[2] != n:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    blocks = []
    for start in range(0, n, sliding_window):
        end, first = min(start + sliding_window, n), max(0, start - sliding_window + 1)
        out, _ = sdpa_attention_forward(module, query[:, :, start:end], key[:, :, first:end],
                                        value[:, :, first:end], attention_mask[:, :, start:end, first:end],
                                        dropout=dropout, scaling=scaling, **kwargs)
        blocks.append(out)  # (batch, block, heads, head_dim)
    return torch.cat(blocks, dim=1), None


def use_window_attention(model) -> bool:
    """Give a model whose every layer is a window (``reach`` not None) the blocked attention above, in place of
    SDPA; False (and nothing changed) for any other model, or one not on SDPA."""
    config = getattr(model, "config", None)
    if reach(config) is None or attention_implementation(config) != "sdpa":
        return False
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import sdpa_mask

    AttentionInterface.register(WINDOW_ATTENTION, _window_attention)
    AttentionMaskInterface.register(WINDOW_ATTENTION, sdpa_mask)  # the masks SDPA gets, sliced per block
    model.set_attn_implementation(WINDOW_ATTENTION)
    return True
