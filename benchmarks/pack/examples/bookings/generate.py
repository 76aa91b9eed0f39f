"""Writes the bookings pack's tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/bookings/generate.py --seed 0

Each task is one (name, day, guests) combination; the train and test splits hold disjoint combinations. The
facts are only in the user's scenario: the agent has to ask for them, then book with exactly those values."""
from __future__ import annotations

import argparse
import itertools
import json
import random
from pathlib import Path

NAMES = ("Ana", "Ben", "Cruz", "Dana", "Eli", "Fay", "Gus", "Ivy", "Jon", "Kai")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
OPENINGS = ("Hi, I would like to book a table.", "Hello, can I reserve a table?",
            "I want to make a reservation, please.")
ASK = "Sure. What name, day and number of guests?"


def task(i: int, name: str, day: str, guests: int, rng: random.Random) -> dict:
    return {
        "id": f"book-{i:03d}",
        "user_scenario": {
            "instructions": {
                "domain": "bookings",
                "reason_for_call": rng.choice(OPENINGS),
                "known_info": f"Your name is {name}. You want a table on {day} for {guests} guests.",
                "task_instructions": "Get the table booked. Give your name, the day and the number of guests "
                                     "when the agent asks.",
            },
            "replies": [{"when": ["name", "day", "guest"], "ask": ASK,
                         "say": f"Name {name}, on {day}, {guests} guests."}],
        },
        "evaluation_criteria": {
            "actions": [{"action_id": "book", "name": "book_table",
                         "arguments": {"name": name, "day": day, "guests": guests}}],
            "reward_basis": ["DB"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", type=int, default=160)
    ap.add_argument("--test", type=int, default=80)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    combos = list(itertools.product(NAMES, DAYS, range(1, 9)))
    rng.shuffle(combos)
    tasks = [task(i, *c, rng) for i, c in enumerate(combos[:args.train + args.test])]
    splits = {"train": [t["id"] for t in tasks[:args.train]], "test": [t["id"] for t in tasks[args.train:]]}
    (args.out / "tasks.json").write_text(json.dumps(tasks, indent=1) + "\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
