"""What a tau2 user knows, found by patterns in its scenario (heuristic: tau2 states it in prose), and when a
tau2 task is done (exact: the database equals the gold end state and the information to tell is told).

The scenario's ``known_info``, ``reason_for_call`` and ``task_instructions`` are searched for identifiers
(emails, user ids, order and reservation ids, zip codes, phone numbers) and the user's full name; each becomes
a fact with the words an agent asks for it with. ``unknown_info`` says what the user does not know: it is part
of the scenario text but gives no fact, so a user that states, e.g., an email it does not remember states a
fact not in its scenario."""
from __future__ import annotations

import re
from typing import Any, Optional

from mua.harness.types import Message, Task
from mua.harness.user_facts import UserFact, UserFacts

from . import scoring
from .domain import Tau2Domain

# (kind, pattern, words an agent asks for it with)
IDENTIFIERS = (
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), ("email", "e-mail", "mail")),
    ("user id", re.compile(r"\b[a-z]+_[a-z]+_\d{3,}\b"), ("user id", "id", "account", "username")),
    ("order id", re.compile(r"#W\d{7}\b"), ("order", "orders")),
    ("phone", re.compile(r"\b\d{3}-\d{3}-\d{4}\b"), ("phone", "number")),
    ("zip code", re.compile(r"\b\d{5}\b"), ("zip", "postal", "postcode", "address")),
    ("reservation id", re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b"),
     ("reservation", "booking", "confirmation")),
)
_NAME = re.compile(r"(?i:\byou are|\byour name is|\bname is)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)+)")
NAME_WORDS = ("name", "who")


def scenario_text(task: Task) -> str:
    instructions = task.scenario.get("instructions") if isinstance(task.scenario, dict) else None
    if isinstance(instructions, dict):
        return "\n".join(str(v) for v in instructions.values() if isinstance(v, str))
    return str(instructions or "")


def told_text(task: Task) -> str:
    """The parts of the scenario that say what the user knows (not ``unknown_info``)."""
    instructions = task.scenario.get("instructions") if isinstance(task.scenario, dict) else None
    if isinstance(instructions, dict):
        return "\n".join(str(instructions.get(k) or "") for k in ("reason_for_call", "known_info",
                                                                    "task_instructions"))
    return str(instructions or "")


def identifiers(text: str) -> list[tuple[str, str]]:
    """(kind, value) of every identifier in ``text``, each value once."""
    found: dict[str, str] = {}
    for kind, pattern, _ in IDENTIFIERS:
        for value in pattern.findall(text):
            found.setdefault(value, kind)
    return [(kind, value) for value, kind in found.items()]


def user_facts(task: Task) -> UserFacts:
    asks = {kind: words for kind, _, words in IDENTIFIERS}
    known = told_text(task)
    facts = [UserFact(kind, value, asks[kind]) for kind, value in identifiers(known)]
    facts += [UserFact("name", name, NAME_WORDS) for name in dict.fromkeys(_NAME.findall(known))]
    return UserFacts(tuple(facts), exact=False, scenario_text=scenario_text(task))


def done_at(domain: Tau2Domain, task: Task, messages: list[Message], gold: Any) -> Optional[int]:
    """The first message after which the database equals the gold end state (``gold``: its fingerprint; the
    state-changing calls replayed as the scorer replays them) and every communicate_info has been said; None
    for a task that expects neither a change nor anything said (nothing tells when it is done)."""
    evaluation = task.evaluation or {}
    infos = evaluation.get("communicate_info") or []
    writes = any(domain.tools_for(a.get("requestor") or "assistant").get(a.get("name")) is not None
                 and domain.tools_for(a.get("requestor") or "assistant")[a["name"]].mutates
                 for a in evaluation.get("actions") or [])
    if not writes and not infos:
        return None
    env = scoring.replay(domain, task.initial_state, [])
    for i, message in enumerate(messages):
        if message.tool_calls and message.role in ("assistant", "user"):
            for requestor, name, args in scoring.tool_calls([message]):
                if args is not None and env.has_tool(name) and env.mutates(name):
                    env.call(name, args, requestor)
        if (not writes or domain.fingerprint(env.state()) == gold) and \
                scoring.communicate_check(messages[:i + 1], infos)[0] == 1.0:
            return i
    return len(messages)
