"""Which names each split of a generated task pack owns, so that no held-out task shares a name (nor an id drawn
per name) with training: a model that copies names and ids must copy spellings it never saw, not recall them.
Used by the example packs' generate.py scripts."""
from __future__ import annotations

import math
import random
from typing import Callable, Sequence


def deal_names(names: Sequence[str], needed: dict[str, int], capacity: Callable[[str], int],
               rng: random.Random) -> dict[str, list[str]]:
    """Each split of ``needed`` (split -> how many tasks, or combinations, it needs) gets names of its own: the
    names are shuffled, each split but "train" takes a share of them in proportion to what it needs, and more while
    the ``capacity`` (tasks a name can give) of what it holds is below that; "train" takes the rest. A SystemExit
    (generate.py's one-line error) when the names left to train cannot give what it needs."""
    pool = list(names)
    rng.shuffle(pool)
    total = sum(needed.values())
    owned: dict[str, list[str]] = {}
    for split, want in needed.items():
        if split == "train":
            continue
        share = max(1, math.floor(len(names) * want / total))
        taken, pool = pool[:share], pool[share:]
        while sum(map(capacity, taken)) < want and pool:
            taken.append(pool.pop(0))
        owned[split] = taken
    owned["train"] = pool
    for split, want in needed.items():
        if sum(map(capacity, owned[split])) < want:
            raise SystemExit(f"generate.py: split {split} needs {want} combinations; its {len(owned[split])} "
                             f"names give {sum(map(capacity, owned[split]))}")
    return {split: owned[split] for split in needed}


def draw_split(split: str, usual: list, other: list, n: int, n_usual: int, rng: random.Random) -> list:
    """``n`` of a split's combinations, ``n_usual`` of them from ``usual`` (the case its demonstrations may skip a
    question for) and the rest from ``other``, each list shuffled first, the result shuffled; a SystemExit when
    either list is too short."""
    if n_usual > len(usual) or n - n_usual > len(other):
        raise SystemExit(f"generate.py: split {split} needs {n_usual} usual and {n - n_usual} other combinations; "
                         f"its names give {len(usual)} and {len(other)}")
    rng.shuffle(usual)
    rng.shuffle(other)
    combos = usual[:n_usual] + other[:n - n_usual]
    rng.shuffle(combos)
    return combos
