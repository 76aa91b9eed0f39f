"""The plain-http client against scripted raw servers: body framings, keep-alive, 1xx, garbled and cut replies."""
from __future__ import annotations

import asyncio
import gzip

import pytest

from mua.harness.models.http1 import Http1Pool, TransportError


def serve(replies: list[bytes]):
    """A server that answers the i-th request (on any connection) with replies[i] raw, then closes the connection
    when the reply says Connection: close or has no length; returns (start coroutine, accepted-connections list)."""
    accepted: list[int] = []
    served = [0]

    async def handle(reader, writer):
        accepted.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")]
                await reader.readexactly(length[0] if length else 0)
                reply = replies[served[0]]
                served[0] += 1
                writer.write(reply)
                await writer.drain()
                if b"close" in reply.lower() or b"content-length" not in reply.lower() and b"chunked" not in reply:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return handle, accepted


def run(replies: list[bytes], requests: int = 1):
    handle, accepted = serve(replies)

    async def go():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = Http1Pool(f"http://127.0.0.1:{port}/v1", {"Authorization": "Bearer k"}, 4)
        try:
            out = []
            for _ in range(requests):
                out.append(await pool.request("POST", f"http://127.0.0.1:{port}/v1/chat", b'{"a": 1}', 5))
                await asyncio.sleep(0.01)  # lets a closing server's FIN arrive before the next request
            return out
        finally:
            await pool.close()
            server.close()
            await server.wait_closed()
    return asyncio.run(go()), accepted


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


def test_content_length_replies_reuse_one_connection():
    replies, accepted = run([OK] * 3, requests=3)
    assert [r.body for r in replies] == [b"{}"] * 3 and len(accepted) == 1


def test_chunked_gzip_and_close_delimited_bodies():
    zipped = gzip.compress(b'{"ok": true}')
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"3;ext=1\r\n{\"o\r\n5\r\nk\": 1\r\n1\r\n}\r\n0\r\nX-T: 1\r\n\r\n")
    gz = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(zipped), zipped)
    until_close = b"HTTP/1.0 200 OK\r\n\r\n{\"eof\": 1}"
    replies, accepted = run([b"HTTP/1.1 100 Continue\r\n\r\n" + chunked, gz, until_close, OK], requests=4)
    assert [r.body for r in replies] == [b'{"ok": 1}', b'{"ok": true}', b'{"eof": 1}', b"{}"]
    assert len(accepted) == 2  # the close-delimited reply ended its connection; the next request opened another


def test_a_connection_closed_by_the_server_is_not_reused():
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    replies, accepted = run([closing, OK], requests=2)
    assert [r.status for r in replies] == [200, 200] and len(accepted) == 2


@pytest.mark.parametrize("raw", [b"garbage\r\n\r\n", b"HTTP/1.1 2x0 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                                 b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{}",
                                 b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}"])
def test_garbled_or_cut_replies_raise_transport_error(raw):
    with pytest.raises(TransportError):
        run([raw])


def test_refused_connection_raises_transport_error():
    async def go():
        pool = Http1Pool("http://127.0.0.1:9/v1", {}, 1)
        await pool.request("GET", "http://127.0.0.1:9/v1/models", None, 5)
    with pytest.raises(TransportError):
        asyncio.run(go())


@pytest.mark.parametrize("transport", ["http1", "aiohttp"])
def test_a_reply_body_over_the_cap_is_refused_however_it_is_framed(monkeypatch, transport):
    """A hostile endpoint's endless or inflating body costs one request (TransportError: retried, then the
    episode's ModelError), never the run's memory; a body at the cap is read whole."""
    from mua.harness.models import http1

    monkeypatch.setattr(http1, "MAX_BODY_BYTES", 1000)
    at_cap, over = b"x" * 1000, b"x" * 1001
    bomb = gzip.compress(b"\0" * 100_000)  # 100 kB inflated from a few hundred bytes
    replies = {
        "length at cap": b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1000\r\n\r\n" + at_cap,
        "length": b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1001\r\n\r\n" + over,
        "chunked": (b"HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + b"".join(b"1f4\r\n" + b"x" * 500 + b"\r\n" for _ in range(3)) + b"0\r\n\r\n"),
        "until close": b"HTTP/1.0 200 OK\r\n\r\n" + over,
        "gzip bomb": (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
                      % (len(bomb), bomb)),
    }
    for name, raw in replies.items():
        handle, _ = serve([raw])

        async def go(handle=handle):
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
            if transport == "http1":
                pool = Http1Pool(url, {}, 1)
            else:
                from mua.harness.models.https import AiohttpPool
                pool = AiohttpPool({}, 1)
            try:
                return await pool.request("POST", url + "/chat", b"{}", 5)
            finally:
                await pool.close()
                server.close()
                await server.wait_closed()
        if name == "length at cap":
            assert asyncio.run(go()).body == at_cap
        else:
            with pytest.raises(TransportError, match="over 1000 bytes"):
                asyncio.run(go())
