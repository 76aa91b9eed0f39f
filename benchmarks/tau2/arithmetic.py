"""tau2's ``calculate`` tool without ``eval``: the same character filter, Python's own arithmetic on an AST walk,
then ``str(round(float(value), 2))``. Syntax errors carry the text Python's ``eval`` would give (the source is
compiled under the same ``<string>`` name)."""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

ALLOWED_CHARS = set("0123456789+-*/(). ")
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_EXPONENT = 10_000  # upstream would compute e.g. 9**9**9 for minutes; mua refuses such a power instead


def _value(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Tuple):  # "()" evaluates to an empty tuple upstream; float() then rejects it
        return tuple(_value(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > _MAX_EXPONENT \
                and isinstance(left, (int, float)) and abs(left) > 1:
            raise OverflowError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    raise ValueError("Invalid expression")


def calculate(expression: str) -> str:
    if not all(char in ALLOWED_CHARS for char in expression):
        raise ValueError("Invalid characters in expression")
    # upstream evaluates the text, which skips leading spaces and tabs; ast.parse does not, so strip them
    tree = ast.parse(expression.lstrip(" \t"), filename="<string>", mode="eval")
    return str(round(float(_value(tree.body)), 2))
