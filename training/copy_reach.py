"""How far back, in tokens, each name or id the agent copies sits in its own training stream, against the policy's
attention window: a value beyond the window cannot be copied by attending to it.

For every tool call of a `mua export` dataset's agent replies and each of its copied values (a name or an id,
:func:`mua.training.copying.is_copied_value`), the value's tokens in the reply are found, and the distance is
counted from the position that predicts the value's first token back to the nearest earlier occurrence of the same
tokens in the stream (the user's words, a tool result). A policy whose every layer attends to the last W tokens
sees at most W - 1 tokens back in one hop; a value farther back is "beyond the window". Values never said before
(nothing to copy) are counted apart.

    python -m mua.training.copy_reach CKPT DATASET   # one line per argument: "tool.argument: N/M beyond ..."
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mua.harness.errors import MuaError

from .copying import is_copied_value


@dataclass
class Reach:
    distances: list[int] = field(default_factory=list)  # one per copied value said earlier in the stream
    unseen: int = 0  # copied values with no earlier occurrence

    def line(self, key: str, window: Optional[int]) -> str:
        if not self.distances:
            return f"{key}: never said before the call ({self.unseen})"
        ds = sorted(self.distances)
        where = (f"{sum(d > window - 1 for d in ds)}/{len(ds)} beyond the {window}-token window"
                 if window else f"{len(ds)} copies (no window)")
        return (f"{key}: {where}; distance median {ds[len(ds) // 2]}, max {ds[-1]}"
                + (f"; {self.unseen} never said before" if self.unseen else ""))


def _find(ids: list[int], needle: list[int], end: int) -> Optional[int]:
    """The start of the last occurrence of ``needle`` in ``ids`` starting before ``end``, or None."""
    for at in range(min(end, len(ids) - len(needle)), -1, -1):
        if ids[at:at + len(needle)] == needle:
            return at
    return None


def value_tokens(tokenizer, reply: list[int], value: str) -> Optional[tuple[int, int]]:
    """(first, end) of the tokens of ``reply`` that lie wholly inside the first occurrence of ``value`` written as
    a JSON string in its decoded text; None when it is not there or no token lies inside it."""
    text = tokenizer.decode(reply)
    at = text.find(json.dumps(value))
    if at < 0:
        return None
    start, stop = at + 1, at + len(json.dumps(value)) - 1
    ends = [len(tokenizer.decode(reply[:k])) for k in range(len(reply) + 1)]
    inside = [k for k in range(len(reply)) if ends[k] >= start and ends[k + 1] <= stop]
    return (inside[0], inside[-1] + 1) if inside else None


def stream_reach(ids: list[int], mask: list[int], tokenizer, calls: list[list[tuple[str, str]]],
                 reach: dict[str, Reach]) -> None:
    """Add to ``reach`` the distances of one stream: ``ids`` with its loss ``mask`` (1 on the agent's tokens) and,
    per agent reply in order, its copied (``tool.argument``, value) pairs."""
    replies, at = [], 0
    while at < len(mask):  # the runs of trained tokens, one per agent reply
        if mask[at]:
            first = at
            while at < len(mask) and mask[at]:
                at += 1
            replies.append((first, at))
        else:
            at += 1
    for (first, end), copies in zip(replies, calls):
        for key, value in copies:
            span = value_tokens(tokenizer, ids[first:end], value)
            if span is None:
                continue
            needle = ids[first + span[0]:first + span[1]]
            earlier = _find(ids, needle, first - len(needle) + 1)
            r = reach.setdefault(key, Reach())
            if earlier is None:
                r.unseen += 1
            else:  # the query predicting the value's first token sits one before it
                r.distances.append(first + span[0] - 1 - earlier)


def reply_copies(messages: list[dict]) -> list[list[tuple[str, str]]]:
    """Per agent reply that the stream trains on (every assistant message after the first user message), its
    tool calls' copied (``tool.argument``, value) pairs."""
    from .resample import call_arguments

    out: list[list[tuple[str, str]]] = []
    seen_user = False
    for m in messages:
        seen_user = seen_user or m.get("role") == "user"
        if m.get("role") != "assistant" or not seen_user:
            continue
        pairs = []
        for call in m.get("tool_calls") or []:
            args = call_arguments(call)
            name = call.get("function", {}).get("name") if isinstance(call, dict) else None
            if isinstance(args, dict):
                pairs += [(f"{name}.{k}", v) for k, v in args.items() if is_copied_value(v)]
        out.append(pairs)
    return out


def dataset_reach(checkpoint: str | Path, dataset: str | Path) -> tuple[dict[str, Reach], Optional[int]]:
    """``tool.argument`` -> its Reach over the rows of ``dataset`` (a `mua export` output) as the policy at
    ``checkpoint`` tokenises them for SFT, and the policy's window (None: every token in view)."""
    from transformers import AutoConfig, GenerationConfig

    from mua.harness.models.local import stop_ids_for
    from mua.harness.models.tokenizer import load_tokenizer

    from .sft import read_rows, row_stream

    config = AutoConfig.from_pretrained(str(checkpoint))
    tokenizer = load_tokenizer(checkpoint)
    stop_ids = stop_ids_for(tokenizer, GenerationConfig.from_pretrained(str(checkpoint)))
    reach: dict[str, Reach] = {}
    for row in read_rows(Path(dataset)):
        s = row_stream(row, tokenizer, stop_ids)
        stream_reach(s.ids, [0] * len(s.prompt_ids) + s.env_mask, tokenizer, reply_copies(row["messages"]), reach)
    window = getattr(config, "sliding_window", None) if getattr(config, "use_sliding_window", False) else None
    return reach, window


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m mua.training.copy_reach CKPT DATASET", file=sys.stderr)
        return 2
    try:
        reach, window = dataset_reach(args[0], args[1])
    except (MuaError, OSError) as e:
        print(f"copy_reach: {e}", file=sys.stderr)
        return 2
    print("\n".join(r.line(k, window) for k, r in reach.items()) or "no copied name or id in the tool calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
