"""The airline domain: its database (loaded once), policy and tools (declared in ``tools.py``)."""
from __future__ import annotations

from ..json_domain import JsonDbDomain
from . import data_model, tools


class AirlineDomain(JsonDbDomain):
    name = "airline"
    build_tools = staticmethod(tools.TOOLS.build)
    tables = data_model.TABLES
