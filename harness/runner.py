"""``run_episode``: the only execution path. ``mua eval``, ``mua score`` and RL training all play tasks here.

One episode alternates user turns and agent turns. In a user turn the user may call its own tools (tau2
telecom) before saying something; in an agent turn the agent calls tools until it answers in text. The loop
ends on a user stop, an agent stop marker, or a budget in :class:`Limits`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .interfaces import Agent, Benchmark, ChatModel, Environment, EpisodeSpec, Limits, User
from .types import Message, Score, Task, ToolCall, Usage

# Termination reasons, named as tau2 names them.
USER_STOP = "user_stop"
AGENT_STOP = "agent_stop"
MAX_STEPS = "max_steps"
TOO_MANY_ERRORS = "too_many_errors"
MAX_TURNS = "max_turns"
AGENT_ERROR = "agent_error"
USER_ERROR = "user_error"


@dataclass
class EpisodeResult:
    messages: list[Message]
    termination: str
    score: Optional[Score]
    agent_usage: Usage = field(default_factory=Usage)
    user_usage: Usage = field(default_factory=Usage)
    turns: int = 0  # user messages with text
    env: Optional[Environment] = None  # the final environment


def agent_view(messages: list[Message]) -> list[Message]:
    """The conversation as the agent sees it: the user's own tool calls and their results are hidden."""
    hidden: set[str] = set()
    view = []
    for m in messages:
        if m.role == "user" and m.tool_calls:
            hidden.update(c.id for c in m.tool_calls)
            if not m.content:
                continue
            m = Message(role="user", content=m.content)
        elif m.role == "tool" and m.tool_call_id in hidden:
            continue
        view.append(m)
    return view


class _Budget:
    def __init__(self, spec: EpisodeSpec, messages: list[Message]):
        self.limits = spec.limits
        self.messages = messages
        self.errors = 0

    def exceeded(self) -> Optional[str]:
        lim = self.limits
        if lim.max_messages is not None and len(self.messages) >= lim.max_messages:
            return MAX_STEPS
        if lim.max_errors is not None and self.errors >= lim.max_errors:
            return TOO_MANY_ERRORS
        return None


def _malformed(spec: EpisodeSpec, message: Message) -> bool:
    """Under tau2's protocol: empty, or both text and tool calls."""
    if not spec.single_kind_messages:
        return False
    has_text = bool(message.content and message.content.strip())
    return has_text == bool(message.tool_calls)


async def _execute(spec: EpisodeSpec, calls: list[ToolCall], requestor: str, messages: list[Message],
                   budget: _Budget) -> None:
    for call in calls:
        outcome = await spec.env.execute_async(call, requestor=requestor)
        budget.errors += outcome.error
        messages.append(Message(role="tool", content=outcome.content, tool_call_id=call.id, name=call.name))


async def _user_turn(spec: EpisodeSpec, user: User, messages: list[Message], budget: _Budget,
                     replaying: bool = False) -> Optional[str]:
    """Let the user act until it says something. Returns a termination reason, or None to continue.

    Replaying, a user with nothing (more) to say this turn passes to the agent, and a stop message does not end
    the episode: the recorded messages are played to the end in the order given."""
    tools = spec.env.user_tools()
    while True:
        reply = await user.respond(messages, tools)
        if reply is None:
            return None if replaying else USER_STOP
        messages.append(reply)
        if _malformed(spec, reply):
            return USER_ERROR
        if reply.tool_calls:
            await _execute(spec, reply.tool_calls, "user", messages, budget)
            if stop := budget.exceeded():
                return stop
            continue
        return USER_STOP if user.is_stop(reply) and not replaying else budget.exceeded()


async def _agent_turn(spec: EpisodeSpec, agent: Agent, turn: int, messages: list[Message],
                      budget: _Budget, replaying: bool = False) -> Optional[str]:
    """Let the agent act until it answers without tool calls. Returns a termination reason or None."""
    tools = spec.env.agent_tools(turn)
    system = [Message(role="system", content=spec.system_prompt)] if spec.system_prompt else []
    steps = 0
    while True:
        steps += 1
        limit = spec.limits.max_agent_steps_per_turn
        if limit is not None and steps > limit:
            return MAX_STEPS
        reply = await agent.respond(system + agent_view(messages), tools)
        if reply is None:  # the agent ends its turn without a message (a replayed transcript moves on)
            return budget.exceeded()
        messages.append(reply)
        if _malformed(spec, reply):
            return AGENT_ERROR
        if reply.tool_calls:
            await _execute(spec, reply.tool_calls, "assistant", messages, budget)
            if stop := budget.exceeded():
                return stop
            continue
        marker = spec.agent_stop_marker
        if marker and marker in reply.text and not replaying:
            return AGENT_STOP
        return budget.exceeded()


async def run_episode(benchmark: Benchmark, task: Task, agent: Agent, user: User, *,
                      judge: Optional[ChatModel] = None, score: bool = True,
                      replaying: bool = False, limits: Optional[Limits] = None) -> EpisodeResult:
    """Play ``task`` once with ``agent`` and ``user`` and score the trajectory.

    Model and endpoint failures propagate as exceptions: the caller records the episode as an error, never
    as a score of 0. ``replaying``: the agent and user read a recorded trajectory (``mua score``); it is played
    as recorded, without budgets or message-protocol checks, and its recorded termination decides.
    ``limits``, when given, replaces the benchmark's budgets (RL training sets its own turn budget).
    """
    spec = benchmark.start(task)
    if limits is not None:
        spec.limits = limits
    if replaying:
        spec.limits, spec.single_kind_messages = Limits(), False
    messages: list[Message] = list(spec.opening)
    budget = _Budget(spec, messages)
    rounds = says = 0  # user turns played; user messages with something to say (not tool calls)
    while True:
        if (limit := spec.limits.max_user_turns) is not None and rounds >= limit:
            termination = MAX_TURNS
            break
        before = len(messages)
        if ended := await _user_turn(spec, user, messages, budget, replaying):
            termination = ended
            break
        says += sum(1 for m in messages[before:] if m.role == "user" and not m.tool_calls)
        # The agent's turn is numbered by the user message it answers (one per round when live; a replayed
        # round may hold none, when the recording has the user act again, or the agent, before the other side).
        if ended := await _agent_turn(spec, agent, max(0, says - 1), messages, budget, replaying):
            termination = ended
            break
        if replaying and len(messages) == before:  # neither side has anything left: the recording is played
            termination = USER_STOP
            break
        rounds += 1
    user_turns = sum(1 for m in messages if m.role == "user" and m.content)
    result = EpisodeResult(messages=messages, termination=termination, score=None,
                           agent_usage=agent.usage, user_usage=user.usage, turns=user_turns, env=spec.env)
    if score:
        result.score = await benchmark.score(task, messages, env=spec.env, termination=termination,
                                                   judge=judge)
    return result
