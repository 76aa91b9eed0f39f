"""The progress line of a run (a tqdm bar on stderr): episodes done, passes among scored episodes, unknown and
errored ones. Everything a run shows while it plays goes through :class:`Progress` (one place to add a figure,
e.g. a local model's tokens/s)."""
from __future__ import annotations

import asyncio
import math
import time
from typing import Optional

from tqdm import tqdm

from ..results.episodes import ERRORED, FAILED, PASSED, UNKNOWN, EpisodeRecord
from ..results.stats import is_success


class Tally:
    """What the progress bar shows: passes among finished episodes with a known reward, then the unknown
    (null) and errored ones, which are counted apart and never in the fraction."""

    def __init__(self) -> None:
        self.passed = self.scored = self.unknown = self.errors = 0

    def add_status(self, status: int) -> None:
        """Count an episode found on resume by its index status code."""
        self.errors += status == ERRORED
        self.unknown += status == UNKNOWN
        self.scored += status in (PASSED, FAILED)
        self.passed += status == PASSED

    def add(self, record: EpisodeRecord) -> None:
        if record.error:
            self.errors += 1
        elif record.reward is None:
            self.unknown += 1
        else:
            self.scored += 1
            self.passed += is_success(record.reward)

    def text(self) -> str:
        rate = f"{self.passed}/{self.scored} = {self.passed / self.scored:.3f}" if self.scored else "-"
        extra = (f", unknown {self.unknown}" if self.unknown else "") + (f", errors {self.errors}" if self.errors
                                                                          else "")
        return f"pass {rate}{extra}"


ACTIVITY_EVERY_S = 2.0


def duration(seconds: float) -> str:
    """``"45s"``, ``"3m05s"``, ``"2h04m"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class EpisodeClock:
    """Episodes playing now and how long finished ones took: the ETA of the rest, ``slots`` at a time."""

    def __init__(self, remaining: int, slots: int):
        self.remaining, self.slots = remaining, max(1, slots)
        self.playing: dict[int, float] = {}  # token -> start (monotonic)
        self.took: list[float] = []
        self._next = 0

    def start(self) -> int:
        self._next += 1
        self.playing[self._next] = time.monotonic()
        return self._next

    def finish(self, token: int) -> None:
        started = self.playing.pop(token, None)
        self.remaining = max(0, self.remaining - 1)
        if started is not None:
            self.took.append(time.monotonic() - started)

    def eta_s(self) -> Optional[float]:
        """Seconds until the last episode ends: the mean episode time per wave of ``slots`` episodes, less what
        the ones playing have already run; None before an episode has finished."""
        if not self.took:
            return None
        mean = sum(self.took) / len(self.took)
        waves = math.ceil(self.remaining / min(self.slots, self.remaining)) if self.remaining else 0
        now = time.monotonic()
        ran = max((now - t for t in self.playing.values()), default=0.0)
        return max(0.0, waves * mean - min(ran, mean))

    def text(self) -> str:
        playing = f"playing {len(self.playing)}; " if self.playing else ""
        eta = self.eta_s()
        if eta is None:
            return f"{playing}ETA after the first episode" if self.remaining else ""
        mean = sum(self.took) / len(self.took)
        return f"{playing}{duration(mean)}/episode, ETA {duration(eta)}" if self.remaining else ""


class Progress:
    """The bar, built only when it shows (not with --no-progress): ``total`` episodes, ``resumed`` the index
    statuses of those found finished on resume, ``slots`` played at a time. A ticker refreshes it between finished
    episodes with the episodes playing, the ETA and what local models are doing as it happens (replies, tokens,
    tokens/s: ``models.activity``)."""

    def __init__(self, label: str, total: int, resumed: list[int], slots: int = 1):
        self.tally = Tally()
        for status in resumed:
            self.tally.add_status(status)
        self.clock = EpisodeClock(total - len(resumed), slots)
        self._bar: Optional[tqdm] = tqdm(total=total, initial=len(resumed), unit="ep", dynamic_ncols=True,
                                         desc=label)
        self._ticker: Optional[asyncio.Task] = asyncio.create_task(self._show_activity())

    def line(self) -> str:
        """What follows the bar: passes, episodes playing and the ETA, then local models' live counts."""
        from ..models.activity import METER

        return "; ".join(part for part in (self.tally.text(), self.clock.text(), METER.text()) if part)

    async def _show_activity(self) -> None:
        while self._bar is not None:
            await asyncio.sleep(ACTIVITY_EVERY_S)
            if self._bar is not None:
                self._bar.set_postfix_str(self.line(), refresh=True)

    def episode_started(self) -> int:
        """An episode began; the token goes back to :meth:`episode_done`."""
        return self.clock.start()

    def episode_done(self, token: int, record: EpisodeRecord) -> None:
        """After an episode's line is durable: count it, advance and refresh the line."""
        self.tally.add(record)
        self.clock.finish(token)
        if self._bar is not None:
            self._bar.set_postfix_str(self.line(), refresh=False)
            self._bar.update(1)  # draws the line with the counts above

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
