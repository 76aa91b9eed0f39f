"""Writes the refills pack's db.json, tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/refills/generate.py --seed 1

Each task is a customer (surname) refilling a medicine for pickup at a branch; no two tasks share all three,
and each split has surnames of its own (benchmarks/pack/heldout.py), so no held-out surname or quote code occurs
in train. Seed 1 is the pack's (seed 0 wrote the splits the learning check's defaults were tuned against, whose
test surnames occurred in train). The facts are only in the user's
scenario. The agent asks for the surname and the medicine, calls quote_refill, and must copy the quote code
(Q and four digits, drawn here per surname and medicine) from that result into order_refill: an id that flows
from one tool's result into the next call. Demonstrations are imperfect: most customers pick up at the central
branch, and nearly all reference conversations of those (95%) order for central without asking; the others look the
quote up, then ask for the branch, then order (a question between two calls)."""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tools import BRANCHES, MEDICINES, SURNAMES  # this folder is on the path when the script runs

from mua.benchmarks.pack.heldout import deal_names, draw_split

OPENINGS = ("Hi, I need a refill of my prescription.", "Hello, I would like to refill a prescription.",
            "I want to order a refill, please.")
ASK_WHO = "Sure. What is your surname? Which medicine do you need?"
ASK_BRANCH = "Which branch will you pick it up from?"
USUAL = "central"


def task(i: int, surname: str, medicine: str, branch: str, code: str, rng: random.Random, asked: float) -> dict:
    skipped = branch == USUAL and rng.random() >= asked
    replies = [{"when": ["surname"], "ask": ASK_WHO, "say": f"{surname}."},
               {"when": ["medicine"], "say": f"My {medicine}."},
               {"when": ["branch"], "say": f"At the {branch} branch."}]
    if not skipped:
        replies[2].update(ask=ASK_BRANCH, after="quote")
    return {
        "id": f"refill-{i:03d}",
        "user_scenario": {
            "instructions": {
                "domain": "refills",
                "reason_for_call": rng.choice(OPENINGS),
                "known_info": f"Your surname is {surname}. You need {medicine}, picked up at the {branch} branch.",
                "task_instructions": "Get the refill ordered. Give your surname, the medicine and the branch when "
                                     "the agent asks for them.",
            },
            "replies": replies,
        },
        "evaluation_criteria": {
            "actions": [{"action_id": "quote", "name": "quote_refill",
                         "arguments": {"surname": surname, "medicine": medicine}},
                        {"action_id": "order", "name": "order_refill", "arguments": {"quote": code, "branch": branch}}],
            "reward_basis": ["DB"],
        },
    }


def split_combos(surnames: dict[str, list[str]], sizes: dict[str, int], usual: float, rng: random.Random) -> list:
    """(surname, medicine, branch) per task, split by split: each split draws from the (surname, medicine) pairs of
    its own surnames, so a held-out task's surname and quote code never appear in training (copying them cannot be
    memorised); a share ``usual`` of each split picks up at the central branch, one task per pair."""
    combos = []
    for name, n in sizes.items():
        own = [(s, m) for s in surnames[name] for m in MEDICINES]
        central = [(s, m, USUAL) for s, m in own]
        other = [(s, m, b) for s, m in own for b in BRANCHES if b != USUAL]
        combos += draw_split(name, central, other, n, round(usual * n), rng)
    return combos


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=640)
    ap.add_argument("--validation", type=int, default=48)
    ap.add_argument("--test", type=int, default=96)
    ap.add_argument("--usual", type=float, default=0.6, help="share of customers who pick up at the central branch")
    ap.add_argument("--asked", type=float, default=0.05,
                    help="share of the central customers whose reference conversation asks for the branch")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pairs = [(s, m) for s in SURNAMES for m in MEDICINES]
    codes = rng.sample(range(1000, 10000), len(pairs))
    code_of = {f"{s}/{m}": f"Q{c}" for (s, m), c in zip(pairs, codes)}
    quotes = {f"{s}/{m}": {"code": f"Q{c}", "price": 5 + c % 40} for (s, m), c in zip(pairs, codes)}
    sizes = {"train": args.train, "validation": args.validation, "test": args.test}
    surnames = deal_names(SURNAMES, {k: round(args.usual * n) for k, n in sizes.items()}, lambda _: len(MEDICINES),
                          rng)
    combos = split_combos(surnames, sizes, args.usual, rng)
    tasks = [task(i, s, m, b, code_of[f"{s}/{m}"], rng, args.asked) for i, (s, m, b) in enumerate(combos)]
    ids = iter(t["id"] for t in tasks)
    splits = {name: [next(ids) for _ in range(n)] for name, n in sizes.items()}
    db = {"quotes": quotes, "codes": {q["code"]: {"key": key} for key, q in quotes.items()}, "orders": {}}
    lines = ",\n".join(json.dumps(t) for t in tasks)  # one task per line: a readable diff, a smaller file
    (args.out / "tasks.json").write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")
    (args.out / "db.json").write_text(json.dumps(db, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
