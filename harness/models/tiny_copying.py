"""A copying stage for the tiny model: before it reads any conversation, train it on synthetic token sequences in
which spans seen earlier come back, so that it learns induction-style copying ("the token after this one last
time comes next") with nothing else to learn.

Why: a random-initialised tiny model fine-tuned on a few hundred conversations learns the shape of an answer and
the values' distribution faster than it learns to look values up, so it writes a train surname, a made-up id or the
most frequent seat instead of copying what the user, a tool result or its prompt said (docs/learning-check.md,
docs/user-model.md). Copying is the one skill those tasks share and it is content-free, so it can be taught on
random tokens: a run of random tokens with names (letter-and-place tokens), ids (digit-and-place tokens) and
words in it comes back cut into chunks in another order, and only the copies are trained, so the lookup is by
content, not by position.

``teach_copying(model, pools, steps, ...)`` (``pools``: the model's token ids by kind, from
harness/models/tiny.py) trains in place and returns the copy accuracy (share of the second halves' tokens
predicted exactly, greedy) on held-out sequences, before and after.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

SPANS = 3  # names, ids or words placed in the first half of a sequence
BATCH = 32
LEARNING_RATE = 3e-3
HELD_OUT = 64  # held-out sequences the accuracy is measured on
MIN_LENGTH = 2 * SPANS * 11  # a span is at most 11 tokens, and each half holds SPANS of them


@dataclass(frozen=True)
class TokenPools:
    """The token ids spans and filler are drawn from."""
    ordinary: list[int]  # every ordinary token: filler, keys, plain spans
    names: list[list[int]]  # names[p]: the 26 letter tokens at place p (empty: no name places)
    digits: list[list[int]]  # digits[p]: the 10 digit tokens at place p (empty: no digit places)


@dataclass(frozen=True)
class CopyingReport:
    steps: int
    length: int
    seed: int
    accuracy_before: float
    accuracy_after: float

    def as_dict(self) -> dict:
        return asdict(self)


def _span(pools: TokenPools, rng) -> list[int]:
    """One span to copy: a name, an id or a few ordinary tokens, as the pools allow."""
    kinds = ["plain"] + (["name"] * 2 if pools.names else []) + (["id"] * 2 if pools.digits else [])
    kind = kinds[rng.randrange(len(kinds))]
    if kind == "name":
        size = rng.randint(min(3, len(pools.names)), min(10, len(pools.names)))
        return [rng.choice(pools.names[p]) for p in range(size)]
    if kind == "id":
        size = rng.randint(min(2, len(pools.digits)), len(pools.digits))
        prefix = [rng.choice(pools.ordinary)] if rng.random() < 0.5 else []
        return prefix + [rng.choice(pools.digits[p]) for p in range(size)]
    return [rng.choice(pools.ordinary) for _ in range(rng.randint(2, 5))]


def copy_sequence(pools: TokenPools, length: int, rng) -> tuple[list[int], list[int]]:
    """(input ids, labels) of one sequence of ``length`` tokens. Its first half is filler with SPANS spans in it;
    its second half is the first cut into chunks of 4 to 16 tokens, shuffled, so each chunk comes back elsewhere.
    Labels (-100 elsewhere) are on every second-half token but a chunk's first: each is the token that followed
    the token before it in the first half (the chunk's start names where to look; the rest is copying)."""
    half = length // 2
    first: list[int] = []
    for span in [_span(pools, rng) for _ in range(SPANS)]:
        first += [rng.choice(pools.ordinary) for _ in range(rng.randint(0, half // SPANS - len(span)))] + span
    first = (first + [rng.choice(pools.ordinary) for _ in range(half)])[:half]
    chunks, at = [], 0
    while at < half:
        size = rng.randint(4, 16)
        chunks.append(first[at:at + size])
        at += size
    rng.shuffle(chunks)
    second = [t for chunk in chunks for t in chunk][:length - half]
    labels = [t for chunk in chunks for t in [-100] + chunk[1:]][:length - half]
    second += [rng.choice(pools.ordinary) for _ in range(length - half - len(second))]
    labels += [-100] * (length - half - len(labels))
    return first + second, [-100] * half + labels


def _batch(pools: TokenPools, length: int, count: int, rng):
    import torch

    rows = [copy_sequence(pools, length, rng) for _ in range(count)]
    return torch.tensor([r[0] for r in rows]), torch.tensor([r[1] for r in rows])


def _accuracy(model, ids, labels) -> float:
    import torch

    with torch.no_grad():
        logits = model(input_ids=ids).logits[:, :-1]
    target = labels[:, 1:]
    mask = target != -100
    return float((logits.argmax(-1)[mask] == target[mask]).float().mean())


def teach_copying(model, pools: TokenPools, steps: int, seed: int, length: int, on_step=None) -> CopyingReport:
    """Train ``model`` in place for ``steps`` steps of BATCH synthetic copy sequences of ``length`` tokens (AdamW,
    LEARNING_RATE, linear decay); ``on_step(step)`` after each. Same seed, same bytes (one generator for the data,
    torch's seeded by the caller)."""
    import random

    import torch

    rng = random.Random(seed)
    held_ids, held_labels = _batch(pools, length, HELD_OUT, rng)
    model.eval()
    before = _accuracy(model, held_ids, held_labels)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / steps))
    for step in range(steps):
        ids, labels = _batch(pools, length, BATCH, rng)
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        if on_step is not None:
            on_step(step + 1)
    model.eval()
    return CopyingReport(steps, length, seed, round(before, 4), round(_accuracy(model, held_ids, held_labels), 4))
