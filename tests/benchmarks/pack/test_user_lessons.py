"""Lessons for a user model: each question is a declared phrasing and is answered with exactly the facts it asks
for; a message asking for nothing is answered with no fact; the same seed gives the same rows; a bad ``asks`` is a
one-line data error."""
import json
import random
import shutil
from pathlib import Path

import pytest

from mua.benchmarks.pack import PackBenchmark
from mua.benchmarks.pack.user_lessons import CLARIFY, lesson, lesson_rows
from mua.harness.errors import DataError

BOOKINGS = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"
ASKS = {"name": ["What is your name?", "Who is the booking for?"], "sit": ["Where would you like to sit?"],
        "time": ["When would you like to come?", "At what time?"]}


def scenario() -> dict:
    return {"instructions": {"reason_for_call": "A table, please."},
            "replies": [{"when": [k], "say": say, "asks": ASKS[k]}
                        for k, say in (("name", "Vera."), ("sit", "A bar table."), ("time", "At 8 pm."))]}


def test_each_question_gets_the_facts_it_asks_for_and_a_decoy_none():
    says = {r["when"][0]: r["say"] for r in scenario()["replies"]}
    asked_by = {q: k for k, qs in ASKS.items() for q in qs}
    decoys = 0
    for seed in range(40):
        messages = lesson(scenario(), None, random.Random(seed), join_share=0)  # side by side
        assert [m.role for m in messages[:2]] == ["assistant", "user"] and messages[-1].content == "###STOP###"
        given = []
        for ask, answer in zip(messages[2:-2:2], messages[3:-2:2]):
            if answer.content == CLARIFY:  # a message asking nothing: no declared phrasing in it
                decoys += 1
                assert not any(q in ask.content for q in asked_by)
                continue
            facts = [asked_by[q] for q in asked_by if q in ask.content]
            assert answer.content == " ".join(says[k] for k in ("name", "sit", "time") if k in facts)
            given += facts
        assert sorted(given) == ["name", "sit", "time"]  # every fact asked once
    assert decoys > 0


def asking_pack(tmp_path, count: int) -> tuple[Path, list[dict]]:
    """The bookings pack cut to its first ``count`` tasks (all in train), their replies declaring ASKS."""
    pack = tmp_path / "pack"
    shutil.copytree(BOOKINGS, pack, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    tasks = json.loads((pack / "tasks.json").read_text())[:count]
    for t in tasks:
        for r in t["user_scenario"]["replies"]:
            r["asks"] = ASKS[r["when"][0]]
    (pack / "tasks.json").write_text(json.dumps(tasks))
    (pack / "splits.json").write_text(json.dumps({"train": [t["id"] for t in tasks]}))
    return pack, tasks


def test_rows_are_the_user_view_and_reproducible(tmp_path):
    pack, tasks = asking_pack(tmp_path, 3)
    bench = PackBenchmark(pack)
    rows = lesson_rows(bench, bench.load_tasks("tasks", "train"), 2, seed=0)
    assert len(rows) == 6 and rows == lesson_rows(bench, bench.load_tasks("tasks", "train"), 2, seed=0)
    first = rows[0]["messages"]
    assert first[0]["role"] == "system"
    assert first[0]["content"] == bench.user_prompt(bench.find_task("tasks", "book-000"))
    assert first[1]["role"] == "user" and first[2]["role"] == "assistant"  # the agent speaks as the user turn
    tasks[0]["user_scenario"]["replies"][0]["asks"] = ["fine", ""]
    (pack / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(DataError, match=r"replies\[0\]: field 'asks' must be a list of questions"):
        PackBenchmark(pack).load_tasks("tasks")


def test_rounds_ask_every_fact_that_many_times():
    asked_by = {q: k for k, qs in ASKS.items() for q in qs}
    for seed in range(20):
        messages = lesson(scenario(), None, random.Random(seed), rounds=3, join_share=0)
        given = [asked_by[q] for ask, answer in zip(messages[2:-2:2], messages[3:-2:2]) if answer.content != CLARIFY
                 for q in asked_by if q in ask.content]
        assert sorted(given) == ["name"] * 3 + ["sit"] * 3 + ["time"] * 3


def test_a_replies_prompt_shows_each_reply_on_its_line_and_lessons_answer_with_those_lines(tmp_path):
    pack, _ = asking_pack(tmp_path, 2)
    meta = json.loads((pack / "pack.json").read_text())
    scenario_prompt = PackBenchmark(pack).user_prompt(PackBenchmark(pack).find_task("tasks", "book-000"))
    (pack / "pack.json").write_text(json.dumps({**meta, "user": "llm", "user_prompt": "replies"}))
    bench = PackBenchmark(pack)
    task = bench.find_task("tasks", "book-000")
    prompt = bench.user_prompt(task)
    assert prompt != scenario_prompt and prompt.startswith(bench.pack.guidelines)
    assert prompt.endswith("<scenario>\nopening:\nHi, I would like to book a table.\nname:\nNora.\nsit:\n"
                           "A bar table, please.\ntime:\nAt 7 pm.\n</scenario>")
    lines = set(prompt.splitlines())
    answers = [m["content"] for row in lesson_rows(bench, [task], 4, seed=0) for m in row["messages"][2::2]]
    facts = [a for a in answers if a not in (CLARIFY, "###STOP###")]
    assert any("\n" in a for a in facts)  # several facts asked at once: one a line
    assert all(set(a.splitlines()) <= lines for a in facts)  # every line copied whole from the prompt


def test_joined_questions_ask_several_facts_in_one_sentence_and_get_each_of_them():
    from mua.benchmarks.pack.user_lessons import joined

    assert joined(["What is your name?", "Where would you like to sit?"], random.Random(0)) in {
        f"What is your name{j}where would you like to sit?" for j in (" and ", ", and ", ", and also ", " and also ")}
    three = joined(["Your name, please?", "I need the time.", "Where would you like to sit?"], random.Random(0))
    assert three.startswith("Your name, please, I need the time") and three.endswith("where would you like to sit?")
    says = {r["when"][0]: r["say"] for r in scenario()["replies"]}
    # a joined question holds each declared phrasing without its "?" and, after the first, in lower case
    stems = {q.rstrip("?"): k for k, qs in ASKS.items() for q in qs}
    joined_turns = 0
    for seed in range(40):
        messages = lesson(scenario(), None, random.Random(seed), join_share=1.0)
        for ask, answer in zip(messages[2:-2:2], messages[3:-2:2]):
            if answer.content == CLARIFY or ask.content.count("?") != 1:
                continue
            facts = {k for stem, k in stems.items() if stem.lower() in ask.content.lower()}
            if len(facts) > 1:
                joined_turns += 1
                assert answer.content == " ".join(says[k] for k in ("name", "sit", "time") if k in facts)
    assert joined_turns > 10
    side_by_side = lesson(scenario(), None, random.Random(3), join_share=0)
    assert side_by_side == lesson(scenario(), None, random.Random(3), join_share=0.0)


def test_declared_clauses_make_requests_that_get_exactly_the_facts_they_name():
    """Replies declaring ``clauses`` are asked, in about half the turns, as one request built from them ("Please
    tell me your full name and the hour you want."), answered with each fact named; a scenario without clauses
    never is."""
    from mua.benchmarks.pack.user_lessons import CLAUSE_LEAD_INS

    clauses = {"name": ["your full name"], "sit": ["the table you prefer"], "time": ["the hour you want"]}
    with_clauses = scenario()
    for r in with_clauses["replies"]:
        r["clauses"] = clauses[r["when"][0]]
    says = {r["when"][0]: r["say"] for r in with_clauses["replies"]}
    requests = 0
    for seed in range(40):
        messages = lesson(with_clauses, None, random.Random(seed))
        for ask, answer in zip(messages[2:-2:2], messages[3:-2:2]):
            if not ask.content.startswith(CLAUSE_LEAD_INS):
                continue
            requests += 1
            named = [k for k, (c,) in clauses.items() if c in ask.content]
            assert named and answer.content == " ".join(says[k] for k in ("name", "sit", "time") if k in named)
    assert 20 < requests
    assert not any(m.content.startswith(CLAUSE_LEAD_INS) for s in range(20)
                   for m in lesson(scenario(), None, random.Random(s)))


def test_small_talk_is_none_of_the_suites_chatter_and_the_refusal_opens_with_no_name():
    """The lessons' small talk never is a message the adversarial suite scores (harness/users/suite.py CHATTER),
    and the refusal's first word is not a capitalised word (a name-place tokenizer would share its first token
    with names)."""
    import re

    from mua.benchmarks.pack.user_lessons import SMALL_TALK, decoy
    from mua.harness.users.suite import CHATTER

    assert not set(SMALL_TALK) & set(CHATTER) and len(set(SMALL_TALK)) == len(SMALL_TALK) >= 20
    assert not re.match(r"[A-Z][a-z]", CLARIFY)
    decoys = {decoy(scenario()["replies"], random.Random(seed)) for seed in range(200)}
    assert any("Name" in d for d in decoys) and any("name" in d for d in decoys)  # stuffing both ways
