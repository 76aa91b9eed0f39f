"""Writes the bookings pack's tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/bookings/generate.py --seed 0

Each task is a regular customer with a name, a place to sit and a time (5 to 9 pm); no two tasks share all
three, so the train and test splits hold disjoint combinations. The facts are only in the user's scenario:
the agent has to ask for them, then book with exactly those values.

Three customers in four want the usual 7 pm, and the reference conversations of most of those (85%) do not ask
for the time (their demonstrator booked 7 pm, which was right for them). So most demonstrations guess 7 pm,
and an agent that imitates them learns to guess and fails every customer who wants another time: asking for
the time, always, is what the user in the loop can teach. The other conversations ask, so the demonstrations
also teach copying the time from the user's answer (7 pm included). A validation split (40 tasks, combinations in
neither train nor test) is for tuning, so that the test split is reported once. The train split is large (800 tasks over
140 customers): on 180 tasks over 40 customers the tiny model of tests/perf/learning_check.py did not learn to
copy a time other than 7 pm."""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tools import HOURS, NAMES, SEATS  # this folder is on the path when the script runs

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
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", type=int, default=800)
    ap.add_argument("--test", type=int, default=80)
    ap.add_argument("--validation", type=int, default=40, help="tasks to tune on (the test split is reported once)")
    ap.add_argument("--usual", type=float, default=0.75, help="share of customers who want 7 pm")
    ap.add_argument("--asked", type=float, default=0.15,
                    help="share of the 7 pm customers whose reference conversation asks for the time")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    usual = [(n, s, USUAL_HOUR) for n in NAMES for s in SEATS]
    other = [(n, s, h) for n in NAMES for s in SEATS for h in HOURS if h != USUAL_HOUR]
    rng.shuffle(usual)
    rng.shuffle(other)
    n_usual = round(args.usual * (args.train + args.test))
    if n_usual > len(usual) or args.train + args.test - n_usual > len(other):
        raise SystemExit(f"generate.py: at most {len(usual)} tasks at {USUAL_HOUR} pm, {len(other)} at other times")
    combos = usual[:n_usual] + other[:args.train + args.test - n_usual]
    rng.shuffle(combos)
    tasks = [task(i, name, seat, hour, rng, args.asked) for i, (name, seat, hour) in enumerate(combos)]
    # The validation split is drawn after train and test, from the combinations left and with its own random
    # stream, so adding it left those two splits byte for byte as they were.
    vrng = random.Random(f"validation-{args.seed}")
    n_val_usual = round(args.usual * args.validation)
    if n_usual + n_val_usual > len(usual):
        raise SystemExit(f"generate.py: at most {len(usual) - n_usual} validation tasks at {USUAL_HOUR} pm")
    left = usual[n_usual:n_usual + n_val_usual] + other[len(combos) - n_usual:][:args.validation - n_val_usual]
    vrng.shuffle(left)
    validation = [task(len(tasks) + i, name, seat, hour, vrng, args.asked) for i, (name, seat, hour) in enumerate(left)]
    splits = {"train": [t["id"] for t in tasks[:args.train]], "validation": [t["id"] for t in validation],
              "test": [t["id"] for t in tasks[args.train:]]}
    tasks += validation
    lines = ",\n".join(json.dumps(t) for t in tasks)  # one task per line: a readable diff, a smaller file
    (args.out / "tasks.json").write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
