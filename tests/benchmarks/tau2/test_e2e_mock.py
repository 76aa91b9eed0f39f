"""tau2 retail end to end through `mua eval` with a mock OpenAI server playing agent and user."""
import json

from helpers.responders import ORDER, retail
from mock_openai import Faults, MockOpenAI

from mua.harness.cli import main

RETRY = json.dumps({"timeout_s": 0.5, "retry": {"max_attempts": 40, "initial_wait_s": 0.001, "max_wait_s": 0.01}})


def eval_args(url, out, data_dir):
    return ["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "6", "--trials", "2",
            "--agent-model", "agent", "--agent-base-url", url, "--agent-params", RETRY,
            "--user-model", "user", "--user-base-url", url, "--user-params", RETRY,
            "--concurrency", "4", "--no-progress", "--data-dir", str(data_dir), "--out", str(out)]


def test_retail_through_mock_server_with_and_without_faults(tmp_path, data_dir):
    with MockOpenAI(retail) as url:
        assert main(eval_args(url, tmp_path / "clean", data_dir)) == 0
    rows = [json.loads(x) for x in (tmp_path / "clean" / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and all(r["error"] is None for r in rows)
    first = rows[0]
    assert first["termination"] == "user_stop" and first["messages"][-1]["content"] == "Thanks! ###STOP###"
    tool = next(m for m in first["messages"] if m["role"] == "tool")
    assert tool["name"] == "get_order_details" and json.loads(tool["content"])["order_id"] == ORDER
    assert first["usage"]["agent"]["requests"] == 4 and first["usage"]["user"]["requests"] == 3
    # The mock agent only reads: every retail task expects a write, so the DB check fails everywhere; NL
    # assertions are skipped (no judge), never counted as passed.
    assert all(r["reward"] == 0.0 and r["components"]["db"] == 0.0 for r in rows)
    assert any(r["components"].get("nl_assertion", 0) is None for r in rows)

    mock = MockOpenAI(retail, faults=Faults(rate=0.3, seed=5, hang_s=3.0))
    with mock as url:
        assert main(eval_args(url, tmp_path / "faulty", data_dir)) == 0
    assert sum(mock.stats()["faults"].values()) >= 0.25 * mock.stats()["requests"]
    for name in ("episodes.jsonl", "summary.json"):
        assert (tmp_path / "clean" / name).read_bytes() == (tmp_path / "faulty" / name).read_bytes()
