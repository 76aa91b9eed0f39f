"""Models named by provider: ``anthropic/claude-sonnet-4-5``, ``gemini/gemini-2.5-flash``, ``openai/gpt-4o``,
``groq/...``: the prefix picks the provider's wire format, its API host and the variable holding its key.

Why native adapters and not LiteLLM (which tau2 uses): measured on this machine with litellm 1.110.2 (the
newest on PyPI), installing it into an empty venv pulls 64 packages, 381 MB (boto3, the openai SDK, tokenizers,
huggingface-hub, aiohttp, tiktoken, pydantic); ``import litellm`` takes 3.6 s wall / 3.3 s CPU and 197 MB of
memory, and by default fetches its price map from raw.githubusercontent.com at import (three attempts, then a
warning) unless LITELLM_LOCAL_MODEL_COST_MAP=True is set first. Per request it took 6.4-6.6 ms of CPU
against 0.22-0.27 ms for the adapter below, the same tau2-sized Anthropic request to the same mock
(``tests/perf/bench_providers.py``); its OpenAI path is the openai SDK, which measured 15-25x more CPU per
request than mua's client. The two formats that differ from OpenAI's are small:
Anthropic Messages (``POST /v1/messages``) and Gemini ``generateContent``; they are written here over mua's
own HTTP client, so retries, connection pools, the watchdog and key redaction are the same for every
provider, and a run needs nothing installed. Every other provider listed speaks the OpenAI format and goes
through OpenAIChatModel at its host. Prices come from a snapshot of LiteLLM's maintained table
(price_table.py). For the providers without an adapter here (Bedrock, Vertex, Azure, ...), ``litellm/NAME``
goes through LiteLLM itself when installed (the ``providers`` extra; litellm_client.py).

Translation follows what LiteLLM sends for the same OpenAI-shaped conversation: system messages become the
top-level system instruction; tool results become ``tool_result`` blocks (Anthropic) or ``functionResponse``
parts (Gemini: a JSON-object result as the response, any other text as ``{"content": text}``); consecutive
messages of one role are merged, as both APIs require alternation; empty turns are left out (both reject
empty content). Anthropic gets ``max_tokens`` 8192 unless
given (the API requires one) and no seed (it has none); Gemini gets the seed in ``generationConfig``.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Optional

from ..types import Message, ToolCall, ToolSpec, Usage
from . import pools
from .openai_client import OpenAIChatModel, read_reply

DEFAULT_KEY_ENV = "OPENAI_API_KEY"  # ModelSpec's and the flags' default (an OpenAI-compatible endpoint)
ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_MAX_TOKENS = 8192


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


def _arguments(call: ToolCall) -> dict:
    """A call's arguments as the object both APIs require (unparsable text, which these APIs never produce
    themselves, is sent as an empty object)."""
    try:
        return call.parsed_arguments()
    except ValueError:
        return {}


def _text(content: Optional[str]) -> str:
    return content or ""


def _merged(turns: list[dict], role_key: str, parts_key: str) -> list[dict]:
    """Consecutive turns of one role as one turn (both APIs require user and model turns to alternate)."""
    out: list[dict] = []
    for t in turns:
        if out and out[-1][role_key] == t[role_key]:
            out[-1][parts_key] = out[-1][parts_key] + t[parts_key]
        else:
            out.append(t)
    return out


def _system(messages: list[Message]) -> str:
    return "\n\n".join(_text(m.content) for m in messages if m.role == "system" and m.content)


def _params(params: dict[str, Any], seed: Optional[int]) -> dict[str, Any]:
    """The configured request params without the null ones (a null param means: not sent); the call's seed
    overrides a configured one."""
    out = {k: v for k, v in params.items() if v is not None}
    if seed is not None:
        out["seed"] = seed
    return out


def _tool_choice(params: dict[str, Any]) -> Any:
    """The tool choice to send with tools: "auto" unless a param names another, or null (send none, as some
    benchmarks' official runners do)."""
    return params["tool_choice"] if "tool_choice" in params else "auto"


class AnthropicChatModel(OpenAIChatModel):
    """Anthropic's Messages API (``POST {base_url}/messages``, key in ``x-api-key``)."""

    backend = "anthropic"
    auth: pools.Auth = ("x-api-key", "", (("anthropic-version", ANTHROPIC_VERSION),))

    def endpoint_url(self) -> str:
        return self.base_url + "/messages"

    def request_body(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                     seed: Optional[int] = None) -> dict:
        return self._body(messages, tools, seed)

    def _body(self, messages: list[Message], tools: Optional[list[ToolSpec]], seed: Optional[int]) -> dict:
        params = _params(self.params, seed)
        params.pop("seed", None)  # the API has no seed
        params.pop("store", None)  # an OpenAI-only field of some benchmark protocols
        body: dict[str, Any] = {"model": self.model}
        if "max_tokens" not in self.params and "max_completion_tokens" not in self.params:
            body["max_tokens"] = ANTHROPIC_MAX_TOKENS  # the API requires one (a null param: not sent, as always)
        if system := _system(messages):
            body["system"] = system
        body["messages"] = _merged([t for m in messages if (t := self._turn(m))], "role", "content")
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in tools]
        choice = _tool_choice(self.params)
        params.pop("tool_choice", None)
        if tools and choice is not None:
            body["tool_choice"] = _anthropic_choice(choice)
        if "max_completion_tokens" in params:
            params["max_tokens"] = params.pop("max_completion_tokens")
        if "stop" in params:
            stop = params.pop("stop")
            params["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        body.update(params)
        return body

    @staticmethod
    def _turn(m: Message) -> Optional[dict]:
        if m.role == "system":
            return None
        if m.role == "tool":
            return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                                                 "content": _text(m.content)}]}
        blocks: list[dict] = [{"type": "text", "text": m.content}] if m.content else []
        role = "assistant" if m.role == "assistant" else "user"
        if role == "assistant":
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": _arguments(c)}
                       for c in m.tool_calls or []]
        return {"role": role, "content": blocks} if blocks else None  # the API rejects empty text blocks

    def parse(self, data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
        return read_reply(_parse_anthropic, data, call_id_prefix)


def _anthropic_choice(choice: Any) -> dict:
    if isinstance(choice, dict):  # OpenAI's {"type": "function", "function": {"name": ...}}
        return {"type": "tool", "name": (choice.get("function") or {}).get("name", "")}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}.get(str(choice), str(choice))}


def _parse_anthropic(data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            args = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(ToolCall(id=str(block.get("id") or f"{call_id_prefix}_{len(calls)}"),
                                  name=str(block["name"]), arguments=args))
    usage = data.get("usage") or {}
    prompt = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                   "cache_read_input_tokens"))
    return (Message(role="assistant", content="".join(texts) if texts else None, tool_calls=calls or None),
            Usage(requests=1, prompt_tokens=prompt, completion_tokens=int(usage.get("output_tokens") or 0)))


# OpenAI request params -> Gemini generationConfig fields
GEMINI_GENERATION = {"temperature": "temperature", "top_p": "topP", "top_k": "topK", "max_tokens": "maxOutputTokens",
                     "max_completion_tokens": "maxOutputTokens", "stop": "stopSequences", "seed": "seed",
                     "n": "candidateCount", "presence_penalty": "presencePenalty",
                     "frequency_penalty": "frequencyPenalty"}


class GeminiChatModel(OpenAIChatModel):
    """Google's Gemini API (``POST {base_url}/models/MODEL:generateContent``, key in ``x-goog-api-key``, never
    in the URL, which error messages and logs show)."""

    backend = "gemini"
    auth: pools.Auth = ("x-goog-api-key", "", ())

    def endpoint_url(self) -> str:
        return f"{self.base_url}/models/{self.model}:generateContent"

    def request_body(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                     seed: Optional[int] = None) -> dict:
        return self._body(messages, tools, seed)

    def _body(self, messages: list[Message], tools: Optional[list[ToolSpec]], seed: Optional[int]) -> dict:
        params = _params(self.params, seed)
        params.pop("store", None)
        names = {c.id: c.name for m in messages for c in m.tool_calls or []}  # a result names its function
        body: dict[str, Any] = {}
        if system := _system(messages):
            body["systemInstruction"] = {"parts": [{"text": system}]}
        body["contents"] = _merged([t for m in messages if (t := _gemini_turn(m, names))], "role", "parts")
        if tools:
            body["tools"] = [{"functionDeclarations": [_declaration(t) for t in tools]}]
        choice = _tool_choice(self.params)
        params.pop("tool_choice", None)
        if tools and choice is not None:
            body["toolConfig"] = {"functionCallingConfig": _gemini_choice(choice)}
        generation = {GEMINI_GENERATION[k]: params.pop(k) for k in list(params) if k in GEMINI_GENERATION}
        if isinstance(generation.get("stopSequences"), str):
            generation["stopSequences"] = [generation["stopSequences"]]
        if generation:
            body["generationConfig"] = generation
        body.update(params)  # anything else is the API's own field (safetySettings, ...)
        return body

    def parse(self, data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
        return read_reply(_parse_gemini, data, call_id_prefix)


def _declaration(tool: ToolSpec) -> dict:
    # parametersJsonSchema takes the JSON schema as given (``parameters`` accepts only an OpenAPI subset)
    out: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.parameters and tool.parameters.get("properties"):
        out["parametersJsonSchema"] = tool.parameters
    return out


def _gemini_choice(choice: Any) -> dict:
    if isinstance(choice, dict):
        return {"mode": "ANY", "allowedFunctionNames": [(choice.get("function") or {}).get("name", "")]}
    return {"mode": {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(str(choice), str(choice).upper())}


def _tool_response(text: str) -> dict:
    try:
        value = json.loads(text) if text.lstrip().startswith("{") else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"content": text}


def _gemini_turn(m: Message, names: dict[str, str]) -> Optional[dict]:
    if m.role == "system":
        return None
    if m.role == "tool":
        name = names.get(m.tool_call_id or "", m.name or "")
        return {"role": "user", "parts": [{"functionResponse": {"name": name,
                                                                "response": _tool_response(_text(m.content))}}]}
    parts: list[dict] = [{"text": m.content}] if m.content else []
    if m.role == "assistant":
        parts += [{"functionCall": {"name": c.name, "args": _arguments(c)}} for c in m.tool_calls or []]
        return {"role": "model", "parts": parts} if parts else None  # the API rejects empty parts
    return {"role": "user", "parts": parts} if parts else None


def _parse_gemini(data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
    candidate = data["candidates"][0]
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in (candidate.get("content") or {}).get("parts") or []:  # no content: blocked or empty
        if "functionCall" in part:
            fc = part["functionCall"]
            calls.append(ToolCall(id=str(fc.get("id") or f"{call_id_prefix}_{len(calls)}"), name=str(fc["name"]),
                                  arguments=json.dumps(fc.get("args") or {}, ensure_ascii=False)))
        elif "text" in part and not part.get("thought"):  # thought summaries are not the answer
            texts.append(str(part["text"]))
    usage = data.get("usageMetadata") or {}
    completion = int(usage.get("candidatesTokenCount") or 0) + int(usage.get("thoughtsTokenCount") or 0)
    return (Message(role="assistant", content="".join(texts) if texts else None, tool_calls=calls or None),
            Usage(requests=1, prompt_tokens=int(usage.get("promptTokenCount") or 0), completion_tokens=completion))
