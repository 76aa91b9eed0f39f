"""Value resampling of user-side rows (training/resample.py ``user_row_values``, `mua sft --resample-values K` on
`mua export --role user` rows or lessons): the values a user copies are the names and digit runs of its replies
that its scenario prompt also has, not the words every prompt shares; each is replaced consistently in every
message; agent rows beside them are resampled as before."""
from __future__ import annotations

import json
import re

from mua.training.resample import is_user_row, resample_rows, user_row_values

OPENINGS = ("Hi, I would like to book a table.", "Hello, can I reserve a table?", "I want a table, please.")


def _user_row(name: str, hour: int, opening: str) -> dict:
    """A user-side row as `mua export --role user` writes it: the scenario as the system prompt, the agent as the
    user turns, the user's replies as the assistant turns."""
    prompt = (f"Answer with the lines asked for.\n<scenario>\nopening:\n{opening}\nname:\n{name}.\nsit:\n"
              f"A bar table, please.\ntime:\nAt {hour} pm.\n</scenario>")
    return {"task_id": f"t-{name}", "role": "user", "tools": "[]", "reward": None, "messages": [
        {"role": "system", "content": prompt},
        {"role": "user", "content": "Hi! How can I help you today?"},
        {"role": "assistant", "content": opening},
        {"role": "user", "content": "What is your name, and at what time?"},
        {"role": "assistant", "content": f"{name}.\nAt {hour} pm."},
        {"role": "user", "content": "Is name? What sit?"},
        {"role": "assistant", "content": "Sorry, I am not sure what you need from me."},
        {"role": "user", "content": f"Thank you, {name}. Booked for {hour} pm, table 12."},
        {"role": "assistant", "content": "###STOP###"},
    ]}


NAMES = ("Nora", "Lucas", "Tina", "Jonas", "Ada", "Umar", "Grace", "Ivan", "Mei", "Otto", "Sven", "Cora")
ROWS = [_user_row(name, 5 + i % 5, OPENINGS[i % 3]) for i, name in enumerate(NAMES)]


def test_a_user_row_is_told_by_its_role_column():
    assert is_user_row(ROWS[0]) and not is_user_row({"messages": []}) and not is_user_row({"role": "agent"})


def test_the_copied_values_are_the_replies_names_and_digits_that_the_prompt_has_not_the_prompts_form():
    values = user_row_values(ROWS)
    # "Hi" and "At" open a line in many prompts: the form, not a value; "Sorry" and "12" are not in the prompt
    assert values[0] == ["Nora", "5"] and values[1] == ["Lucas", "6"] and values[5] == ["Umar", "5"]
    # on its own a row has no other prompts to compare with: its capitalised words of the prompt count too
    assert user_row_values(ROWS[:1]) == {0: ["Hi", "Nora", "At", "5"]}


def test_each_value_is_replaced_by_one_new_value_in_every_message():
    old = ROWS[1]
    new = resample_rows(ROWS, 1, seed=0)[1]
    name = re.fullmatch(r"([A-Z][a-z]+)\.\nAt ([1-9]) pm\.", new["messages"][4]["content"])
    assert name is not None
    surname, hour = name.groups()
    assert surname != "Lucas" and abs(len(surname) - len("Lucas")) <= 2
    expected = [m["content"].replace("Lucas", surname).replace(" 6 pm", f" {hour} pm") for m in old["messages"]]
    assert [m["content"] for m in new["messages"]] == expected  # prompt, replies, the agent's turns alike
    assert new["messages"][2]["content"] == OPENINGS[1] and "table 12" in new["messages"][7]["content"]
    assert {k: v for k, v in new.items() if k != "messages"} == {k: v for k, v in old.items() if k != "messages"}


def test_copies_draw_anew_and_the_hours_may_be_any_digit():
    out = resample_rows(ROWS, 30, seed=1)
    assert len(out) == 30 * len(ROWS)
    hours = {m["content"].split("At ")[1][0] for r in out for m in r["messages"][4:5]}
    assert hours == set("123456789")  # the train hours (5 to 9) are not skipped: too few one-digit values
    names = [r["messages"][4]["content"].split(".")[0] for r in out]
    assert len(set(names)) > 0.9 * len(names) and not set(names) & set(NAMES)
    assert json.dumps(out) == json.dumps(resample_rows(ROWS, 30, seed=1))


def test_agent_rows_beside_user_rows_keep_their_own_rule():
    agent = {"task_id": "a", "tools": "[]", "messages": [
        {"role": "user", "content": "I am Nora."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "book", "arguments": json.dumps({"name": "Nora"})}}]}]}
    mixed = resample_rows([agent, *ROWS], 2, seed=4)
    # the agent's copied argument is replaced (its rule), the user rows' names too (theirs)
    assert "Nora" not in json.dumps(mixed[0]) and mixed[0]["messages"][0]["content"].startswith("I am ")
    assert len(mixed) == 2 * (1 + len(ROWS)) and "Nora" not in json.dumps(mixed[1]["messages"])
