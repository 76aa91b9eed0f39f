"""Tool calls inside an episode give the official execution's text, including for malformed and hostile calls
(fixture: results of bfcl-eval 2025.8.6.2's executor on the same calls, in sequence, on real task states)."""
import json
from pathlib import Path

from mua.benchmarks.bfcl import BfclBenchmark
from mua.harness.types import ToolCall

FIXTURES = Path(__file__).parent / "fixtures"


def test_bad_calls_match_official_texts(data_dir):
    fixture = json.loads((FIXTURES / "bad_calls_official.json").read_text())
    bench = BfclBenchmark(data_dir)
    mismatches = []
    for case in fixture["cases"]:
        subset = case["task_id"].rsplit("_", 1)[0]
        env = bench.start(bench.find_task(subset, case["task_id"])).env
        for (name, args), expected in zip(fixture["calls"], case["results"]):
            got = env.execute(ToolCall(id="x", name=name, arguments=json.dumps(args))).content[:400]
            if got != expected:
                mismatches.append((case["task_id"], name, args, got[:120], expected[:120]))
    assert not mismatches, mismatches[:5]


def test_tools_are_openai_schemas_and_miss_func_withholds(data_dir):
    bench = BfclBenchmark(data_dir)
    task = next(t for t in bench.load_tasks("multi_turn_miss_func") if t.raw.get("missed_function"))
    turn, names = next(iter((int(k), v) for k, v in task.raw["missed_function"].items()))
    env = bench.start(task).env
    before = {t.name for t in env.agent_tools(turn - 1)}
    after = {t.name for t in env.agent_tools(turn)}
    assert not set(names) & before and set(names) <= after
    spec = env.agent_tools(turn)[0].to_openai()["function"]
    assert spec["parameters"]["type"] == "object"
    assert "dict" not in json.dumps(spec["parameters"]).replace('"description"', "")


def test_holdout_turn_user_text(data_dir):
    bench = BfclBenchmark(data_dir)
    task = next(t for t in bench.load_tasks("multi_turn_miss_func") if t.raw.get("missed_function"))
    turn = int(next(iter(task.raw["missed_function"])))
    user = bench.gold_user(task)
    assert user.turns[turn].content == "I have updated some more functions you can choose from. What about now?"


def test_episode_start_is_fresh(data_dir):
    bench = BfclBenchmark(data_dir)
    task = bench.find_task("multi_turn_base", "multi_turn_base_0")
    env1 = bench.start(task).env
    env1.execute(ToolCall(id="1", name="cd", arguments='{"folder": "document"}'))
    env1.execute(ToolCall(id="2", name="mkdir", arguments='{"dir_name": "zzz"}'))
    assert bench.start(task).env.state() != env1.state()
    assert json.dumps(task.initial_state).count("zzz") == 0
