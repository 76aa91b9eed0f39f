"""The refills example pack: an id flows from one tool's result into the next call, the gold conversation asks a
question between two calls, and the demonstrations often skip the branch question."""
import json

import pytest

from mua.benchmarks.pack import PackBenchmark
from mua.harness.agents import ScriptedAgent
from mua.harness.errors import DataError
from mua.harness.types import Message
from tests.helpers.packs import (
    EXAMPLES,
    assert_gold_passes_every_task,
    assert_splits_disjoint_and_regenerated,
    call,
    play,
)

EXAMPLE = EXAMPLES / "refills"


def test_gold_agent_passes_every_task_with_the_scripted_and_the_static_user():
    assert_gold_passes_every_task(EXAMPLE, 784)


def test_the_order_needs_the_code_from_the_quote_result():
    bench = PackBenchmark(EXAMPLE)
    task = next(t for t in bench.load_tasks("tasks", "test") if t.scenario["replies"][2].get("ask"))
    quote, order = (a["arguments"] for a in task.evaluation["actions"])
    gold = play(bench, task, bench.gold_agent(task))
    said = [m.role + ":" + (m.content or m.tool_calls[0].name) for m in gold.messages[1:]]
    # look up, then ask, then act
    assert [s.split(":")[0] for s in said] == ["user", "assistant", "user", "assistant", "tool", "assistant", "user",
                                              "assistant", "tool", "assistant", "user"]
    assert said[3] == "assistant:quote_refill" and said[5].endswith("Which branch will you pick it up from?")
    assert said[7] == "assistant:order_refill"
    result = next(m for m in gold.messages if m.role == "tool")
    assert json.loads(result.content)["quote"] == order["quote"]  # only the quote's result holds the code
    assert order["quote"] not in json.dumps(task.scenario)
    ask = Message(role="assistant", content="What is your surname? Which medicine do you need? Which branch?")
    wrong = dict(order, quote="Q" + str((int(order["quote"][1:]) + 1) % 10000).zfill(4))
    for args, reward in ((order, 1.0), (wrong, 0.0)):
        agent = ScriptedAgent([[ask], [call("quote_refill", quote), call("order_refill", args),
                                       Message(role="assistant", content="Ordered.")]])
        assert play(bench, task, agent).score.reward == reward


def test_demonstrations_skip_the_branch_question_for_most_central_customers():
    bench = PackBenchmark(EXAMPLE)
    tasks = bench.load_tasks("tasks", "train")
    central = [t for t in tasks if t.evaluation["actions"][1]["arguments"]["branch"] == "central"]
    other = [t for t in tasks if t not in central]
    assert 0.5 < len(central) / len(tasks) < 0.7
    assert all(t.scenario["replies"][2].get("ask") for t in other)
    assert 0.0 < sum(bool(t.scenario["replies"][2].get("ask")) for t in central) / len(central) < 0.1
    assert sum(bool(t.scenario["replies"][2].get("ask")) for t in tasks) / len(tasks) < 0.45  # greedy imitation skips


def test_splits_are_disjoint_and_regenerate_from_the_seed(tmp_path):
    def fact(task):  # every argument of both calls
        return json.dumps([a["arguments"] for a in task.evaluation["actions"]])
    assert_splits_disjoint_and_regenerated(EXAMPLE, {"train": 640, "validation": 48, "test": 96}, fact, tmp_path)


def test_after_must_name_an_expected_action(tmp_path):
    import shutil

    folder = tmp_path / "pack"
    shutil.copytree(EXAMPLE, folder)
    tasks = json.loads((folder / "tasks.json").read_text())
    tasks[0]["user_scenario"]["replies"][2].update(ask="Which branch?", after="nope")
    (folder / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(DataError, match=r"replies\[2\].*field 'after' must name the action_id"):
        PackBenchmark(folder).load_tasks("tasks")
