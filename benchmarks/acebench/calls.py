"""Call strings in ACEBench's text form: ``[name(k=v, ...), ...]``.

Two directions:
- parsing the possible-answer milestones into structured calls (for the gold agent), by walking the Python AST
  and reading literal values only; nothing is ever evaluated;
- rendering structured tool calls back into the official text form ``name(k=repr(v), ...)`` for the process
  score, which compares texts.

A few upstream milestones are not valid Python (a trailing space after the closing bracket, apostrophes inside a
single-quoted string such as ``'Don't forget'``). The parser repairs exactly those two defects so the gold agent
issues the intended call; the process score still compares against the raw milestone text, as upstream does.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

_CLOSERS = ",)}]:"


@dataclass
class ParsedCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)


class CallSyntaxError(ValueError):
    """The text is not a list of calls with literal keyword arguments."""


def render_call(name: str, args: dict[str, Any]) -> str:
    """``name(k=repr(v), ...)`` with the arguments in their given order."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def render_message(calls: list[ParsedCall]) -> str:
    """One agent message as the official text form: all its calls in one bracketed list."""
    return "[" + ", ".join(render_call(c.name, c.args) for c in calls) + "]"


def parse_calls(text: str) -> list[ParsedCall]:
    """Calls in ``[f(a=1), g(b='x')]`` (brackets optional). Raises CallSyntaxError."""
    body = text.strip()
    if body.startswith("["):
        body = body[1:]
    if body.endswith("]"):
        body = body[:-1]
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError:
        try:
            tree = ast.parse(_repair_quotes(body), mode="eval")
        except SyntaxError as e:
            raise CallSyntaxError(f"not a call list: {e.msg}") from None
    node = tree.body
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return [_call(el) for el in elements]


def _call(node: ast.AST) -> ParsedCall:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallSyntaxError("every element must be a call of a plain function name")
    if node.args:
        raise CallSyntaxError(f"{node.func.id}: positional arguments are not supported")
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise CallSyntaxError(f"{node.func.id}: **kwargs is not supported")
        try:
            args[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise CallSyntaxError(f"{node.func.id}: argument {kw.arg} is not a literal") from None
    return ParsedCall(node.func.id, args)


def _repair_quotes(text: str) -> str:
    """Escape quote characters that sit inside a string literal of the same quote (``'Don't'``): a quote closes
    the literal only when the next non-space character ends a value (``, ) } ] :``) or the text ends."""
    out: list[str] = []
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None:
            if ch in "'\"":
                quote = ch
            out.append(ch)
        elif ch == "\\" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 1
        elif ch == quote:
            rest = text[i + 1:].lstrip()
            if not rest or rest[0] in _CLOSERS:
                quote = None
                out.append(ch)
            else:
                out.append("\\" + ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)
