"""BFCL v3 and ACEBench end to end through `mua eval` and the mock OpenAI server, with faults and a resume."""
import json

from mock_openai import Faults, MockOpenAI, by_model, text_reply, tool_call_reply

from mua.harness.cli import main

RETRY = json.dumps({"timeout_s": 0.5, "retry": {"max_attempts": 40, "initial_wait_s": 0.001, "max_wait_s": 0.01}})


def bfcl_agent(request):
    """Lists the directory once per user turn, then answers."""
    if request["messages"][-1]["role"] == "tool":
        return text_reply("Done.")
    return tool_call_reply([("ls", {})])


def ace_agent(request):
    return text_reply("I have done what you asked.")


def ace_user(request):
    # its own earlier replies: ACEBench's user simulator gets them back as "system" messages
    said = sum(1 for m in request["messages"][1:] if m["role"] in ("assistant", "system"))
    return text_reply("Please send a message to Frank." if said < 2 else "finish conversation")


def run(url, out, data_dir, benchmark, subset, extra=()):
    args = ["eval", "--benchmark", benchmark, "--subset", subset, "--limit", "4",
            "--agent-model", "agent", "--agent-base-url", url, "--agent-params", RETRY,
            "--concurrency", "4", "--no-progress", "--data-dir", str(data_dir), "--out", str(out), *extra]
    return main(args)


def test_bfcl_through_mock_with_faults_and_resume(tmp_path, data_dir):
    with MockOpenAI(bfcl_agent) as url:
        assert run(url, tmp_path / "clean", data_dir, "bfcl_v3", "multi_turn_base") == 0
    rows = [json.loads(x) for x in (tmp_path / "clean" / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["error"] is None for r in rows)
    assert any(m["role"] == "tool" and m["name"] == "ls" for m in rows[0]["messages"])
    assert sum(m["role"] == "user" for m in rows[0]["messages"]) >= 2  # scripted user turns

    faulty = tmp_path / "faulty"
    with MockOpenAI(bfcl_agent, faults=Faults(rate=0.3, seed=2, hang_s=3.0)) as url:
        assert run(url, faulty, data_dir, "bfcl_v3", "multi_turn_base") == 0
        lines = (faulty / "episodes.jsonl").read_text().splitlines()
        (faulty / "episodes.jsonl").write_text("\n".join(lines[:2]) + "\n")  # as if killed after 2 episodes
        assert run(url, faulty, data_dir, "bfcl_v3", "multi_turn_base") == 0
    for name in ("episodes.jsonl", "summary.json"):
        assert (tmp_path / "clean" / name).read_bytes() == (faulty / name).read_bytes()


def test_acebench_multi_turn_with_mock_user(tmp_path, data_dir):
    routes = by_model({"agent": ace_agent, "user": ace_user})
    user = ["--user-model", "user", "--user-params", RETRY]
    with MockOpenAI(routes) as url:
        assert run(url, tmp_path / "a", data_dir, "acebench", "agent_multi_turn_en",
                   user + ["--user-base-url", url]) == 0
    rows = [json.loads(x) for x in (tmp_path / "a" / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["error"] is None and r["termination"] == "user_stop" for r in rows)
    assert {"end_state", "process"} <= set(rows[0]["components"])
    assert rows[0]["messages"][0]["content"] == "Please send a message to Frank."
