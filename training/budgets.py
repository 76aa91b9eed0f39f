"""Whether each task's gold conversation fits the training token budgets, checked before any training.

A reply longer than ``max_turn_tokens`` is cut, and an episode whose replies and context pass
``max_completion_tokens`` ends truncated: either way the right behaviour scores 0 and nothing says why. So
`mua train` and tests/perf/learning_check.py play every chosen task's gold agent with its gold user through
the policy's own token stream (teacher forced, as SFT sees it) and name the tasks that would not fit. The same
episodes are scored, so the check also says whether the gold agent still passes with the current user
("gold N of M", ``harness/tools/gold_check.py``) before any training starts."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Optional

from mua.harness.interfaces import Benchmark
from mua.harness.runner import run_episode
from mua.harness.tools.gold_check import GoldCheck
from mua.harness.types import Task

from .policy import Budget, TeacherForcedAgent
from .sft import teacher_policy


@dataclass(frozen=True)
class Misfit:
    task_id: str
    why: str  # e.g. "a reply of 80 tokens > max_turn_tokens 64"


@dataclass
class BudgetCheck:
    budget: Budget
    checked: int = 0
    misfits: list[Misfit] = field(default_factory=list)
    unplayable: list[str] = field(default_factory=list)  # "task: why" for gold conversations that could not be played
    gold: GoldCheck = field(default_factory=GoldCheck)  # whether those conversations pass with the current user

    @property
    def fits(self) -> bool:
        return not self.misfits

    def line(self, what: str) -> str:
        """One line: all fit, or how many do not and the first one with its reason."""
        limits = (f"max_turn_tokens {self.budget.max_turn_tokens}, max_completion_tokens "
                  f"{self.budget.max_completion_tokens}")
        skipped = (f"; {len(self.unplayable)} without a playable gold conversation (first {self.unplayable[0]})"
                   if self.unplayable else "")
        if not self.checked:
            return f"no gold conversation of {what} could be played: token budgets not checked"
        if self.fits:
            return f"all {self.checked} gold conversations of {what} fit the token budgets ({limits}){skipped}"
        first = self.misfits[0]
        return (f"{len(self.misfits)} of {self.checked} gold conversations of {what} do not fit the token budgets "
                f"({limits}): first {first.task_id}, {first.why}{skipped}")


def reply_lengths(env_mask: list[int]) -> list[int]:
    """The length of each reply in a stream: its runs of generated (mask 1) ids, context between them."""
    runs: list[int] = []
    previous = 0
    for m in env_mask:
        if m and not previous:
            runs.append(0)
        if m:
            runs[-1] += 1
        previous = m
    return runs


def misfit(task_id: str, env_mask: list[int], prompt_tokens: int, budget: Budget,
           max_context: Optional[int]) -> Optional[Misfit]:
    longest = max(reply_lengths(env_mask), default=0)
    if longest > budget.max_turn_tokens:
        return Misfit(task_id, f"a reply of {longest} tokens > max_turn_tokens {budget.max_turn_tokens}")
    end = len(env_mask)  # up to the end of the last reply: what follows it is never generated from
    while end and not env_mask[end - 1]:
        end -= 1
    if end > budget.max_completion_tokens:
        return Misfit(task_id, f"{end} tokens after the prompt > max_completion_tokens "
                               f"{budget.max_completion_tokens}")
    if max_context is not None and prompt_tokens + end > max_context:
        return Misfit(task_id, f"{prompt_tokens + end} tokens > the model's context of {max_context}")
    return None


def check_gold_budgets(bench: Benchmark, tasks: list[Task], tokenizer, stop_ids: set[int], budget: Budget,
                       max_context: Optional[int] = None) -> BudgetCheck:
    """Play each task's gold conversation through a teacher-forced token stream and check it fits ``budget``."""
    report = BudgetCheck(budget)

    async def one(task: Task) -> None:
        policy = teacher_policy(tokenizer, stop_ids)
        try:
            result = await run_episode(bench, task, TeacherForcedAgent(bench.gold_agent(task), policy),
                                       bench.gold_user(task))
            stream = policy.live_stream
        except Exception as exc:  # noqa: BLE001 - a task without a playable gold conversation is not checked
            report.unplayable.append(f"{task.id}: {type(exc).__name__}: {exc}")  # and is named in the line
            report.gold.count(task.id, None)
            return
        report.gold.count(task.id, result.score)
        report.checked += 1
        found = misfit(task.id, stream.env_mask, len(stream.prompt_ids), budget, max_context)
        if found is not None:
            report.misfits.append(found)

    async def all_tasks() -> None:
        for task in tasks:  # in order, so the first misfit named is the first task's
            await one(task)

    asyncio.run(all_tasks())
    return report
