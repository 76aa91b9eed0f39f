"""`mua view` shows the ground truth: the headline panel (the leaderboard's cells with intervals and flags),
a task's instructions and expected actions, the database difference between a failed tau2 episode's end state
and the gold one, and a turn's request (reconstructed: it equals what the OpenAI client sends). The compare
page fits 1400 px."""
from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

from mua.harness.interfaces import Benchmark
from mua.harness.models.openai_client import OpenAIChatModel
from mua.harness.registry import open_benchmark
from mua.harness.runner import agent_view
from mua.harness.types import Message
from mua.harness.view.ground import GroundTruth
from mua.harness.view.page import build_payload, load_source, write_view
from tests.harness.test_view import _unpack
from tests.helpers.browser import dump_dom, screenshot
from tests.helpers.view_runs import BASELINES, write_failed_tau2_run, write_run


def _detail(dom: str) -> str:
    start = dom.index('id="detail"')
    return html.unescape(dom[start:dom.index("</main>", start)])


def test_failed_tau2_episode_shows_headline_expected_actions_and_database_difference(tmp_path, data_dir):
    run = write_failed_tau2_run(tmp_path, data_dir)
    page = write_view([run], tmp_path / "view.html", data_dir)
    dom = dump_dom(page, "ep=1")  # task 7, upgraded in economy instead of business
    panel = dom[dom.index('id="headline"'):dom.index('id="bar"')]
    assert 'data-column="tau2/airline pass^1"' in panel and 'data-flags="t"' in panel  # 2 of 50 tasks: flagged
    assert "50.0 [0.0, 100.0] n=2" in panel and "models: agent gold" in panel
    assert "t = run on a task selection" in panel
    detail = _detail(dom)
    assert 'data-loaded="1"' in detail
    assert "reason for call: You want to cancel your upcoming flights within reservation IDs XEHM4B" in detail
    actions = detail[detail.index('data-section="expected actions"'):]
    assert 'update_reservation_flights({"cabin": "business"' in actions
    assert 'cancel_reservation({"reservation_id": "59XX6W"})' in actions
    table = detail[detail.index('class="diff"'):]
    table = table[:table.index("</table>")]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table, re.S)
    assert cells[:3] == ["reservations/XEHM4B/cabin", '"economy"', '"business"']
    assert "reservations/XEHM4B/payment_history[1]/amount" in cells
    passed = _detail(dump_dom(page, "ep=0"))
    assert "identical to the gold end state" in passed and 'class="diff"' not in passed
    shot = screenshot(page, Path(os.environ.get("MUA_VIEW_SCREENSHOT") or tmp_path / "view.png"), "ep=1",
                      size=(1400, 900))  # MUA_VIEW_SCREENSHOT=docs/view.png: the README's picture
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_end_state_diff_of_the_adapter(data_dir):
    bench = open_benchmark("tau2", data_dir)
    gold = [json.loads(x) for x in (BASELINES / "tau2-telecom-gold" / "episodes.jsonl").read_text().splitlines()]
    row = next(r for r in gold if sum(bool(m.get("tool_calls")) for m in r["messages"]) >= 2)
    task = bench.find_task("telecom", row["task_id"])
    messages = [Message.from_dict(m) for m in row["messages"]]
    assert bench.end_state_diff(task, messages) == []  # the gold episode ends where the gold actions do
    diff = bench.end_state_diff(task, messages[:1])  # the agent did nothing
    assert diff and all(d["path"].startswith(("agent db", "user db")) for d in diff)
    assert Benchmark.end_state_diff(bench, task, messages) is None  # no database: the default
    sections = bench.describe_task(task).titled_sections()
    assert "user instructions" in sections and isinstance(sections["expected actions"], list)


def test_request_of_a_turn_is_what_the_client_sends(tmp_path, data_dir):
    run = write_failed_tau2_run(tmp_path, data_dir)
    config = json.loads((run / "config.json").read_text())
    config["agent"] = {"name": "agent-m", "params": {"temperature": 0.0, "top_p": None}, "seed": True}
    (run / "config.json").write_text(json.dumps(config))
    row = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()][1]
    messages = [Message.from_dict(m) for m in row["messages"]]
    reply = next(i for i, m in enumerate(messages) if i > 0 and m.role == "assistant" and m.tool_calls)
    page = write_view([run], tmp_path / "view.html", data_dir)
    detail = _detail(dump_dom(page, f"ep=1&req={reply}"))
    shown = json.loads(re.search(r'<pre class="request">(.*?)</pre>', detail, re.S).group(1))
    bench = open_benchmark("tau2", data_dir)
    spec = bench.start(bench.find_task("airline", "7"))
    client = OpenAIChatModel("agent-m", "http://127.0.0.1:9/v1", temperature=0.0, top_p=None)
    sent = client.request_body([Message(role="system", content=spec.system_prompt)] + agent_view(messages[:reply]),
                               spec.env.agent_tools(0), seed=row["seed"])
    assert shown == json.loads(json.dumps(sent))
    assert "reconstructed, not recorded" in detail


def test_ground_truth_missing_data_or_task_is_a_note_not_a_failure(tmp_path, data_dir):
    run = write_failed_tau2_run(tmp_path, data_dir)
    source = load_source(run, tmp_path / "no-data")
    assert source.ground is None and any("no ground truth" in n and "no-data" in n for n in source.notes)
    ground, why = GroundTruth.open({"benchmark": "tau2"}, data_dir)
    assert ground is not None and why is None
    assert "(not available)" in ground.describe("airline", "no-such-task")
    assert "no task 'no-such-task'" in ground.episode({"subset": "airline", "task_id": "no-such-task"})["ground_error"]
    payload = build_payload([load_source(run, data_dir)])
    assert len(payload["runs"][0]["blobs"]) == 0  # the gold agent sends no requests: nothing shared to store
    assert _unpack(payload["runs"][0]["details"][1])["diff"][0]["path"] == "reservations/XEHM4B/cabin"


def test_compare_page_fits_1400_px(tmp_path):
    long = "a-rather-long-task-identifier-" * 3
    a = write_run(tmp_path, "a-run-with-a-long-name", {long + "1": 1.0, long + "2": 0.0, "3": "error"})
    b = write_run(tmp_path, "b-run-with-a-long-name", {long + "1": 0.0, long + "2": 1.0, "3": None})
    page = write_view([a, b], tmp_path / "compare.html", tmp_path / "no-data")
    dom = dump_dom(page, "ep=0", size=(1400, 900))
    assert 'data-hscroll="0"' in dom
    assert "reward B" in dom and "tokens B" in dom  # the second run's columns are there, not cut off


def test_the_agent_view_of_a_request_hides_the_users_own_tool_calls():
    from mua.harness.view.ground import _seen

    call = {"id": "u0", "type": "function", "function": {"name": "toggle_airplane_mode", "arguments": "{}"}}
    rows = [{"role": "assistant", "content": "Hi"}, {"role": "user", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": "OFF", "tool_call_id": "u0"},
            {"role": "user", "content": "done, and again", "tool_calls": [dict(call, id="u1")]},
            {"role": "tool", "content": "ON", "tool_call_id": "u1"}, {"role": "assistant", "content": "ok"}]
    messages = [Message.from_dict(m) for m in rows]
    assert _seen(messages) == [[0, False], [3, True], [5, False]]  # what runner.agent_view sends, by index
    assert [m.content for m in agent_view(messages)] == ["Hi", "done, and again", "ok"]
