"""The https transport: aiohttp behind the same small interface as http1.Http1Pool (imported only when an https
endpoint is used: importing aiohttp costs about 0.1 s)."""
from __future__ import annotations

import asyncio
from typing import Optional

from . import http1
from .http1 import InvalidURL, Reply, TransportError


class AiohttpPool:
    def __init__(self, headers: dict[str, str], limit: int):
        import aiohttp

        self._aiohttp = aiohttp
        connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0, ttl_dns_cache=300,
                                         enable_cleanup_closed=False)
        self._session = aiohttp.ClientSession(connector=connector, headers=headers)

    @property
    def closed(self) -> bool:
        return self._session.closed

    async def request(self, method: str, url: str, body: Optional[bytes], timeout_s: Optional[float]) -> Reply:
        aiohttp = self._aiohttp
        try:
            async with self._session.request(method, url, data=body,
                                             timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
                chunks, size = [], 0
                async for chunk in resp.content.iter_chunked(1 << 16):  # inflated, capped as http1 caps it
                    size += len(chunk)
                    if size > http1.MAX_BODY_BYTES:
                        raise TransportError(f"reply body over {http1.MAX_BODY_BYTES} bytes")
                    chunks.append(chunk)
                return Reply(resp.status, {k.lower(): v for k, v in resp.headers.items()}, b"".join(chunks))
        except asyncio.TimeoutError:
            raise
        except aiohttp.InvalidURL as e:
            raise InvalidURL(str(e)) from None
        except (aiohttp.ClientError, ValueError) as e:  # refused/dropped connections, bad URL, unparsable replies
            raise TransportError(f"{type(e).__name__}: {e}") from None

    async def close(self) -> None:
        await self._session.close()
