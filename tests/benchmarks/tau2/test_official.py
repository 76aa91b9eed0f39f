"""Verdict agreement with the official tau2 results recorded in ../shared/real/tau2 (retail and airline).

Every blakeelias (upstream tau2 of 2025-10, incl. the modified_policy runs) and activegraph simulation agrees (220).

The two ToolOrchestra leaderboard files (tau2 0.1.3) label their simulations with the wrong task ids: retail
simulation "0" is Raj Santos' keyboard return, which the evaluator scored as task 89 (its action check is
"89_0"), not embedded task "0" (Yusuf Rossi's exchange). read_official scores each simulation against the embedded
task whose criteria equal the ones recorded in reward_info (113 of 114 retail and 49 of 50 airline simulations
are relabelled; scoring the labelled tasks instead agrees on only 19/114 and 25/50). Every task in those files
has reward_basis [DB, COMMUNICATE] (also in reward_info), so no verdict depends on NL assertions, although the
data dir's current retail tasks use [DB, NL_ASSERTION]. With the evaluated tasks, all verdicts agree, including
the 18 retail and 22 airline failures (DB or COMMUNICATE); EXCEPTIONS lists none.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.benchmarks.tau2.official import evaluated_task, parse_reward_info
from mua.benchmarks.tau2.tasks import make_task

TOOLORCHESTRA = {  # file: (agreeing, total, simulations relabelled, official passes)
    "toolorchestra__toolorchestra_retail_gpt-5_1trial.json": (114, 114, 113, 96),
    "toolorchestra__toolorchestra_airline_gpt-5_1trial.json": (50, 50, 49, 28),
}
EXCEPTIONS: dict[tuple[str, str], str] = {}  # (file, evaluated task id): why mua's verdict differs
BENCH = Tau2Benchmark(DATA_DIR)


def _files(real_dir: Path) -> list[Path]:
    return sorted((real_dir / "tau2").glob("*.json")) + sorted((real_dir / "tau2" / "modified_policy").glob("*.json"))


def _agreement(path: Path, data_dir: Path) -> tuple[int, int, list[str]]:
    agree, total, disagree = 0, 0, []
    for item in BENCH.read_official(path):
        assert item.error is None, (path.name, item.task_id, item.error)
        if item.subset not in ("retail", "airline"):
            continue
        score = asyncio.run(BENCH.score(item.task, item.messages, termination=item.termination))
        assert not score.info.get("incomplete"), (path.name, item.task_id, score)
        total += 1
        if score.reward == pytest.approx(item.official["reward"]):
            agree += 1
        elif (path.name, item.task_id) not in EXCEPTIONS:
            disagree.append(item.task_id)
    return agree, total, disagree


def test_official_verdicts_agree(real_dir, data_dir):
    checked = 0
    for path in _files(real_dir):
        if path.name in TOOLORCHESTRA:
            continue
        agree, total, disagree = _agreement(path, data_dir)
        assert agree == total and not disagree, (path.name, disagree)
        checked += total
    assert checked == 220


@pytest.mark.parametrize("name", sorted(TOOLORCHESTRA))
def test_toolorchestra_verdicts_agree(real_dir, data_dir, name):
    path = real_dir / "tau2" / name
    agree, total, disagree = _agreement(path, data_dir)
    expected_agree, expected_total, _, _ = TOOLORCHESTRA[name]
    assert (agree, total, disagree) == (expected_agree, expected_total, [])


@pytest.mark.parametrize("name", sorted(TOOLORCHESTRA))
def test_toolorchestra_sims_get_the_evaluated_task(real_dir, data_dir, name):
    labels = [str(s["task_id"]) for s in json.loads((real_dir / "tau2" / name).read_text())["simulations"]]
    items = list(BENCH.read_official(real_dir / "tau2" / name))
    relabelled = sum(label != item.task_id for label, item in zip(labels, items))
    passes = sum(item.official["reward"] == 1.0 for item in items)
    assert (relabelled, passes) == TOOLORCHESTRA[name][2:]
    assert len({item.task_id for item in items}) == len(items)  # each task evaluated exactly once
    if "retail" in name:
        by_label = dict(zip(labels, items))
        assert by_label["0"].task_id == "89"
        # tasks 96 and 97 have identical criteria; the recorded action ids ("98_0" vs "97_0") tell them apart
        assert (by_label["11"].task_id, by_label["34"].task_id) == ("97", "96")
        # no action checks: matched by its (empty) communicate and NL criteria alone
        assert by_label["52"].task_id == "57" and by_label["14"].task_id == "24"


def test_evaluated_task_reports_unmatched(data_dir):
    def task(tid, name):
        return make_task({"id": tid, "evaluation_criteria": {"actions": [
            {"action_id": f"{tid}_0", "name": name, "arguments": {"x": 1}}], "reward_basis": ["DB"]}},
            "retail", data_dir)
    tasks = {"1": task("1", "a"), "2": task("2", "b")}

    def checks(name):
        return {"action_checks": [{"action": {"action_id": "9_0", "name": name, "arguments": {"x": 1}}}]}

    assert evaluated_task(tasks, "1", checks("a"))[0] is tasks["1"]
    assert evaluated_task(tasks, "1", checks("b"))[0] is tasks["2"]
    found, why = evaluated_task(tasks, "1", checks("c"))
    assert found is None and "no embedded tasks match" in why
    assert evaluated_task(tasks, "2", {"reward": 0.0})[0] is tasks["2"]  # nothing recorded: keep the label


def test_parse_reward_info_reads_a_repr_string_without_running_it():
    info = {"reward": 1.0, "action_checks": None, "nl_assertions": [], "info": {"nl": {"note": "x"}}}
    assert parse_reward_info(repr(info)) == (info, None)
    assert parse_reward_info(info) == (info, None)
    value, why = parse_reward_info("__import__('os').getcwd()")
    assert value is None and "repr" in why


def test_read_official_shapes(real_dir, data_dir):
    path = (real_dir / "tau2"
            / "blakeelias__2025-10-05T07-42-54.471516_airline_llm_agent_grok-3_user_simulator_grok-3.json")
    items = list(BENCH.read_official(path))
    assert len(items) == 5 and all(i.task is not None and i.official for i in items)
    calls = [c for i in items for m in i.messages if m.tool_calls for c in m.tool_calls]
    assert calls and all(isinstance(c.arguments, str) for c in calls)
    assert BENCH.read_official(real_dir / "README.md") is None
