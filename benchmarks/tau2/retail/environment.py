"""The retail domain: its database (loaded once), policy and tools (declared in ``tools.py``)."""
from __future__ import annotations

from ..json_domain import JsonDbDomain
from . import data_model, tools


class RetailDomain(JsonDbDomain):
    name = "retail"
    build_tools = staticmethod(tools.TOOLS.build)
    tables = data_model.TABLES
