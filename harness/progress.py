"""The progress line of a run (a tqdm bar on stderr): episodes done, passes among scored episodes, unknown and
errored ones. Everything a run shows while it plays goes through :class:`Progress` (one place to add a figure,
e.g. a local model's tokens/s)."""
from __future__ import annotations

import asyncio
from typing import Optional

from tqdm import tqdm

from .episodes import ERRORED, FAILED, PASSED, UNKNOWN, EpisodeRecord
from .stats import is_success


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


class Progress:
    """The bar: ``total`` episodes, ``done`` of them found finished on resume. While enabled, a ticker shows
    between finished episodes what local models are doing (turns played, tokens/s: ``models.activity``)."""

    def __init__(self, label: str, total: int, done: int, tally: Tally, enabled: bool):
        self.tally = tally
        self._bar: Optional[tqdm] = tqdm(total=total, initial=done, disable=not enabled, unit="ep",
                                         dynamic_ncols=True, desc=label)
        self._ticker: Optional[asyncio.Task] = asyncio.create_task(self._show_activity()) if enabled else None

    async def _show_activity(self) -> None:
        from .models.activity import METER

        while self._bar is not None:
            await asyncio.sleep(ACTIVITY_EVERY_S)
            live = METER.text()
            if live and self._bar is not None:
                self._bar.set_postfix_str(f"{self.tally.text()}; {live}", refresh=True)

    def episode_done(self) -> None:
        """After an episode's line is durable (the tally already counts it): advance and refresh the line."""
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(self.tally.text(), refresh=False)

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
