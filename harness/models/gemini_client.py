"""Google's Gemini API (``POST {base_url}/models/MODEL:generateContent``) behind the ChatModel protocol; see
providers.py for why mua speaks it itself and how the conversation is translated."""
from __future__ import annotations

import json
from typing import Any, Optional

from ..io.jsonl import BadLine, loads_untrusted
from ..types import Message, ToolCall, ToolSpec, Usage
from . import pools
from .openai_client import OpenAIChatModel, read_reply, token_count
from .translate import arguments, merged, sent_params, system_text, text, tool_choice

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
        params = sent_params(self.params, seed)
        params.pop("store", None)
        names = {c.id: c.name for m in messages for c in m.tool_calls or []}  # a result names its function
        body: dict[str, Any] = {}
        if system := system_text(messages):
            body["systemInstruction"] = {"parts": [{"text": system}]}
        body["contents"] = merged([t for m in messages if (t := _gemini_turn(m, names))], "role", "parts")
        if tools:
            body["tools"] = [{"functionDeclarations": [_declaration(t) for t in tools]}]
        choice = tool_choice(self.params)
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
    try:  # the hardened reader: a tool's result may be JSON too deep for json.loads
        value = loads_untrusted(text) if text.lstrip().startswith("{") else None
    except BadLine:
        value = None
    return value if isinstance(value, dict) else {"content": text}


def _gemini_turn(m: Message, names: dict[str, str]) -> Optional[dict]:
    if m.role == "system":
        return None
    if m.role == "tool":
        name = names.get(m.tool_call_id or "", m.name or "")
        return {"role": "user", "parts": [{"functionResponse": {"name": name,
                                                                "response": _tool_response(text(m.content))}}]}
    parts: list[dict] = [{"text": m.content}] if m.content else []
    if m.role == "assistant":
        parts += [{"functionCall": {"name": c.name, "args": arguments(c)}} for c in m.tool_calls or []]
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
    completion = token_count(usage, "candidatesTokenCount") + token_count(usage, "thoughtsTokenCount")
    return (Message(role="assistant", content="".join(texts) if texts else None, tool_calls=calls or None),
            Usage(requests=1, prompt_tokens=token_count(usage, "promptTokenCount"), completion_tokens=completion))
