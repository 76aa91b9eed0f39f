"""Local checkpoints as chat models: picks the backend (transformers or vLLM) for a checkpoint directory.

Kept apart from :mod:`.local` (the shared base class) so the backends import the base and nothing imports back.
"""
from __future__ import annotations

from ..errors import ConfigError
from .local import LOCAL_PARAMS, LocalChatModel, check_local_params

BACKENDS = ("transformers", "vllm")
BACKEND_PARAMS = {"transformers": {"device", "dtype"}, "vllm": {"engine_args"}}


def make_local_chat_model(path, backend: str = "transformers", **params) -> LocalChatModel:
    """A chat model on the checkpoint directory ``path``. ``backend`` is ``transformers`` or ``vllm``;
    ``params`` go to the backend (parser, max_new_tokens, temperature, top_p, max_batch, ...)."""
    params = dict(params)
    if "max_tokens" in params:  # the OpenAI request name, as `--agent-params '{"max_tokens": N}'` gives it
        params.setdefault("max_new_tokens", params.pop("max_tokens"))
    unknown = sorted(set(params) - LOCAL_PARAMS - BACKEND_PARAMS.get(backend, set()))
    if unknown:
        raise ConfigError(f"local {backend} model: unknown parameter(s) {', '.join(unknown)}; known: "
                          f"{', '.join(sorted(LOCAL_PARAMS | BACKEND_PARAMS.get(backend, set())))}")
    check_local_params(params)
    if backend == "transformers":
        from .transformers_backend import TransformersChatModel
        return TransformersChatModel(path, **params)
    if backend == "vllm":
        from .vllm_backend import VllmChatModel
        return VllmChatModel(path, **params)
    raise ConfigError(f"unknown local backend {backend!r}; choose one of: {', '.join(BACKENDS)}")
