"""The offline users of a pack: a scripted user that answers from the scenario, and the gold agent that asks.

:class:`ScenarioUser` opens with the scenario's reason for calling, then answers each agent message with the
``say`` of every not-yet-given reply whose ``when`` keywords the message mentions (case-insensitive); a
message that asks for nothing new ends the conversation (###STOP###). With ``answers=False`` it says the
opening only and stops at its next turn: the ablation "user out of the loop"."""
from __future__ import annotations

import json
from typing import Optional

from mua.harness.agents import ScriptedAgent
from mua.harness.interfaces import User
from mua.harness.types import Message, ToolCall, ToolSpec, Usage

from ..tau2.prompts import STOP, USER_STOP_MARKERS


def opening(scenario: dict) -> str:
    instructions = scenario.get("instructions")
    return str(instructions.get("reason_for_call") if isinstance(instructions, dict) else instructions)


class ScenarioUser(User):
    def __init__(self, scenario: dict, answers: bool = True):
        self.opening = opening(scenario)
        self.replies = list(scenario.get("replies") or []) if answers else []
        self.given: set[int] = set()
        self.usage = Usage()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        if not any(m.role == "user" for m in messages):
            return Message(role="user", content=self.opening)
        said = next((m.text.lower() for m in reversed(messages) if m.role == "assistant" and m.content), "")
        due = [i for i, r in enumerate(self.replies)
               if i not in self.given and any(w.lower() in said for w in r["when"])]
        if not due:
            return Message(role="user", content=STOP)
        self.given.update(due)
        return Message(role="user", content=" ".join(self.replies[i]["say"] for i in due))

    def is_stop(self, message: Message) -> bool:
        return any(marker in message.text for marker in USER_STOP_MARKERS)


def asking_gold_agent(scenario: dict, evaluation: Optional[dict]) -> ScriptedAgent:
    """The gold agent of a conversational task: one turn per reply's question, then the reference actions and a
    final text stating every communicate_info (as tau2's gold agent does)."""
    evaluation = evaluation or {}
    turns = [[Message(role="assistant", content=r["ask"])] for r in scenario.get("replies") or [] if r.get("ask")]
    calls = [Message(role="assistant", tool_calls=[ToolCall(id=f"gold_{i}", name=a["name"],
                                                            arguments=json.dumps(a.get("arguments") or {}))])
             for i, a in enumerate(evaluation.get("actions") or [])]
    infos = evaluation.get("communicate_info") or []
    final = "Done." + (" " + " ".join(infos) if infos else "")
    turns.append(calls + [Message(role="assistant", content=final)])
    return ScriptedAgent(turns, fallback=final)
