"""Seed derivation for episodes, turns and requests: one stable function, shared by eval and training."""
from __future__ import annotations

import hashlib

MAX_SEED = 2**63 - 1  # a run seed a sweep file or config may give: beyond it, a mistake


def derive_seed(*parts: object) -> int:
    """A 31-bit seed from ``parts`` (their text joined by NUL), independent of Python's hash seed and of the
    order in which episodes are scheduled."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def turn_seed(episode: int, turn: int) -> int:
    """The seed of request ``turn`` (0-based) of a model inside one episode: distinct per turn, so a sampling
    model does not repeat itself, and the same on every rerun."""
    return derive_seed(episode, turn)
