"""Loading a checkpoint's tokenizer.

transformers 5 rebuilds the tokenizer of a Qwen2-architecture checkpoint from its vocabulary with Qwen2's own
normalizer and pre-tokenizer, whatever its tokenizer.json says. That is right for real Qwen2 checkpoints, whose
hub configs name the wrong class, but it would silently drop the digit-place normalizer of mua's tiny model
(harness/models/tiny.py), so a tokenizer marked with ``mua_keep_pipeline`` is loaded as written."""
from __future__ import annotations

import json
from pathlib import Path

KEEP_PIPELINE_KEY = "mua_keep_pipeline"


def keeps_own_pipeline(path: str | Path) -> bool:
    """Whether the checkpoint's tokenizer must be loaded exactly as its tokenizer.json says."""
    try:
        config = json.loads((Path(path) / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get(KEEP_PIPELINE_KEY) is True


def load_tokenizer(path: str | Path):
    """The tokenizer of the checkpoint folder ``path`` (``AutoTokenizer``, but see the module note)."""
    if keeps_own_pipeline(path):
        from transformers.tokenization_utils_tokenizers import TokenizersBackend

        return TokenizersBackend.from_pretrained(str(path))
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path))
