"""Each tau2 tool is declared once, by its implementation: schema from the signature, description from
upstream's text kept as data, dispatch from the function; packs use the same mechanism. That the schemas
sent to the model stay upstream's is checked against the official requests (test_official_requests.py) and
the tool fixtures (test_tools.py)."""
from __future__ import annotations

import inspect
from typing import Annotated, Literal

import pytest

from mua.benchmarks.tau2.airline import tools as airline_tools
from mua.benchmarks.tau2.retail import tools as retail_tools
from mua.benchmarks.tau2.telecom import tools as telecom_tools
from mua.benchmarks.tau2.telecom import user_tools as telecom_user_tools
from mua.benchmarks.tau2.toolkit import Schema, Toolkit, signature_fields
from mua.harness.errors import DataError

TOOLKITS = [retail_tools.TOOLS, airline_tools.TOOLS, telecom_tools.TOOLS, telecom_user_tools.USER_TOOLS]


@pytest.mark.parametrize("toolkit", TOOLKITS, ids=lambda t: t.owner)
def test_schema_parameters_are_the_signature(toolkit):
    for name, tool in toolkit.build().items():
        signature = list(inspect.signature(toolkit._registered[name][0]).parameters)[1:]
        assert list(tool.spec.parameters["properties"]) == signature == [p.name for p in tool.params]
        assert tool.spec.description == toolkit.docs[name][0]  # upstream's text, from the data


def test_a_tool_documented_but_not_implemented_fails_at_build():
    kit = Toolkit("DemoTools", {"a": ("A.", {}), "b": ("B.", {})})

    @kit.tool("read")
    def a(db):
        return 1

    @kit.tool("write")
    def c(db):
        return 2

    with pytest.raises(TypeError, match=r"DemoTools: tools documented but not implemented: \['b'\]; "
                                        r"implemented but not documented: \['c'\]"):
        kit.build()


SPELLED = Schema({"type": "array", "items": {"$ref": "#/$defs/M"}}, {"M": {"title": "M"}})


def test_signature_types():
    def tool(db, a: str, b: list[str], c: Literal["x", "y"], d: Annotated[list, SPELLED], e: int = 12):
        return None

    fields, defs = signature_fields(tool, "tool")
    assert fields == [("a", {"type": "string"}, True), ("b", {"type": "array", "items": {"type": "string"}}, True),
                      ("c", {"enum": ["x", "y"], "type": "string"}, True),
                      ("d", {"type": "array", "items": {"$ref": "#/$defs/M"}}, True),
                      ("e", {"type": "integer", "default": 12}, False)]
    assert defs == {"M": {"title": "M"}}
    assert signature_fields(tool, "tool", defaults=False)[0][-1] == ("e", {"type": "integer"}, False)


def test_unsupported_type_is_one_line():
    def tool(db, a: set):
        return None

    with pytest.raises(DataError, match="tool, parameter a: unsupported type"):
        signature_fields(tool, "tool")
