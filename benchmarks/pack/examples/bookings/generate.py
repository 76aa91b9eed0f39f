"""Writes the bookings pack's tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/bookings/generate.py --seed 1

Each task is a regular customer with a name, a place to sit and a time (5 to 9 pm); no two tasks share all
three, and each split has customers of its own (benchmarks/pack/heldout.py): no name of the validation or test
split occurs in train, so a held-out name must be copied, not recalled. The facts are only in the user's
scenario: the agent has to ask for them, then book with exactly those values.

Three customers in four want the usual 7 pm, and the reference conversations of most of those (85%) do not ask
for the time (their demonstrator booked 7 pm, which was right for them). So most demonstrations guess 7 pm,
and an agent that imitates them learns to guess and fails every customer who wants another time: asking for
the time, always, is what the user in the loop can teach. The other conversations ask, so the demonstrations
also teach copying the time from the user's answer (7 pm included). A validation split (40 tasks) is for tuning,
so that the test split is reported once (docs/learning.md). The train split is large (800 tasks over 122 customers):
on 180 tasks over 40 customers the tiny model of tests/perf/learning_check.py did not learn to copy a time other
than 7 pm. Seed 1 is the pack's (seed 0 wrote the splits the learning check's defaults were tuned against, whose
test names all occurred in train)."""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tools import HOURS, NAMES, SEATS  # this folder is on the path when the script runs

from mua.benchmarks.pack.heldout import deal_names, draw_split

OPENINGS = ("Hi, I would like to book a table.", "Hello, can I reserve a table?",
            "I want to make a reservation, please.")
# one question per fact: the scripted user answers a question about one fact only (benchmarks/pack/users.py)
ASK_ALL = "Sure. What is your name? Where would you like to sit? At what time?"
ASK_USUAL = "Sure. What is your name? Where would you like to sit?"
USUAL_HOUR = 7


def task(i: int, name: str, seat: str, hour: int, rng: random.Random, asked: float) -> dict:
    guessed = hour == USUAL_HOUR and rng.random() >= asked
    replies = [{"when": ["name"], "ask": ASK_USUAL if guessed else ASK_ALL, "say": f"{name}."},
               {"when": ["sit"], "say": f"A {seat} table, please."},
               {"when": ["time"], "say": f"At {hour} pm."}]
    return {
        "id": f"book-{i:03d}",
        "user_scenario": {
            "instructions": {
                "domain": "bookings",
                "reason_for_call": rng.choice(OPENINGS),
                "known_info": f"Your name is {name}. You want a table ({seat}) at {hour} pm.",
                "task_instructions": "Get the table booked. Give your name, where you want to sit and the time "
                                     "when the agent asks for them.",
            },
            "replies": replies,
        },
        "evaluation_criteria": {
            "actions": [{"action_id": "book", "name": "book_table",
                         "arguments": {"name": name, "seat": seat, "hour": hour}}],
            "reward_basis": ["DB"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=800)
    ap.add_argument("--test", type=int, default=80)
    ap.add_argument("--validation", type=int, default=40, help="tasks to tune on (the test split is reported once)")
    ap.add_argument("--usual", type=float, default=0.75, help="share of customers who want 7 pm")
    ap.add_argument("--asked", type=float, default=0.15,
                    help="share of the 7 pm customers whose reference conversation asks for the time")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    sizes = {"train": args.train, "validation": args.validation, "test": args.test}
    usual_of = {split: round(args.usual * n) for split, n in sizes.items()}
    # each split its own customers: a 7 pm task per (name, seat), so a name gives len(SEATS) of them
    names = deal_names(NAMES, usual_of, lambda _: len(SEATS), rng)
    tasks: list[dict] = []
    splits: dict[str, list[str]] = {}
    for split, n in sizes.items():
        usual = [(name, s, USUAL_HOUR) for name in names[split] for s in SEATS]
        other = [(name, s, h) for name in names[split] for s in SEATS for h in HOURS if h != USUAL_HOUR]
        combos = draw_split(split, usual, other, n, usual_of[split], rng)
        own = [task(len(tasks) + i, name, seat, hour, rng, args.asked) for i, (name, seat, hour) in enumerate(combos)]
        splits[split] = [t["id"] for t in own]
        tasks += own
    lines = ",\n".join(json.dumps(t) for t in tasks)  # one task per line: a readable diff, a smaller file
    (args.out / "tasks.json").write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
