"""Micro-batching: requests from concurrent coroutines are queued and run together.

A background task takes whatever is queued (up to ``max_batch``), runs the blocking batch function in a
worker thread so the event loop keeps accepting requests, and hands each caller its own result. While one
batch generates, the next one fills up, so concurrent episodes share the model's forward passes.
"""
from __future__ import annotations

import asyncio
from typing import Callable, Generic, Optional, TypeVar

from ..errors import ConfigError

Req = TypeVar("Req")
Res = TypeVar("Res")


class MicroBatcher(Generic[Req, Res]):
    def __init__(self, run_batch: Callable[[list[Req]], list[Res]], max_batch: int = 16):
        if not isinstance(max_batch, int) or isinstance(max_batch, bool) or max_batch < 1:
            raise ConfigError(f"max_batch must be an integer >= 1, got {max_batch!r}")
        self.run_batch = run_batch
        self.max_batch = max_batch
        self.batch_sizes: list[int] = []  # sizes of the batches run so far (for tests and benchmarks)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._queue: Optional[asyncio.Queue] = None
        self._worker: Optional[asyncio.Task] = None

    async def submit(self, request: Req) -> Res:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            # A new event loop (e.g. one asyncio.run per test): queues and tasks belong to one loop.
            self._loop, self._queue = loop, asyncio.Queue()
            self._worker = loop.create_task(self._work(self._queue))
        assert self._queue is not None
        future: asyncio.Future = loop.create_future()
        self._queue.put_nowait((request, future))
        return await future

    async def _work(self, queue: asyncio.Queue) -> None:
        while True:
            batch = [await queue.get()]
            await asyncio.sleep(0)  # let coroutines that are about to submit do so first
            while len(batch) < self.max_batch and not queue.empty():
                batch.append(queue.get_nowait())
            live = [(req, fut) for req, fut in batch if not fut.cancelled()]
            if not live:
                continue
            self.batch_sizes.append(len(live))
            try:
                results = await asyncio.to_thread(self.run_batch, [req for req, _ in live])
            except Exception as exc:  # every caller of the batch sees the failure
                for _, fut in live:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for (_, fut), result in zip(live, results):
                if not fut.done():
                    fut.set_result(result)
