"""A pack episode's environment: tau2's, except that tool calls run off the event loop.

Each call of a pack tool is already bounded in time (``isolation.py``); running the whole call in a worker
thread as well lets the other episodes of a concurrent run go on while one tool is slow."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from mua.harness.interfaces import ToolOutcome
from mua.harness.types import ToolCall

from ..tau2.environment import Tau2Environment

# Workers only wait for a tool's own (abandonable) thread, at most its time limit, so they never stay stuck.
_WORKERS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="mua-pack-call")


class PackEnvironment(Tau2Environment):
    async def execute_async(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        return await asyncio.get_running_loop().run_in_executor(_WORKERS, self.execute, call, requestor)
