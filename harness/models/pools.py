"""One HTTP connection pool per endpoint and event loop, shared by every model object that talks to it.

Agent, user simulator and judge on the same server used to open a pool each (up to 3C connections at
concurrency C, each a thread or a slot on the server side). Models share a pool when they have the same event
loop, base URL, API key (it travels in the session's headers) and connection cap. The cap defaults to
``MAX_CONNECTIONS`` per endpoint; an episode waits on one request at a time, so C episodes in flight use about C
connections. The pool closes when the last model using it closes.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Optional, Protocol

from .http1 import Http1Pool, Reply

MAX_CONNECTIONS = 1024  # per endpoint; the default of OpenAIChatModel(max_connections=...)

# How a request carries its key: the header's name, the text before the key, and constant headers (a provider's
# API version). OpenAI-compatible servers take "Authorization: Bearer KEY".
Auth = tuple[str, str, tuple[tuple[str, str], ...]]
BEARER: Auth = ("Authorization", "Bearer ", ())
PoolKey = tuple[asyncio.AbstractEventLoop, str, str, int, Auth]


class Transport(Protocol):
    @property
    def closed(self) -> bool: ...

    async def request(self, method: str, url: str, body: Optional[bytes],
                      timeout_s: Optional[float]) -> Reply: ...

    async def close(self) -> None: ...


@dataclass
class _Pool:
    session: Transport
    users: int = 0


_POOLS: dict[PoolKey, _Pool] = {}


def _headers(api_key: str, auth: Auth = BEARER) -> dict[str, str]:
    name, prefix, constant = auth
    headers = {"Content-Type": "application/json", **dict(constant)}
    if api_key:
        headers[name] = prefix + api_key
    return headers


def new_transport(base_url: str, api_key: str, max_connections: int, auth: Auth = BEARER) -> Transport:
    """A pool of its own (not shared): plain http through http1.Http1Pool, https through aiohttp (https.py)."""
    if base_url.lower().startswith("https:"):
        from .https import AiohttpPool
        return AiohttpPool(_headers(api_key, auth), max_connections)
    return Http1Pool(base_url, _headers(api_key, auth), max_connections)


def acquire(base_url: str, api_key: str, max_connections: int = MAX_CONNECTIONS,
            auth: Auth = BEARER) -> tuple[PoolKey, Transport]:
    """The running loop's pool for this endpoint (created on first use); pair with :func:`release`."""
    key = (asyncio.get_running_loop(), base_url, api_key, max_connections, auth)
    pool = _POOLS.get(key)
    if pool is None or pool.session.closed:
        pool = _POOLS[key] = _Pool(new_transport(base_url, api_key, max_connections, auth))
    pool.users += 1
    return key, pool.session


async def release(key: PoolKey) -> None:
    """One user fewer; the last one closes the session (only from the loop that opened it)."""
    pool = _POOLS.get(key)
    if pool is None:
        return
    pool.users -= 1
    if pool.users > 0:
        return
    del _POOLS[key]
    loop: Optional[asyncio.AbstractEventLoop] = key[0]
    if not pool.session.closed and loop is asyncio.get_running_loop():
        await pool.session.close()


def open_pools() -> int:
    """How many pools are open (tests)."""
    return len(_POOLS)


def forget(key: PoolKey) -> None:
    """One user fewer, from outside the pool's loop (that loop is gone or not running): the session cannot be
    closed from here; the pool is dropped when nobody uses it."""
    pool = _POOLS.get(key)
    if pool is not None:
        pool.users -= 1
        if pool.users <= 0:
            del _POOLS[key]
