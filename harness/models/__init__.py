"""Chat model backends behind the ChatModel protocol, chosen from a model spec string."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ..interfaces import ChatModel
from .openai_client import OpenAIChatModel, RetryPolicy

ENDPOINT_ONLY = ("api_key_env", "timeout_s", "retry", "max_connections")  # client options a checkpoint ignores

__all__ = ["make_chat_model", "OpenAIChatModel", "RetryPolicy"]


def make_chat_model(spec: str, base_url: Optional[str] = None, **params: Any) -> ChatModel:
    """A chat model for ``spec``. Without ``base_url``, an existing directory is a local checkpoint (loaded
    by ``mua.harness.models.local``, imported only then so endpoint runs need no torch); anything else, or
    any spec with a ``base_url`` (vLLM often names a model by its path), is a model served by an
    OpenAI-compatible endpoint. ``params`` go to the backend
    (client options such as ``api_key_env``/``timeout_s``/``retry``, and request params such as
    ``temperature``/``max_tokens``)."""
    if base_url is None and Path(spec).is_dir():
        from . import local  # noqa: PLC0415 - heavy optional dependencies

        return local.make_local_chat_model(spec, **{k: v for k, v in params.items() if k not in ENDPOINT_ONLY})
    if isinstance(params.get("retry"), dict):  # from JSON flags/config files
        params["retry"] = RetryPolicy(**params["retry"])
    return OpenAIChatModel(spec, base_url, **params)
