"""Chat model backends behind the ChatModel protocol, chosen from a model spec string."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ..errors import ConfigError
from ..interfaces import ChatModel
from .openai_client import OpenAIChatModel, RetryPolicy
from .providers import make_provider_model, route

ENDPOINT_ONLY = ("api_key_env", "timeout_s", "retry", "max_connections")  # client options a checkpoint ignores
# request fields of a benchmark's protocol that only mean something to an endpoint (see harness/protocol.py)
REQUEST_ONLY = ("store", "tool_choice")
SECRET_WORDS = ("api_key", "apikey", "authorization", "header", "token_secret", "password")

__all__ = ["make_chat_model", "OpenAIChatModel", "RetryPolicy"]


def make_chat_model(spec: str, base_url: Optional[str] = None, **params: Any) -> ChatModel:
    """A chat model for ``spec``. Without ``base_url``, an existing directory is a local checkpoint (loaded
    by ``mua.harness.models.checkpoint``, imported only then so endpoint runs need no torch); anything else, or
    any spec with a ``base_url`` (vLLM often names a model by its path), is a model served by an
    OpenAI-compatible endpoint. ``params`` go to the backend
    (client options such as ``api_key_env``/``timeout_s``/``retry``, and request params such as
    ``temperature``/``max_tokens``). A provider-prefixed name (``anthropic/...``, ``gemini/...``,
    ``openai/...``) goes to that provider in its own wire format (see providers.py)."""
    secret = sorted(k for k in params if k != "api_key_env" and any(s in k.lower() for s in SECRET_WORDS))
    if secret:
        raise ConfigError(f"model parameters {', '.join(secret)} look like credentials; parameters are recorded in "
                          "config.json, so keys must come from an environment variable (--*-api-key-env)")
    if base_url is None and Path(spec).is_dir():
        if not (Path(spec) / "config.json").is_file():
            raise ConfigError(f"{spec} is a directory but not a model checkpoint (no config.json in it)")
        try:
            from . import checkpoint  # heavy optional dependencies, imported only for a checkpoint
        except ImportError as e:
            raise ConfigError(f"local checkpoints need torch and transformers ({e}); "
                              'install them with: pip install -e ".[local]"') from None
        return checkpoint.make_local_chat_model(spec, **local_params(params))
    if (provider := route(spec, base_url)) is not None:
        return make_provider_model(provider, params)
    return OpenAIChatModel(spec, base_url, **params)


def local_params(params: dict[str, Any]) -> dict[str, Any]:
    """Params for a local checkpoint: endpoint-only options and null (unsent) fields dropped."""
    return {k: v for k, v in params.items() if k not in ENDPOINT_ONLY + REQUEST_ONLY and v is not None}
