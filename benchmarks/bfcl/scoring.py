"""The official multi-turn checker, replayed from a trajectory (bfcl_eval multi_turn_checker + eval_runner).

* The trajectory is cut into turns at user messages; within a turn every assistant message with tool calls
  is one step. A step whose arguments do not all decode (JSON object) is dropped, as upstream drops steps it
  cannot decode; text-only messages are not steps.
* Fewer (or more) user turns than ground-truth turns: ``multi_turn:force_terminated`` (the agent hit the step
  limit before the last turn, or the task has more answer turns than questions: multi_turn_base_154).
* Per turn, model steps and the turn's ground truth run on two separate worlds. When the ground truth is empty
  nothing is checked (the calls still change state). Otherwise: the turn must have at least one step, the
  public state of every involved instance must equal the ground truth's, and the ground-truth results of the
  turn must all occur (as a multiset) among the model's results of all turns so far.
Tool results recorded in the messages are never trusted: everything is re-executed from the calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from mua.harness.types import (
    BUDGET_CUT,
    STATE_MISMATCH,
    WRONG_ACTION,
    WRONG_ARGUMENTS,
    Finding,
    Message,
    Score,
    Task,
)

from .calls import parse_call
from .data import V4, version_of
from .environment import decode_arguments, new_world
from .world import ApiWorld

Step = list[tuple[str, tuple, dict]]
INFERENCE_ERROR = "inference_error"
# What each checker verdict says went wrong, for `mua review`. A result mismatch with the state right is most
# often a call with other arguments (a missing read-only call gives it too).
KINDS = {"multi_turn:force_terminated": BUDGET_CUT, "multi_turn:empty_turn_model_response": WRONG_ACTION,
         "multi_turn:instance_state_mismatch": STATE_MISMATCH,
         "multi_turn:execution_response_mismatch": WRONG_ARGUMENTS}


@dataclass
class Verdict:
    valid: bool
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    turn: Optional[int] = None
    details: Optional[dict] = None

    def to_score(self) -> Score:
        info: dict[str, Any] = {"valid": self.valid}
        if not self.valid:
            info.update(error_type=self.error_type, error_message=self.error_message, failed_turn=self.turn)
            if self.details:
                info["details"] = self.details
        return Score(reward=1.0 if self.valid else 0.0, components={}, info=info)

    @classmethod
    def from_info(cls, info: dict) -> "Verdict":
        """A stored score's ``info`` read back (the inverse of ``to_score``)."""
        details = info.get("details")
        return cls(valid=bool(info.get("valid", True)), error_type=info.get("error_type"),
                   error_message=info.get("error_message"), turn=info.get("failed_turn"),
                   details=details if isinstance(details, dict) else None)

    def findings(self) -> list[Finding]:
        """The checker's verdict as findings of the episode as a whole (BFCL has no components): its error
        type, the failing turn, the differing instance state or the missing execution results."""
        if self.valid:
            return []
        where = f" at turn {self.turn}" if self.turn is not None else ""
        kind = KINDS.get(self.error_type or "")
        found = [Finding(None, f"{self.error_type}{where}: {self.error_message or ''}", kind)]
        details = self.details or {}
        for attr, diff in (details.get("differences") or {}).items():
            found.append(Finding(None, f"state {attr}: model {diff.get('model')!r}, "
                                       f"ground truth {diff.get('ground_truth')!r}", kind))
        found += [Finding(None, f"missing execution result: {item!r}", kind)
                  for item in details.get("missing_items") or []]
        return found


def turns_from_messages(messages: list[Message]) -> list[list[Step]]:
    turns: list[list[Step]] = []
    for m in messages:
        if m.role == "user":
            turns.append([])
        elif m.role == "assistant" and m.tool_calls and turns:
            try:
                step = [(c.name, (), decode_arguments(c.arguments)) for c in m.tool_calls]
            except (ValueError, RecursionError):
                continue
            turns[-1].append(step)
    return turns


def _gt_steps(calls: list[str]) -> list[tuple[str, tuple, dict]]:
    parsed = [parse_call(c) for c in calls]
    return [(p.name, tuple(p.args), p.kwargs) for p in parsed]


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _state_mismatch(model_world: ApiWorld, gt_world: ApiWorld) -> Optional[tuple[str, dict]]:
    """The first API class (in the ground truth's order) whose state differs, with its differing attributes."""
    for cls, gt_inst in gt_world.instances.items():
        model_inst = model_world.instances[cls]
        diffs = {k: {"model": _short(getattr(model_inst, k)), "ground_truth": _short(v)}
                 for k, v in gt_inst._state().items() if getattr(model_inst, k) != v}
        if diffs:
            return cls, diffs
    return None


def _missing_results(gt_results: list, all_results: list) -> list:
    """The ground-truth results not found among the model's (each model result matches at most once)."""
    remaining = list(all_results)
    missing = []
    for item in gt_results:
        if item in remaining:
            remaining.remove(item)
        else:
            missing.append(item)
    return missing


def check(task: Task, turns: list[list[Step]], data_dir: Path) -> Verdict:
    truth: list[list[str]] = task.evaluation or []
    if len(turns) != len(truth):
        return Verdict(False, "multi_turn:force_terminated",
                       f"Model was force-terminated during inference phase. The length of the model result turns "
                       f"({len(turns)}) does not match the length of the ground truth turns ({len(truth)}).")
    model_world, gt_world = new_world(task, data_dir), new_world(task, data_dir)
    all_results: list[str] = []
    for t, (steps, gt_calls) in enumerate(zip(turns, truth)):
        for step in steps:
            all_results.extend(model_world.call(n, a, k) for n, a, k in step)
        gt_results = [gt_world.call(n, a, k) for n, a, k in _gt_steps(gt_calls)]
        if not gt_calls:
            continue
        if not steps:
            return Verdict(False, "multi_turn:empty_turn_model_response",
                           f"Model response list is empty for turn {t}", t)
        mismatch = _state_mismatch(model_world, gt_world)
        if mismatch is not None:
            cls, diffs = mismatch
            return Verdict(False, "multi_turn:instance_state_mismatch",
                           f"Model instance for {cls} does not match the state with ground truth instance.",
                           t, {"differences": diffs})
        missing = _missing_results(gt_results, all_results)
        if missing:
            return Verdict(False, "multi_turn:execution_response_mismatch",
                           f"Model response execution results so far does not contain all the ground truth "
                           f"response execution results for turn {t}.", t,
                           {"missing_items": [_short(x) for x in missing]})
    return Verdict(True)


def score_messages(task: Task, messages: list[Message], data_dir: Path,
                   termination: Optional[str] = None) -> Score:
    """``termination`` "inference_error" (an official result that is an error text, not turns): v4 reports it
    as such; v3's checker went on to report force_terminated, which the empty trajectory gives."""
    if termination == INFERENCE_ERROR and version_of(task) == V4:
        return Verdict(False, "multi_turn:inference_error",
                       "Error during inference phase. Model did not output a list of model responses.").to_score()
    return check(task, turns_from_messages(messages), data_dir).to_score()
