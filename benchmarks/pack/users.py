"""The offline users of a pack: a scripted user that answers questions from the scenario, and the gold agent.

:class:`ScenarioUser` opens with the scenario's reason for calling, then answers each agent message with the
``say`` of every not-yet-given reply that one of the message's *questions* asks about (see :func:`asked`); a
message that asks for nothing new ends the conversation (###STOP###). With ``answers=False`` it says the
opening only and stops at its next turn. :class:`StaticUser` replays the reference conversation's user turns
whatever the agent says (the learning check's ablation "GRPO with a static user").

The contract (docs/scripted-user.md lists it with examples): the user answers a natural-language question
addressed to it, not a list of keywords.

1. A *question* is a sentence ending in "?" whose clause, from its first question word on, is a grammatical
   request: it opens with an auxiliary or modal followed by its subject ("Could you ...", "Is your ...",
   "Do you ..."), or with a question word (what, which, where, ...) and holds a subject or determiner
   ("What is *your* name?", "Which day would *you* like?"), or it is a prepositional question-word fragment
   ("*At* what time?", "*On* which day?"), or an elliptical question put to the user that opens with "your"
   ("*Your* surname and the medicine?"). So "Is name?", "What name?", "Where sit?" and "name sit time?" are
   not questions: a question word (or auxiliary) plus bare keywords.
2. A question asks about a reply when it holds one of the reply's ``when`` keywords (or phrases) as whole words.
3. A question naming several facts gives each of them when they are joined as a list ("and", "or", "plus",
   commas: "Could you tell me your name and what time you want?"); facts put side by side with nothing joining
   them ("What is your name sit time?") give none.

So "Where would you like to sit?" gets the seat, while "name sit time?", "What time?", "have a nice time" and
"when did you visit?" get nothing, and a pack's gold agent asks one question per fact or one joined question."""
from __future__ import annotations

import json
import re
from typing import Optional

from mua.harness.agents import ScriptedAgent
from mua.harness.interfaces import User
from mua.harness.types import Message, ToolCall, ToolSpec, Usage
from mua.harness.user_facts import word_list

from ..tau2.prompts import STOP, USER_STOP_MARKERS

WH_WORDS = frozenset(("what", "which", "where", "when", "who", "whom", "whose", "why", "how"))
AUXILIARIES = frozenset((
    "may", "might", "could", "can", "would", "will", "shall", "should", "do", "does", "did", "is", "are", "was",
    "were", "have", "has", "am"))
QUESTION_WORDS = WH_WORDS | AUXILIARIES
# a subject or a determiner: what makes "what is YOUR name" a sentence and "what name" a keyword
SUBJECTS = frozenset((
    "you", "your", "yours", "yourself", "i", "me", "my", "we", "us", "our", "it", "its", "this", "that", "these",
    "those", "there", "they", "them", "their", "he", "she", "his", "her", "the", "a", "an", "any", "some", "one"))
# a preposition before a question word: "at what time?", "on which day?" are whole (elliptical) questions
PREPOSITIONS = frozenset((
    "at", "on", "for", "from", "in", "by", "to", "with", "under", "until", "about", "into", "after", "before"))
JOINERS = frozenset(("and", "or", "plus", ","))
# words that may come before a question's first word: "And your surname?", "So, what time?"
LEAD_INS = frozenset(("and", "also", "so", "then", "now", "ok", "okay", "great", "thanks", "lastly", "finally",
                      "next", "sure", "perfect", "alright"))
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]+|[^.!?\n]+")
_TOKEN = re.compile(r"\w+|,")


def opening(scenario: dict) -> str:
    instructions = scenario.get("instructions")
    return str(instructions.get("reason_for_call") if isinstance(instructions, dict) else instructions)


def replies_text(scenario: dict) -> str:
    """A scenario as its opening and its replies' words, each on its own line under its kind (a reply's first
    ``when`` keyword): the short scenario of pack.json ``"user_prompt": "replies"``, from which a user answers by
    copying whole lines."""
    lines = ["opening:", opening(scenario)]
    for reply in scenario.get("replies") or []:
        lines += [f"{reply['when'][0]}:", str(reply["say"])]
    return "\n".join(lines)


def _is_request(said: list[str]) -> bool:
    """Rule 1: whether the words of a sentence ending in "?" make a grammatical request (see the module doc)."""
    opening_word = next((w for w in said if w not in LEAD_INS), None)
    if opening_word == "your":  # an elliptical question put to the user: "Your surname and the medicine?"
        return True
    start = next((i for i, w in enumerate(said) if w in QUESTION_WORDS), None)
    if start is None:
        return False
    clause = said[start:]
    if clause[0] in AUXILIARIES:
        return len(clause) > 1 and clause[1] in SUBJECTS
    if start > 0 and said[start - 1] in PREPOSITIONS:
        return True
    return bool(SUBJECTS.intersection(clause))


def questions(text: str) -> list[list[str]]:
    """The tokens (words, and commas) of each question in ``text``: a sentence ending in "?" that makes a
    grammatical request (rule 1 of the module doc)."""
    found = []
    for sentence in _SENTENCE.findall(text):
        said = _TOKEN.findall(sentence.lower())
        if sentence.rstrip().endswith("?") and _is_request([w for w in said if w != ","]):
            found.append(said)
    return found


def _spans(said: list[str], keyword: str) -> list[int]:
    """Where ``keyword`` (one word or a phrase) starts in ``said`` as whole consecutive words."""
    key = word_list(keyword)
    return [i for i in range(len(said) - len(key) + 1) if key and said[i:i + len(key)] == key]


def _named(said: list[str], replies: list[dict]) -> list[tuple[int, int]]:
    """(position, reply index) of each reply a question names, by the first place one of its keywords occurs."""
    named = []
    for i, reply in enumerate(replies):
        where = [at for w in reply["when"] for at in _spans(said, w)]
        if where:
            named.append((min(where), i))
    return sorted(named)


def asked(text: str, replies: list[dict]) -> list[int]:
    """Indices of the replies that the questions of ``text`` ask about (rules 1-3 of the module doc)."""
    due: set[int] = set()
    for said in questions(text):
        named = _named(said, replies)
        joined = all(JOINERS.intersection(said[a + 1:b]) for (a, _), (b, _) in zip(named, named[1:]))
        if joined:
            due.update(i for _, i in named)
    return sorted(due)


class ScenarioUser(User):
    def __init__(self, scenario: dict, answers: bool = True):
        self.opening = opening(scenario)
        self.replies = list(scenario.get("replies") or []) if answers else []
        self.given: set[int] = set()
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        if not any(m.role == "user" for m in messages):
            return Message(role="user", content=self.opening)
        said = next((m.text for m in reversed(messages) if m.role == "assistant" and m.content), "")
        due = [i for i in asked(said, self.replies) if i not in self.given]
        if not due:
            return Message(role="user", content=STOP)
        self.given.update(due)
        return Message(role="user", content=" ".join(self.replies[i]["say"] for i in due))

    def is_stop(self, message: Message) -> bool:
        return any(marker in message.text for marker in USER_STOP_MARKERS)


def reference_user_turns(scenario: dict, evaluation: Optional[dict] = None) -> list[str]:
    """What the scripted user says in the reference conversation: its opening, then its answer to each question
    turn of the gold agent (:func:`asking_gold_agent`: the questions without ``after`` first, then the others
    in the order of their actions)."""
    replies = list(scenario.get("replies") or [])
    turns, given = [opening(scenario)], set()
    ids = [a.get("action_id") for a in (evaluation or {}).get("actions") or []]
    later = sorted((r for r in replies if r.get("after")), key=lambda r: ids.index(r["after"]) if r["after"] in ids
                   else len(ids))
    for reply in [r for r in replies if not r.get("after")] + later:
        due = [i for i in asked(reply.get("ask") or "", replies) if i not in given]
        if due:
            given.update(due)
            turns.append(" ".join(replies[i]["say"] for i in due))
    return turns


class StaticUser(User):
    """Says the reference conversation's user turns in order, whatever the agent says, then stops: the ablation
    "GRPO with a static user" (the reward is kept; only the user's response to the agent is taken away)."""

    def __init__(self, scenario: dict, evaluation: Optional[dict] = None):
        self.turns = reference_user_turns(scenario, evaluation)
        self.said = 0
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        if self.said >= len(self.turns):
            return Message(role="user", content=STOP)
        self.said += 1
        return Message(role="user", content=self.turns[self.said - 1])

    def is_stop(self, message: Message) -> bool:
        return any(marker in message.text for marker in USER_STOP_MARKERS)


def closing(evaluation: Optional[dict]) -> str:
    """The gold agent's last message: done, and every communicate_info (as tau2's gold agent states them)."""
    infos = (evaluation or {}).get("communicate_info") or []
    return "Done." + (" " + " ".join(infos) if infos else "")


def asking_gold_agent(scenario: dict, evaluation: Optional[dict]) -> ScriptedAgent:
    """The gold agent of a conversational task: one turn per reply's question, then the reference actions and a
    final text stating every communicate_info (as tau2's gold agent does). A reply with ``after`` (an action's
    action_id) is asked in the turn that makes that action, after it: look up, then ask, then act."""
    evaluation = evaluation or {}
    replies = scenario.get("replies") or []
    turns = [[Message(role="assistant", content=r["ask"])] for r in replies if r.get("ask") and not r.get("after")]
    turn: list[Message] = []
    for i, action in enumerate(evaluation.get("actions") or []):
        call = ToolCall(id=f"gold_{i}", name=action["name"], arguments=json.dumps(action.get("arguments") or {}))
        turn.append(Message(role="assistant", tool_calls=[call]))
        asks = [r["ask"] for r in replies if r.get("after") and r["after"] == action.get("action_id")]
        if asks:
            turns.append(turn + [Message(role="assistant", content=" ".join(asks))])
            turn = []
    final = closing(evaluation)
    turns.append(turn + [Message(role="assistant", content=final)])
    return ScriptedAgent(turns, fallback=final)
