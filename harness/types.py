"""Typed data at the harness boundary: tasks, messages in the OpenAI chat shape, tool specs, scores.

Everything here serialises to plain JSON (``to_dict``) and back (``from_dict``), so trajectories written by
``mua eval`` are exactly what ``mua score`` reads.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, TypeVar

from .errors import ConfigError

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolCall:
    """One function call as the model produced it. ``arguments`` stays the raw JSON string: parsing it (and
    reporting a malformed one back to the agent) is the environment's job, as in the official benchmarks."""

    id: str
    name: str
    arguments: str = "{}"

    def to_dict(self) -> dict:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_dict(cls, d: dict) -> "ToolCall":
        fn = d.get("function") or {}
        args = fn.get("arguments", "{}")
        if not isinstance(args, str):  # some servers send a dict; keep the canonical string form
            args = json.dumps(args, ensure_ascii=False)
        return cls(id=str(d.get("id") or ""), name=str(fn.get("name") or ""), arguments=args)

    def parsed_arguments(self) -> dict:
        """The arguments as a dict; raises ValueError with a readable reason when they are not a JSON object."""
        try:
            value = json.loads(self.arguments) if self.arguments.strip() else {}
        except json.JSONDecodeError as e:
            raise ValueError(f"arguments are not valid JSON: {e}") from None
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value


@dataclass
class Message:
    """A chat message in the OpenAI chat-completions shape. A ``user`` message may carry ``tool_calls``
    (tau2 telecom: the simulated user operates their own phone)."""

    role: Role
    content: Optional[str] = None
    tool_calls: Optional[list[ToolCall]] = None
    tool_call_id: Optional[str] = None
    name: Optional[str] = None

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Message":
        role = d.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            raise ValueError(f"message role must be system, user, assistant or tool, got {role!r}")
        content = d.get("content")
        if isinstance(content, list):  # OpenAI content parts: keep the text parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        calls = d.get("tool_calls") or None
        return cls(
            role=role,
            content=content,
            tool_calls=[ToolCall.from_dict(c) for c in calls] if calls else None,
            tool_call_id=d.get("tool_call_id"),
            name=d.get("name"),
        )

    @property
    def text(self) -> str:
        return self.content or ""


@dataclass
class ToolSpec:
    """A tool the agent (or user) may call, as an OpenAI function JSON schema."""

    name: str
    description: str
    parameters: dict = field(default_factory=lambda: {"type": "object", "properties": {}, "required": []})
    # further fields of the function object that the benchmark's own runner sends (BFCL: "response")
    extra: dict = field(default_factory=dict)

    def to_openai(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters,
                         **self.extra},
        }


@dataclass
class Task:
    """One benchmark task. ``scenario`` is what the user side needs (tau2 user instructions, BFCL turns,
    ACEBench instruction); ``initial_state`` and ``evaluation`` are the benchmark's own records, kept as-is."""

    id: str
    benchmark: str
    subset: str
    scenario: Any = None
    initial_state: Any = None
    evaluation: Any = None
    split: Optional[str] = None
    raw: Any = None  # the original record, kept as read
    context: Any = None  # the adapter's own typed per-task data (a dataclass of its own), see task_context


C = TypeVar("C")


def task_context(task: Task, kind: type[C]) -> C:
    """``task.context`` as the adapter's context type ``kind``; a ConfigError when the task was not built by
    that adapter's ``load_tasks`` (the one way an adapter reads its per-task data)."""
    if not isinstance(task.context, kind):
        raise ConfigError(f"{task.benchmark} task {task.id}: not loaded through its benchmark's load_tasks "
                          f"(no {kind.__name__})")
    return task.context


@dataclass
class Score:
    """A verdict: ``reward`` is the benchmark's own pass measure; ``components`` are named parts (None =
    skipped, e.g. NL assertions without a judge model); ``info`` holds human-readable detail. A score whose
    skipped components could still change it has ``reward`` None: it is counted and flagged, never scored."""

    reward: Optional[float]  # None: unknown, a check the verdict depends on was skipped (never 0 or 1)
    components: dict[str, Optional[float]] = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    # When ``reward`` is None: the reward over the computed components only (training's
    # ``incomplete_scores: keep``); never a verdict.
    partial_reward: Optional[float] = None


@dataclass(frozen=True)
class Finding:
    """One reason an episode scored what it scored, read back from a stored row by ``Benchmark.explain``: the
    score component it concerns (None: the episode as a whole, e.g. an early termination) and one line for
    people (``str(finding)``; ``mua view`` shows it), and what kind of failure it shows (``mua review``)."""

    component: Optional[str]
    text: str
    kind: Optional[str] = None  # what went wrong, one of FAILURE_KINDS (`mua review` classes by it); None: other

    def __str__(self) -> str:
        return self.text


# What went wrong in a failed episode, as `mua review` classes it. An adapter tags each Finding it writes with
# one of these (the harness never reads a benchmark's own keys); the runner's terminations give the budget and
# error-loop classes themselves. Key: the label people see.
WRONG_ACTION = "wrong_action"
WRONG_ARGUMENTS = "wrong_arguments"
STATE_MISMATCH = "state_mismatch"
POLICY_VIOLATION = "policy_violation"
USER_STOPPED_EARLY = "user_stopped_early"
BUDGET_CUT = "budget_cut"
TOOL_ERROR_LOOP = "tool_error_loop"
FAILURE_KINDS = {
    WRONG_ACTION: "wrong or missing action",
    WRONG_ARGUMENTS: "wrong arguments",
    STATE_MISMATCH: "database / end state mismatch",
    POLICY_VIOLATION: "policy violation",
    USER_STOPPED_EARLY: "user stopped early",
    BUDGET_CUT: "budget cut (step or turn limit)",
    TOOL_ERROR_LOOP: "tool error loop",
}


@dataclass
class Usage:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: "Usage") -> None:
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    def to_dict(self) -> dict:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}
