"""One connection pool per endpoint: agent, user and judge on one server share it; it closes with its last user."""
from __future__ import annotations

import asyncio

import mock_openai as mock  # tests/ is on sys.path (tests/conftest.py)

from mua.harness.models import OpenAIChatModel, pools
from mua.harness.types import Message

HELLO = [Message(role="user", content="hello")]


def test_models_on_one_endpoint_share_one_pool_and_connections(monkeypatch):
    monkeypatch.setenv("KEY_A", "a-key")
    monkeypatch.setenv("KEY_B", "b-key")
    server = mock.MockOpenAI(lambda request: mock.text_reply("ok"))
    with server as url:
        async def go():
            same = [OpenAIChatModel(name, url, api_key_env="KEY_A") for name in ("agent", "user", "judge")]
            other = OpenAIChatModel("agent", url, api_key_env="KEY_B")
            for _ in range(3):  # 8 episodes in flight, each asking agent, user and judge in turn
                for model in same:
                    await asyncio.gather(*(model.chat(HELLO) for _ in range(8)))
            await other.chat(HELLO)
            assert same[0]._session is same[1]._session is same[2]._session
            assert other._session is not same[0]._session  # another key: another pool
            assert pools.open_pools() == 2
            session = same[0]._session
            await same[0].aclose()
            await same[1].aclose()
            assert not session.closed  # the judge still uses it
            await same[2].aclose()
            await other.aclose()
            assert session.closed and pools.open_pools() == 0
        asyncio.run(go())
    assert server.connections == 8 + 1  # a pool per model would have opened 3 x 8 + 1


def test_the_https_transport_answers_like_the_http_one():
    """https endpoints go through aiohttp (AiohttpPool); it is exercised here over plain http against the mock."""
    from mua.harness.models.http1 import Http1Pool, TransportError
    from mua.harness.models.https import AiohttpPool

    server = mock.MockOpenAI(lambda request: mock.text_reply(request["messages"][-1]["content"]))
    with server as url:
        async def go(make):
            pool = make()
            try:
                reply = await pool.request("POST", url + "/chat/completions", b'{"messages": [{"content": "hi"}]}', 5)
                missing = await pool.request("GET", url + "/nowhere", None, 5)
                return reply.status, reply.headers["content-type"], reply.body, missing.status
            finally:
                await pool.close()
        results = [asyncio.run(go(make)) for make in (lambda: AiohttpPool({}, 4), lambda: Http1Pool(url, {}, 4))]
    assert results[0] == results[1] and results[0][0] == 200

    async def refused():
        pool = AiohttpPool({}, 1)
        try:
            await pool.request("GET", "http://127.0.0.1:9/v1/models", None, 5)
        finally:
            await pool.close()
    try:
        asyncio.run(refused())
        raise AssertionError("no error")
    except TransportError:
        pass
