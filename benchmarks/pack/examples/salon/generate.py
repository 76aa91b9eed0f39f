"""Writes the salon pack's db.json, tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/salon/generate.py --seed 1

Each task is a customer with a name, a service and a day of next week; names are made up from syllables per
seed, and each split has names of its own (benchmarks/pack/heldout.py), so a held-out name must be copied from the
user's answer, never recalled. The facts are only in the user's scenario: the agent has to ask for them, then
book with exactly those values.

The behaviour RL must learn is rare in the demonstrations: 85% of the train customers come on the usual
saturday, and the reference conversations of nearly all of those (95%) do not ask for the day (their
demonstrator booked saturday, which was right for them), so only about 19% of the demonstrations ask for the day
(at most 20%: tests/benchmarks/pack/test_salon.py). An agent that imitates them guesses saturday. The validation
and test splits hold as many usual customers as others (--heldout-usual 0.5), so a policy that guesses passes
about half of them and one that asks passes them all: the held-out score tells the two apart."""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tools import DAYS, SERVICES  # this folder is on the path when the script runs

from mua.benchmarks.pack.heldout import deal_names, draw_split

OPENINGS = ("Hi, I would like to book a visit.", "Hello, can I book an appointment at the salon?",
            "I want to come in next week, please.")
# one question per fact: the scripted user answers a question about one fact only (benchmarks/pack/users.py)
ASK_ALL = "Sure. What is your name? Which service would you like? On which day would you like to come?"
ASK_USUAL = "Sure. What is your name? Which service would you like?"
USUAL_DAY = "saturday"
ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "kl", "st")
VOWELS = ("a", "e", "i", "o", "u")
CODAS = ("", "", "n", "r", "l", "s")


def made_up_names(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct names of two or three syllables (no real name list: spellings a model never saw)."""
    names: list[str] = []
    while len(names) < count:
        syllables = [rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.choice((2, 2, 3)))]
        name = ("".join(syllables) + rng.choice(CODAS)).capitalize()
        if name not in names:
            names.append(name)
    return names


def task(i: int, name: str, service: str, day: str, rng: random.Random, asked: float) -> dict:
    guessed = day == USUAL_DAY and rng.random() >= asked
    replies = [{"when": ["name"], "ask": ASK_USUAL if guessed else ASK_ALL, "say": f"{name}."},
               {"when": ["service"], "say": f"A {service}, please."},
               {"when": ["day"], "say": f"On {day}."}]
    return {
        "id": f"visit-{i:03d}",
        "user_scenario": {
            "instructions": {
                "domain": "salon",
                "reason_for_call": rng.choice(OPENINGS),
                "known_info": f"Your name is {name}. You want a {service} on {day}.",
                "task_instructions": "Get the visit booked. Give your name, the service and the day when the agent "
                                     "asks for them.",
            },
            "replies": replies,
        },
        "evaluation_criteria": {
            "actions": [{"action_id": "book", "name": "book_visit",
                         "arguments": {"name": name, "service": service, "day": day}}],
            "reward_basis": ["DB"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=600)
    ap.add_argument("--validation", type=int, default=40, help="tasks to tune on (the test split is reported once)")
    ap.add_argument("--test", type=int, default=80)
    ap.add_argument("--usual", type=float, default=0.85, help="share of the train customers who come on saturday")
    ap.add_argument("--heldout-usual", type=float, default=0.5,
                    help="share of the validation and test customers who come on saturday")
    ap.add_argument("--asked", type=float, default=0.05,
                    help="share of the saturday customers whose reference conversation asks for the day")
    ap.add_argument("--names", type=int, default=160, help="made-up customer names, dealt among the splits")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    sizes = {"train": args.train, "validation": args.validation, "test": args.test}
    usual_of = {split: round((args.usual if split == "train" else args.heldout_usual) * n)
                for split, n in sizes.items()}
    # a saturday task per (name, service), so a name gives len(SERVICES) of them
    names = deal_names(made_up_names(args.names, rng), usual_of, lambda _: len(SERVICES), rng)
    tasks: list[dict] = []
    splits: dict[str, list[str]] = {}
    for split, n in sizes.items():
        usual = [(name, s, USUAL_DAY) for name in names[split] for s in SERVICES]
        other = [(name, s, d) for name in names[split] for s in SERVICES for d in DAYS if d != USUAL_DAY]
        combos = draw_split(split, usual, other, n, usual_of[split], rng)
        own = [task(len(tasks) + i, name, service, day, rng, args.asked) for i, (name, service, day) in
               enumerate(combos)]
        splits[split] = [t["id"] for t in own]
        tasks += own
    lines = ",\n".join(json.dumps(t) for t in tasks)  # one task per line: a readable diff, a smaller file
    (args.out / "tasks.json").write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")
    (args.out / "db.json").write_text(json.dumps({"visits": {}}) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
