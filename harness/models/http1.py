"""A small HTTP/1.1 client over asyncio streams, for plain-http endpoints (local model servers, mocks).

Why not aiohttp here: against a local server the client's own cost is what limits mua. aiohttp took about
0.2 ms of CPU per request (twice this client's) and 0.1 s to import (it builds TLS contexts on import), a
quarter of the time from `mua eval` start to its first request. https endpoints still go through aiohttp.

What it does: keep-alive connections reused last-in first-out, at most ``limit`` in use at once; bodies by
Content-Length, chunked transfer coding, or until the server closes; gzip/deflate bodies inflated; a total
timeout per request (connection wait included). Any failure below HTTP (refused, reset, truncated or garbled
replies, a body over ``MAX_BODY_BYTES`` however it is framed or compressed) raises TransportError; the
connection it happened on is closed, never reused.
"""
from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 1 << 20  # a longer status line + headers block is a garbled reply
# A reply body past this (after decompression) is a hostile one, not a chat completion (a 128k-token answer
# is under 1 MiB): refused before it is held in memory, so it costs one episode, never the run's memory.
MAX_BODY_BYTES = 64 << 20


class TransportError(Exception):
    """The request got no usable HTTP reply (connection refused or lost, malformed or truncated reply)."""


class InvalidURL(ValueError):
    """The URL cannot be requested at all (retrying will not help)."""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes


_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Http1Pool:
    """Connections to one http:// origin. Create and use it inside one running event loop."""

    def __init__(self, base_url: str, headers: dict[str, str], limit: int):
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.port = parts.port or 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        authority = host if self.port == 80 else f"{host}:{self.port}"
        self._head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": authority, **headers}.items())
        self._idle: list[_Conn] = []
        self._slots = asyncio.Semaphore(limit)
        self.closed = False

    async def request(self, method: str, url: str, body: Optional[bytes], timeout_s: Optional[float]) -> Reply:
        """One request to ``url`` (on this pool's origin). Raises TransportError, or asyncio.TimeoutError when the
        whole exchange (waiting for a free connection included) takes longer than ``timeout_s``."""
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        length = f"Content-Length: {len(body)}\r\n" if body is not None else ""
        message = f"{method} {target} HTTP/1.1\r\n{self._head}{length}\r\n".encode("latin-1") + (body or b"")
        return await asyncio.wait_for(self._limited(message), timeout_s)

    async def _limited(self, message: bytes) -> Reply:
        async with self._slots:
            return await self._exchange(message)

    async def _exchange(self, message: bytes) -> Reply:
        conn = self._reusable()
        if conn is None:
            try:
                conn = await asyncio.open_connection(self.host, self.port, limit=MAX_HEADER_BYTES)
            except OSError as e:
                raise TransportError(f"{type(e).__name__}: {e}") from None
        reader, writer = conn
        try:
            writer.write(message)
            reply, keep = await _read_reply(reader)
        except BaseException as e:  # cancelled or timed out too: a half-read connection is never reused
            writer.close()
            if isinstance(e, (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError)):
                raise TransportError(f"{type(e).__name__}: {e}") from None
            raise
        if keep and not self.closed:
            self._idle.append(conn)
        else:
            writer.close()
        return reply

    def _reusable(self) -> Optional[_Conn]:
        while self._idle:
            reader, writer = self._idle.pop()
            if not reader.at_eof() and not writer.is_closing():  # the server may have closed it while idle
                return reader, writer
            writer.close()
        return None

    async def close(self) -> None:
        self.closed = True
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()
        for _, writer in idle:
            try:
                await writer.wait_closed()
            except OSError:
                pass


async def _read_reply(reader: asyncio.StreamReader) -> tuple[Reply, bool]:
    """The next reply on the connection and whether the connection may carry another request."""
    while True:
        version, status, headers = _parse_head(await reader.readuntil(b"\r\n\r\n"))
        if status >= 200:
            break  # 1xx (100 Continue) precede the real reply
    connection = headers.get("connection", "").lower()
    keep = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        if length < 0:
            raise ValueError("negative Content-Length")
        body = await reader.readexactly(_capped(length))
    elif status in (204, 304):
        body = b""
    else:  # delimited by the server closing the connection
        body, keep = await _read_to_close(reader), False
    return Reply(status, headers, _decoded(body, headers.get("content-encoding", "identity").lower())), keep


def _parse_head(head: bytes) -> tuple[str, int, dict[str, str]]:
    """A reply's status line and headers (``head`` ends with the blank line): HTTP version, status, headers
    by lower-case name."""
    lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise ValueError(f"malformed status line {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed header line {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    return version, int(code), headers


def _capped(size: int) -> int:
    """``size``, or ValueError when a body that long is over MAX_BODY_BYTES."""
    if size > MAX_BODY_BYTES:
        raise ValueError(f"reply body over {MAX_BODY_BYTES} bytes")
    return size


async def _read_to_close(reader: asyncio.StreamReader) -> bytes:
    chunks, size = [], 0
    while chunk := await reader.read(1 << 16):
        size = _capped(size + len(chunk))
        chunks.append(chunk)
    return b"".join(chunks)


def _decoded(body: bytes, encoding: str) -> bytes:
    """``body`` undone from its Content-Encoding (inflated no further than MAX_BODY_BYTES)."""
    if encoding in ("gzip", "deflate"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
        try:
            out = inflate.decompress(body, MAX_BODY_BYTES + 1)
        except zlib.error as e:
            raise ValueError(f"undecodable {encoding} body: {e}") from None
        _capped(len(out))
        if not inflate.eof:
            raise ValueError(f"undecodable {encoding} body: incomplete or truncated stream")
        return out
    if encoding != "identity":
        raise ValueError(f"unsupported Content-Encoding {encoding!r}")
    return body


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        total = _capped(total + size)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, up to the empty line
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("malformed chunk")
