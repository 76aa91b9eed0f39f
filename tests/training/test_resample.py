"""Value resampling of SFT data (training/resample.py, `mua sft --resample-values K`): every name and id the agent
copies is replaced consistently, by new values of the same shape that no train conversation has, the same seed
gives the same data, and off (the default) the rows are the rows."""
from __future__ import annotations

import copy
import json
import random
import re

import pytest

from mua.training.resample import fresh_value, resample_rows, values_to_replace


def _call(name: str, **arguments) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _row(surname: str, wanted: str, other: str, service: str = "dentist") -> dict:
    """An appointments-style exported conversation: the surname from the user, the id from the lookup."""
    return {"task_id": f"t-{surname}", "tools": "[]", "reward": 1.0, "messages": [
        {"role": "system", "content": f"Policy. Example: a patient such as {surname} has ids like {other}."},
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "I need to move my appointment."},
        {"role": "assistant", "content": "Sure. What is your surname?"},
        {"role": "user", "content": f"{surname}."},
        _call("find_appointments", surname=surname),
        {"role": "tool", "name": "find_appointments", "tool_call_id": "c", "content": json.dumps(
            [{"appointment_id": other, "service": "nurse"}, {"appointment_id": wanted, "service": service}])},
        {"role": "user", "content": f"The {service} one, on friday. Not {surname}son, {surname}."},
        _call("move_appointment", appointment_id=wanted, day="friday"),
        {"role": "tool", "name": "move_appointment", "tool_call_id": "c",
         "content": json.dumps({"appointment_id": wanted, "day": "friday"})},
    ]}


ROWS = [_row("Ivanova", "A135", "A204"), _row("Chen", "A793", "A336"), _row("Okafor", "A512", "A118")]


def _texts(row: dict) -> str:
    return json.dumps(row["messages"])


def _arguments(row: dict, tool: str) -> dict:
    return next(json.loads(c["function"]["arguments"]) for m in row["messages"] for c in m.get("tool_calls") or []
                if c["function"]["name"] == tool)


def test_the_values_to_replace_are_the_copied_arguments_and_ids_of_their_shape():
    assert values_to_replace(ROWS[0]["messages"]) == ["Ivanova", "A135", "A204"]  # friday: a choice, kept


def test_every_occurrence_is_replaced_by_one_new_value_consistently():
    row = ROWS[0]
    new = resample_rows([row], 1, seed=3)[0]
    surname = _arguments(new, "find_appointments")["surname"]
    wanted = _arguments(new, "move_appointment")["appointment_id"]
    other = next(a["appointment_id"] for a in json.loads(new["messages"][6]["content"])
                 if a["appointment_id"] != wanted)
    text = _texts(new)
    assert not re.search(r"(?<!\w)(Ivanova|A135|A204)(?!\w)", text)
    # the same new value wherever the old one was: system prompt, user turns, tool calls, tool results
    assert new["messages"][0]["content"] == f"Policy. Example: a patient such as {surname} has ids like {other}."
    assert new["messages"][4]["content"] == f"{surname}."
    assert new["messages"][7]["content"] == f"The dentist one, on friday. Not Ivanovason, {surname}."  # whole words
    assert json.loads(new["messages"][9]["content"])["appointment_id"] == wanted
    assert [m["role"] for m in new["messages"]] == [m["role"] for m in row["messages"]]
    assert {k: v for k, v in new.items() if k != "messages"} == {k: v for k, v in row.items() if k != "messages"}
    # the same shape: a capitalised made-up name, the id's prefix and digit count
    assert re.fullmatch(r"[A-Z][a-z]{2,}", surname) and abs(len(surname) - len("Ivanova")) <= 2
    assert re.fullmatch(r"A[1-9]\d\d", wanted) and re.fullmatch(r"A[1-9]\d\d", other) and wanted != other


def test_new_values_never_equal_a_train_value_and_each_copy_draws_anew():
    train = {v for row in ROWS for v in values_to_replace(row["messages"])}
    out = resample_rows(ROWS, 50, seed=0)
    assert len(out) == 150
    drawn = [v for row in out for v in values_to_replace(row["messages"])]
    assert not train & set(drawn)
    surnames = [_arguments(row, "find_appointments")["surname"] for row in out]
    assert len(set(surnames)) > 140  # memorising a surname is no help: almost every copy has its own


def test_a_shape_with_few_values_left_draws_only_the_unused_one():
    rows = [{"messages": [{"role": "user", "content": f"code Q{d}"}, _call("redeem", code=f"Q{d}")]}
            for d in range(1, 9)]  # Q1 to Q8 in train: of the one-digit codes only Q9 is new
    drawn = {_arguments(row, "redeem")["code"] for row in resample_rows(rows, 3, seed=0)}
    assert drawn == {"Q9"}


def test_the_same_seed_gives_the_same_data_and_the_input_is_not_changed():
    before = copy.deepcopy(ROWS)
    a, b = resample_rows(ROWS, 4, seed=7), resample_rows(ROWS, 4, seed=7)
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(resample_rows(ROWS, 4, seed=8)) != json.dumps(a)
    assert ROWS == before


def test_off_by_default_the_rows_are_untouched():
    from mua.training.sft_config import parse_sft_config

    assert parse_sft_config(["--policy", "p"]).resample_values == 0
    assert resample_rows(ROWS, 0, seed=5) is ROWS
    assert parse_sft_config(["--policy", "p", "--resample-values", "3"]).resample_values == 3


def test_a_negative_count_is_refused_naming_the_setting():
    from mua.harness.errors import ConfigError
    from mua.training.sft_config import parse_sft_config

    with pytest.raises(ConfigError, match="resample_values"):
        parse_sft_config(["--policy", "p", "--resample-values", "-1"])


def test_shapes_a_bare_number_is_replaced_only_where_it_is_the_value():
    rng = random.Random(0)
    assert re.fullmatch(r"#W[1-9]\d{6}", fresh_value("#W1234567", rng))
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", fresh_value("Ann Lee", rng))
    assert re.fullmatch(r"0\d\d", fresh_value("042", rng))
    row = {"messages": [{"role": "user", "content": "zip 19122, card 55512, price 19122.5"},
                        _call("find_user", zip="19122")]}
    new = resample_rows([row], 1, seed=0)[0]
    zip_code = _arguments(new, "find_user")["zip"]
    assert new["messages"][0]["content"] == f"zip {zip_code}, card 55512, price {zip_code}.5"


def test_exported_rows_resample_and_still_tokenise(exported, tiny_tokenizer, stop_ids):
    """Real `mua export` rows (bookings' gold): the copied name changes everywhere and the rows tokenise."""
    import datasets

    from mua.training.sft import sft_dataset

    rows = list(datasets.load_from_disk(str(exported / "ds")))
    new = resample_rows(rows, 2, seed=0)
    assert len(new) == 2 * len(rows)
    for old, row in zip(rows * 2, new):
        for value in values_to_replace(old["messages"]):
            assert not re.search(rf"(?<!\w){re.escape(value)}(?!\w)", _texts(row))
    assert len(sft_dataset(new, tiny_tokenizer, stop_ids)) == len(new)
