"""A local checkpoint served in-process by transformers (CPU or one GPU).

Concurrent episodes are generated together: their requests queue up and run as one left-padded batch of
up to ``max_batch`` rows (see :mod:`.batching` and :mod:`.decode`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from .local import GenerationRequest, GenerationResult, LocalChatModel, stop_ids_for


class TransformersChatModel(LocalChatModel):
    """``path`` is a checkpoint directory (config, weights, tokenizer with a chat template). ``device``
    defaults to CUDA when available, else CPU; ``dtype`` (e.g. "bfloat16") defaults to the checkpoint's."""

    def __init__(self, path: str | Path, *, device: Optional[str] = None, dtype: Optional[str] = None,
                 **params):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(path)
        if not (path / "config.json").is_file():
            raise ConfigError(f"{path} is not a checkpoint directory (no config.json); build a test model "
                              "with `mua model tiny DIR` or pass a saved transformers checkpoint")
        tokenizer = AutoTokenizer.from_pretrained(path)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if dtype and not isinstance(getattr(torch, dtype, None), torch.dtype):
            raise ConfigError(f"unknown dtype {dtype!r}; use e.g. float32, bfloat16 or float16")
        kwargs = {"dtype": getattr(torch, dtype)} if dtype else {"dtype": "auto"}
        self.model = AutoModelForCausalLM.from_pretrained(path, **kwargs).to(self.device).eval()
        stop_ids = stop_ids_for(tokenizer, self.model.generation_config)
        if not stop_ids:
            raise ConfigError(f"{path}: neither the tokenizer nor generation_config names an EOS token")
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(stop_ids)
        max_context = getattr(self.model.config, "max_position_embeddings", None)
        super().__init__(tokenizer, stop_ids=stop_ids, max_context=max_context, **params)

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        from .decode import generate_batch
        return generate_batch(self.model, requests, self.stop_ids, self.pad_id, self.device)
