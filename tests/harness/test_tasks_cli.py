"""`mua tasks`: lists benchmarks with subsets, splits and task counts (installed adapters and a pack given by
--data-dir), a subset's tasks, and one task with its scenario, expected actions, criteria, policy and tools."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mua.harness.cli import main

PACK = Path(__file__).resolve().parents[2] / "benchmarks" / "pack" / "examples" / "bookings"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["tasks", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_lists_every_installed_benchmark_with_splits_and_counts(capsys, data_dir):
    code, out, _ = run(capsys, "--data-dir", str(data_dir), "--json")
    assert code == 0
    entries = {e["name"]: e for e in json.loads(out)}
    assert {"tau2", "bfcl_v3", "acebench", "pack"} <= set(entries)
    retail = next(s for s in entries["tau2"]["subsets"] if s["name"] == "retail")
    assert {c["split"]: c["tasks"] for c in retail["splits"]} == {"base": 114, "train": 74, "test": 40}
    base = next(s for s in entries["bfcl_v3"]["subsets"] if s["name"] == "multi_turn_base")
    assert [c["tasks"] for c in base["splits"]] == [200, 200]
    assert entries["pack"]["error"] and not entries["pack"]["subsets"]  # no pack in the benchmark data folder
    code, text, _ = run(capsys, "--data-dir", str(data_dir))
    assert "retail" in text and "base=114" in text and "pack: no data here" in text


def test_a_pack_given_by_data_dir_is_listed_with_its_splits(capsys):
    code, out, _ = run(capsys, "pack", "--data-dir", str(PACK), "--json")
    assert code == 0
    counts = {c["split"]: c["tasks"] for c in json.loads(out)["subsets"][0]["splits"]}
    assert counts == {"test": 80, "train": 800, "validation": 40}
    code, text, _ = run(capsys, "pack", "--subset", "tasks", "--data-dir", str(PACK))
    assert text.splitlines()[0] == "pack / tasks / split test: 80 tasks" and len(text.splitlines()) == 81


def test_shows_one_task_with_scenario_actions_criteria_policy_and_tools(capsys, data_dir):
    code, out, _ = run(capsys, "tau2", "--subset", "retail", "5", "--data-dir", str(data_dir), "--json")
    assert code == 0
    view = json.loads(out)
    assert view["task_id"] == "5" and "water bottle" in view["scenario"]["instructions"]["reason_for_call"]
    assert [a["name"] for a in view["expected_actions"]][-1] == "return_delivered_order_items"
    assert view["criteria"]["reward_basis"] == ["DB", "NL_ASSERTION"] and "actions" not in view["criteria"]
    assert "Retail agent policy" in view["system_prompt"]
    tools = {t["name"]: t for t in view["tools"]}
    assert tools["get_order_details"]["parameters"]["required"] == ["order_id"]
    code, text, _ = run(capsys, "tau2", "--subset", "retail", "5", "--data-dir", str(data_dir))
    for section in ("== User scenario ==", "== Expected actions ==", "== Evaluation criteria ==",
                    "== Agent system prompt (policy) ==", "== Agent tools (", "get_order_details(order_id: string)"):
        assert section in text


@pytest.mark.parametrize("argv,expected", [
    (["bfcl_v3", "multi_turn_base_0"], "mkdir(dir_name='temp')"),
    (["acebench", "--subset", "agent_multi_turn_en", "agent_multi_turn_0"], "turn_on_wifi()"),
])
def test_other_adapters_describe_their_expected_actions(capsys, data_dir, argv, expected):
    code, out, _ = run(capsys, *argv, "--data-dir", str(data_dir), "--json")
    view = json.loads(out)
    assert code == 0 and expected in json.dumps(view["expected_actions"]) and view["criteria"] and view["tools"]


@pytest.mark.parametrize("argv,message", [
    (["tau2", "5"], "in several subsets (retail, airline); give --subset"),
    (["tau2", "--subset", "retail", "nope"], "no task with id 'nope'"),
    (["tau2", "--subset", "shoes"], "has no subset 'shoes'"),
    (["nobench"], "unknown benchmark 'nobench'"),
    (["tau2", "--subset", "retail", "5", "6"], "unrecognized arguments: 5 6"),
    (["pack"], "missing data file pack.json"),  # a benchmark named without its data here
])
def test_bad_requests_are_one_line_errors(capsys, data_dir, argv, message):
    code, _, err = run(capsys, *argv, "--data-dir", str(data_dir))
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
