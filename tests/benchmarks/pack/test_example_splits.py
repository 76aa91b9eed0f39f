"""Every example pack's held-out splits are new to training: no surname or name, no id (quote code, appointment
id) and no (name, id) pair of a validation or test task occurs in a train task, so copying them cannot be
memorised (docs/learning.md)."""
import json

import pytest

from tests.helpers.packs import EXAMPLES

# per pack: the (action, argument) that holds the person's name, and the one that holds an id from a tool's result
PACKS = {"bookings": (("book_table", "name"), None),
         "refills": (("quote_refill", "surname"), ("order_refill", "quote")),
         "appointments": (("find_appointments", "surname"), ("move_appointment", "appointment_id")),
         "salon": (("book_visit", "name"), None)}


def argument(task: dict, where: tuple[str, str]):
    action = next(a for a in task["evaluation_criteria"]["actions"] if a["name"] == where[0])
    return action["arguments"][where[1]]


def test_every_example_pack_is_listed():
    assert sorted(p.name for p in EXAMPLES.iterdir() if (p / "pack.json").is_file()) == sorted(PACKS)


@pytest.mark.parametrize("pack", sorted(PACKS))
@pytest.mark.parametrize("held_out", ["validation", "test"])
def test_held_out_names_ids_and_pairs_never_occur_in_train(pack, held_out):
    tasks = {t["id"]: t for t in json.loads((EXAMPLES / pack / "tasks.json").read_text())}
    splits = json.loads((EXAMPLES / pack / "splits.json").read_text())
    name_at, id_at = PACKS[pack]

    def seen(split: str) -> tuple[set, set, set]:
        own = [tasks[i] for i in splits[split]]
        names = {argument(t, name_at) for t in own}
        ids = {argument(t, id_at) for t in own} if id_at else set()
        pairs = {(argument(t, name_at), argument(t, id_at)) for t in own} if id_at else set()
        return names, ids, pairs

    train, other = seen("train"), seen(held_out)
    assert other[0] and not train[0] & other[0], sorted(train[0] & other[0])[:5]
    assert not train[1] & other[1], sorted(train[1] & other[1])[:5]
    assert not train[2] & other[2], sorted(train[2] & other[2])[:5]
    if id_at:
        assert other[1] and other[2]
