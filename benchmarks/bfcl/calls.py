"""Python call strings (BFCL ground truth and prompting-mode output) parsed without evaluating anything.

``"cd(folder='document')"`` -> ParsedCall("cd", [], {"folder": "document"}). Only literal arguments are
accepted (strings, numbers, booleans, None, lists, tuples, dicts, sets, negative numbers): an AST walk with
``ast.literal_eval`` on each argument node; anything else is a CallSyntaxError.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

MAX_SOURCE_CHARS = 1_000_000  # refuse absurd inputs before parsing


class CallSyntaxError(ValueError):
    """The text is not a call (or list of calls) with literal arguments."""


@dataclass
class ParsedCall:
    name: str
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise CallSyntaxError("the called thing is not a plain function name")


def _call(node: ast.AST) -> ParsedCall:
    if not isinstance(node, ast.Call):
        raise CallSyntaxError("not a function call")
    name = _dotted(node.func)
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise CallSyntaxError("**kwargs are not supported")
            kwargs[kw.arg] = ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as e:
        raise CallSyntaxError(f"argument is not a literal: {e}") from None
    return ParsedCall(name, args, kwargs)


def _parse(text: str) -> ast.expr:
    if not isinstance(text, str) or len(text) > MAX_SOURCE_CHARS:
        raise CallSyntaxError("not a string of reasonable size")
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise CallSyntaxError(f"not valid Python: {e}") from None


def parse_call(text: str) -> ParsedCall:
    """One call string, as in the possible_answer files."""
    return _call(_parse(text.strip()))


def parse_call_list(text: str) -> list[ParsedCall]:
    """A prompting-mode model output such as ``[cd(folder='a'), ls()]``: surrounding backticks, newlines and
    spaces are stripped and the brackets added when missing (as BFCL's default prompting decoder does)."""
    body = text.strip("`\n ") if isinstance(text, str) else text
    if isinstance(body, str):
        if not body.startswith("["):
            body = "[" + body
        if not body.endswith("]"):
            body = body + "]"
    node = _parse(body)
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise CallSyntaxError("not a list of calls")
    return [_call(elt) for elt in node.elts]
