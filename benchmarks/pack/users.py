"""The offline users of a pack: a scripted user that answers questions from the scenario, and the gold agent.

:class:`ScenarioUser` opens with the scenario's reason for calling, then answers each agent message with the
``say`` of every not-yet-given reply that one of the message's *questions* asks about (see :func:`asked`); a
message that asks for nothing new ends the conversation (###STOP###). With ``answers=False`` it says the
opening only and stops at its next turn. :class:`StaticUser` replays the reference conversation's user turns
whatever the agent says (the learning check's ablation "GRPO with a static user").

What counts as asking (so that listing keywords is not asking): a question is a sentence that ends with "?"
and holds a question word (what, where, which, could, ...); it asks about a reply when it holds one of the
reply's ``when`` keywords (or phrases) as whole words, and it asks about one fact at most: a question whose
keywords name two replies answers neither. So "Where would you like to sit?" gets the seat, while "name sit
time?", "have a nice time" and "when did you visit?" get nothing, and a pack's gold agent asks one question
per fact."""
from __future__ import annotations

import json
import re
from typing import Optional

from mua.harness.agents import ScriptedAgent
from mua.harness.interfaces import User
from mua.harness.types import Message, ToolCall, ToolSpec, Usage

from ..tau2.prompts import STOP, USER_STOP_MARKERS

QUESTION_WORDS = frozenset((
    "what", "which", "where", "when", "who", "whom", "whose", "why", "how", "may", "might", "could", "can",
    "would", "will", "shall", "should", "do", "does", "did", "is", "are", "was", "were", "have", "has"))
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]+|[^.!?\n]+")
_WORD = re.compile(r"\w+")


def opening(scenario: dict) -> str:
    instructions = scenario.get("instructions")
    return str(instructions.get("reason_for_call") if isinstance(instructions, dict) else instructions)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def questions(text: str) -> list[list[str]]:
    """The words of each question in ``text``: a sentence ending in "?" that holds a question word."""
    found = []
    for sentence in _SENTENCE.findall(text):
        said = words(sentence)
        if sentence.rstrip().endswith("?") and QUESTION_WORDS.intersection(said):
            found.append(said)
    return found


def mentions(said: list[str], keyword: str) -> bool:
    """Whether the words ``said`` hold ``keyword`` (one word or a phrase) as whole consecutive words."""
    key = words(keyword)
    return bool(key) and any(said[i:i + len(key)] == key for i in range(len(said) - len(key) + 1))


def asked(text: str, replies: list[dict]) -> list[int]:
    """Indices of the replies that a question of ``text`` asks about, one reply per question at most."""
    due: list[int] = []
    for said in questions(text):
        about = [i for i, r in enumerate(replies) if any(mentions(said, w) for w in r["when"])]
        if len(about) == 1 and about[0] not in due:
            due.append(about[0])
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
