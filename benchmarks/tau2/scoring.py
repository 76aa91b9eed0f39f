"""tau2's evaluator: reward = product of the components named in the task's reward_basis.

* Gating: unless the termination is ``agent_stop`` or ``user_stop`` the reward is 0 and nothing is checked.
  A replayed trajectory (termination None) is classified by its LAST message: a user message containing
  ###STOP###, ###TRANSFER### or ###OUT-OF-SCOPE### is a user stop; an assistant message containing
  ###STOP### is an agent stop; anything else (e.g. a run cut off by a step or error budget) is
  ``unterminated`` and gets 0, like tau2's premature terminations. A message that is empty or holds both
  text and tool calls ends a current-tau2 episode at once (agent_error / user_error), so such a trajectory
  is classified that way first.
* DB: the final state (the live episode's, or the trajectory's state-changing calls replayed on a fresh state;
  recorded tool results are never trusted) against the state after replaying the gold actions (cached per
  task). ENV_ASSERTION: the task's env assertions on the final state.
* COMMUNICATE: every info string occurs, case-insensitively, in an assistant text with commas removed.
* ACTION: every gold action matches some tool call by name and compare_args.
* NL_ASSERTION: 1.0 without a call when the list is empty; otherwise judged by an LLM when a judge is given
  (see ``judge.py``), else None and listed in info["skipped"] (the reward is then the product of the computed
  components and info["incomplete"] is True).
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from mua.harness.types import Message

from .domain import Tau2Domain
from .environment import Tau2Environment, parse_arguments
from .prompts import STOP, USER_STOP_MARKERS

STOPPED = ("agent_stop", "user_stop")


def derive_termination(messages: list[Message]) -> str:
    for m in messages:
        if m.role in ("assistant", "user") and bool(m.content and m.content.strip()) == bool(m.tool_calls):
            return "agent_error" if m.role == "assistant" else "user_error"
    for m in reversed(messages):
        if m.role == "tool" or (m.tool_calls and not m.content):
            return "unterminated"
        if m.role == "user":
            return "user_stop" if any(s in m.text for s in USER_STOP_MARKERS) else "unterminated"
        if m.role == "assistant":
            return "agent_stop" if STOP in m.text else "unterminated"
    return "unterminated"


def tool_calls(messages: list[Message], parsed: Optional[Mapping[str, dict]] = None
               ) -> list[tuple[str, str, Optional[dict]]]:
    """(requestor, name, arguments or None when they do not parse) for every call in the trajectory.
    ``parsed``: arguments already decoded, by their JSON text (the episode's ``Tau2Environment.parsed``)."""
    out = []
    for m in messages:
        if m.role in ("assistant", "user") and m.tool_calls:
            for call in m.tool_calls:
                args: Optional[dict] = parsed.get(call.arguments) if parsed else None
                if args is None:
                    try:
                        args = parse_arguments(call.arguments)
                    except ValueError:
                        args = None
                out.append((m.role, call.name, args))
    return out


def replay(domain: Tau2Domain, initial_state: Optional[dict], calls) -> Tau2Environment:
    """A fresh environment with the state-changing calls re-executed, as tau2's ``set_state`` does: unknown tools,
    read-only tools and (mua only) unparseable arguments are skipped."""
    env = Tau2Environment(domain, domain.new_state())
    domain.initialise(env.state(), initial_state)
    for requestor, name, args in calls:
        if args is None or not env.has_tool(name) or not env.mutates(name):
            continue
        env.call(name, args, requestor)
    return env


def gold_env(domain: Tau2Domain, initial_state: Optional[dict], evaluation: dict) -> Tau2Environment:
    """A fresh environment after the gold actions (the end state the DB check compares against)."""
    env = Tau2Environment(domain, domain.new_state())
    domain.initialise(env.state(), initial_state)
    for action in evaluation.get("actions") or []:
        # failures are ignored, as upstream logs and swallows them
        env.call(action["name"], action.get("arguments") or {}, action.get("requestor") or "assistant")
    return env


def communicate_check(messages: list[Message], infos: list[str]) -> tuple[float, list[str]]:
    texts = [m.content.lower().replace(",", "") for m in messages
             if m.role == "assistant" and m.content and m.content.strip()]
    missing = [info for info in infos if not any(info.lower() in t for t in texts)]
    return (0.0 if missing else 1.0), missing


def action_check(calls, actions: list[dict]) -> tuple[float, list[str]]:
    unmatched = []
    for action in actions:
        keys = action.get("compare_args")
        expected = action.get("arguments") or {}
        found = False
        for _, name, args in calls:
            if name != action["name"] or args is None:
                continue
            compare = list(args) if keys is None else keys
            if not compare or ({k: v for k, v in args.items() if k in compare}
                               == {k: v for k, v in expected.items() if k in compare}):
                found = True
                break
        if not found:
            unmatched.append(action.get("action_id") or action["name"])
    return (0.0 if unmatched else 1.0), unmatched


def env_assertions_check(domain: Tau2Domain, state: Any, assertions: list[dict]) -> tuple[float, list[str]]:
    failed = []
    for a in assertions:
        try:
            ok = domain.run_env_function(state, a["env_type"], a["func_name"], a.get("arguments") or {})
            met = isinstance(ok, bool) and ok == a.get("assert_value", True)
        except Exception:  # upstream would crash the evaluation; a broken check counts as not met here
            met = False
        if not met:
            failed.append(a.get("message") or f"{a['func_name']}({json.dumps(a.get('arguments'))})")
    return (0.0 if failed else 1.0), failed
