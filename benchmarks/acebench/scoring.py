"""The official ACEBench agent evaluation: end-state check and process score.

End state (upstream ``eval_main.agent_eval`` + ``checker.agent_checker``), kept with its quirks:
- the number of saved classes must equal the number of expected classes;
- each expected class is compared with the first saved class having the same key set (the class name); when
  none matches, the previous comparison's verdict is reused (so a misspelt expected class such as
  ``ReminderAPI`` passes when the others do);
- for a matched class every SAVED attribute must exist in the expectation; dict-valued expectations are checked
  key by key over the EXPECTED keys only (extra saved entries pass); other values must be equal.
Process (``agent_eval_process``): the milestones, in order, must appear as a subsequence of the agent's call
messages (compared as stripped texts); the score is the matched fraction, rounded to 3 decimals; with
alternative milestone lists the best alternative counts; a correct end state forces 1.0.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from mua.harness.types import STATE_MISMATCH, WRONG_ACTION, Finding, Message

from .calls import render_call


@dataclass
class EndStateVerdict:
    valid: bool
    errors: list[str] = field(default_factory=list)
    error_type: str = ""


@dataclass
class AceFindings:
    """The ``info`` an ACEBench score stores, and how a stored one is explained (one definition of its keys)."""

    end_state_errors: list
    error_type: str
    process_calls: list[str]

    def to_info(self) -> dict:
        return {"end_state_errors": self.end_state_errors, "error_type": self.error_type,
                "process_calls": self.process_calls}

    @classmethod
    def from_info(cls, info: dict) -> "AceFindings":
        def listed(value: Any) -> list:
            return value if isinstance(value, list) else []
        return cls(listed(info.get("end_state_errors")), str(info.get("error_type") or ""),
                   listed(info.get("process_calls")))

    def findings(self, components: dict[str, Optional[float]]) -> list[Finding]:
        """The end-state check's errors and the process score (the share of milestones the calls in
        ``process_calls`` reached)."""
        found = []
        if components.get("end_state") == 0.0:
            found.append(Finding("end_state", f"end state wrong: {self.error_type or 'state differs'}", STATE_MISMATCH))
            for errors in self.end_state_errors:
                found += [Finding("end_state", f"  {e}", STATE_MISMATCH)
                          for e in (errors if isinstance(errors, list) else [errors])]
        process = components.get("process")
        if isinstance(process, (int, float)) and process < 1.0:
            found.append(Finding("process", f"process: {process:g} of the milestones reached by the calls made "
                                            f"({len(self.process_calls)} calls)", WRONG_ACTION))
        return found


def check_end_state(saved: list[dict], expected: Any) -> EndStateVerdict:
    expected_list = expected if isinstance(expected, list) else [expected]
    if len(expected_list) != len(saved):
        return EndStateVerdict(False, [], "wrong number of class")
    verdict = EndStateVerdict(True)
    last: dict[str, Any] = {"valid": True, "errors": [], "error_type": ""}
    for exp in expected_list:
        match = next((s for s in saved if set(s.keys()) == set(exp.keys())), None)
        if match:
            last = _check_class(match, exp)
        if not last["valid"]:
            verdict.valid = False
            verdict.errors.append(last["errors"])
            verdict.error_type = last["error_type"]
    return verdict


def _check_class(saved: dict, expected: dict) -> dict:
    result: dict[str, Any] = {"valid": True, "errors": [], "error_type": "class attributes wrong"}
    name = next(iter(expected))
    want = next(iter(expected.values()))
    have = next(iter(saved.values()))
    for attr, value in have.items():
        if attr not in want:
            result["valid"] = False
            result["errors"].append(f"class({name}) attributes({attr}) missing in possible_answer.")
            continue
        target = want[attr]
        if isinstance(target, dict):
            for key, expected_value in target.items():
                if key not in value:
                    result["valid"] = False
                    result["errors"].append(f"class({name}) attributes({attr}) wrong, "
                                            f"[expected: {target}, real: {value}]")
                elif expected_value != value[key]:
                    result["valid"] = False
                    result["errors"].append(f"class({name}) attributes({attr}.{key}) wrong, "
                                            f"[expected: {expected_value}, real: {value[key]}]")
        elif target != value:
            result["valid"] = False
            result["errors"].append(f"class({name}) attributes({attr}) wrong, [expected: {target}, real: {value}]")
    return result


def process_score(process: list[str], milestones: list, end_state_ok: bool) -> float:
    if end_state_ok:
        return 1.0
    if milestones and isinstance(milestones[0], list):
        return max(_matched_fraction(process, alt) for alt in milestones)
    return _matched_fraction(process, milestones)


def _matched_fraction(process: list[str], milestones: list[str]) -> float:
    if not milestones:
        return 1.0
    matched = 0
    pos = 0
    for stone in milestones:
        while pos < len(process):
            pos += 1
            if process[pos - 1].strip() == stone.strip():
                matched += 1
                break
    return round(matched / len(milestones), 3)


def render_tool_message(message: Message) -> str:
    """An assistant message's tool calls in the official text form ``[f(a=1), g(b='x')]``."""
    parts = []
    for call in message.tool_calls or []:
        try:
            parts.append(render_call(call.name, call.parsed_arguments()))
        except ValueError:  # malformed arguments: keep them as written; they can never match a milestone
            parts.append(f"{call.name}({call.arguments})")
    return "[" + ", ".join(parts) + "]"


def canonical(value: Any) -> str:
    """Stable text of a state, for tests and info fields."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
