"""Shared base of the domains whose database is one db.json (retail, airline): parsed once, shared read-only,
and given to each episode as a copy-on-write :class:`Overlay`."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, ClassVar, Mapping

from mua.harness.io.datafiles import load_json, load_text

from ..records import build_record, check_object
from .domain import Record, Tau2Domain, ToolDef
from .overlay import Overlay


class JsonDbDomain(Tau2Domain):
    build_tools: ClassVar[Callable[[], dict[str, ToolDef]]]
    # db.json's tables ({id: record} each, all required as in upstream's DB model) -> record normaliser
    tables: ClassVar[Mapping[str, Callable[[dict], Record]]]

    def __init__(self, policy: str, base: dict):
        super().__init__(policy=policy, agent_tools=type(self).build_tools())
        self.base = base

    @classmethod
    def load(cls, data_dir: Path) -> "JsonDbDomain":
        """The policy, and db.json checked (DataError naming the file and what is wrong) and normalised."""
        folder = f"tau2/domains/{cls.name}"
        policy = load_text(data_dir, f"{folder}/policy.md")
        relpath = f"{folder}/db.json"
        raw = check_object(load_json(data_dir, relpath), relpath, dict.fromkeys(cls.tables, dict))
        return cls(policy, {table: {key: build_record(make, record, f"{relpath}, {table}/{key}")
                                    for key, record in raw[table].items()}
                            for table, make in cls.tables.items()})

    def new_state(self) -> Overlay:
        return Overlay(self.base)

    def fingerprint(self, state: Overlay) -> tuple:
        return state.fingerprint()
