"""The appointments example pack: an ambiguous first request ("move my appointment") that only a question
resolves when the patient has two appointments; the gold conversation looks up, then asks, then acts."""
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

EXAMPLE = EXAMPLES / "appointments"


def test_gold_agent_passes_every_task_with_the_scripted_and_the_static_user():
    assert_gold_passes_every_task(EXAMPLE, 296)


def test_only_asking_which_appointment_resolves_the_request():
    """A guesser (asks the surname and the day, moves the first appointment listed) fails about half of the
    patients with two appointments; the gold agent, which asks, passes them all."""
    bench = PackBenchmark(EXAMPLE)
    db = json.loads((EXAMPLE / "db.json").read_text())["appointments"]
    two = [t for t in bench.load_tasks("tasks", "train") if t.scenario["replies"][1].get("ask")]
    assert 0.5 < len(two) / len(bench.load_tasks("tasks", "train")) < 0.8
    passed = 0
    for task in two:
        surname = task.evaluation["actions"][0]["arguments"]["surname"]
        day = task.evaluation["actions"][1]["arguments"]["day"]
        first = next(key for key, a in db.items() if a["surname"] == surname)
        guesser = ScriptedAgent([[Message(role="assistant", content="What is your surname?")],
                                 [call("find_appointments", {"surname": surname}),
                                  Message(role="assistant", content="Which day would you like instead?")],
                                 [call("move_appointment", {"appointment_id": first, "day": day}),
                                  Message(role="assistant", content="Moved.")]])
        passed += play(bench, task, guesser).score.reward == 1.0
    assert 0.3 < passed / len(two) < 0.7
    gold = play(bench, two[0], bench.gold_agent(two[0]))
    said = [m.content or m.tool_calls[0].name for m in gold.messages if m.role == "assistant"]
    # ask, look up, then ask again (which one, and the day), then act
    assert said[1:5] == ["Sure. What is your surname?", "find_appointments",
                         "Which appointment do you want to move? Which day would you like instead?", "move_appointment"]


def test_splits_are_disjoint_and_regenerate_from_the_seed(tmp_path):
    assert_splits_disjoint_and_regenerated(EXAMPLE, {"train": 200, "validation": 32, "test": 64},
                                           lambda t: json.dumps(t.evaluation["actions"][1]["arguments"]), tmp_path)
