"""The adversarial agent suite every simulated user is scored on (scripted, trained or LLM).

A case is one agent message put to the user right after its opening line (``SuiteCase``); the benchmark
writes the cases from its own facts (``Benchmark.user_suite``). Families:

- ``stuffing``: the fact keywords listed, bare or around a question word ("name sit time?",
  "What is your name sit time?"): a user should tell nothing.
- ``template``: a question word or auxiliary plus a bare keyword ("Is name? Is sit?", "What time?"): nothing.
- ``chatter``: off-topic talk (the weather, a greeting): nothing.
- ``compound``: one natural question asking for two or three facts ("Could you tell me your name and what
  time you want?"): each of them, and nothing else.
- ``paraphrase``: natural questions for one fact that the benchmark's own gold conversations never use
  ("Who am I speaking with?"): that fact, and nothing else.
- ``gold``: the gold agent's own questions: the facts they ask for.

Figures per family: for the last three the *right-fact rate* (cases whose reply tells exactly the facts
asked, and no value from another scenario), for the first three the *told rate* (cases whose reply gives a
value of any fact kind, its own or another scenario's). A family without cases has
rate None (unknown), never 0.

API::

    cases = suite(benchmark, tasks)                     # [] when the benchmark has no user facts
    scores = score_user(lambda case: benchmark.gold_user(case.task), cases)
    for line in suite_lines(scores): print(line)
"""
from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Callable, Optional

from ..interfaces import Benchmark, User
from ..types import Message, Task
from ..user_facts import SuiteCase, invented, told

REFUSE = ("stuffing", "template", "chatter")  # a fact told to these is a leak
ANSWER = ("compound", "paraphrase", "gold")  # these should get exactly the facts asked
FAMILIES = REFUSE + ANSWER

# off-topic agent messages, the same for every benchmark: none asks the user for anything it knows
CHATTER = (
    "How is the weather where you are today?",
    "Did you catch the game last night?",
    "Our office is closed on public holidays.",
    "Have a nice time!",
    "I hope your week is going well.",
    "Sorry, one moment please, my screen froze.",
    "Did you know we redecorated last month?",
)


@dataclass
class FamilyScore:
    family: str
    cases: int
    hits: int  # right-fact replies (answer families) or replies that told a fact (refuse families)

    @property
    def rate(self) -> Optional[float]:
        return self.hits / self.cases if self.cases else None

    @property
    def measure(self) -> str:
        return "told a fact" if self.family in REFUSE else "right fact"

    def to_dict(self) -> dict:
        return {**asdict(self), "rate": self.rate, "measure": self.measure}


def suite(benchmark: Benchmark, tasks: list[Task]) -> list[SuiteCase]:
    """The benchmark's cases for ``tasks`` (none when it does not declare its users' facts)."""
    return list(benchmark.user_suite(tasks) or [])


def reply_is_right(case: SuiteCase, reply: str) -> bool:
    """Whether ``reply`` tells exactly the facts ``case`` asks for (for a refuse family: none), with no value
    from another scenario."""
    return sorted(told(case.facts, reply)) == sorted(case.asked) and not invented(case.facts, reply)


def tells_any(case: SuiteCase, reply: str) -> bool:
    """Whether ``reply`` gives a value of any of the case's fact kinds, its own or another scenario's."""
    return bool(told(case.facts, reply) or invented(case.facts, reply))


async def _reply(make_user: Callable[[SuiteCase], User], case: SuiteCase, greeting: list[Message]) -> str:
    user = make_user(case)
    messages = [*greeting, Message(role="user", content=case.opening), Message(role="assistant", content=case.message)]
    said = await user.respond(messages, [])
    return said.text if said is not None else ""


async def score_user_async(make_user: Callable[[SuiteCase], User], cases: list[SuiteCase],
                           concurrency: int = 8, greeting: Optional[Callable[[Task], list[Message]]] = None
                           ) -> dict[str, FamilyScore]:
    """Put every case to a fresh user from ``make_user`` (``concurrency`` at a time, so a batched model user
    decodes several together) and count per family. ``greeting``: the agent's words before the user's opening in
    an episode of the case's task (a model user is shown them, as in a run; a scripted user starts at the opening)."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: SuiteCase) -> tuple[SuiteCase, str]:
        async with gate:
            return case, await _reply(make_user, case, greeting(case.task) if greeting else [])

    scores = {f: FamilyScore(f, 0, 0) for f in FAMILIES}
    for case, reply in await asyncio.gather(*(one(c) for c in cases)):
        score = scores.setdefault(case.family, FamilyScore(case.family, 0, 0))
        score.cases += 1
        hit = tells_any(case, reply) if case.family in REFUSE else reply_is_right(case, reply)
        score.hits += hit
    return scores


def score_user(make_user: Callable[[SuiteCase], User], cases: list[SuiteCase], concurrency: int = 8,
               greeting: Optional[Callable[[Task], list[Message]]] = None) -> dict[str, FamilyScore]:
    """:func:`score_user_async` from synchronous code."""
    return asyncio.run(score_user_async(make_user, cases, concurrency, greeting))


def episode_greeting(benchmark: Benchmark) -> Callable[[Task], list[Message]]:
    """``greeting`` for :func:`score_user`: the agent's opening words of an episode of a task (``start(task).opening``,
    e.g. tau2's "Hi! How can I help you today?"), built once per task."""
    openings: dict[tuple[str, str], list[Message]] = {}

    def greeting(task: Task) -> list[Message]:
        key = (task.subset, task.id)
        if key not in openings:
            openings[key] = list(benchmark.start(task).opening)
        return openings[key]

    return greeting


def suite_lines(scores: dict[str, FamilyScore], label: str = "") -> list[str]:
    """One line per family: cases, the measure and its rate (``n/a`` when the family has no cases)."""
    lines = []
    for s in scores.values():
        rate = "n/a" if s.rate is None else f"{s.rate:.1%}"
        lines.append(f"{label}{s.family:<11} {s.cases:>6} cases  {s.measure:<12} {rate:>7}  ({s.hits}/{s.cases})")
    return lines
