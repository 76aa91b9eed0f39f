"""Writes the bookings pack's tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/bookings/generate.py --seed 0

Each task is a customer with a phone number (4 digits), a party size (1 to 8) and a time (5 to 9 pm); no two
tasks share all three, so the train and test splits hold disjoint combinations. The facts are only in the
user's scenario: the agent has to ask for them, then book with exactly those values.

Two customers in three want the usual 7 pm. The reference conversations of those tasks never ask for the time
(their demonstrator booked 7 pm, which was right for them), so an agent that imitates the demonstrations learns
to guess 7 pm and fails every other customer: asking for the time is what the user in the loop can teach."""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

OPENINGS = ("Hi, I would like to book a table.", "Hello, can I reserve a table?",
            "I want to make a reservation, please.")
ASK_ALL = "Sure. What is your phone number, how many guests, and what time?"
ASK_USUAL = "Sure. What is your phone number and how many guests?"
USUAL_HOUR = 7


def task(i: int, phone: str, guests: int, hour: int, rng: random.Random) -> dict:
    replies = [{"when": ["phone"], "ask": ASK_USUAL if hour == USUAL_HOUR else ASK_ALL, "say": f"Phone {phone}."},
               {"when": ["guest"], "say": f"{guests} guests."},
               {"when": ["time"], "say": f"At {hour} pm."}]
    return {
        "id": f"book-{i:03d}",
        "user_scenario": {
            "instructions": {
                "domain": "bookings",
                "reason_for_call": rng.choice(OPENINGS),
                "known_info": f"Your phone number is {phone}. You want a table for {guests} guests at {hour} pm.",
                "task_instructions": "Get the table booked. Give your phone number, the number of guests and the "
                                     "time when the agent asks for them.",
            },
            "replies": replies,
        },
        "evaluation_criteria": {
            "actions": [{"action_id": "book", "name": "book_table",
                         "arguments": {"phone": phone, "guests": guests, "hour": hour}}],
            "reward_basis": ["DB"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", type=int, default=160)
    ap.add_argument("--test", type=int, default=80)
    ap.add_argument("--usual", type=float, default=2 / 3, help="share of customers who want 7 pm")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    combos: dict[tuple[str, int, int], None] = {}  # insertion-ordered set
    while len(combos) < args.train + args.test:
        hour = USUAL_HOUR if rng.random() < args.usual else rng.choice((5, 6, 8, 9))
        combos[(f"{rng.randrange(10000):04d}", rng.randint(1, 8), hour)] = None
    tasks = [task(i, *c, rng) for i, c in enumerate(combos)]
    splits = {"train": [t["id"] for t in tasks[:args.train]], "test": [t["id"] for t in tasks[args.train:]]}
    (args.out / "tasks.json").write_text(json.dumps(tasks, indent=1) + "\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
