import json

import pytest
from helpers.counter_bench import CounterBenchmark

from mua.harness.cli import main
from mua.harness.registry import register_benchmark


@pytest.fixture(autouse=True)
def counter():
    register_benchmark(CounterBenchmark)


def traj(task_id, n, **extra):
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": json.dumps({"n": n})}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "name": "add", "content": "999 (never trusted)"},
                {"role": "assistant", "content": "done"}]
    return {"benchmark": "counter", "subset": "easy", "task_id": task_id, "messages": messages, **extra}


def test_score_replays_each_line_in_order_and_reports_bad_lines(tmp_path, capsys):
    lines = [json.dumps(traj("0", 1, variant="v1")), json.dumps(traj("1", 5)), "{not json",
             json.dumps(traj("99", 1)), json.dumps({"benchmark": "nope", "subset": "x", "task_id": "1",
                                                    "messages": []}),
             json.dumps(traj("2", 3) | {"messages": [{"role": "robot"}]}), json.dumps({"task_id": "3"})]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    assert main(["score", "--trajectories", str(src), "--out", str(tmp_path / "out.jsonl"), "--data-dir", "."]) == 1
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(rows) == len(lines)
    assert rows[0] == {"task_id": "0", "subset": "easy", "variant": "v1", "reward": 1.0,
                       "components": {"counter": 1.0}, "error": None}
    assert rows[1]["reward"] == 0.0 and rows[1]["error"] is None
    assert rows[2]["error"].startswith("line 3: line is not valid JSON") and rows[2]["reward"] is None
    assert rows[3]["error"] == "line 4: counter/easy has no task '99'"
    assert "unknown benchmark 'nope'" in rows[4]["error"]
    assert "role must be" in rows[5]["error"]
    assert rows[6]["error"] == "line 7: missing keys: benchmark, subset, messages"
    assert "scored 7 trajectories: 1 pass, 5 errors" in capsys.readouterr().err


def test_score_rejects_unknown_file_format(tmp_path, capsys):
    src = tmp_path / "x.txt"
    src.write_text("hello\n")
    assert main(["score", "--trajectories", str(src), "--out", "-", "--data-dir", "."]) == 2
    assert "neither mua trajectory lines" in capsys.readouterr().err


def test_a_first_line_without_messages_is_an_error_row_not_a_rejected_file(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"benchmark": "counter", "subset": "easy", "task_id": "0"}) + "\n"
                   + json.dumps(traj("0", 1)) + "\n")
    assert main(["score", "--trajectories", str(src), "--out", str(tmp_path / "o.jsonl"), "--data-dir", "."]) == 1
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert rows[0]["error"] == "line 1: missing keys: messages" and rows[1]["reward"] == 1.0


def test_all_good_lines_exit_zero(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(traj("0", 1)) + "\n")
    assert main(["score", "--trajectories", str(src), "--out", str(tmp_path / "o.jsonl"), "--data-dir", "."]) == 0


def test_replay_goes_through_the_runner_and_rejects_impossible_orders(tmp_path):
    ok = traj("0", 1)
    ok["messages"] = [{"role": "system", "content": "recorded system prompts are ignored"}] + ok["messages"]
    twice = traj("0", 1)
    twice["messages"] = twice["messages"] + [{"role": "assistant", "content": "and again"}]
    ends_in_tool = traj("1", 2)
    ends_in_tool["messages"] = ends_in_tool["messages"][:3]  # cut after the tool result: replays fine
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in (ok, twice, ends_in_tool)) + "\n")
    main(["score", "--trajectories", str(src), "--out", str(tmp_path / "o.jsonl"), "--data-dir", "."])
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert rows[0]["reward"] == 1.0 and rows[2]["reward"] == 1.0
    assert rows[1]["error"] == ("ValueError: message 5 (assistant) cannot come at that point of an episode: the "
                                "user and the agent take turns (the user speaks after the agent's text reply)")
