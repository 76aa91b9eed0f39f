"""The facts a simulated user holds and the messages a user is tested with: plain data an adapter fills
(``Benchmark.user_facts``, ``Benchmark.user_suite``) and the harness's user suite and audit read.

A fact is told in a user message when every *value word* of its value is there as a whole word (the value's
words less a few filler words: "At the riverside branch." is told by "riverside branch"), so a user that
rephrases around the value still tells it, and a user that names another value does not."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .types import Task

_WORD = re.compile(r"\w+")
# words that carry no value of their own: "At 8 pm." is told by "8 pm", "The nurse one." by "nurse"
FILLER = frozenset(("a", "an", "the", "at", "on", "in", "by", "to", "for", "from", "my", "i", "it", "is", "please",
                    "one", "of", "and", "its", "i'd", "me"))


def word_list(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class UserFact:
    """One thing the user knows: its ``kind`` (e.g. "name"), the ``value`` the scenario gives it ("Vera."),
    the ``keywords`` an agent asks for it with, and ``others``: values this kind takes in other scenarios of
    the same benchmark (a user that says one of them states a fact not in its scenario)."""
    kind: str
    value: str
    keywords: tuple[str, ...] = ()
    others: tuple[str, ...] = ()

    @property
    def value_words(self) -> frozenset[str]:
        return value_words(self.value)


def value_words(value: str) -> frozenset[str]:
    found = [w for w in word_list(value) if w not in FILLER]
    return frozenset(found or word_list(value))


def tells(value: str, text: str) -> bool:
    """Whether ``text`` tells ``value`` (every value word as a whole word)."""
    needed = value_words(value)
    return bool(needed) and needed <= set(word_list(text))


def told(facts: tuple[UserFact, ...] | list[UserFact], text: str) -> list[str]:
    """The kinds of ``facts`` whose value ``text`` tells."""
    return [f.kind for f in facts if tells(f.value, text)]


def invented(facts: tuple[UserFact, ...] | list[UserFact], text: str) -> list[str]:
    """The kinds for which ``text`` tells another scenario's value and not this one's (a fact not in the
    scenario)."""
    return [f.kind for f in facts if not tells(f.value, text) and any(
        value_words(o) != f.value_words and tells(o, text) for o in f.others)]


def names(text: str, keywords: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``keywords`` (a word or a phrase) as whole consecutive words."""
    said = word_list(text)
    for keyword in keywords:
        key = word_list(keyword)
        if key and any(said[i:i + len(key)] == key for i in range(len(said) - len(key) + 1)):
            return True
    return False


@dataclass(frozen=True)
class UserFacts:
    """What the user of one task knows. ``exact``: the benchmark says exactly what each fact is (a pack's
    replies); otherwise the facts were found in the scenario's text by patterns (tau2's known_info), and every
    measure built on them is heuristic. ``scenario_text``: all the text the user was given."""
    facts: tuple[UserFact, ...]
    exact: bool
    scenario_text: str = ""


@dataclass(frozen=True)
class SuiteCase:
    """One test of a user: the task (its scenario is the user's), the user's opening line, one agent
    ``message``, and the fact kinds the message asks for (empty: it asks for none, a user should tell none).
    ``family`` is one of ``harness/users/suite.py: FAMILIES``."""
    family: str
    task: Task
    opening: str
    message: str
    asked: tuple[str, ...]
    facts: tuple[UserFact, ...] = field(default=())
