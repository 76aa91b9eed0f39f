"""What tau2's checks found: the one definition of the ``info`` a tau2 score stores and of how it is explained.

The scorer fills a :class:`Tau2Findings` and stores ``to_info()``; ``Tau2Benchmark.explain`` reads a stored row
back with ``from_info`` and turns it into per-component findings, so the keys are written in one place. Field
order is the stored key order (unset fields are left out), which keeps result lines byte-identical.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional

from mua.harness.types import POLICY_VIOLATION, STATE_MISMATCH, WRONG_ACTION, Finding


@dataclass
class Tau2Findings:
    termination: Optional[str] = None
    note: Optional[str] = None  # why no check ran (premature termination, no criteria)
    db_match: Optional[bool] = None  # final state equals the gold actions' (DB and ENV_ASSERTION bases)
    env_assertions_failed: Optional[list] = None
    communicate_missing: Optional[list] = None  # communicate_info never said
    actions_unmatched: Optional[list] = None  # gold action ids no call matched
    nl_assertions: Optional[list] = None  # the judge's verdicts, one dict per assertion
    skipped: Optional[list] = None  # components left unscored (no judge)
    incomplete: Optional[bool] = None

    def to_info(self) -> dict:
        return {f.name: value for f in fields(self) if (value := getattr(self, f.name)) is not None}

    @classmethod
    def from_info(cls, info: dict) -> "Tau2Findings":
        """A stored ``info`` (old rows too); unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in info.items() if k in known})

    def findings(self) -> list[Finding]:
        out = [Finding(None, str(self.note))] if self.note else []
        if self.db_match is False:
            out.append(Finding("db", "database: the final state differs from the one the gold actions produce",
                               STATE_MISMATCH))
        out += [Finding("env_assertion", f"environment assertion failed: {a}", STATE_MISMATCH)
                for a in _items(self.env_assertions_failed)]
        out += [Finding("communicate", f"never told the user: {c!r}") for c in _items(self.communicate_missing)]
        out += [Finding("action", f"gold action not matched: {a}", WRONG_ACTION)
                for a in _items(self.actions_unmatched)]
        for result in _items(self.nl_assertions):
            if isinstance(result, dict) and not result.get("met", True):
                out.append(Finding("nl_assertion", f"NL assertion not met: {result.get('nl_assertion')}: "
                                                   f"{result.get('justification', '')}", POLICY_VIOLATION))
        out += [Finding(str(name), f"{name}: not computed (no judge model), reward unknown")
                for name in _items(self.skipped)]
        return out


def _items(value: Any) -> list:
    return value if isinstance(value, list) else []

