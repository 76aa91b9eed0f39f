"""Models named by provider: ``anthropic/claude-sonnet-4-5``, ``gemini/gemini-2.5-flash``, ``openai/gpt-4o``,
``groq/...``: the prefix picks the provider's wire format, its API host and the variable holding its key.

Why native adapters and not LiteLLM (which tau2 uses): measured on this machine with litellm 1.110.2 (the
newest on PyPI), installing it into an empty venv pulls 64 packages, 381 MB (boto3, the openai SDK, tokenizers,
huggingface-hub, aiohttp, tiktoken, pydantic); ``import litellm`` takes 3.6 s wall / 3.3 s CPU and 197 MB of
memory, and by default fetches its price map from raw.githubusercontent.com at import (three attempts, then a
warning) unless LITELLM_LOCAL_MODEL_COST_MAP=True is set first. Per request it took 6.4-6.6 ms of CPU
against 0.22-0.27 ms for mua's adapter, the same tau2-sized Anthropic request to the same mock
(``tests/perf/bench_providers.py``); its OpenAI path is the openai SDK, which measured 15-25x more CPU per
request than mua's client. The two formats that differ from OpenAI's are small: Anthropic Messages
(anthropic_client.py) and Gemini generateContent (gemini_client.py), written over mua's own HTTP client, so
retries, connection pools, the watchdog and key redaction are the same for every provider, and a run needs
nothing installed. Every other provider listed speaks the OpenAI format and goes through OpenAIChatModel at
its host. Prices come from a snapshot of LiteLLM's maintained table (price_table.py). For providers without
an adapter here (Bedrock, Vertex, Azure, ...), ``litellm/NAME`` goes through LiteLLM itself when installed
(the ``providers`` extra; litellm_client.py).

Translation follows what LiteLLM sends for the same OpenAI-shaped conversation (the turns, blocks and system
text are equal on the wire: test_same_conversation_on_the_wire_as_litellm): system messages become the
top-level system instruction; tool results become ``tool_result`` blocks (Anthropic) or ``functionResponse``
parts (Gemini: a JSON-object result as the response, any other text as ``{"content": text}``); consecutive
messages of one role are merged, as both APIs require alternation; empty turns are left out (both reject
empty content). Where they differ: Anthropic gets ``max_tokens`` 8192 unless given (the API requires one;
LiteLLM sends the model's maximum, 64000 for claude-sonnet-4-5) and ``tool_choice`` auto with tools (the
API's default); Gemini gets tool schemas as ``parametersJsonSchema`` (JSON schema as given; LiteLLM rewrites
them into ``parameters``' OpenAPI subset) and the seed in ``generationConfig``; Anthropic has no seed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

from .anthropic_client import AnthropicChatModel
from .gemini_client import GeminiChatModel
from .openai_client import OpenAIChatModel

DEFAULT_KEY_ENV = "OPENAI_API_KEY"  # ModelSpec's and the flags' default (an OpenAI-compatible endpoint)

__all__ = ["AnthropicChatModel", "GeminiChatModel", "PROVIDERS", "key_env", "make_provider_model", "provider_of",
           "route"]


@dataclass(frozen=True)
class Provider:
    wire: str  # "openai", "anthropic", "gemini" or "litellm"
    base_url: str
    key_env: str


PROVIDERS = {
    "openai": Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": Provider("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
    "gemini": Provider("gemini", "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY"),
    "groq": Provider("openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "mistral": Provider("openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "deepseek": Provider("openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "together_ai": Provider("openai", "https://api.together.xyz/v1", "TOGETHERAI_API_KEY"),
    "xai": Provider("openai", "https://api.x.ai/v1", "XAI_API_KEY"),
    "openrouter": Provider("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    # any provider LiteLLM routes, with the provider's own credential variables (litellm_client.py)
    "litellm": Provider("litellm", "", ""),
}


def provider_of(name: str) -> Optional[str]:
    """The provider prefix of a model name, or None (a bare name, or a prefix that is no provider's, such as
    ``Qwen/Qwen3-8B``)."""
    prefix, slash, rest = name.partition("/")
    return prefix if slash and rest and prefix in PROVIDERS else None


@dataclass(frozen=True)
class Route:
    """Where a model name goes: the wire format, the model name sent, the base URL and the key variable."""

    wire: str
    model: str
    base_url: str
    key_env: str


def route(name: str, base_url: Optional[str] = None) -> Optional[Route]:
    """The provider route of ``name``, or None for mua's plain OpenAI-compatible client with the name sent
    as given. Anthropic and Gemini names always route (``base_url`` then replaces the provider's host: a
    proxy, a mock). An OpenAI-format provider's prefix routes only without ``base_url`` (and, for ``openai/``,
    without $OPENAI_BASE_URL): a server one names itself may serve a model called ``openai/gpt-oss-20b``."""
    prefix = provider_of(name)
    if prefix is None:
        return None
    p = PROVIDERS[prefix]
    if p.wire == "openai" and (base_url or (prefix == "openai" and os.environ.get("OPENAI_BASE_URL"))):
        return None
    return Route(p.wire, name.split("/", 1)[1], base_url or p.base_url, p.key_env)


def key_env(name: str, base_url: Optional[str] = None) -> str:
    """The variable a model's key is read from when none is named: its provider's, else OPENAI_API_KEY."""
    r = route(name, base_url)
    return r.key_env if r else DEFAULT_KEY_ENV


def make_provider_model(r: Route, params: dict[str, Any]) -> Any:
    """The client for a route. ``params`` as OpenAIChatModel takes them; the default key variable becomes the
    provider's."""
    if params.get("api_key_env", DEFAULT_KEY_ENV) == DEFAULT_KEY_ENV:
        params = {**params, "api_key_env": r.key_env}
    if r.wire == "litellm":
        from .litellm_client import LiteLLMChatModel  # optional and heavy: imported only for litellm/ names
        return LiteLLMChatModel(r.model, r.base_url or None, **params)
    cls = {"openai": OpenAIChatModel, "anthropic": AnthropicChatModel, "gemini": GeminiChatModel}[r.wire]
    return cls(r.model, r.base_url, **params)
