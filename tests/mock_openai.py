"""A lean OpenAI-compatible mock server for tests and benchmark scripts (raw asyncio streams, HTTP/1.1 with
keep-alive, no framework: its CPU is counted in benchmarks).

Scripting: a *responder* ``(request_json) -> dict | HTTPReply`` answers each chat-completions request;
``text_reply``/``tool_call_reply`` build response bodies, ``by_model`` routes on the request's model name (one
server plays "agent" and "user"), ``script`` answers from a fixed list.

Fault injection (:class:`Faults`): listed faults for the first requests, then a seeded fraction of requests
fail with 429 (Retry-After: 0), 500, 503, a hang, a non-JSON body, a body without choices, a truncated body
or a dropped connection. The responder is consulted only for requests that succeed, so a run with faults
ends with the same answers as one without.

In process: ``with MockOpenAI(responder) as base_url: ...`` (background thread), or ``await start()`` /
``await stop()`` inside a running loop. As a process: ``python tests/mock_openai.py --port 0`` prints
``READY <base_url>``; ``GET /stats`` returns request/fault counts and the server's CPU seconds.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import random
import resource
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

FAULT_KINDS = ("429", "500", "503", "hang", "malformed", "no_choices", "truncated", "drop")
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass
class HTTPReply:
    """A response other than a plain 200 JSON body (e.g. a 400 to test non-retryable errors)."""

    status: int
    body: Any = None  # dict/list -> JSON; str/bytes sent as-is
    headers: dict = field(default_factory=dict)


Responder = Callable[[dict], Union[dict, HTTPReply]]


@dataclass
class Faults:
    """Which requests fail: ``sequence`` names the fault (or None: succeed) of the first requests in arrival
    order; after it, each request fails with probability ``rate``, its kind drawn from ``kinds``."""

    rate: float = 0.0
    kinds: tuple = FAULT_KINDS
    seed: int = 0
    sequence: tuple = ()
    hang_s: float = 30.0  # a hung request is answered by closing after this, or when the client gives up


# ---- response builders -------------------------------------------------------------------------------

def usage(prompt_tokens: int = 10, completion_tokens: int = 5) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _completion(message: dict, finish: str, use: Optional[dict], model: str) -> dict:
    return {"id": "chatcmpl-mock", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": use or usage()}


def text_reply(content: str, *, usage_: Optional[dict] = None, model: str = "mock") -> dict:
    return _completion({"role": "assistant", "content": content}, "stop", usage_, model)


def tool_call_reply(calls: list[tuple[str, Union[dict, str]]], content: Optional[str] = None, *,
                    usage_: Optional[dict] = None, model: str = "mock") -> dict:
    """``calls`` are (name, arguments); a str argument is sent verbatim (e.g. deliberately broken JSON)."""
    tool_calls = [{"id": f"call_{i}", "type": "function",
                   "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                  for i, (name, args) in enumerate(calls)]
    return _completion({"role": "assistant", "content": content, "tool_calls": tool_calls}, "tool_calls",
                       usage_, model)


def constant(reply: dict) -> Responder:
    return lambda request: reply


def script(replies: list) -> Responder:
    """Answers with ``replies`` in order; once they run out, a 400 says so (the client does not retry it)."""
    it = iter(replies)

    def respond(request: dict):
        reply = next(it, None)
        return reply if reply is not None else HTTPReply(400, {"error": {"message": "mock script exhausted"}})
    return respond


def by_model(routes: dict[str, Responder]) -> Responder:
    def respond(request: dict):
        route = routes.get(request.get("model"))
        if route is None:
            return HTTPReply(404, {"error": {"message": f"mock has no model {request.get('model')!r}"}})
        return route(request)
    return respond


# ---- the server --------------------------------------------------------------------------------------

def _encode(status: int, body: Any, headers: Optional[dict] = None) -> bytes:
    data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n{extra}\r\n")
    return head.encode() + data


class MockOpenAI:
    def __init__(self, responder: Optional[Responder] = None, faults: Optional[Faults] = None,
                 host: str = "127.0.0.1", port: int = 0):
        self.responder = responder or constant(text_reply("OK"))
        self.faults = faults or Faults()
        self.host, self.port = host, port
        self.requests = 0  # chat-completions requests received
        self.succeeded = 0
        self.connections = 0  # TCP connections accepted (keep-alive reuse keeps this low)
        self.fault_counts: dict[str, int] = {}
        self.headers: list[dict] = []  # each request's headers (names lower-cased), in arrival order
        self._rng = random.Random(self.faults.seed)
        self._server: Optional[asyncio.base_events.Server] = None
        self._connections: dict[asyncio.Task, asyncio.StreamWriter] = {}
        self._thread: Optional[threading.Thread] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def stats(self) -> dict:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return {"requests": self.requests, "succeeded": self.succeeded, "faults": dict(self.fault_counts),
                "connections": self.connections, "cpu_s": ru.ru_utime + ru.ru_stime}

    def _draw_fault(self) -> Optional[str]:
        n = self.requests - 1
        if n < len(self.faults.sequence):
            return self.faults.sequence[n]
        if self.faults.rate > 0 and self._rng.random() < self.faults.rate:
            return self.faults.kinds[self._rng.randrange(len(self.faults.kinds))]
        return None

    async def _fault(self, kind: str, reader, writer) -> bool:
        """Act out one fault; returns whether the connection stays usable."""
        if kind in ("429", "500", "503"):
            headers = {"Retry-After": "0"} if kind == "429" else None
            writer.write(_encode(int(kind), {"error": {"message": f"mock fault {kind}"}}, headers))
            return True
        if kind == "malformed":
            writer.write(_encode(200, b'{"choices": [{"message": '))
            return True
        if kind == "no_choices":
            writer.write(_encode(200, {"object": "chat.completion", "choices": []}))
            return True
        if kind == "truncated":
            full = _encode(200, text_reply("this reply is cut short"))
            writer.write(full[: len(full) - 20])
        elif kind == "hang":
            try:  # until the client times out and closes, or hang_s passes
                await asyncio.wait_for(reader.read(), self.faults.hang_s)
            except asyncio.TimeoutError:
                pass
        elif kind != "drop":
            raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
        return False

    async def _respond(self, method: str, path: str, body: bytes, reader, writer) -> bool:
        path = path.split("?", 1)[0]
        if method == "GET" and path == "/stats":
            writer.write(_encode(200, self.stats()))
        elif method == "GET" and path.endswith("/models"):
            writer.write(_encode(200, {"object": "list", "data": [{"id": "mock", "object": "model"}]}))
        elif method == "POST" and path.endswith("/chat/completions"):
            self.requests += 1
            kind = self._draw_fault()
            if kind is not None:
                self.fault_counts[kind] = self.fault_counts.get(kind, 0) + 1
                return await self._fault(kind, reader, writer)
            try:
                request = json.loads(body)
            except ValueError:
                writer.write(_encode(400, {"error": {"message": "request body is not JSON"}}))
                return True
            try:
                reply = self.responder(request)
            except Exception as e:  # a broken test script: say so once (400 is not retried) instead of hanging up
                reply = HTTPReply(400, {"error": {"message": f"mock responder raised {type(e).__name__}: {e}"}})
            if isinstance(reply, HTTPReply):
                writer.write(_encode(reply.status, reply.body, reply.headers))
            else:
                self.succeeded += 1
                writer.write(_encode(200, reply))
        else:
            writer.write(_encode(404, {"error": {"message": f"no route {method} {path}"}}))
        return True

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections[task] = writer
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, version = (lines[0].split(" ", 2) + ["", ""])[:3]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                size = int(headers.get("content-length") or 0)
                body = await reader.readexactly(size) if size else b""
                self.headers.append(headers)
                keep = await self._respond(method, path, body, reader, writer)
                await writer.drain()
                if not keep or headers.get("connection", "").lower() == "close" or version == "HTTP/1.0":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._connections.pop(task, None)
            writer.close()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._connections.values()):  # handlers then see EOF and end by themselves
                writer.transport.abort()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None

    def __enter__(self) -> str:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.start())
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self.stop())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="mock-openai", daemon=True)
        self._thread.start()
        ready.wait()
        return self.base_url

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


def _load_responder(spec: str) -> Responder:
    """``module:attribute`` naming a responder, or a factory called with no arguments if it is a class."""
    module, _, attr = spec.partition(":")
    obj = getattr(importlib.import_module(module), attr)
    return obj() if isinstance(obj, type) else obj


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser(description="Lean OpenAI-compatible mock server.")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--responder", help="module:attribute of a responder (default: always says OK)")
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--fault-kinds", default=",".join(FAULT_KINDS))
    ap.add_argument("--fault-seed", type=int, default=0)
    args = ap.parse_args(argv)
    faults = Faults(rate=args.fault_rate, kinds=tuple(args.fault_kinds.split(",")), seed=args.fault_seed)
    server = MockOpenAI(_load_responder(args.responder) if args.responder else None, faults, args.host, args.port)

    async def serve() -> None:
        print("READY", await server.start(), flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
