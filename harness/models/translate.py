"""Pieces shared by the adapters of providers whose wire format is not OpenAI's (anthropic_client.py,
gemini_client.py): OpenAI-shaped messages and params read the way both need them."""
from __future__ import annotations

from typing import Any, Optional

from ..types import Message, ToolCall


def arguments(call: ToolCall) -> dict:
    """A call's arguments as the object both APIs require (unparsable text, which these APIs never produce
    themselves, is sent as an empty object)."""
    try:
        return call.parsed_arguments()
    except ValueError:
        return {}


def text(content: Optional[str]) -> str:
    return content or ""


def merged(turns: list[dict], role_key: str, parts_key: str) -> list[dict]:
    """Consecutive turns of one role as one turn (both APIs require user and model turns to alternate)."""
    out: list[dict] = []
    for t in turns:
        if out and out[-1][role_key] == t[role_key]:
            out[-1][parts_key] = out[-1][parts_key] + t[parts_key]
        else:
            out.append(t)
    return out


def system_text(messages: list[Message]) -> str:
    return "\n\n".join(text(m.content) for m in messages if m.role == "system" and m.content)


def sent_params(params: dict[str, Any], seed: Optional[int]) -> dict[str, Any]:
    """The configured request params without the null ones (a null param means: not sent); the call's seed
    overrides a configured one."""
    out = {k: v for k, v in params.items() if v is not None}
    if seed is not None:
        out["seed"] = seed
    return out


def tool_choice(params: dict[str, Any]) -> Any:
    """The tool choice to send with tools: "auto" unless a param names another, or null (send none, as some
    benchmarks' official runners do)."""
    return params["tool_choice"] if "tool_choice" in params else "auto"
