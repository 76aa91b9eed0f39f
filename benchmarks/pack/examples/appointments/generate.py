"""Writes the appointments pack's db.json, tasks.json and splits.json from a seed (run from anywhere):

    python benchmarks/pack/examples/appointments/generate.py --seed 1

Each patient (surname) has one or two appointments (half of them two) with an id, a service and a day. Each
task moves one appointment to a new day; no two tasks share patient, service and day, and each split has
patients of its own (benchmarks/pack/heldout.py), so no held-out surname or appointment id occurs in train (seed
0, which the learning check's defaults were tuned against, put 61 of 64 test (surname, id) pairs in train; seed 1
is the pack's). The opening, "I need to move my appointment", is
ambiguous for a patient with two: the agent asks for the surname, looks the appointments up, then (only when
there are two) asks which one, and asks for the new day; then it moves the appointment by the id from the
lookup's result. Guessing picks the wrong appointment half the time."""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tools import DAYS, SERVICES, SURNAMES  # this folder is on the path when the script runs

from mua.benchmarks.pack.heldout import deal_names

OPENINGS = ("Hi, I need to move my appointment.", "Hello, can I change my appointment?",
            "I would like to reschedule my appointment, please.")
ASK_WHO = "Sure. What is your surname?"
ASK_WHICH = "Which appointment do you want to move?"
ASK_DAY = "Which day would you like instead?"


def task(i: int, surname: str, appointment: dict, day: str, several: bool, rng: random.Random) -> dict:
    replies = [{"when": ["surname"], "ask": ASK_WHO, "say": f"{surname}."},
               {"when": ["appointment"], "say": f"The {appointment['service']} one."},
               {"when": ["day"], "ask": ASK_DAY, "after": "find", "say": f"On {day}."}]
    if several:
        replies[1].update(ask=ASK_WHICH, after="find")
    return {
        "id": f"appt-{i:03d}",
        "user_scenario": {
            "instructions": {
                "domain": "appointments",
                "reason_for_call": rng.choice(OPENINGS),
                "known_info": f"Your surname is {surname}. You want to move your {appointment['service']} "
                              f"appointment to {day}.",
                "task_instructions": "Get the appointment moved. Give your surname, which appointment and the new "
                                     "day when the agent asks for them.",
            },
            "replies": replies,
        },
        "evaluation_criteria": {
            "actions": [{"action_id": "find", "name": "find_appointments", "arguments": {"surname": surname}},
                        {"action_id": "move", "name": "move_appointment",
                         "arguments": {"appointment_id": appointment["id"], "day": day}}],
            "reward_basis": ["DB"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=200)
    ap.add_argument("--validation", type=int, default=32)
    ap.add_argument("--test", type=int, default=64)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ids = iter(rng.sample(range(100, 1000), 2 * len(SURNAMES)))
    patients: dict[str, list[dict]] = {}
    for n, surname in enumerate(SURNAMES):
        services = rng.sample(SERVICES, 2 if n % 2 else 1)
        patients[surname] = [{"id": f"A{next(ids)}", "service": s, "day": rng.choice(DAYS)} for s in services]
    sizes = {"train": args.train, "validation": args.validation, "test": args.test}
    # each split its own patients, so a held-out surname and its appointment ids never occur in train
    owned = deal_names(SURNAMES, sizes, lambda s: len(patients[s]) * (len(DAYS) - 1), rng)
    tasks: list[dict] = []
    splits: dict[str, list[str]] = {}
    for split, n in sizes.items():
        combos = [(s, a, d) for s in owned[split] for a in patients[s] for d in DAYS if d != a["day"]]
        rng.shuffle(combos)
        own = [task(len(tasks) + i, s, a, d, len(patients[s]) > 1, rng) for i, (s, a, d) in enumerate(combos[:n])]
        splits[split] = [t["id"] for t in own]
        tasks += own
    db = {"appointments": {a["id"]: {"surname": s, "service": a["service"], "day": a["day"]}
                           for s, appts in patients.items() for a in appts}}
    lines = ",\n".join(json.dumps(t) for t in tasks)  # one task per line: a readable diff, a smaller file
    (args.out / "tasks.json").write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    (args.out / "splits.json").write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")
    (args.out / "db.json").write_text(json.dumps(db, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
