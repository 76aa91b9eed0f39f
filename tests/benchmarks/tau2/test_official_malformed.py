"""Malformed simulations in a tau2 results file become ReplayItems with ``error`` set: never an exception that
aborts ``mua score``, never a score for a conversation that is missing or empty."""
from __future__ import annotations

import asyncio
import copy
import json

import pytest
from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark

SOURCE = "activegraph__runs_20260601-033543-612139_airline_results.json"  # airline task 0 officially passes
BENCH = Tau2Benchmark(DATA_DIR)


@pytest.fixture(scope="module")
def results(real_dir) -> dict:
    doc = json.loads((real_dir / "tau2" / SOURCE).read_text(encoding="utf-8"))
    assert doc["simulations"][0]["task_id"] == "0" and doc["simulations"][0]["reward_info"]["reward"] == 1.0
    return doc


def _items(tmp_path, data_dir, doc: dict) -> list:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return list(BENCH.read_official(path))


def _with_sim0(doc: dict, change) -> dict:
    doc = copy.deepcopy(doc)
    change(doc["simulations"][0])
    return doc


def test_the_intact_simulation_is_scored(tmp_path, data_dir, results):
    item = _items(tmp_path, data_dir, results)[0]
    assert item.error is None and item.messages
    assert asyncio.run(BENCH.score(item.task, item.messages, termination=item.termination)).reward == 1.0


@pytest.mark.parametrize("change, reason", [
    (lambda s: s.pop("messages"), "no messages"),
    (lambda s: s.update(messages=[]), "no messages"),
    (lambda s: s.update(messages=None), "no messages"),
    (lambda s: s.update(messages="hello"), "not a list"),
    (lambda s: s.update(messages=[{"role": "narrator", "content": "x"}]), "no messages with a known role"),
    (lambda s: s["messages"].insert(1, ["not", "a", "message"]), "message 1 is a list"),
    (lambda s: s["messages"].insert(1, {"role": "assistant", "tool_calls": [{"id": "c"}]}), "message 1 has tool_calls"),
])
def test_a_simulation_without_a_usable_conversation_is_an_error(tmp_path, data_dir, results, change, reason):
    items = _items(tmp_path, data_dir, _with_sim0(results, change))
    assert len(items) == len(results["simulations"])
    assert items[0].error and reason in items[0].error, items[0].error
    assert items[0].messages == []
    assert [i.error for i in items[1:]] == [None] * (len(items) - 1)  # the others are still read


def test_a_non_object_simulation_is_one_error_item(tmp_path, data_dir, results):
    doc = copy.deepcopy(results)
    doc["simulations"][1:1] = ["garbage", 7, None]
    items = _items(tmp_path, data_dir, doc)
    assert len(items) == len(doc["simulations"])
    bad = items[1:4]
    assert [i.task_id for i in bad] == ["simulations[1]", "simulations[2]", "simulations[3]"]
    assert all(i.error and "not a JSON object" in i.error and i.task is None for i in bad)
    assert items[0].error is None and items[4].error is None


def test_malformed_action_checks_do_not_raise(tmp_path, data_dir, results):
    doc = _with_sim0(results, lambda s: s["reward_info"].update(action_checks=["x", {"action": "y"}]))
    items = _items(tmp_path, data_dir, doc)
    assert items[0].task is None and "match the recorded criteria" in items[0].error
