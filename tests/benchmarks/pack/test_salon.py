"""The salon example pack: the behaviour RL must learn (asking for the day) is in at most 20% of the
demonstrations, and the held-out splits tell an agent that asks from one that guesses."""
import json

from mua.benchmarks.pack import PackBenchmark
from mua.harness.agents import ScriptedAgent
from mua.harness.types import Message
from tests.helpers.packs import (
    EXAMPLES,
    assert_gold_passes_every_task,
    assert_splits_disjoint_and_regenerated,
    call,
    play,
)

EXAMPLE = EXAMPLES / "salon"


def asks_the_day(task) -> bool:
    return "day" in task.scenario["replies"][0]["ask"]


def test_gold_agent_passes_every_task_with_the_scripted_and_the_static_user():
    assert_gold_passes_every_task(EXAMPLE, 720)


def test_at_most_a_fifth_of_the_demonstrations_ask_for_the_day():
    bench = PackBenchmark(EXAMPLE)
    train = bench.load_tasks("tasks", "train")
    share = sum(asks_the_day(t) for t in train) / len(train)
    assert 0.15 < share <= 0.20
    usual = [t for t in train if t.evaluation["actions"][0]["arguments"]["day"] == "saturday"]
    assert all(asks_the_day(t) for t in train if t not in usual)  # every other day is asked for
    for split in ("validation", "test"):  # guessing saturday passes about half of a held-out split
        tasks = bench.load_tasks("tasks", split)
        saturday = sum(t.evaluation["actions"][0]["arguments"]["day"] == "saturday" for t in tasks)
        assert saturday / len(tasks) == 0.5


def test_guessing_the_usual_day_fails_another_day():
    bench = PackBenchmark(EXAMPLE)
    task = next(t for t in bench.load_tasks("tasks", "test")
                if t.evaluation["actions"][0]["arguments"]["day"] != "saturday")
    facts = task.evaluation["actions"][0]["arguments"]
    ask = Message(role="assistant", content="Sure. What is your name? Which service would you like?")
    for day, reward in ((facts["day"], 1.0), ("saturday", 0.0)):
        agent = ScriptedAgent([[ask], [call("book_visit", dict(facts, day=day)),
                                       Message(role="assistant", content="Booked.")]])
        assert play(bench, task, agent).score.reward == reward


def test_splits_are_disjoint_and_regenerate_from_the_seed(tmp_path):
    def fact(task):
        return json.dumps(task.evaluation["actions"][0]["arguments"])
    assert_splits_disjoint_and_regenerated(EXAMPLE, {"train": 600, "validation": 40, "test": 80}, fact, tmp_path)
