"""Tools declared once: a plain function ``fn(state, arg: type, ...)`` is the tool's dispatch, and its signature
is its schema (parameter names, order, JSON types from the annotations, which are required, defaults).

Shared by tau2's domains and by packs (``benchmarks/pack/tooldefs.py``), which differ only in where the text
the model reads comes from: a tau2 domain keeps upstream's descriptions as data (``<domain>/tool_docs.py``,
which also gives upstream's tool order) and registers each implementation with its :class:`Toolkit`'s
``tool`` decorator; a pack's author writes them as docstrings (:func:`docstring_text`).

Annotations say what the model is told to send; arguments still arrive unvalidated, as upstream calls its
toolkits with the model's raw JSON values. A parameter type that the table below cannot spell (tau2's
argument models and ``anyOf`` forms) is written ``Annotated[T, Schema({...}, defs)]``.
"""
from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Literal, Mapping, Optional

from mua.harness.errors import DataError
from mua.harness.types import ToolSpec

from .domain import Param, ToolDef
from .schema import object_schema

Field = tuple[str, dict, bool]  # (name, JSON schema, required), in signature order

_SCALARS: dict[Any, dict] = {str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
                             bool: {"type": "boolean"}, dict: {"type": "object"}, list: {"type": "array"}}


@dataclass(frozen=True)
class Schema:
    """A parameter's JSON schema spelled out, with the ``$defs`` entries it refers to."""

    schema: dict
    defs: Mapping[str, dict] = field(default_factory=dict)


def _schema(annotation: Any, where: str, defs: dict) -> dict:
    if typing.get_origin(annotation) is Annotated:
        spelled = next((a for a in typing.get_args(annotation)[1:] if isinstance(a, Schema)), None)
        if spelled is not None:
            defs.update(spelled.defs)
            return dict(spelled.schema)
        annotation = typing.get_args(annotation)[0]
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal and all(isinstance(a, str) for a in args):
        return {"enum": list(args), "type": "string"}
    if origin is list:
        return {"type": "array", "items": _schema(args[0], where, defs)} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    raise DataError(f"{where}: unsupported type {annotation!r} (use str, int, float, bool, list[...] or dict)")


def signature_fields(fn: Callable, where: str, defaults: bool = True) -> tuple[list[Field], dict]:
    """The parameters after the first (the state) as schema fields, and the ``$defs`` they use. ``defaults``:
    a parameter's default value goes into its schema (as pydantic writes it for tau2)."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as e:
        raise DataError(f"{where}: unreadable type annotations ({e})") from None
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        raise DataError(f"{where}: the first parameter must be the database (db)")
    fields: list[Field] = []
    defs: dict = {}
    for p in params[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise DataError(f"{where}: parameter {p.name}: *args/**kwargs are not supported")
        if p.name not in hints:
            raise DataError(f"{where}: parameter {p.name} needs a type annotation")
        schema = _schema(hints[p.name], f"{where}, parameter {p.name}", defs)
        required = p.default is p.empty
        if defaults and not required:
            schema["default"] = p.default
        fields.append((p.name, schema, required))
    return fields, defs


def docstring_text(doc: Optional[str]) -> tuple[str, dict[str, str]]:
    """A docstring as (description, {parameter: description}): the text up to an ``Args:`` section, whose
    ``name: text`` lines describe the parameters."""
    head, _, args = inspect.cleandoc(doc or "").partition("Args:")
    params = {}
    for line in args.splitlines():
        name, sep, text = line.strip().partition(":")
        if sep and name.isidentifier():
            params[name] = text.strip()
    return " ".join(head.split()), params


def make_tool(fn: Callable, name: str, description: str, docs: Mapping[str, str], owner: str, kind: str,
              where: str, defaults: bool = True, call: Optional[Callable] = None) -> ToolDef:
    """One tool from its implementation: schema from the signature, ``call`` (default ``fn``) dispatches."""
    fields, defs = signature_fields(fn, where, defaults)
    spec = ToolSpec(name=name, description=description,
                    parameters=object_schema(fields, dict(docs), "parameters", defs or None))
    return ToolDef(spec=spec, func=call or fn, params=tuple(Param(f, req) for f, _, req in fields), owner=owner,
                   mutates=kind == "write", kind=kind)


class Toolkit:
    """One upstream toolkit (e.g. ``RetailTools``): implementations register with ``@toolkit.tool(kind)``;
    ``docs`` holds upstream's description of each tool, ``(description, {parameter: description})``, in
    upstream's tool order, which is the order the model sees them in."""

    def __init__(self, owner: str, docs: Mapping[str, tuple[str, Mapping[str, str]]]):
        self.owner, self.docs = owner, docs
        self._registered: dict[str, tuple[Callable, str]] = {}

    def tool(self, kind: str = "read", name: Optional[str] = None) -> Callable[[Callable], Callable]:
        """Register the decorated function as the tool ``name`` (default: the function's name); ``kind`` is
        tau2's ToolType (read / write / generic), and only "write" tools change the state."""
        def register(fn: Callable) -> Callable:
            self._registered[name or fn.__name__] = (fn, kind)
            return fn
        return register

    def build(self, wrap: Callable[[Callable], Callable] = lambda fn: fn) -> dict[str, ToolDef]:
        """Every tool, in upstream's order; ``wrap`` wraps each implementation's dispatch (telecom syncs the
        phone after each call)."""
        documented, registered = set(self.docs), set(self._registered)
        if documented != registered:
            raise TypeError(f"{self.owner}: tools documented but not implemented: {sorted(documented - registered)}"
                            f"; implemented but not documented: {sorted(registered - documented)}")
        tools = {}
        for name, (description, param_docs) in self.docs.items():
            fn, kind = self._registered[name]
            tools[name] = make_tool(fn, name, description, param_docs, self.owner, kind,
                                    where=f"{self.owner}.{name}", call=wrap(fn))
        return tools
