"""A person plays one side of an episode at the terminal: the agent (against the benchmark's user) or the user
(against an agent model). The person's side is an :class:`Agent` or :class:`User` backed by the terminal, so the
episode runs through ``run_episode`` and is scored like any other.

What the person types, one line at a time:
  text                        a message
  /call NAME {"arg": value}   a tool call (arguments: a JSON object; omitted: {}). The environment answers a
                              malformed one or an unknown tool as the benchmark does, in the conversation.
  /tools [NAME]               the tools (with NAME: its full JSON schema)
  /stop                       (as the user) end the conversation
  /help                       this list
  /quit, Ctrl-D, Ctrl-C       abandon the episode: nothing is written
"""
from __future__ import annotations

import json
import sys
from typing import Callable, Optional, TextIO

from ..errors import MuaError
from ..interfaces import Agent, User
from ..types import Message, ToolCall, ToolSpec, Usage
from .catalog import block, tool_dict, tool_lines

HELP = __doc__.split("What the person types, one line at a time:\n", 1)[1]


class Abandoned(MuaError):
    """The person left before the episode ended (/quit, end of input); a MuaError, so that playing the episode
    (play_one) hands it on rather than recording it as a failed episode."""


class Terminal:
    """Lines in, text out. ``read`` defaults to ``input`` (line editing on a real terminal)."""

    def __init__(self, out: Optional[TextIO] = None, read: Optional[Callable[[str], str]] = None):
        self.out = out or sys.stdout
        self.read = read or input

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        try:
            return self.read(prompt)
        except EOFError:
            raise Abandoned("end of input") from None


def show(message: Message) -> list[str]:
    """One message as the person sees it."""
    lines = []
    if message.content:
        lines.append(f"[{message.role if message.role != 'tool' else 'tool ' + (message.name or '')}] "
                     f"{message.content}")
    for call in message.tool_calls or []:
        lines.append(f"[{message.role} calls] {call.name} {call.arguments}")
    return lines


class Player:
    """What the agent and the user players share: showing the messages they have not seen, reading one line."""

    role = ""

    def __init__(self, terminal: Terminal):
        self.terminal = terminal
        self.usage = Usage()
        self.calls = 0
        self.shown = 0  # conversation messages (the system prompt aside) already shown; the view only grows
        self.started = False

    def visible(self, message: Message) -> list[str]:
        return show(message)

    def catch_up(self, messages: list[Message]) -> None:
        """Show the messages not shown yet (after the episode: how it ended)."""
        conversation = [m for m in messages if m.role != "system"]
        for m in conversation[self.shown:]:
            for line in self.visible(m):
                self.terminal.say(line)
        self.shown = len(conversation)

    def _read(self, tools: list[ToolSpec], can_stop: bool) -> Optional[Message]:
        """The person's next message; None when they stop (``can_stop``)."""
        reply = self._line(tools, can_stop)
        self.shown += reply is not None  # the runner adds it to the conversation
        return reply

    def _line(self, tools: list[ToolSpec], can_stop: bool) -> Optional[Message]:
        t = self.terminal
        while True:
            line = t.ask(f"{self.role}> ").strip()
            if not line:
                continue
            word, _, rest = line.partition(" ")
            if word == "/quit":
                raise Abandoned("/quit")
            if word == "/help":
                t.say(HELP)
            elif word == "/tools":
                t.say(_tools_text(tools, rest.strip()))
            elif word == "/stop" and can_stop:
                return None
            elif word == "/call":
                name, _, arguments = rest.strip().partition(" ")
                if not name:
                    t.say("usage: /call NAME {\"arg\": value}")
                    continue
                self.calls += 1
                call = ToolCall(id=f"{self.role}_call_{self.calls}", name=name, arguments=arguments.strip() or "{}")
                return Message(role=self.role, tool_calls=[call])  # type: ignore[arg-type]
            elif word.startswith("/") and word[1:].isalpha():
                t.say(f"unknown command {word}; /help lists them")
            else:
                return Message(role=self.role, content=line)  # type: ignore[arg-type]


def _tools_text(tools: list[ToolSpec], name: str = "") -> str:
    if name:
        found = [t for t in tools if t.name == name]
        return json.dumps(tool_dict(found[0]), ensure_ascii=False, indent=1) if found else f"no tool {name!r}"
    return "\n".join(["tools (/tools NAME shows one's schema):"] + tool_lines([tool_dict(t) for t in tools])
                     if tools else ["no tools"])


class TerminalAgent(Player, Agent):
    """The agent, played by a person: sees the agent's view (the system prompt with the policy first)."""

    role = "assistant"
    tool_names: list[str] = []  # the tools last shown (some benchmarks add tools between user turns)

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        t = self.terminal
        if not self.started:
            self.started = True
            if messages and messages[0].role == "system":
                t.say("== System prompt (policy) ==")
                t.say(messages[0].text)
            t.say(_tools_text(tools))
            t.say("(type a reply, or /call NAME {json}; /help for more)")
        elif (names := [x.name for x in tools]) != self.tool_names:
            added = [n for n in names if n not in self.tool_names]
            gone = [n for n in self.tool_names if n not in names]
            t.say("(tools " + "; ".join(([f"added: {', '.join(added)}"] if added else [])
                                        + ([f"removed: {', '.join(gone)}"] if gone else [])) + "; /tools lists them)")
        self.tool_names = [x.name for x in tools]
        self.catch_up(messages)
        return self._read(tools, can_stop=False)


class TerminalUser(Player, User):
    """The user, played by a person: sees what the benchmark's user sees (the agent's text, the results of the
    user's own tool calls), not the agent's tool calls."""

    role = "user"

    def __init__(self, terminal: Terminal, scenario: object, stops: Optional[Callable[[Message], bool]] = None):
        """``stops``: which messages end the conversation, as the benchmark's own user decides (e.g. one that
        says a stop marker); /stop always does."""
        super().__init__(terminal)
        self.scenario = scenario
        self.stops = stops
        self.own_calls: set[str] = set()

    def is_stop(self, message: Message) -> bool:
        return self.stops is not None and self.stops(message)

    def visible(self, message: Message) -> list[str]:
        if message.role == "assistant" and message.content:
            return [f"[assistant] {message.content}"]
        if message.role == "tool" and message.tool_call_id in self.own_calls:
            return show(message)
        return []

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> Optional[Message]:
        t = self.terminal
        if not self.started:
            self.started = True
            t.say("== Your scenario ==")
            t.say("\n".join(block(self.scenario)))
            if tools:
                t.say(_tools_text(tools))
            t.say("(type what the user says; /stop ends the conversation; /help for more)")
        self.catch_up(messages)
        reply = self._read(tools, can_stop=True)
        for call in (reply.tool_calls or []) if reply else []:
            self.own_calls.add(call.id)
        return reply
