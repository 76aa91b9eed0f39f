"""Conversations that teach a user model a pack's questions: what a user simulator is trained on with ``mua sft``
(``lesson_rows`` writes them in the shape ``mua export --role user`` writes).

A lesson is a conversation of one task as the runner records it: the agent's greeting, the scenario's opening,
then agent turns that ask for the scenario's replies and the user's answers, the agent's closing and the user's
###STOP###. Each question is one of the reply's declared phrasings (its ``asks``; a reply without any is left out),
drawn at random, one to all replies per turn, so the user model sees many phrasings of one question and learns the
question rather than a keyword; half the turns asking for several facts join their questions into one sentence
("What is your name and where would you like to sit?"; ``join_share``), the others put them side by side. A reply
may also declare ``clauses`` (noun phrases such as "your full name"): when every reply a turn asks for has them,
half those turns (``CLAUSE_SHARE``) ask as one request built from them ("Please tell me your full name and when
you will arrive."), the shape of a natural compound question, which joined whole questions do not have. Some
turns are preceded by a message that asks for nothing: the replies' keywords stuffed into a list or into bare
template questions (``Is name? What time?``), or small talk.
The user answers those with :data:`CLARIFY` and gives no fact, so it learns that a keyword is not a question.
The labels come from the declarations (which reply a phrasing asks for), not from a keyword matcher."""
from __future__ import annotations

import random
from typing import Optional

from mua.harness.tools.export import user_columns
from mua.harness.types import Message, Task
from mua.harness.users.simulator import user_view

from ..tau2.prompts import FIRST_AGENT_MESSAGE, STOP
from .users import closing, opening

# Starts with "I", not a capitalised word: a tiny model with name places writes a name's first letter as the same
# token as "Sorry"'s, and blended them ("Norry, I am not sure..." for Noah, "Soe." for Zoe).
CLARIFY = "I am not sure what you need from me."
# Bare template questions over the replies' keywords: what keyword stuffing looks like in question form.
TEMPLATE_WORDS = ("is", "what", "which", "where", "when", "any", "your", "the")
# Lead-ins put before a list of keywords: stuffing dressed as a request.
LEAD_INS = ("Can I have", "I need", "Give me", "What are your", "Your", "Send me", "Need", "Which")
SMALL_TALK = ("Lovely weather today, isn't it?", "Thank you for calling us.", "Did you know we renovated last year?",
              "One moment, please.", "Our kitchen closes late on weekends.", "How is your day going?",
              "It has been a busy morning here.", "We have live music on Fridays.", "Parking is free after six.",
              "Give me a second to open the calendar.", "The chef has a new menu this month.",
              "Thanks for your patience.", "I just started my shift.", "It is raining again here.",
              "We love having new guests.", "Happy to help you today.", "Let me pull up the system.",
              "The summer terrace opens next week.", "Our phones have been ringing all day.",
              "Hope you are keeping well.", "Bear with me for a moment.", "We were voted best bistro in town.",
              "Nice to hear from you.", "The system is a little slow today.")
# Share of question turns preceded by a message that asks for nothing.
DECOY_SHARE = 0.3
# Share of turns asking for several facts that ask them in one sentence (``joined``), not side by side.
JOIN_SHARE = 0.5
# How the last of the joined questions is attached.
JOINERS = (" and ", ", and ", ", and also ", " and also ")
# Share of the turns whose replies all declare clauses that ask as one request built from them.
CLAUSE_SHARE = 0.5
# Requests clauses are put after.
CLAUSE_LEAD_INS = ("Please tell me", "I need to know", "Would you share", "Could I ask for", "Can you give me",
                   "Let me know", "Tell me", "I would like to know", "Would you mind telling me")


def phrasings(reply: dict) -> list[str]:
    """The declared questions about one reply (its ``asks``)."""
    return list(reply.get("asks") or [])


def joined(questions: list[str], rng: random.Random) -> str:
    """Several declared questions as one sentence: "What is your name, where would you like to sit and at what
    time?" (each but the first starts in lower case unless it starts with "I" or an acronym)."""
    parts = [q.rstrip(" ?.!") for q in questions]
    parts[1:] = [p if p[:2] == "I " or p[1:2].isupper() else p[:1].lower() + p[1:] for p in parts[1:]]
    return ", ".join(parts[:-1]) + rng.choice(JOINERS) + parts[-1] + "?"


def request(clauses: list[str], rng: random.Random) -> str:
    """Declared clauses as one request: "Please tell me your full name, and when you will arrive?"."""
    body = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + rng.choice(JOINERS) + clauses[-1]
    return f"{rng.choice(CLAUSE_LEAD_INS)} {body}{rng.choice('?.')}"


def decoy(replies: list[dict], rng: random.Random) -> str:
    """A message that asks for nothing: keywords stuffed into a list (bare or after a lead-in), into bare template
    questions, or small talk."""
    keys = [rng.choice(r["when"]) for r in replies]
    rng.shuffle(keys)
    keys = keys[:rng.randint(1, len(keys))]
    if rng.random() < 0.5:  # stuffing comes capitalised too ("Name? Time?")
        keys = [k.capitalize() for k in keys]
    kind = rng.randrange(5)
    if kind == 4:
        return f"{rng.choice(LEAD_INS)} {rng.choice((' ', ', ')).join(keys)}{rng.choice('?.')}"
    if kind == 0:
        return " ".join(f"{rng.choice(TEMPLATE_WORDS).capitalize()} {k}?" for k in keys)
    if kind == 1:
        return " ".join(keys) + "?"
    if kind == 2:
        return ", ".join(f"{k}?" for k in keys)
    return rng.choice(SMALL_TALK)


def lesson(scenario: dict, evaluation: Optional[dict], rng: random.Random, joiner: str = " ",
           rounds: int = 1, join_share: float = JOIN_SHARE) -> list[Message]:
    """One conversation of a task, in the runner's form (agent turns as assistant, user turns as user); the
    facts of one answer are joined by ``joiner``; the agent asks for every fact ``rounds`` times (as an agent that
    checks again: more answers to learn from per conversation); ``join_share`` of the turns asking for several
    facts ask them in one sentence (0: always side by side)."""
    replies = [r for r in scenario.get("replies") or [] if phrasings(r)]
    messages = [Message(role="assistant", content=FIRST_AGENT_MESSAGE), Message(role="user", content=opening(scenario))]
    for _ in range(rounds):
        order = list(range(len(replies)))
        rng.shuffle(order)
        while order:
            turn = order[:rng.randint(1, len(order))]
            order = order[len(turn):]
            if rng.random() < DECOY_SHARE:
                messages += [Message(role="assistant", content=decoy(replies, rng)),
                             Message(role="user", content=CLARIFY)]
            if all(replies[i].get("clauses") for i in turn) and rng.random() < CLAUSE_SHARE:
                asked = request([rng.choice(replies[i]["clauses"]) for i in turn], rng)
            else:
                questions = [rng.choice(phrasings(replies[i])) for i in turn]
                join = join_share and len(turn) > 1 and rng.random() < join_share
                asked = joined(questions, rng) if join else " ".join(questions)
            said = joiner.join(replies[i]["say"] for i in sorted(turn))
            messages += [Message(role="assistant", content=asked), Message(role="user", content=said)]
    messages += [Message(role="assistant", content=closing(evaluation)), Message(role="user", content=STOP)]
    return messages


def lesson_rows(bench, tasks: list[Task], per_task: int, seed: int, rounds: int = 1,
                join_share: float = JOIN_SHARE) -> list[dict]:
    """``per_task`` lessons of each task as training rows, in the shape ``mua export --role user`` writes (the user
    simulator's view of the pack, ``bench`` a ``PackBenchmark``), each asking for every fact ``rounds`` times
    (``join_share``: as for :func:`lesson`); the same seed gives the same rows. Under pack.json
    ``"user_prompt": "replies"`` an answer's facts are one a line, as the prompt writes them (copied whole)."""
    joiner = "\n" if bench.pack.user_prompt == "replies" else " "
    rows = []
    for task in tasks:
        prompt = bench.user_prompt(task)
        for k in range(per_task):
            rng = random.Random(f"{seed}/{task.id}/{k}")
            view = user_view(prompt, lesson(task.scenario, task.evaluation, rng, joiner, rounds, join_share))
            rows.append({"benchmark": bench.name, "subset": task.subset, "task_id": task.id, "role": "user",
                         "trial": k, "split": task.split, **user_columns(view, "[]"), "reward": None,
                         "termination": "user_stop"})
    return rows
