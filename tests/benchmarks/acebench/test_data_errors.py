"""Malformed ACEBench data fails at load time with a DataError naming the file, the record and the problem
(never a bare KeyError/TypeError); ACEBench has no splits."""
from __future__ import annotations

import pytest

from mua.benchmarks.acebench import AceBenchmark
from mua.harness.errors import ConfigError, DataError

RECORDS = "acebench/en/data_agent_multi_turn.json"
ANSWERS = "acebench/en/possible_answer/data_agent_multi_turn.json"
SUBSET = "agent_multi_turn_en"


def _error(root, subset: str = SUBSET) -> str:
    with pytest.raises(DataError) as info:
        AceBenchmark(root).load_tasks(subset)
    return str(info.value)


def _set(key, value):
    return lambda r: r.__setitem__(key, value)


@pytest.mark.parametrize("change, expected", [
    (lambda r: r.pop("function"), "missing key 'function'"),
    (lambda r: r.pop("question"), "missing key 'question'"),
    (lambda r: r.pop("involved_classes"), "missing key 'involved_classes'"),
    (_set("function", "get_weather"), "'function' should be a list, found a string"),
    (_set("involved_classes", "BaseApi"), "'involved_classes' should be a list, found a string"),
    (_set("involved_classes", [1]), "'involved_classes[0]' should be a string, found an integer"),
    (_set("initial_config", []), "'initial_config' should be an object, found a list"),
    (lambda r: r["function"][0].pop("name"), "function[0]: missing key 'name'"),
])
def test_malformed_record(shadow, change, expected):
    shadow.edit_jsonl(RECORDS, 3, change)
    message = _error(shadow.root)
    assert RECORDS in message and "record 3 (id 'agent_multi_turn_2')" in message and expected in message, message


def test_a_record_that_is_not_an_object(shadow):
    shadow.edit_jsonl(RECORDS, 2, replace=["not", "a", "record"])
    message = _error(shadow.root)
    assert f"{RECORDS}, record 2: expected an object, found a list" in message, message


@pytest.mark.parametrize("change, expected", [
    (lambda a: a.pop("mile_stone"), "missing key 'mile_stone'"),
    (lambda a: a.pop("ground_truth"), "missing key 'ground_truth'"),
    (_set("ground_truth", {"BaseApi": {}}), "'ground_truth' should be a list, found an object"),
    (_set("mile_stone", [3]), "'mile_stone[0]' should be a string or a list, found an integer"),
])
def test_malformed_answer(shadow, change, expected):
    shadow.edit_jsonl(ANSWERS, 1, change)
    message = _error(shadow.root)
    assert ANSWERS in message and "record 1 (id 'agent_multi_turn_0')" in message and expected in message, message


@pytest.mark.parametrize("change, expected", [
    (lambda d: d["constants"].pop("SAVED_CLASS"), "missing key 'SAVED_CLASS'"),
    (lambda d: d["constants"].pop("prompt_zh.TRAVEL_PROMPT_ZH"), "missing key 'prompt_zh.TRAVEL_PROMPT_ZH'"),
    (lambda d: d["constants"]["SAVED_CLASS"].pop("value"), "constants/SAVED_CLASS: missing key 'value'"),
    (lambda d: d.pop("constants"), "missing key 'constants'"),
])
def test_broken_protocol_constants(shadow, change, expected):
    shadow.edit_json("acebench/protocol_constants.json", change)
    message = _error(shadow.root)
    assert "acebench/protocol_constants.json" in message and expected in message, message


@pytest.mark.parametrize("change, expected", [
    (lambda d: d["states"].pop("zh"), "states: missing key 'zh'"),
    (lambda d: d["states"]["en"]["multi_turn"]["Travel"].pop("after_init"),
     "states/en/multi_turn/Travel: missing key 'after_init'"),
    (lambda d: d["states"]["en"]["multi_turn"]["Travel"]["after_init"].update(users={"__type__": "dict"}),
     "states/en/multi_turn/Travel: after_init holds a malformed tagged value"),
])
def test_broken_default_states(shadow, change, expected):
    shadow.edit_json("acebench/default_states.json", change)
    message = _error(shadow.root)
    assert "acebench/default_states.json" in message and expected in message, message


def test_acebench_has_no_splits(data_dir):
    bench = AceBenchmark(data_dir)
    assert len(bench.load_tasks(SUBSET)) == 30
    for split in ("nosuch", "base", "test"):
        with pytest.raises(ConfigError, match="acebench has no splits"):
            bench.load_tasks(SUBSET, split=split)
