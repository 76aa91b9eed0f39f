"""A local checkpoint served in-process by transformers (CPU or one GPU).

Concurrent episodes are generated together: their requests queue up and run as one left-padded batch of
up to ``max_batch`` rows (see :mod:`.batching` and :mod:`.decode`). Each episode's keys and values are kept
between its turns (a :class:`~.decode.PrefixCache`), so a turn prefills only the tokens added since the last.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from .generation import GenerationRequest, GenerationResult
from .local import LocalChatModel, check_local_params, stop_ids_for
from .templates import prepare_tokenizer

DTYPES = ("auto", "float32", "float16", "bfloat16")  # weight dtypes generation supports ("auto": checkpoint's)


def resolve_device(device: Optional[str]):
    """The torch device to run on: ``device`` when it is usable here, else a ConfigError saying why; None
    means CUDA when available, else CPU."""
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ConfigError(f"local model parameter device must be e.g. \"cpu\", \"cuda\" or \"cuda:1\", "
                          f"got {device!r}") from None
    if resolved.type == "cpu":
        return resolved
    if resolved.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ConfigError(f"local model parameter device is {device!r} but torch sees no CUDA GPU here; "
                              "use \"cpu\" or leave device unset")
        if resolved.index is not None and resolved.index >= count:
            raise ConfigError(f"local model parameter device is {device!r} but torch sees {count} CUDA GPU(s)")
        return resolved
    if resolved.type == "mps" and torch.backends.mps.is_available():
        return resolved
    raise ConfigError(f"local model parameter device {device!r} is not available here; use \"cpu\" or \"cuda\"")


class TransformersChatModel(LocalChatModel):
    """``path`` is a checkpoint directory (config, weights, tokenizer with a chat template). ``device``
    defaults to CUDA when available, else CPU; ``dtype`` (one of ``DTYPES``) defaults to the checkpoint's."""

    def __init__(self, path: str | Path, *, device: Optional[str] = None, dtype: Optional[str] = None,
                 **params):
        import torch
        from transformers import AutoModelForCausalLM

        from .tokenizer import load_tokenizer

        # Every setting is checked before the weights load, so a typo costs no loading time.
        check_local_params(params)
        if dtype is not None and dtype not in DTYPES:
            raise ConfigError(f"local model parameter dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
        self.device = str(resolve_device(device))
        path = Path(path)
        if not (path / "config.json").is_file():
            raise ConfigError(f"{path} is not a checkpoint directory (no config.json); build a test model "
                              "with `mua model tiny DIR` or pass a saved transformers checkpoint")
        tokenizer = load_tokenizer(path)
        prepare_tokenizer(tokenizer, str(path), params.pop("chat_template", None))  # before the weights load
        torch_dtype = getattr(torch, dtype) if dtype not in (None, "auto") else "auto"
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype).to(self.device).eval()
        stop_ids = stop_ids_for(tokenizer, self.model.generation_config)
        if not stop_ids:
            raise ConfigError(f"{path}: neither the tokenizer nor generation_config names an EOS token")
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(stop_ids)
        max_context = getattr(self.model.config, "max_position_embeddings", None)
        super().__init__(tokenizer, stop_ids=stop_ids, max_context=max_context, **params)
        from .decode import PrefixCache
        # Each episode's next prompt extends its previous one (see LocalChatModel.prompt_ids): one kept
        # cache per concurrent episode, so turn n prefills only the tokens since turn n-1.
        self.prefix_cache = PrefixCache(max_entries=2 * self.batcher.max_batch)

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        from .decode import generate_batch
        return generate_batch(self.model, requests, self.stop_ids, self.pad_id, self.device, self.prefix_cache)
