"""Copy-on-write database state: a per-episode overlay of changed records over a shared, read-only base.

A database is ``{table: {key: record}}`` (records are JSON-like dicts/lists). Starting an episode creates an
empty overlay; a tool that is about to modify a record asks for it with :meth:`Overlay.for_write`, which
copies just that record into the overlay. Reads see the overlay's copy when there is one, else the base.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, Optional

from .domain import copy_tree

_NO_DEFAULT = object()


class Overlay:
    __slots__ = ("base", "changed")

    def __init__(self, base: dict[str, dict[str, Any]]):
        self.base = base
        self.changed: dict[str, dict[str, Any]] = {}

    def has(self, table: str, key: Any) -> bool:
        # Plain dict membership on purpose: an unhashable key raises TypeError exactly as upstream's lookup does.
        own = self.changed.get(table)
        return (own is not None and key in own) or key in self.base[table]

    def get(self, table: str, key: Any, default: Any = _NO_DEFAULT) -> Any:
        """The current record (read-only: never mutate it; use for_write). When absent: ``default`` if given,
        else KeyError."""
        own = self.changed.get(table)
        if own is not None and key in own:
            return own[key]
        if default is _NO_DEFAULT:
            return self.base[table][key]
        return self.base[table].get(key, default)

    def for_write(self, table: str, key: Any) -> Any:
        """The record, copied into this overlay first if it still is the shared base record."""
        own = self.changed.setdefault(table, {})
        if key not in own:
            own[key] = copy_tree(self.base[table][key])
        return own[key]

    def insert(self, table: str, key: str, record: Any) -> None:
        self.changed.setdefault(table, {})[key] = record

    def keys(self, table: str) -> Iterator[str]:
        """Keys in upstream dict order: base order (updated records keep their place), then new keys."""
        yield from self.base[table]
        own = self.changed.get(table)
        if own:
            yield from (k for k in own if k not in self.base[table])

    def items(self, table: str) -> Iterator[tuple[str, Any]]:
        own = self.changed.get(table)
        if not own:  # the common case, and lookups scan whole tables: straight from the base
            yield from self.base[table].items()
            return
        for key in self.keys(table):
            yield key, own[key] if key in own else self.base[table][key]

    def unchanged(self, table: str) -> Optional[dict[str, Any]]:
        """The shared base table when this episode changed none of its records (lookups may then use an index
        built once over the base), else None."""
        return None if self.changed.get(table) else self.base[table]

    def values(self, table: str) -> Iterator[Any]:
        return (record for _, record in self.items(table))

    def fingerprint(self) -> tuple:
        """The records that differ from the base, as canonical JSON (type-exact, like tau2's DB hash:
        ``10`` and ``10.0`` differ). Two overlays over one base hold equal databases iff fingerprints match."""
        out = []
        for table in sorted(self.changed):
            base = self.base[table]
            for key, record in self.changed[table].items():
                text = json.dumps(record, sort_keys=True, default=str)
                if key in base and json.dumps(base[key], sort_keys=True, default=str) == text:
                    continue
                out.append((table, key, text))
        return tuple(sorted(out))

