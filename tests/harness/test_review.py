"""`mua review` (harness/view/review.py): failed episodes classed from the adapter's findings (Finding.kind) and
the runner's own terminations, errored and unknown episodes apart, tables linked to the view page's rows,
and a judge model's reason through the model client (mock OpenAI server)."""
from __future__ import annotations

import json
import re

from mua.benchmarks.acebench.scoring import AceFindings
from mua.benchmarks.bfcl.scoring import Verdict
from mua.harness.cli import main
from mua.harness.types import STATE_MISMATCH, WRONG_ACTION, WRONG_ARGUMENTS
from mua.harness.view.page import build_payload, explainer, load_source
from mua.harness.view.review import classify, review_rows
from tests.helpers.view_runs import episode, write_run
from tests.mock_openai import MockOpenAI, text_reply

EXPLAIN = explainer("tau2")


def _call(i: int, name: str = "get_user", args: str = '{"id": 1}') -> list[dict]:
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}]},
            {"role": "tool", "content": "Error: user not found", "tool_call_id": f"c{i}", "name": name}]


def _row(**changes) -> dict:
    row = episode("t", 0.0)
    row.update(changes)
    return row


def test_each_failure_gets_one_class_from_findings_and_the_runner():
    assert classify(episode("t", 1.0), EXPLAIN) is None  # passed: not reviewed
    failed = classify(episode("t", 0.0), EXPLAIN)
    assert failed is not None and failed.cls == "wrong_action"  # the cause, before the state it left
    assert failed.kinds == ["state_mismatch", "wrong_action"]
    assert "gold action not matched: cancel_EHGLP3_refund" in failed.findings
    state = classify(_row(info={"termination": "user_stop", "db_match": False}), EXPLAIN)
    assert state is not None and state.cls == "state_mismatch"
    policy = classify(_row(info={"nl_assertions": [{"nl_assertion": "polite", "met": False}]}), EXPLAIN)
    assert policy is not None and policy.cls == "policy_violation"
    budget = classify(_row(termination="max_steps", info={"note": "premature termination (max_steps)"}), EXPLAIN)
    assert budget is not None and budget.cls == "budget_cut"
    errors = classify(_row(termination="too_many_errors", info={}), EXPLAIN)
    assert errors is not None and errors.cls == "tool_error_loop"
    loop = classify(_row(messages=_call(0) + _call(1) + _call(2), info={}), EXPLAIN)
    assert loop is not None and loop.cls == "tool_error_loop"
    two = classify(_row(messages=_call(0) + _call(1) + _call(2, args='{"id": 2}'), info={}), EXPLAIN)
    assert two is not None and two.cls == "other"  # no finding names a class, no loop (arguments changed)
    asked = [{"role": "assistant", "content": "Which order do you mean?"}, {"role": "user", "content": "###STOP###"}]
    stopped = classify(_row(messages=asked, info={"actions_unmatched": ["x"]}), EXPLAIN)
    assert stopped is not None and stopped.cls == "user_stopped_early" and "wrong_action" in stopped.kinds
    errored = classify(episode("t", None, error="model error: timeout"), EXPLAIN)
    unknown = classify(episode("t", None), EXPLAIN)
    assert errored is not None and errored.cls == "errored" and errored.error == "model error: timeout"
    assert unknown is not None and unknown.cls == "unknown"


def test_other_adapters_tag_their_findings_too():
    assert Verdict(False, "multi_turn:instance_state_mismatch", "x").findings()[0].kind == STATE_MISMATCH
    assert Verdict(False, "multi_turn:execution_response_mismatch", "x").findings()[0].kind == WRONG_ARGUMENTS
    ace = AceFindings([["wrong balance"]], "value error", ["a()"]).findings({"end_state": 0.0, "process": 0.5})
    assert [f.kind for f in ace] == [STATE_MISMATCH, STATE_MISMATCH, WRONG_ACTION]
    rows = [episode("a", 1.0), episode("b", 0.0), episode("c", None, error="boom")]
    assert [(r.position, r.cls) for r in review_rows(rows, EXPLAIN)] == [(1, "wrong_action"), (2, "errored")]


def _data(page: str) -> dict:
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert blob is not None
    return json.loads(blob.group(1))


def test_review_page_links_each_episode_to_its_row_of_the_view_page(tmp_path, capsys):
    run = write_run(tmp_path, "run", {"1": 1.0, "2": 0.0, "3": None, "4": "error", "5": 0.0})
    assert main(["review", str(run), "--no-ground-truth"]) == 0
    printed = capsys.readouterr().out
    assert "2 failed of 5 episodes; 1 errored; 1 unknown" in printed and "wrong or missing action" in printed
    data = _data((run / "review.html").read_text(encoding="utf-8"))
    assert {c: [e["task_id"] for e in g] for c, g in data["classes"].items()} == {
        "wrong_action": ["2", "5"], "errored": ["4"], "unknown": ["3"]}
    view_rows = build_payload([load_source(run, ground=False)])["rows"]
    for group in data["classes"].values():
        for e in group:  # the link's #ep=ROW opens this very episode in view.html
            assert view_rows[e["row"]]["task"] == e["task_id"]
            assert f'href="view.html#ep={e["row"]}"' in (run / "review.html").read_text(encoding="utf-8")
    assert (run / "view.html").is_file()
    assert main(["review", str(tmp_path / "nothing")]) == 2
    assert "not found" in capsys.readouterr().err


def test_a_judge_model_gives_each_failed_episode_a_reason(tmp_path):
    run = write_run(tmp_path, "run", {"1": 1.0, "2": 0.0, "3": "error", "4": 0.0})
    requests: list[dict] = []

    def judge(request: dict) -> dict:
        requests.append(request)
        return text_reply("The agent cancelled the reservation without the refund the policy requires.")

    with MockOpenAI(judge) as url:
        assert main(["review", str(run), "--no-ground-truth", "--judge-model", "judge-m", "--judge-base-url", url,
                     "--judge-api-key-env", "MUA_TEST_NO_KEY"]) == 0
    assert len(requests) == 2  # the two failures; the errored episode is not the agent's failure
    prompt = requests[0]["messages"][1]["content"]
    assert "gold action not matched: cancel_EHGLP3_refund" in prompt and "CALL cancel_reservation" in prompt
    data = _data((run / "review.html").read_text(encoding="utf-8"))
    assert [e["judge"] for e in data["classes"]["wrong_action"]] == [
        "The agent cancelled the reservation without the refund the policy requires."] * 2
    assert data["classes"]["errored"][0]["judge"] is None
