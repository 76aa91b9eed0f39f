"""One telecom episode's world: the carrier's records (agent side) and the user's phone and surroundings.

The telecom databases are tiny (9 lines, 6 bills, one phone), so an episode starts from a structural copy of
the parsed base (about 0.1 ms, measured in tests/benchmarks/tau2/telecom/test_environment.py) instead of a
copy-on-write overlay.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..domain import Record, copy_tree


@dataclass
class TelecomState:
    db: dict  # plans, customers, lines, bills, devices: lists of Records, as TelecomDB
    user: dict  # {"device": MockPhoneAttributes, "surroundings": UserSurroundings}
    new_bills: int = field(default=0)  # draft bills created so far (deterministic ids, see tools)
    # Upstream connects every VPN to one shared details object, which break_vpn degrades: reconnecting later in
    # the episode gives the degraded server again. Kept per episode here (upstream leaks it across episodes).
    vpn_server_performance: str = field(default="excellent")

    @classmethod
    def fresh(cls, db: dict, user: dict) -> "TelecomState":
        return cls(db=copy_tree(db), user=copy_tree(user))

    @property
    def device(self) -> Record:
        return self.user["device"]

    @property
    def surroundings(self) -> Record:
        return self.user["surroundings"]

    def fingerprint(self) -> tuple[str, str]:
        """Canonical JSON of both databases: equal exactly when tau2's agent and user DB hashes are equal
        (type-exact like tau2's hash of ``model_dump()``: 2 and 2.0 differ)."""
        return (json.dumps(self.db, sort_keys=True, default=str), json.dumps(self.user, sort_keys=True, default=str))
