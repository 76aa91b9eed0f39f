"""The gold episode of a tau2 task: the reference actions replayed by a scripted agent and a scripted user.

Each gold action is performed by its ``requestor`` ("assistant" when missing; telecom also has "user" actions
on the phone), in task order, one call per message. Consecutive actions of one side form a segment, and the
conversation alternates segments:

    user:  [its leading phone actions] + the reason for calling
    agent: [its actions] + a text  ...  user: [its actions] + "Done."  ...  agent: final text  user: ###STOP###

The agent's final text states every ``communicate_info`` string. Order matters in telecom (a reboot only
reconnects if the line was resumed first), which this interleaving keeps. Retail and airline have only agent
actions: user opens, agent acts and answers, user stops.
"""
from __future__ import annotations

import json
from itertools import groupby
from typing import Optional

from mua.harness.agents import ScriptedAgent
from mua.harness.types import Message, ToolCall
from mua.harness.users.simulator import ScriptedUser

from .prompts import STOP, USER_STOP_MARKERS

AGENT_STEP_TEXT = "Please tell me once that is done."
USER_STEP_TEXT = "Done."


# (agent turns, user messages): what :class:`ScriptedAgent` and :class:`ScriptedUser` play
Scripts = tuple[list[list[Message]], list[Message]]


def gold_scripts(evaluation: Optional[dict], opening: str) -> Scripts:
    """The gold episode's scripts. Agent turn ``i`` answers the user's ``i``-th text message (the runner hides the
    user's own tool calls from the agent)."""
    evaluation = evaluation or {}
    calls = []  # (requestor, one tool-call message per action)
    for i, action in enumerate(evaluation.get("actions") or []):
        side = action.get("requestor") or "assistant"
        role = "user" if side == "user" else "assistant"
        call = ToolCall(id=f"gold_{i}", name=action["name"], arguments=json.dumps(action.get("arguments") or {}))
        calls.append((side, Message(role=role, tool_calls=[call])))
    # each run of same-side actions is one segment
    segments = [(side, [m for _, m in group]) for side, group in groupby(calls, key=lambda c: c[0])]
    user: list[Message] = []
    if segments and segments[0][0] == "user":
        user += segments.pop(0)[1]
    user.append(Message(role="user", content=opening))
    agent: list[list[Message]] = []
    while True:
        actions = segments.pop(0)[1] if segments and segments[0][0] != "user" else []
        if not segments:
            infos = evaluation.get("communicate_info") or []
            final = "Done." + (" " + " ".join(str(i) for i in infos) if infos else "")
            agent.append(actions + [Message(role="assistant", content=final)])
            break
        agent.append(actions + [Message(role="assistant", content=AGENT_STEP_TEXT)])
        user += segments.pop(0)[1] + [Message(role="user", content=USER_STEP_TEXT)]
    user.append(Message(role="user", content=STOP))
    return agent, user


def gold_agent(turns: list[list[Message]]) -> ScriptedAgent:
    """The agent of ``gold_scripts``' agent turns; past them it repeats its final text."""
    return ScriptedAgent(turns, fallback=turns[-1][-1].content or "Done.")


def gold_user(messages: list[Message]) -> ScriptedUser:
    return ScriptedUser(messages, stop_markers=USER_STOP_MARKERS)
