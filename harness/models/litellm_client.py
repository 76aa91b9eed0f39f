"""``litellm/PROVIDER/MODEL``: any provider LiteLLM routes (Bedrock, Vertex, Azure, ...), for those mua has no
adapter for (``pip install -e ".[providers]"``). providers.py says why it is not the default route: 381 MB
installed, 3 s of CPU to import, 25x mua's CPU per request.

LiteLLM reads the provider's credentials from the provider's own environment variables (AWS_*, AZURE_*,
...), never from mua's flags, so no key passes through mua. Its price map is read from the installed package
(LITELLM_LOCAL_MODEL_COST_MAP=True, set before the import), never fetched from the internet at import, so a
run's prices do not depend on the network. Failed requests are retried by LiteLLM (``num_retries`` from the
retry policy); one that still fails is a ModelError, as for every other client.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict
from typing import Any, Optional

from ..errors import ConfigError, ModelError
from ..io.jsonl import BadLine, check_untrusted
from ..types import Message, ToolSpec, Usage
from .openai_client import _Transient, parse_reply, request_message, retry_policy

ERROR_TEXT_LIMIT = 500


def load_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline, reproducible prices
    try:
        import litellm
    except ImportError:
        raise ConfigError('litellm/... models need LiteLLM: pip install -e ".[providers]"') from None
    litellm.suppress_debug_info = True
    return litellm


def litellm_price(model: str) -> Optional[tuple[float, float, str]]:
    """(input, output USD per million tokens, source) from the installed LiteLLM's price map, or None."""
    try:
        litellm = load_litellm()
    except ConfigError:
        return None
    try:
        entry = litellm.get_model_info(model)
    except Exception:  # LiteLLM raises its own errors for a model it does not know
        return None
    cost_in, cost_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not all(isinstance(c, (int, float)) and math.isfinite(c) and c >= 0 for c in (cost_in, cost_out)):
        return None
    from importlib.metadata import version
    return round(cost_in * 1e6, 6), round(cost_out * 1e6, 6), f"LiteLLM {version('litellm')} (installed)"


def _redact(text: str) -> str:
    """``text`` with the value of every credential-looking environment variable masked (LiteLLM reads the
    provider's own variables; mua does not know which one a provider used)."""
    for name, value in os.environ.items():
        if len(value) >= 8 and any(w in name.upper() for w in ("KEY", "SECRET", "TOKEN", "PASSWORD")):
            text = text.replace(value, "***")
    return text


class LiteLLMChatModel:
    """Chat completions through ``litellm.acompletion``; ``params`` are sent with every request (None: not
    sent), ``base_url`` becomes LiteLLM's ``api_base``."""

    backend = "litellm"

    def __init__(self, model: str, base_url: Optional[str] = None, *, api_key_env: str = "",
                 timeout_s: float = 600.0, retry: Optional[dict] = None, max_connections: int = 0, **params: Any):
        self.litellm = load_litellm()
        self.model, self.base_url, self.api_key_env = model, base_url, api_key_env
        self.timeout_s = float(timeout_s)
        self.retry = retry_policy(retry)
        self.params = params
        self.pending = 0
        self.last_answer = time.monotonic()

    def __repr__(self) -> str:
        return f"LiteLLMChatModel(model={self.model!r}, base_url={self.base_url!r})"

    def describe(self) -> dict:
        return {"backend": self.backend, "model": self.model, "base_url": self.base_url,
                "timeout_s": self.timeout_s, "retry": asdict(self.retry),
                "params": json.loads(json.dumps(self.params, default=str))}

    def silent_for(self) -> Optional[float]:
        return time.monotonic() - self.last_answer if self.pending else None

    async def aclose(self) -> None:
        return None

    async def chat(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                   seed: Optional[int] = None) -> tuple[Message, Usage]:
        request: dict[str, Any] = {"model": self.model, "messages": [request_message(m) for m in messages]}
        if tools:
            request["tools"] = [t.to_openai() for t in tools]
        request.update({k: v for k, v in self.params.items() if v is not None})
        if seed is not None:
            request["seed"] = seed
        if self.base_url:
            request["api_base"] = self.base_url
        self.pending += 1
        try:
            response = await self.litellm.acompletion(**request, timeout=self.timeout_s,
                                                      num_retries=max(0, self.retry.max_attempts - 1))
            self.last_answer = time.monotonic()
            data = response.model_dump()
            check_untrusted(data)  # what LiteLLM decoded, held to the rules of every other client's replies
            return parse_reply(data, f"call_{len(messages)}")
        except BadLine as e:
            raise ModelError(f"LiteLLM model {self.model}: malformed reply: {e.about('the reply')}") from None
        except _Transient as e:
            raise ModelError(f"LiteLLM model {self.model}: {e}") from None
        except Exception as e:  # LiteLLM's own exception classes, whatever the provider
            text = _redact(str(e))[:ERROR_TEXT_LIMIT]
            raise ModelError(f"LiteLLM model {self.model} failed: {type(e).__name__}: {text}") from None
        finally:
            self.pending -= 1
