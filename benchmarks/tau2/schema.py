"""Tool schemas in the exact JSON form tau2 sends to the model.

tau2 builds a pydantic model named ``parameters`` from each tool function's signature and docstring and sends
``model_json_schema()``: each property carries ``description``, ``title`` (the name title-cased, ``_`` -> space)
and its type; keys inside a property and at the top level are sorted, property order follows the signature;
``required`` is omitted when empty; argument models appear under ``$defs``.
"""
from __future__ import annotations

from typing import Optional

STRING = {"type": "string"}
INTEGER = {"type": "integer"}
STRING_LIST = {"type": "array", "items": {"type": "string"}}


def model_list(model: str) -> dict:
    """A ``List[Model | dict]`` argument (airline): a reference to the model or any object."""
    return {"type": "array", "items": {"anyOf": [{"$ref": f"#/$defs/{model}"},
                                                 {"additionalProperties": True, "type": "object"}]}}


def object_schema(fields: list[tuple[str, dict, bool]], docs: dict, name: str,
                  defs: Optional[dict] = None) -> dict:
    """The schema of the model ``name``: ``fields`` are (name, type schema, required) in signature order,
    ``docs`` maps a field to its description."""
    props = {}
    for field, schema, _ in fields:
        prop = dict(schema, title=field.title().replace("_", " "))
        if docs.get(field) is not None:
            prop["description"] = docs[field]
        props[field] = dict(sorted(prop.items()))
    out: dict = {"properties": props}
    required = [f for f, _, req in fields if req]
    if required:
        out["required"] = required
    out["title"] = name
    out["type"] = "object"
    if defs:
        out = {"$defs": defs, **out}
    return out


def model_def(name: str, fields: list[tuple[str, dict]], docs: dict) -> dict:
    """The ``$defs`` entry of an argument model (all fields required strings/integers in tau2's models)."""
    return object_schema([(f, s, True) for f, s in fields], docs, name)

