"""Every wait on a model endpoint has a bound the user can see, in every command that talks to one.

``mua eval`` checks each endpoint once before the first episode (``check_alive``: a dead one is reported in about
a second, a silent one in 10 s) and stops a run whose endpoint leaves requests unanswered for --stall-timeout
seconds. :func:`preflight` and :func:`watched` give `mua train` and `mua score` the same two bounds."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Awaitable, Callable, Optional, Sequence, TypeVar

from ..errors import ModelError
from ..interfaces import ChatModel
from .build import GOLD, Models, ModelSpec, open_model

T = TypeVar("T")
DEFAULT_STALL_S = 120.0  # as `mua eval --stall-timeout`


def is_endpoint(spec: Optional[ModelSpec]) -> bool:
    """A served model (not gold, not a local checkpoint, which is loaded rather than called)."""
    return spec is not None and spec.name != GOLD and (
        spec.base_url is not None or not Path(spec.name).expanduser().exists())


def preflight(specs: Sequence[Optional[ModelSpec]]) -> None:
    """Before anything slow (loading a policy): each endpoint answers, or one ModelError names its URL."""
    models = [open_model(s) for s in specs if is_endpoint(s)]

    async def check() -> None:
        try:
            for model in models:
                if model is not None and hasattr(model, "check_alive"):
                    await model.check_alive()
        finally:
            for model in models:
                if model is not None and hasattr(model, "aclose"):
                    await model.aclose()

    if models:
        asyncio.run(check())


async def watched(work: Awaitable[T], models: Models, limit_s: float, advice: str) -> T:
    """``work``, stopped with ModelError when an endpoint of ``models`` leaves requests unanswered for
    ``limit_s`` seconds (0: never)."""
    task = asyncio.ensure_future(work)
    if limit_s <= 0:
        return await task
    watchdog = asyncio.ensure_future(_until_silent(models, limit_s))
    try:
        await asyncio.wait([task, watchdog], return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise ModelError(f"model endpoint {watchdog.result()} while requests wait; stopping. {advice}")
        return task.result()
    finally:
        watchdog.cancel()


async def with_judge(judge: Optional[ChatModel], work: Callable[[Optional[ChatModel]], Awaitable[T]], limit_s: float,
                     advice: str) -> T:
    """``work(judge)`` for a command that calls one judge model (`mua score`, `mua review`): the endpoint
    checked first, the work watched for a stall (:func:`watched`), the client closed however it ends."""
    try:
        if judge is not None and hasattr(judge, "check_alive"):
            await judge.check_alive()  # once, before the work, not once per request
        return await watched(work(judge), Models(judge=judge), limit_s, advice)
    finally:
        if judge is not None and hasattr(judge, "aclose"):
            await judge.aclose()


async def _until_silent(models: Models, limit_s: float) -> str:
    while True:
        await asyncio.sleep(min(5.0, limit_s / 4))
        if silent := models.silent_endpoint(limit_s):
            return silent
