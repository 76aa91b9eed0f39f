"""The NL-assertion judge: tau2's prompt and answer format, played by any ChatModel."""
from __future__ import annotations

from typing import Optional

from mua.harness.interfaces import ChatModel
from mua.harness.io.jsonl import BadLine, loads_untrusted
from mua.harness.types import Message

from .prompts import JUDGE_SYSTEM_PROMPT, judge_user_prompt


def judge_messages(trajectory: list[Message], nl_assertions: list[str]) -> list[Message]:
    # Every message as "role: content" (None for tool-call-only steps), as upstream renders it.
    text = "\n".join(f"{m.role}: {m.content}" for m in trajectory)
    return [Message(role="system", content=JUDGE_SYSTEM_PROMPT),
            Message(role="user", content=judge_user_prompt(text, nl_assertions))]


async def judge_nl_assertions(judge: ChatModel, trajectory: list[Message], nl_assertions: list[str],
                              seed: Optional[int] = None) -> tuple[float, list[dict]]:
    """Reward 1.0 when every graded outcome is met (upstream: all() over the judge's results list)."""
    reply, _ = await judge.chat(judge_messages(trajectory, nl_assertions), None, seed=seed)
    try:  # the judge model's text, read by the reader every endpoint reply goes through
        data = loads_untrusted(reply.content or "")
    except BadLine as e:
        raise ValueError(f"the judge's answer cannot be read as JSON: {e.about('it')}") from None
    results = [{"nl_assertion": r["expectedOutcome"], "met": bool(r["metExpectation"]),
                "justification": r.get("reasoning")} for r in data.get("results", [])]
    return (1.0 if all(r["met"] for r in results) else 0.0), results
