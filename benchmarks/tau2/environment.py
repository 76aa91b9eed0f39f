"""The tau2 environment: runs a domain's tools by name on a per-episode state, exactly as tau2 reports them.

What the caller sees follows upstream ``Environment.get_response``: any exception becomes the text
``"Error: <message>"`` with ``error=True``; other results are serialised by :func:`serialise`
(``Environment.to_json_str``). Upstream calls the tool function with the arguments unvalidated, so a bad call
fails the way Python fails: binding errors are reproduced by :func:`bind`, and type errors surface from the
tool code itself.

Malformed arguments have no upstream counterpart: tau2 decodes tool-call JSON inside its LLM client, where a
bad string aborts the whole simulation. mua keeps the episode going and reports ``Error: <reason>`` to the
caller instead (counted as a tool error), without touching the state.
"""
from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any, Optional

from mua.harness.interfaces import Environment, ToolOutcome
from mua.harness.types import ToolCall, ToolSpec

from .domain import Record, Tau2Domain, ToolDef, copy_tree


def bind(tool: ToolDef, name: str, arguments: dict) -> dict:
    """Check ``arguments`` against the tool's parameters with Python's own call rules and messages."""
    where = f"{tool.owner}.{name}()"
    known = {p.name for p in tool.params}
    for key in arguments:
        if key not in known:
            raise TypeError(f"{where} got an unexpected keyword argument '{key}'")
    missing = [p.name for p in tool.params if p.required and p.name not in arguments]
    if missing:
        quoted = [f"'{m}'" for m in missing]
        if len(quoted) == 1:
            listed = quoted[0]
        elif len(quoted) == 2:
            listed = f"{quoted[0]} and {quoted[1]}"
        else:
            listed = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
        plural = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(f"{where} missing {len(missing)} required positional {plural}: {listed}")
    return arguments


def _plain(value: Any) -> Any:
    # tau2's to_json_str: model dumps are kept as they are; inside plain containers scalars become strings.
    if isinstance(value, Record) or isinstance(value, str) or value is None:
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    raise ValueError(f"Unsupported type: {type(value)}")


def serialise(value: Any) -> str:
    """The tool message content tau2 produces for a return value."""
    if isinstance(value, str):
        return value
    return json.dumps(value if isinstance(value, Record) else _plain(value), default=str)


def parse_arguments(raw: str) -> dict:
    """Decode a tool call's JSON arguments; ValueError with a readable reason otherwise."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON in tool call arguments: {e}") from None
    if not isinstance(value, dict):
        raise ValueError("tool call arguments must be a JSON object")
    return value


class Tau2Environment(Environment):
    """One episode's world: a domain plus its copy-on-write state."""

    def __init__(self, domain: Tau2Domain, state: Any):
        self.domain = domain
        self._state = state
        # the arguments of every call ``execute`` ran, decoded once: JSON text -> value. The scorer reads them
        # here; each tool was given its own copy, since a tool may change what it is given.
        self.parsed: dict[str, dict] = {}

    def agent_tools(self, turn: int = 0) -> list[ToolSpec]:
        return [t.spec for t in self.domain.agent_tools.values()]

    def user_tools(self) -> list[ToolSpec]:
        return [t.spec for t in self.domain.user_tools.values()]

    def call(self, name: str, arguments: dict, requestor: str = "assistant") -> tuple[str, bool]:
        """Execute one call; returns (content, error) as tau2's ``get_response`` would."""
        domain = self.domain
        try:
            if requestor == "user" and not domain.user_tools:
                raise ValueError("User tools not available")
            tool = (domain.user_tools if requestor == "user" else domain.agent_tools).get(name)
            if tool is None:
                raise ValueError(f"Tool '{name}' not found.")
            result = tool.func(self._state, **bind(tool, name, arguments))
        except Exception as e:  # every failure is reported to the caller, as upstream does
            return f"Error: {e}", True
        try:
            return serialise(result), False
        except ValueError as e:
            return f"Error: {e}", True

    def execute(self, call: ToolCall, requestor: str = "assistant") -> ToolOutcome:
        try:
            arguments = parse_arguments(call.arguments)
        except ValueError as e:
            return ToolOutcome(content=f"Error: {e}", error=True)
        self.parsed[call.arguments] = arguments
        content, error = self.call(call.name, copy_tree(arguments), requestor)
        return ToolOutcome(content=content, error=error)

    def has_tool(self, name: str) -> bool:
        return name in self.domain.agent_tools or name in self.domain.user_tools

    def mutates(self, name: str, requestor: Optional[str] = None) -> bool:
        for tools in (self.domain.agent_tools, self.domain.user_tools):
            if name in tools:
                return tools[name].mutates
        return True

    def state(self) -> Any:
        return self._state
