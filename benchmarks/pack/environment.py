"""A pack episode's environment: tau2's, except that tool calls run off the event loop.

Each call of a pack tool runs in a worker process and is bounded in time (``isolation.py``); waiting for it in
a thread lets the other episodes of a concurrent run go on while one tool is slow."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from mua.harness.interfaces import ToolOutcome
from mua.harness.types import ToolCall

from ..tau2.environment import Tau2Environment

# These threads only wait for a worker process's answer, at most the tool's time limit, so they never stay stuck.
_WORKERS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="mua-pack-call")


class PackEnvironment(Tau2Environment):
    async def execute_async(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        return await asyncio.get_running_loop().run_in_executor(_WORKERS, self.execute, call, requestor)
