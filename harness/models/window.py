"""Models whose every layer attends only to the last W tokens (sliding-window attention everywhere).

transformers' sliding-window mask lets position q see keys k with q - W < k <= q. So once a token is more than
W - 1 tokens behind the newest one, no later query of that layer reads its key or value again: a decoding
cache may drop it exactly (decode.py), and a training sequence may drop a head no loss term can see
(training/window.py).
"""
from __future__ import annotations

import os
from typing import Any, Optional

# Model types whose attention and masks were checked against the rule above (transformers 5.24: Qwen2 with
# per-layer ``layer_types``). Any other architecture keeps every token.
VERIFIED_MODEL_TYPES = ("qwen2",)
OFF_ENV = "MUA_TRIM_TO_WINDOW"  # "0" turns window trimming off everywhere (to measure it, or to rule it out)


def every_layer_window(config: Any) -> Optional[int]:
    """W when every layer of a verified model type is W-token sliding-window attention; None otherwise (then
    nothing may be dropped), and None when trimming is turned off."""
    if os.environ.get(OFF_ENV, "1") == "0":
        return None
    if config is None or getattr(config, "model_type", None) not in VERIFIED_MODEL_TYPES:
        return None
    window, layers = getattr(config, "sliding_window", None), getattr(config, "num_hidden_layers", None)
    kinds = getattr(config, "layer_types", None)
    if not isinstance(window, int) or window < 1 or not isinstance(layers, int) or layers < 1:
        return None
    if not kinds or len(kinds) != layers or any(k != "sliding_attention" for k in kinds):
        return None
    return window
