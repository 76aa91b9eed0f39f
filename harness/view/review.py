"""``mua review RUN``: every failed episode of a run put in one class by what went wrong, a table per class
linked into the run's `mua view` page, and, where a judge model is given, its free-text reason per episode.

The class comes from what the scorer found, read through ``Benchmark.explain`` (each ``Finding`` carries a
kind from ``types.FAILURE_KINDS``; the harness never reads a benchmark's own keys), and from what the runner
itself knows: a step or turn budget that ended the episode, too many tool errors, the same call failing over
and over, the user leaving while the agent was asking. When several kinds are found the first in
:data:`PRECEDENCE` names the class (the cause before its effect: a wrong call before the state it left);
every kind found is listed beside it. Errored episodes and unknown (null) rewards are classes of their own,
listed apart and never counted as failures of the agent.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..interfaces import ChatModel
from ..results.stats import is_success
from ..runner import MAX_STEPS, MAX_TURNS, TOO_MANY_ERRORS, USER_STOP
from ..types import (
    BUDGET_CUT,
    FAILURE_KINDS,
    POLICY_VIOLATION,
    STATE_MISMATCH,
    TOOL_ERROR_LOOP,
    USER_STOPPED_EARLY,
    WRONG_ACTION,
    WRONG_ARGUMENTS,
    Message,
)
from .page import LONE_SURROGATE

OTHER, ERRORED, UNKNOWN = "other", "errored", "unknown"
PRECEDENCE = (BUDGET_CUT, TOOL_ERROR_LOOP, USER_STOPPED_EARLY, WRONG_ARGUMENTS, WRONG_ACTION, POLICY_VIOLATION,
              STATE_MISMATCH)
LABELS = {**FAILURE_KINDS, OTHER: "other (no finding names a class)",
          ERRORED: "errored (no score: not a failure of the agent)",
          UNKNOWN: "unknown reward (null: a check was skipped; not a failure)"}
CLASS_ORDER = (*PRECEDENCE, OTHER, ERRORED, UNKNOWN)
REPEATS = 3  # the same call with the same result this many times in a row is a tool error loop
Explain = Callable[[dict, dict], list]


@dataclass
class Reviewed:
    """One episode that did not pass, with its class."""

    position: int  # its row in the run's view page, counted from 0 (#ep=POSITION)
    subset: str
    task_id: str
    trial: int
    reward: Optional[float]
    termination: Optional[str]
    turns: Optional[int]
    cls: str  # a key of LABELS
    kinds: list[str] = field(default_factory=list)  # every kind found (cls is the first by PRECEDENCE)
    findings: list[str] = field(default_factory=list)
    error: Optional[str] = None
    judge: Optional[str] = None  # the judge model's reason; None: no judge asked

    def to_json(self) -> dict:
        """The item as ``mua review --json`` writes it: its position under the key "row", first."""
        fields = dict(vars(self))
        return {"row": fields.pop("position"), **fields}


def classify(row: dict, explain: Explain) -> Optional[Reviewed]:
    """The review of one episode row (as episodes.jsonl holds it); None when it passed."""
    reward = row.get("reward")
    components = _of(row, "components", dict)
    info = _of(row, "info", dict)
    error = row.get("error") or None
    if not error and reward is not None and is_success(reward):
        return None
    try:
        found = list(explain(components, info)) if not error else []
    except Exception as e:  # an adapter's explain must not stop the review
        found = [f"(the adapter's explanation failed: {type(e).__name__}: {e})"]
    kinds = list(dict.fromkeys(k for f in found if (k := getattr(f, "kind", None)) in FAILURE_KINDS))
    messages = _of(row, "messages", list)
    kinds = list(dict.fromkeys(_runner_kinds(row.get("termination"), messages) + kinds))
    if error:
        cls = ERRORED
    elif reward is None:
        cls = UNKNOWN
    else:
        cls = next((k for k in PRECEDENCE if k in kinds), OTHER)
    return Reviewed(0, str(row.get("subset")), str(row.get("task_id")), int(row.get("trial") or 0),
                    reward, row.get("termination"), row.get("turns"), cls, kinds, [str(f) for f in found],
                    str(error) if error else None)


def _of(row: dict, name: str, kind: type) -> Any:
    value = row.get(name)
    return value if isinstance(value, kind) else kind()


def _runner_kinds(termination: Any, messages: list) -> list[str]:
    """What the episode's own course shows, whatever the benchmark: a budget that ended it, a run of tool
    errors, the user leaving right after the agent asked something."""
    out = []
    if termination in (MAX_STEPS, MAX_TURNS):
        out.append(BUDGET_CUT)
    if termination == TOO_MANY_ERRORS or _repeated_call(messages):
        out.append(TOOL_ERROR_LOOP)
    if termination == USER_STOP and _asked_last(messages):
        out.append(USER_STOPPED_EARLY)
    return out


def _repeated_call(messages: list) -> bool:
    """The agent made the same call (name and arguments) with the same result REPEATS times in a row."""
    dicts = [m for m in messages if isinstance(m, dict)]
    results = {m.get("tool_call_id"): m.get("content") for m in dicts if m.get("role") == "tool"}
    run, last = 0, None
    for m in dicts:
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") or {}
            this = (fn.get("name"), fn.get("arguments"), results.get(call.get("id")))
            run = run + 1 if this == last else 1
            last = this
            if run >= REPEATS:
                return True
    return False


def _asked_last(messages: list) -> bool:
    """The agent's last text before the user's final message was a question."""
    texts = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content")]
    return bool(texts) and str(texts[-1]["content"]).rstrip().endswith("?")


def review_rows(rows: list[dict], explain: Explain) -> list[Reviewed]:
    """The episodes of ``rows`` (in the view page's order) that did not pass, classified."""
    out = []
    for i, row in enumerate(rows):
        if (item := classify(row, explain)) is not None:
            item.position = i
            out.append(item)
    return out


# -- the judge's reason ---------------------------------------------------------------------------------------
JUDGE_PROMPT = ("You review one episode of a benchmark in which an AI agent serves a user with tools. The "
                "benchmark's scorer marked the episode as failed and says what it found. Read the conversation "
                "and the findings and say, in at most two sentences, why the agent failed: what it did wrong "
                "or left undone. Answer with the reason only.")
SHOWN = 600  # characters of one message shown to the judge


def judge_request(row: dict, item: Reviewed) -> list[Message]:
    lines = []
    for m in row.get("messages") or []:
        if not isinstance(m, dict):
            continue
        text = str(m.get("content") or "")
        calls = [f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
                 for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        shown = (text[:SHOWN] + (" ..." if len(text) > SHOWN else "")) if text else ""
        lines.append(f"[{m.get('role')}] " + " ".join(filter(None, [shown, *(f"CALL {c}" for c in calls)])))
    findings = "\n".join(f"- {f}" for f in item.findings) or "- (none named)"
    body = (f"Task {item.subset}/{item.task_id}, reward {item.reward}, ended by {item.termination}.\n\n"
            f"Conversation:\n" + "\n".join(lines) + f"\n\nThe scorer found:\n{findings}")
    # a lone surrogate a model wrote is no valid UTF-8: shown as U+FFFD, as the viewer shows it
    body = LONE_SURROGATE.sub("\ufffd", body)
    return [Message(role="system", content=JUDGE_PROMPT), Message(role="user", content=body)]


async def ask_judge(judge: ChatModel, rows: list[dict], items: list[Reviewed], concurrency: int,
                    seed: int = 0) -> None:
    """Fill ``judge`` of every failed item (not errored or unknown ones) with the model's reason."""
    gate = asyncio.Semaphore(concurrency)

    async def one(item: Reviewed) -> None:
        async with gate:
            reply, _usage = await judge.chat(judge_request(rows[item.position], item), seed=seed)
        item.judge = (reply.content or "").strip() or "(the judge gave no text)"

    await asyncio.gather(*(one(i) for i in items if i.cls not in (ERRORED, UNKNOWN)))


# -- output -------------------------------------------------------------------------------------------------
def by_class(items: list[Reviewed]) -> dict[str, list[Reviewed]]:
    groups = {c: [i for i in items if i.cls == c] for c in CLASS_ORDER}
    return {c: g for c, g in groups.items() if g}


def counts_text(items: list[Reviewed], episodes: int) -> str:
    failed = sum(1 for i in items if i.cls not in (ERRORED, UNKNOWN))
    lines = [f"{failed} failed of {episodes} episodes"
             + "".join(f"; {n} {c}" for c in (ERRORED, UNKNOWN) if (n := sum(1 for i in items if i.cls == c)))]
    lines += [f"  {len(g):5d}  {LABELS[c]}" for c, g in by_class(items).items()]
    return "\n".join(lines)


def render_review(title: str, items: list[Reviewed], episodes: int, view_href: str) -> str:
    from .index import esc, link, page

    parts = [f'<p id="count" data-failed="{sum(1 for i in items if i.cls not in (ERRORED, UNKNOWN))}">'
             f"{esc(counts_text(items, episodes).splitlines()[0])}. Each episode links to its row in "
             f"{link(view_href, 'the run page')}.</p>"]
    judged = any(i.judge is not None for i in items)
    head = ["episode", "reward", "ended by", "turns", "kinds found", "findings"] + (["judge"] if judged else [])
    for cls, group in by_class(items).items():
        parts.append(f'<h2 id="{esc(cls)}">{esc(LABELS[cls])} ({len(group)})</h2>')
        rows = []
        for i in group:
            name = link(f"{view_href}#ep={i.position}", f"{i.subset}/{i.task_id} trial {i.trial}")
            cells = [name, esc("null" if i.reward is None else f"{i.reward:g}"), esc(i.termination or ""),
                     esc("" if i.turns is None else i.turns), esc(", ".join(i.kinds)),
                     "<br>".join(esc(f) for f in ([i.error] if i.error else i.findings))]
            if judged:
                cells.append(esc(i.judge or ""))
            rows.append(f'<tr class="ep {esc(cls)}">' + "".join(f"<td>{c}" for c in cells) + "</tr>")
        parts.append("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"
                     + "\n".join(rows) + "</tbody></table>")
    data = {"episodes": episodes, "view": view_href, "classes": {c: [i.to_json() for i in g]
                                                                 for c, g in by_class(items).items()}}
    return page(title, "\n".join(parts) + "\n", data)


def review_json(items: list[Reviewed]) -> str:
    return json.dumps([i.to_json() for i in items], ensure_ascii=False)
