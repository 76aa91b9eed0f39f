"""Shared base of the domains whose database is one db.json (retail, airline): parsed once, shared read-only,
and given to each episode as a copy-on-write :class:`Overlay`."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, ClassVar

from mua.harness.datafiles import load_json, require_file

from .domain import Tau2Domain, ToolDef
from .overlay import Overlay


class JsonDbDomain(Tau2Domain):
    build_tools: ClassVar[Callable[[], dict[str, ToolDef]]]
    normalise_db: ClassVar[Callable[[dict], dict]]

    def __init__(self, policy: str, base: dict):
        super().__init__(policy=policy, agent_tools=type(self).build_tools())
        self.base = base

    @classmethod
    def load(cls, data_dir: Path) -> "JsonDbDomain":
        folder = f"tau2/domains/{cls.name}"
        policy = require_file(data_dir, f"{folder}/policy.md").read_text(encoding="utf-8")
        return cls(policy, cls.normalise_db(load_json(data_dir, f"{folder}/db.json")))

    def new_state(self) -> Overlay:
        return Overlay(self.base)

    def fingerprint(self, state: Overlay) -> tuple:
        return state.fingerprint()
