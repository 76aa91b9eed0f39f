"""Whether a benchmark's gold agent still passes its tasks with its gold (scripted) user: one line, "gold N of
M", said by `mua tasks` and before training starts.

Data written against a scripted user's contract (a task pack's replies) breaks silently when that contract
changes: the gold conversation that passed yesterday ends with ###STOP### today and every learning run on it
scores 0. The check is offline (gold agent, scripted user, the benchmark's own scorer) and takes seconds."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Optional

from ..interfaces import Benchmark
from ..results.stats import is_success
from ..runner import run_episode
from ..types import Score, Task


@dataclass
class GoldCheck:
    total: int = 0
    passed: int = 0
    unknown: int = 0  # unscored (a judged check without a judge) or unplayable: neither pass nor fail
    failed: list[str] = field(default_factory=list)  # task ids, in order

    def count(self, task_id: str, score: Optional[Score]) -> None:
        self.total += 1
        if score is None or score.reward is None:
            self.unknown += 1
        elif is_success(score.reward):
            self.passed += 1
        else:
            self.failed.append(task_id)

    @property
    def ok(self) -> bool:
        return not self.failed

    def line(self, what: str = "") -> str:
        """"gold N of M" (for ``what``), the unknown count and the first failing task when there is one."""
        text = f"gold {self.passed} of {self.total}" + (f" {what}" if what else "")
        if self.unknown:
            text += f" ({self.unknown} unknown)"
        if self.failed:
            text += (f": the gold agent fails {len(self.failed)} with the current user (first {self.failed[0]}); "
                     "the tasks or the user's contract changed")
        return text


async def gold_check_async(bench: Benchmark, tasks: list[Task]) -> GoldCheck:
    check = GoldCheck()
    for task in tasks:
        try:
            result = await run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task))
        except Exception:  # noqa: BLE001 - a task without a playable gold conversation is unknown, counted
            check.count(task.id, None)
            continue
        check.count(task.id, result.score)
    return check


def gold_check(bench: Benchmark, tasks: list[Task]) -> GoldCheck:
    """Play each task's gold agent with its gold user and count the passes."""
    return asyncio.run(gold_check_async(bench, tasks))
