"""`mua users audit`: what a run's simulated users did, per episode and overall.

For each episode, from its task's facts (``Benchmark.user_facts``) and its messages:

- ``unasked``: facts told (first time) in a user turn whose preceding agent text names none of the fact's
  keywords (the opening line included: nothing asked it yet);
- ``not_in_scenario``: statements of a fact the scenario does not hold: another scenario's value of a fact
  kind (exact, where the benchmark lists the values) or, heuristically, an identifier (an email, or a token
  with 4 or more digits) found neither in the scenario nor earlier in the conversation;
- ``contradictions``: fact kinds given two different values (exact benchmarks only);
- ``stopped_before_done``: the user ended the conversation before the task was done (``Benchmark.done_at``:
  every expected action made and everything to tell told);
- ``turns_after_done``: user turns after the task was done, its closing stop turn not counted;
- ``stuffed_answered``: of the agent messages that name a fact in a form the benchmark's scripted user's
  contract does not count as asking (``Benchmark.user_asked``: keyword stuffing, template questions), those
  the user answered with that fact.

A measure the benchmark cannot give is None (printed "not measured", null in JSON), never 0. Each overall
figure says whether it is exact or heuristic."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Optional

from ..interfaces import Benchmark
from ..runner import USER_STOP
from ..types import Message, Task
from ..user_facts import UserFacts, names, tells, value_words

_IDENTIFIER = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[\w-]*\d[\w-]*")


@dataclass
class EpisodeAudit:
    task_id: str
    trial: Optional[str]
    user_turns: int
    facts_told: Optional[int] = None
    unasked: Optional[int] = None
    not_in_scenario: Optional[int] = None
    contradictions: Optional[int] = None
    stopped_before_done: Optional[bool] = None
    turns_after_done: Optional[int] = None
    stuffed_messages: Optional[int] = None
    stuffed_answered: Optional[int] = None
    exact: Optional[bool] = None  # the facts are exact (None: the benchmark gives none)


def _identifiers(text: str) -> set[str]:
    """Emails and tokens with 4 or more digits (ids, zip codes, phone numbers), lower-cased."""
    return {t.lower() for t in _IDENTIFIER.findall(text) if "@" in t or sum(c.isdigit() for c in t) >= 4}


def _unseen(found: set[str], seen: set[str]) -> set[str]:
    """The identifiers of ``found`` that no seen one contains or is part of ("W123" and "#W1234" forms)."""
    return {t for t in found if not any(t in s or s in t for s in seen)}


@dataclass
class _Walk:
    """The running state of one episode's audit."""
    facts: UserFacts
    told: set[int] = field(default_factory=set)
    values: dict[str, set[str]] = field(default_factory=dict)
    invented: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)


def _user_turn(walk: _Walk, audit: EpisodeAudit, text: str, asking: str) -> set[str]:
    """Count one user message's facts; returns the kinds it gives a value of (its own or another)."""
    facts = walk.facts.facts
    telling = [j for j, f in enumerate(facts) if tells(f.value, text)]
    new = [j for j in telling if j not in walk.told]
    walk.told.update(new)
    audit.facts_told = (audit.facts_told or 0) + len(new)
    audit.unasked = (audit.unasked or 0) + sum(1 for j in new if not names(asking, facts[j].keywords))
    kinds = {facts[j].kind for j in telling}
    for j in telling:
        walk.values.setdefault(facts[j].kind, set()).add(facts[j].value)
    if walk.facts.exact:
        for f in facts:
            for other in f.others:
                if value_words(other) != f.value_words and tells(other, text):
                    walk.values.setdefault(f.kind, set()).add(other)
                    walk.invented.add(f"{f.kind}={other}")
                    kinds.add(f.kind)
    else:
        walk.invented.update(_unseen(_identifiers(text), walk.seen))
    walk.seen |= _identifiers(text)
    return kinds


def audit_episode(bench: Benchmark, task: Task, messages: list[Message], termination: Optional[str],
                  trial: Optional[str] = None) -> EpisodeAudit:
    said = [i for i, m in enumerate(messages) if m.role == "user" and m.content and not m.tool_calls]
    audit = EpisodeAudit(task.id, trial, len(said))
    facts = bench.user_facts(task)
    if facts is not None:
        audit.exact = facts.exact
        walk = _Walk(facts, seen=_identifiers(facts.scenario_text))
        stuffed = answered = 0
        contract = True
        asking = ""
        for i, m in enumerate(messages):
            if m.role == "assistant" and m.content:
                asking = m.text
            if m.role != "user" or i not in said:
                walk.seen |= _identifiers(m.text)
                continue
            kinds = _user_turn(walk, audit, m.text, asking)
            if asking:
                asked = bench.user_asked(task, asking)
                contract = contract and asked is not None
                named = {f.kind for f in facts.facts if names(asking, f.keywords)} - set(asked or [])
                if asked is not None and named:
                    stuffed += 1
                    answered += bool(kinds & named)
            asking = ""
        audit.not_in_scenario = len(walk.invented)
        if facts.exact:
            audit.contradictions = sum(1 for v in walk.values.values() if len(v) > 1)
        if contract:
            audit.stuffed_messages, audit.stuffed_answered = stuffed, answered
    done = bench.done_at(task, messages)
    if done is not None:
        stopped = termination == USER_STOP
        audit.stopped_before_done = stopped and done >= len(messages)
        after = [i for i in said if i > done]
        audit.turns_after_done = len(after) - (1 if stopped and after and after[-1] == said[-1] else 0)
    return audit


@dataclass
class Figure:
    """One overall figure: ``count`` of ``out_of`` (None: not measured in any episode)."""
    name: str
    count: Optional[int]
    out_of: Optional[int]
    unit: str
    how: str  # "exact", "heuristic", or why it is not measured

    @property
    def rate(self) -> Optional[float]:
        return self.count / self.out_of if self.count is not None and self.out_of else None

    def line(self) -> str:
        if self.count is None:
            return f"{self.name:<38} not measured ({self.how})"
        rate = "n/a" if self.rate is None else f"{self.rate:.1%}"
        return f"{self.name:<38} {self.count} of {self.out_of} {self.unit} ({rate})  [{self.how}]"

    def to_dict(self) -> dict:
        return {**asdict(self), "rate": self.rate}


def _how(audits: list[EpisodeAudit], what: str) -> str:
    kinds = {a.exact for a in audits if a.exact is not None}
    return "exact" if kinds == {True} else "heuristic" if kinds == {False} else f"exact and heuristic {what}"


def overall(audits: list[EpisodeAudit]) -> list[Figure]:
    def total(name: str) -> tuple[Optional[int], list[EpisodeAudit]]:
        measured = [a for a in audits if getattr(a, name) is not None]
        return (sum(int(getattr(a, name)) for a in measured) if measured else None), measured

    def episodes_with(name: str) -> tuple[Optional[int], int]:
        measured = [a for a in audits if getattr(a, name) is not None]
        return (sum(1 for a in measured if getattr(a, name)) if measured else None), len(measured)

    unasked, measured = total("unasked")
    told, _ = total("facts_told")
    invented, n_invented = episodes_with("not_in_scenario")
    contradicted, n_contradicted = episodes_with("contradictions")
    early, n_done = episodes_with("stopped_before_done")
    after, _ = episodes_with("turns_after_done")
    answered, _ = total("stuffed_answered")
    stuffed, _ = total("stuffed_messages")
    facts_how = _how(measured, "(by episode)") if measured else "the benchmark gives no user facts"
    done_how = ("exact: the database against the gold end state, and the information told" if early is not None
                else "the benchmark cannot tell when a task is done")
    return [
        Figure("facts told unasked", unasked, told, "facts told", facts_how),
        Figure("facts not in the scenario", invented, n_invented, "episodes", facts_how),
        Figure("contradictions", contradicted, n_contradicted, "episodes",
               "exact" if contradicted is not None else "needs exact facts"),
        Figure("stops before the task was done", early, n_done, "episodes",
               done_how),
        Figure("turns after the task was done", after, n_done, "episodes",
               done_how),
        Figure("answers to keyword-stuffed messages", answered, stuffed, "stuffed messages",
               "exact: the scripted user's contract" if answered is not None else
               "the benchmark has no scripted user's contract"),
    ]


def audit_lines(what: str, audits: list[EpisodeAudit], skipped: int = 0) -> list[str]:
    head = f"user audit of {what}: {len(audits)} episodes" + (f" ({skipped} without a task, not audited)"
                                                              if skipped else "")
    return [head] + [f"  {f.line()}" for f in overall(audits)]


def audit_all(items: Iterable[tuple[Benchmark, Task, list[Message], Optional[str], Optional[str]]]) \
        -> list[EpisodeAudit]:
    """(benchmark, task, messages, termination, trial) per episode -> its audit."""
    return [audit_episode(bench, task, messages, termination, trial)
            for bench, task, messages, termination, trial in items]


def has_exact_facts(bench: Benchmark, tasks: list[Task]) -> bool:
    """Whether ``bench`` says exactly what its users know (then a run's summary carries the audit): a heuristic
    figure is for `mua users audit` to print, not for a run's record (and other benchmarks' summaries stay as
    they were)."""
    facts = bench.user_facts(tasks[0]) if tasks else None
    return facts is not None and facts.exact


def summary_block(bench: Benchmark, tasks: dict[tuple[str, str], Task],
                  records: Iterable[tuple[str, str, list[dict], Optional[str], int]]) -> dict:
    """summary.json's "users" block ({figure: {count, out_of, rate, how}}) from the run's records (subset,
    task id, messages, termination, trial)."""
    audits = [audit_episode(bench, tasks[(subset, task_id)], [Message.from_dict(m) for m in messages], termination,
                            str(trial))
              for subset, task_id, messages, termination, trial in records if (subset, task_id) in tasks]
    return {f.name: {"count": f.count, "out_of": f.out_of, "rate": f.rate, "how": f.how} for f in overall(audits)}


def summary_text(block: dict) -> str:
    """One line for the viewer's headline from summary.json's "users" block ("?" where a figure is unknown)."""
    parts = []
    for name, figure in block.items():
        f = figure if isinstance(figure, dict) else {}
        count, out_of = f.get("count"), f.get("out_of")
        parts.append(f"{name} {'?' if count is None else f'{count}/{out_of}'}")
    return "users (exact): " + ", ".join(parts)
