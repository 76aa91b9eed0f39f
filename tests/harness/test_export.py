"""`mua export` reads prompts without starting episodes, looks each subset's tasks up once, and exports the
tools the agent had at each turn."""
import json

import pytest

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.interfaces import AgentPrompt
from mua.harness.tools.export import export_rows, user_turns
from mua.harness.types import Message, ToolCall, ToolSpec
from tests.helpers.counter_bench import ADD, CounterBenchmark

SUB = ToolSpec("sub", "Subtract n from the counter.", {"type": "object", "properties": {"n": {"type": "integer"}}})


class CountingBench(CounterBenchmark):
    """Counts task builds; never starts an episode; offers `sub` from the second user turn on."""

    def __init__(self):
        super().__init__()
        self.builds: list[str] = []

    def load_tasks(self, subset, split=None):
        self.builds.append(subset)
        return super().load_tasks(subset, split)

    def start(self, task):
        raise AssertionError("export must not start an episode")

    def agent_prompt(self, task):
        return AgentPrompt("You operate a counter.", lambda turn: [ADD] if turn == 0 else [ADD, SUB])


def _write_run(path, rows):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"benchmark": "counter", "split": None}), encoding="utf-8")
    with open(path / "episodes.jsonl", "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def _row(subset, task_id, trial, user_says):
    messages = [{"role": "assistant", "content": "Hi! How can I help?"}]
    for text in user_says:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    return {"subset": subset, "task_id": task_id, "trial": trial, "messages": messages, "reward": 1.0,
            "components": {"counter": 1.0}, "termination": "user_stop"}


def test_each_subset_built_once_and_no_episode_started(tmp_path):
    rows = [_row(s, str(i % 4), i // 4, ["set it"]) for s in ("easy", "hard") for i in range(12)]
    _write_run(tmp_path / "run", rows)
    bench = CountingBench()
    out = export_rows(tmp_path / "run", bench)
    assert len(out) == 24
    assert sorted(bench.builds) == ["easy", "hard"]  # once per subset, not once per row
    assert out[0]["messages"][0] == {"role": "system", "content": "You operate a counter.", "tool_calls": None,
                                     "tool_call_id": None, "name": None}


def test_tools_offered_at_each_turn(tmp_path):
    _write_run(tmp_path / "run", [_row("easy", "0", 0, ["one"]), _row("easy", "1", 0, ["one", "two", "three"])])
    one, three = export_rows(tmp_path / "run", CountingBench())
    assert [t["function"]["name"] for t in json.loads(one["tools"])] == ["add"]
    assert json.loads(one["tools_by_turn"]) == [["add"]]
    # a tool added at the second turn is exported too (BFCL miss_func), with the turn it came in
    assert [t["function"]["name"] for t in json.loads(three["tools"])] == ["add", "sub"]
    assert json.loads(three["tools_by_turn"]) == [["add"], ["add", "sub"], ["add", "sub"]]


def test_default_agent_prompt_starts_an_episode(tmp_path):
    _write_run(tmp_path / "run", [_row("easy", "0", 0, ["one"])])
    (row,) = export_rows(tmp_path / "run", CounterBenchmark())
    assert json.loads(row["tools"]) == [ADD.to_openai()]


def test_unknown_task_is_one_line(tmp_path):
    _write_run(tmp_path / "run", [_row("easy", "99", 0, ["one"])])
    with pytest.raises(Exception, match=r"counter/easy: no task with id '99' \(is --data-dir the one"):
        export_rows(tmp_path / "run", CountingBench())


def test_user_turns_counts_user_messages_not_user_tool_calls():
    assert user_turns([Message(role="assistant", content="Hi")]) == 1
    said = [Message(role="user", content="a"), Message(role="assistant", content="b"),
            Message(role="user", content=None, tool_calls=[ToolCall(id="u", name="peek", arguments="{}")]),
            Message(role="user", content="c")]
    assert user_turns(said) == 2


def test_bfcl_miss_func_exports_the_added_tools(data_dir, tmp_path):
    assert main(["eval", "--benchmark", "bfcl_v3", "--subset", "multi_turn_miss_func", "--limit", "1",
                 "--agent", "gold", "--data-dir", str(data_dir), "--out", str(tmp_path / "run"),
                 "--no-progress"]) == 0
    assert main(["export", str(tmp_path / "run"), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl"),
                 "--data-dir", str(data_dir)]) == 0
    row = json.loads((tmp_path / "x.jsonl").read_text(encoding="utf-8"))
    by_turn = json.loads(row["tools_by_turn"])
    first, last = set(by_turn[0]), set(by_turn[-1])
    assert first < last  # miss_func: a function is withheld, then offered at a later turn
    assert [t["function"]["name"] for t in json.loads(row["tools"])] == by_turn[-1]


BOOKINGS = "benchmarks/pack/examples/bookings"


def test_user_side_of_a_pack_run(tmp_path, capsys):
    """--role user: the user simulator's own view (its scenario prompt, the agent's words as user turns, its
    replies as assistant turns), the same view SimulatedUser shows the user model."""
    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.users.simulator import SimulatedUser

    run = tmp_path / "gold"
    assert main(["eval", "--benchmark", "pack", "--data-dir", BOOKINGS, "--agent", "gold", "--split", "train",
                 "--limit", "2", "--out", str(run), "--no-progress"]) == 0
    out = tmp_path / "user.jsonl"
    assert main(["export", str(run), "--role", "user", "--format", "jsonl", "--out", str(out),
                 "--data-dir", BOOKINGS]) == 0
    assert "exported 2 episodes (user side)" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    episodes = {r["task_id"]: r for r in map(json.loads, (run / "episodes.jsonl").read_text().splitlines())}
    bench = PackBenchmark(BOOKINGS)
    for row in rows:
        task = bench.find_task("tasks", row["task_id"])
        user = bench.simulated_user(task, model=None)  # type: ignore[arg-type]
        assert isinstance(user, SimulatedUser)
        said = [Message.from_dict(m) for m in episodes[row["task_id"]]["messages"]]
        assert [{k: v for k, v in m.items() if v is not None} for m in row["messages"]] == \
            [m.to_dict() for m in user.view(said)]
        roles = [m["role"] for m in row["messages"]]
        assert roles[0] == "system" and "Known info" in row["messages"][0]["content"]
        assert roles[1:] == ["user", "assistant"] * ((len(roles) - 1) // 2)
        assert row["messages"][-1]["content"] == "###STOP###"  # the user learns to end a finished conversation
        assert row["role"] == "user" and row["tools"] == "[]" and row["reward"] == 1.0


class ScriptedOnly(CounterBenchmark):
    def simulated_user(self, task, model, seed=None):
        return self.gold_user(task)  # as Benchmark's default: a benchmark without a user simulator (BFCL)


def test_user_side_of_a_scripted_user_is_one_line(tmp_path):
    _write_run(tmp_path / "run", [_row("easy", "0", 0, ["one"])])
    with pytest.raises(ConfigError, match=r"counter/easy: its user is scripted, not a user model"):
        export_rows(tmp_path / "run", ScriptedOnly(), role="user")
    (row,) = export_rows(tmp_path / "run", CounterBenchmark(), role="user")  # its user simulator's view
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "user"]
