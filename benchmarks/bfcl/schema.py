"""BFCL function docs -> OpenAI function schemas, the way BFCL's FC handlers present them.

Gorilla type names map to JSON-schema ones (dict -> object, float -> number with format float and a note in
the description, tuple -> array, unknown -> string), recursively through properties and items; the Python
hint from protocol_constants.json is appended to every description (once; upstream's OpenAI handler appends it
a second time to the original tools at a miss_func holdout turn, a side effect we do not copy).
"""
from __future__ import annotations

import copy

from mua.harness.types import ToolSpec

_TYPES = {"integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
          "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object",
          "tuple": "array", "any": "string", "byte": "integer", "short": "integer", "long": "integer",
          "double": "number", "char": "string"}
FLOAT_NOTE = " This is a float type value."


def _cast(schema: dict) -> dict:
    kind = schema.get("type")
    if kind is None:
        schema["type"] = "string"
    else:
        if kind == "float":
            schema["format"] = "float"
            schema["description"] = schema.get("description", "") + FLOAT_NOTE
        schema["type"] = _TYPES.get(kind, "string")
    if schema["type"] in ("array", "object"):
        if isinstance(schema.get("properties"), dict):
            schema["properties"] = {k: _cast(v) for k, v in schema["properties"].items()}
        elif isinstance(schema.get("items"), dict):
            schema["items"] = _cast(schema["items"])
    return schema


def tool_spec(doc: dict, hint: str) -> ToolSpec:
    params = copy.deepcopy(doc.get("parameters") or {})
    props = {k: _cast(v) for k, v in (params.get("properties") or {}).items()}
    schema = {"type": "object", "properties": props, "required": list(params.get("required") or [])}
    # bfcl_eval's convert_to_tool keeps the doc's "response" schema, unconverted, for OpenAI-style models
    extra = {"response": copy.deepcopy(doc["response"])} if "response" in doc else {}
    return ToolSpec(name=doc["name"], description=doc.get("description", "") + hint, parameters=schema,
                    extra=extra)
