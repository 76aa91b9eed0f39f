"""Malformed BFCL data fails at load time with a DataError naming the file, the record and the problem
(never a bare KeyError, nor a failure deferred to the first episode)."""
from __future__ import annotations

import pytest

from mua.benchmarks.bfcl import BfclBenchmark
from mua.harness.errors import DataError

QUESTIONS = "bfcl_v3/BFCL_v3_multi_turn_base.json"
ANSWERS = "bfcl_v3/possible_answer/BFCL_v3_multi_turn_base.json"
SUBSET = "multi_turn_base"


def _error(root, subset: str = SUBSET, split=None) -> str:
    with pytest.raises(DataError) as info:
        BfclBenchmark(root).load_tasks(subset, split)
    return str(info.value)


def _set(key, value):
    return lambda r: r.__setitem__(key, value)


@pytest.mark.parametrize("change, expected", [
    (lambda q: q.pop("question"), "missing key 'question'"),
    (lambda q: q.pop("initial_config"), "missing key 'initial_config'"),
    (lambda q: q.pop("involved_classes"), "missing key 'involved_classes'"),
    (_set("question", "Move the report"), "'question' should be a list, found a string"),
    (_set("question", [["hi"]]), "'question[0][0]' should be an object, found a string"),
    (_set("initial_config", None), "'initial_config' should be an object, found null"),
    (_set("involved_classes", ["NoSuchAPI"]), "unknown involved_classes ['NoSuchAPI']"),
    (_set("missed_function", {"x": ["cd"]}), "missed_function[x]: the key should be a turn index"),
    (_set("missed_function", {"1": "cd"}), "'missed_function[1]' should be a list, found a string"),
])
def test_malformed_question(shadow, change, expected):
    shadow.edit_jsonl(QUESTIONS, 5, change)
    message = _error(shadow.root)
    assert QUESTIONS in message and "record 5 (id 'multi_turn_base_4')" in message and expected in message, message


def test_a_question_that_is_not_an_object(shadow):
    shadow.edit_jsonl(QUESTIONS, 1, replace="multi_turn_base_0")
    assert f"{QUESTIONS}, record 1: expected an object, found a string" in _error(shadow.root)


@pytest.mark.parametrize("change, expected", [
    (lambda a: a.pop("ground_truth"), "missing key 'ground_truth'"),
    (lambda a: a.pop("id"), "missing key 'id'"),
    (_set("ground_truth", ["cd(folder='document')"]), "'ground_truth[0]' should be a list, found a string"),
])
def test_malformed_answer(shadow, change, expected):
    shadow.edit_jsonl(ANSWERS, 2, change)
    message = _error(shadow.root)
    assert ANSWERS in message and "record 2" in message and expected in message, message


def test_v4_records_are_checked_too(shadow):
    relpath = "bfcl_v4_multi_turn/BFCL_v4_multi_turn_miss_func.json"
    shadow.edit_jsonl(relpath, 1, lambda q: q.pop("question"))
    message = _error(shadow.root, "multi_turn_miss_func", "v4")
    assert relpath in message and "missing key 'question'" in message, message


@pytest.mark.parametrize("relpath, change, expected", [
    ("bfcl_v3/protocol_constants.json", lambda d: d["constants"].pop("MAXIMUM_STEP_LIMIT"),
     "missing key 'MAXIMUM_STEP_LIMIT'"),
    ("bfcl_v3/protocol_constants.json", lambda d: d["constants"]["PYTHON_FUNCTION_DOC_HINT"].update(value=3),
     "'PYTHON_FUNCTION_DOC_HINT' should be a string, found an integer"),
    ("bfcl_v3/protocol_constants.json", lambda d: d["constants"]["MAXIMUM_STEP_LIMIT"].update(value=True),
     "'MAXIMUM_STEP_LIMIT' should be an integer, found a boolean"),
    ("bfcl_v3/long_context_constants.json", lambda d: d.pop("CREDIT_CARD_EXTENSION"),
     "missing key 'CREDIT_CARD_EXTENSION'"),
    ("bfcl_v3/long_context_constants.json", lambda d: d.update(FILES_TAIL_USED="a.txt"),
     "'FILES_TAIL_USED' should be a list, found a string"),
])
def test_broken_constants_fail_before_any_episode(shadow, relpath, change, expected):
    shadow.edit_json(relpath, change)
    message = _error(shadow.root)
    assert relpath in message and expected in message, message


def test_constants_file_that_is_not_an_object(shadow):
    shadow.write("bfcl_v3/long_context_constants.json", "[]")
    assert "long_context_constants.json: expected an object, found a list" in _error(shadow.root)


def test_broken_function_doc(shadow):
    relpath = "bfcl_v3/multi_turn_func_doc/ticket_api.json"
    shadow.edit_jsonl(relpath, 2, lambda d: d.pop("name"))
    message = _error(shadow.root)
    assert f"{relpath}, record 2: missing key 'name'" in message, message
