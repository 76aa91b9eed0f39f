"""A ChatModel for any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, hosted APIs).

Transient failures (429, 408, 409, 5xx, timeouts, dropped connections, unreadable bodies) are retried with
exponential backoff and jitter, honouring Retry-After; other 4xx fail at once. Every reply body, whatever the
provider's format, is read by the hardened reader (``harness/io/jsonl.py: loads_untrusted``: nesting, integer
digits, non-finite numbers, invalid UTF-8 and lone surrogates), and so are the tool-call arguments it carries
as text; token counts must be whole numbers from 0 to ``MAX_TOKEN_COUNT``. A reply that breaks these rules is
malformed: retried, then the episode's ModelError, never an exception that escapes the client.

The API key is read from an environment variable and lives only in the HTTP session's headers: it is redacted
from every error and log line, and never appears in ``repr`` or :meth:`OpenAIChatModel.describe`.
"""
from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt, wait_random_exponential
from tenacity.wait import wait_base

from ..errors import ConfigError, ModelError
from ..io.jsonl import BadLine, loads_untrusted, unsafe_json
from ..io.urls import redact_url
from ..types import Message, ToolCall, ToolSpec, Usage
from . import pools
from .activity import LengthWatch
from .http1 import InvalidURL, TransportError
from .request_json import BodyEncoder, ToolList

try:  # tenacity >= 8.3: also stops when the next sleep would overrun the total budget
    from tenacity import stop_before_delay as _stop_delay
except ImportError:  # pragma: no cover - older tenacity
    from tenacity import stop_after_delay as _stop_delay  # type: ignore[assignment]

log = logging.getLogger("mua.models")

# Without --*-base-url: $OPENAI_BASE_URL, else a local server (vLLM's default port). Never a hosted API by
# default, so transcripts and keys go nowhere the user did not name.
LOCAL_BASE_URL = "http://127.0.0.1:8000/v1"
RETRYABLE_STATUS = frozenset({408, 409, 429})
ERROR_TEXT_LIMIT = 500  # characters of a server's error body kept in an exception message
MAX_TOKEN_COUNT = 10**12  # per request; far above any model's context, far below what breaks a cost sum


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. ``max_wait_s`` caps one backoff (and any Retry-After); ``max_total_s`` caps the
    whole request including its retries."""

    max_attempts: int = 8
    initial_wait_s: float = 1.0
    max_wait_s: float = 60.0
    max_total_s: float = 600.0


class _Transient(Exception):
    """A failure worth another attempt; ``retry_after`` is the server's requested delay, if it gave one."""

    def __init__(self, reason: str, retry_after: Optional[float] = None):
        super().__init__(reason)
        self.retry_after = retry_after


class _WaitBackoff(wait_base):
    """Exponential backoff with full jitter, except that a server's Retry-After (capped) wins."""

    def __init__(self, policy: RetryPolicy):
        self.cap = policy.max_wait_s
        self.backoff = wait_random_exponential(multiplier=policy.initial_wait_s, max=policy.max_wait_s)

    def __call__(self, retry_state) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, self.cap)
        return self.backoff(retry_state)


MAX_ATTEMPTS = 1000
MAX_CONNECTIONS_LIMIT = 1_000_000


def retry_policy(value: Optional[RetryPolicy | dict]) -> RetryPolicy:
    """A RetryPolicy from itself, a dict of its fields (as configuration files give it), or None (defaults);
    ConfigError naming the field when one is unknown or not a number of its kind."""
    if value is None or isinstance(value, RetryPolicy):
        return value or RetryPolicy()
    if not isinstance(value, dict):
        raise ConfigError(f"retry must be an object of {', '.join(RetryPolicy.__dataclass_fields__)}, "
                          f"got {type(value).__name__}")
    unknown = sorted(str(k) for k in value if k not in RetryPolicy.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"retry: unknown field(s) {', '.join(unknown)}; known: "
                          f"{', '.join(RetryPolicy.__dataclass_fields__)}")
    for key, given in value.items():
        if key == "max_attempts":
            if isinstance(given, bool) or not isinstance(given, int) or not 1 <= given <= MAX_ATTEMPTS:
                raise ConfigError(f"retry.max_attempts must be a whole number from 1 to {MAX_ATTEMPTS}, "
                                  f"got {given!r:.60}")
        elif isinstance(given, bool) or not isinstance(given, (int, float)) or not 0 <= given < math.inf:
            raise ConfigError(f"retry.{key} must be a finite number of seconds (0 or more), got {given!r:.60}")
    return RetryPolicy(**value)


def check_client_options(params: dict) -> None:
    """A model's client options among its params (``timeout_s``, ``retry``, ``max_connections``), typed:
    ConfigError naming the field when one is not what the client takes."""
    given = params.get("timeout_s")
    if given is not None and (isinstance(given, bool) or not isinstance(given, (int, float))
                              or not 0 < given < math.inf):
        raise ConfigError(f"timeout_s must be a positive number of seconds, got {given!r:.60}")
    retry_policy(params.get("retry"))
    if "max_connections" in params:
        check_max_connections(params["max_connections"])


def check_max_connections(value: Any) -> int:
    """``max_connections``: a whole number of connections per endpoint (ConfigError naming it otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONNECTIONS_LIMIT:
        raise ConfigError(f"max_connections must be a whole number from 1 to {MAX_CONNECTIONS_LIMIT:,}, "
                          f"got {value!r:.60}")
    return value


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _error_text(raw: bytes) -> str:
    """The server's error message: ``error.message`` of a JSON error body, else the body text, shortened."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body = loads_untrusted(text)
    except BadLine:  # not JSON, or JSON too hostile to look into: the text itself, shortened
        body = None
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict) and err.get("message"):
        text = str(err["message"])
    elif isinstance(err, str):
        text = err
    text = text.strip()
    return text if len(text) <= ERROR_TEXT_LIMIT else text[:ERROR_TEXT_LIMIT] + "..."


def parse_reply(data: Any, call_id_prefix: str = "call") -> tuple[Message, Usage]:
    """An assistant Message and Usage from a chat-completions response body. Tool-call arguments stay the
    raw string the model produced. Raises _Transient when the body is not a usable completion."""
    return read_reply(_parse_reply, data, call_id_prefix)


def read_reply(parse: Callable[[Any, str], tuple[Message, Usage]], data: Any,
               call_id_prefix: str) -> tuple[Message, Usage]:
    """``parse(data, call_id_prefix)``, a body that does not have the expected shape raising _Transient (the
    server may answer properly next time; the retry budget bounds it)."""
    try:
        return parse(data, call_id_prefix)
    except BadLine as e:  # a value the reply's own checks refused; the reason says which
        raise _Transient(f"malformed reply: {e}") from None
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
        raise _Transient(f"malformed reply: {type(e).__name__}: {e}") from None


def read_body(raw: bytes) -> Any:
    """A 200 response's body through the hardened reader; _Transient naming the reason when it breaks a rule."""
    try:
        return loads_untrusted(raw)
    except BadLine as e:
        raise _Transient(f"malformed reply: {e.about('the body')}") from None


def token_count(usage: Any, key: str) -> int:
    """``usage[key]`` as a token count: absent or null is 0 (a server that does not count); anything but a whole
    number from 0 to MAX_TOKEN_COUNT is a malformed reply (BadLine), never a count that breaks a cost sum."""
    value = usage.get(key)
    if value is None:
        return 0
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKEN_COUNT
            or (isinstance(value, float) and not value.is_integer())):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
        raise BadLine(f"usage {key} is {shown}, not a token count")
    return int(value)


def checked_call(call: ToolCall, index: int) -> ToolCall:
    """``call`` when its arguments text is safe to hand to the environment (readable JSON, or no JSON at all,
    which the environment answers as the benchmark does); BadLine otherwise."""
    bad = unsafe_json(call.arguments)
    if bad is not None:
        raise BadLine(f"tool call {index + 1}'s arguments: {bad.about('the text')}")
    return call


def _parse_reply(data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
    raw = data["choices"][0]["message"]
    if not isinstance(raw, dict):
        raise TypeError("choices[0].message is not an object")
    content = raw.get("content")
    if isinstance(content, list):  # content parts: keep the text
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if content is not None and not isinstance(content, str):
        raise TypeError("message content is not text")
    calls = []
    for i, c in enumerate(raw.get("tool_calls") or []):
        call = checked_call(ToolCall.from_dict(c), i)
        if not call.id:  # some servers omit ids; tool results must still link to their call
            call.id = f"{call_id_prefix}_{i}"
        calls.append(call)
    usage = data.get("usage") or {}
    return (Message(role="assistant", content=content, tool_calls=calls or None),
            Usage(requests=1, prompt_tokens=token_count(usage, "prompt_tokens"),
                  completion_tokens=token_count(usage, "completion_tokens")))


def finish_reason_of(data: Any) -> Optional[str]:
    """``choices[0].finish_reason`` of a parsed reply, None when absent (or the reply is another provider's
    format, whose client parses it)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    reason = first.get("finish_reason")
    return reason if isinstance(reason, str) else None


def check_base_url(url: str) -> str:
    """The base URL without a trailing slash; ConfigError unless it is a well-formed http(s) URL."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as e:
        raise ConfigError(redact_url(f"base URL {url!r} is malformed ({e}), e.g. http://127.0.0.1:8000/v1")) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(redact_url(f"base URL {url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1"))
    return url.rstrip("/")


def request_message(message: Message) -> dict:
    """A message as the official runners send it: a tool result carries its call id, not the tool's name
    (tau2's litellm messages and bfcl_eval's FC handler send none; results files keep it)."""
    d = message.to_dict()
    if message.role == "tool":
        d.pop("name", None)
    return d


class OpenAIChatModel:
    """Chat completions from an OpenAI-compatible server.

    ``params`` (temperature, max_tokens, top_p, ...) are sent with every request (a None value: that field is
    never sent, not even mua's default ``tool_choice: "auto"``); ``seed`` given to
    :meth:`chat` overrides a ``seed`` param. Models on the same endpoint share one connection pool per event
    loop, taken lazily (see pools.py); call :meth:`aclose` when done.

    Another provider's wire format (providers.py) is a subclass that overrides ``backend``, ``auth``,
    :meth:`endpoint_url`, :meth:`_body` and :meth:`parse`; transport, retries and redaction stay these.
    """

    backend = "openai"  # recorded in config.json
    auth: pools.Auth = pools.BEARER  # how the key travels

    def __init__(self, model: str, base_url: Optional[str] = None, *, api_key_env: str = "OPENAI_API_KEY",
                 timeout_s: float = 600.0, retry: Optional[RetryPolicy | dict] = None,
                 max_connections: int = pools.MAX_CONNECTIONS, **params: Any):
        self.model = model
        self.base_url = check_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or LOCAL_BASE_URL)
        self.url = self.endpoint_url()
        self.api_key_env = api_key_env
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s < math.inf:
            raise ConfigError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
        self.timeout_s = float(timeout_s)
        # Liveness, read by the batch runner's watchdog: requests waiting, and when the endpoint last answered.
        self.pending = 0
        self.last_answer = time.monotonic()
        self.retry = retry_policy(retry)
        self.max_connections = check_max_connections(max_connections)
        self.params = params
        self._encoder = BodyEncoder()
        self._session: Optional[pools.Transport] = None
        self.length_watch = LengthWatch(f"{model} at {self.base_url}")
        self._pool: Optional[pools.PoolKey] = None  # the shared per-endpoint pool this model holds (pools.py)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={redact_url(self.base_url)!r})"

    def endpoint_url(self) -> str:
        """Where requests are posted (set once, after ``base_url`` and ``model``)."""
        return self.base_url + "/chat/completions"

    def parse(self, data: Any, call_id_prefix: str) -> tuple[Message, Usage]:
        """The reply of a 200 response body (raises _Transient when malformed)."""
        return parse_reply(data, call_id_prefix)

    def describe(self) -> dict:
        """JSON-safe configuration for config.json (never the key, only the variable's name)."""
        return {"backend": self.backend, "model": self.model, "base_url": redact_url(self.base_url),
                "api_key_env": self.api_key_env, "timeout_s": self.timeout_s, "retry": asdict(self.retry),
                "params": json.loads(json.dumps(self.params, default=str))}

    def _key(self) -> str:
        return os.environ.get(self.api_key_env, "") if self.api_key_env else ""

    def _redact(self, text: str) -> str:
        key = self._key()  # keys of 1-3 characters (local servers' placeholders) are no secret to mask
        return redact_url(text.replace(key, "***") if len(key) >= 4 else text)

    def _session_for_loop(self) -> pools.Transport:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._pool is None or self._pool[0] is not loop:
            if self._pool is not None and self._pool[0] is not loop:
                pools.forget(self._pool)  # a model reused in a new loop: its old pool is that loop's business
            self._pool, self._session = pools.acquire(self.base_url, self._key(), self.max_connections,
                                                      self.auth)
        return self._session

    async def aclose(self) -> None:
        if self._pool is not None and self._pool[0] is asyncio.get_running_loop():
            await pools.release(self._pool)
        elif self._pool is not None:
            pools.forget(self._pool)
        self._session = None
        self._pool = None

    def request_body(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                     seed: Optional[int] = None) -> dict:
        body = self._body(messages, tools, seed)
        if isinstance(body.get("tools"), ToolList):
            body["tools"] = body["tools"].to_openai()
        return body

    def request_payload(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                        seed: Optional[int] = None) -> bytes:
        """The request body as sent: ``json.dumps(request_body(...), ensure_ascii=False)``, UTF-8. A lone
        surrogate (text no UTF-8 can hold, e.g. from a task file's ``"\\ud800"``) is sent \\u-escaped, as the
        result files write it: it can only stand inside a JSON string, where the escape is its JSON form."""
        return self._encoder.encode(self._body(messages, tools, seed)).encode("utf-8", "backslashreplace")

    def _body(self, messages: list[Message], tools: Optional[list[ToolSpec]], seed: Optional[int]) -> dict:
        body: dict[str, Any] = {"model": self.model, "messages": [request_message(m) for m in messages]}
        if tools:
            body["tools"] = ToolList(tools)
            body["tool_choice"] = "auto"
        body.update(self.params)
        for key in [k for k, v in self.params.items() if v is None]:
            del body[key]  # a null param means "do not send this field" (e.g. a runner that sends no tool_choice)
        if seed is not None:
            body["seed"] = seed
        return body

    def silent_for(self) -> Optional[float]:
        """Seconds since the endpoint last answered anything while requests are waiting; None when idle."""
        return time.monotonic() - self.last_answer if self.pending else None

    async def check_alive(self, timeout_s: Optional[float] = None) -> None:
        """Preflight: any HTTP answer from the server (even 404) proves it is there; a refused connection, a
        bad address or silence within ``timeout_s`` raises ModelError naming the URL."""
        url = self.base_url + "/models"
        timeout_s = timeout_s or min(10.0, self.timeout_s)
        probe = pools.new_transport(self.base_url, self._key(), 1, self.auth)  # its own connection, closed at once
        try:
            await probe.request("GET", url, None, timeout_s)
        except asyncio.TimeoutError:
            raise ModelError(self._redact(f"model endpoint {self.base_url} did not answer within {timeout_s:g} s "
                                          f"(GET {url}); is the server up and not overloaded?")) from None
        except (TransportError, ValueError) as e:
            raise ModelError(self._redact(f"model endpoint {self.base_url} cannot be reached: {e}")) from None
        finally:
            await probe.close()
        self.last_answer = time.monotonic()

    async def _attempt(self, payload: bytes, call_id_prefix: str) -> tuple[Message, Usage]:
        session = self._session_for_loop()
        self.pending += 1
        try:
            reply = await session.request("POST", self.url, payload, self.timeout_s)
            self.last_answer = time.monotonic()
        except asyncio.TimeoutError:
            raise _Transient(f"no complete reply within {self.timeout_s:g} s") from None
        except InvalidURL:
            raise ModelError(self._redact(f"model endpoint {self.url} is not a valid URL")) from None
        except TransportError as e:  # refused/dropped connections, truncated or unparsable HTTP replies
            raise _Transient(f"connection error: {e}") from None
        finally:
            self.pending -= 1
        raw, status = reply.body, reply.status
        retry_after = parse_retry_after(reply.headers.get("retry-after"))
        if status != 200:
            reason = f"HTTP {status}: {_error_text(raw)}"
            if status in RETRYABLE_STATUS or status >= 500:
                raise _Transient(reason, retry_after)
            raise ModelError(self._redact(f"model endpoint {self.url} rejected the request ({reason})"))
        data = read_body(raw)
        message, usage = self.parse(data, call_id_prefix)
        self.length_watch.saw(finish_reason_of(data), usage.completion_tokens)
        return message, usage

    def _log_retry(self, state) -> None:
        exc = state.outcome.exception()
        wait = state.next_action.sleep if state.next_action else 0.0
        log.info(self._redact(f"{self.url}: attempt {state.attempt_number} failed ({exc}); retrying in "
                              f"{wait:.2f} s"))

    async def chat(self, messages: list[Message], tools: Optional[list[ToolSpec]] = None,
                   seed: Optional[int] = None) -> tuple[Message, Usage]:
        payload = self.request_payload(messages, tools, seed)
        prefix = f"call_{len(messages)}"  # ids for servers that omit them: unique within one conversation
        started = time.monotonic()
        try:  # fast path: most requests succeed at once, and tenacity costs ~0.1 ms per call
            return await self._attempt(payload, prefix)
        except _Transient as e:
            first: Optional[_Transient] = e

        async def attempt() -> tuple[Message, Usage]:
            nonlocal first
            if first is not None:  # tenacity's attempt 1 is the failure above: it waits and counts as usual
                failed, first = first, None
                raise failed
            return await self._attempt(payload, prefix)

        policy = self.retry
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.max_attempts)
            | _stop_delay(max(0.0, policy.max_total_s - (time.monotonic() - started))),
            wait=_WaitBackoff(policy), retry=retry_if_exception_type(_Transient),
            before_sleep=self._log_retry, reraise=False)
        try:
            return await retrying(attempt)
        except RetryError as e:
            last = e.last_attempt.exception()
            attempts = e.last_attempt.attempt_number
            elapsed = time.monotonic() - started
            raise ModelError(self._redact(f"model endpoint {self.url} failed after {attempts} attempt(s) in "
                                          f"{elapsed:.1f} s: {last}")) from None
