"""The scenario classes expose upstream's callable surface; tool schemas, state and summaries are well formed."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from helpers.records import summary_fields

from mua.benchmarks.acebench.apis import SCENARIO_CLASSES
from mua.benchmarks.acebench.environment import AceExecutor
from mua.harness.types import ToolCall

FIXTURE = Path(__file__).parent / "fixtures" / "official_methods.json"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_public_methods_and_parameters_match_upstream(lang):
    official = json.loads(FIXTURE.read_text(encoding="utf-8"))[lang]
    assert set(official) == set(SCENARIO_CLASSES)
    for name, cls in SCENARIO_CLASSES.items():
        ours = cls._public_methods(lang)
        assert ours == sorted(official[name]), (lang, name)
        for method in ours:
            params = [[p.name, None if p.default is inspect.Parameter.empty else repr(p.default)]
                      for p in inspect.signature(getattr(cls, method)).parameters.values()][1:]
            assert params == official[name][method], (lang, name, method)


def _run(executor, *calls):
    return executor.run_message([ToolCall(id=str(i), name=n, arguments=json.dumps(a)) for i, (n, a) in
                                 enumerate(calls)])


def test_shared_methods_run_on_every_phone_instance(bench, data_dir):
    task = bench.find_task("agent_multi_step_en", "agent_multi_step_14")
    executor = AceExecutor(task.context.world)
    _run(executor, ("turn_on_wifi", {}))
    assert all(obj.wifi for obj in executor.instances.values())


def test_multi_turn_error_aborts_the_message_and_records_nothing(bench, data_dir):
    task = bench.find_task("agent_multi_turn_en", "agent_multi_turn_0")
    executor = AceExecutor(task.context.world)
    out = _run(executor, ("turn_on_wifi", {}), ("delete_message", {}), ("login_device", {}))
    assert [o.content for o in out] == ["Error during execution: {str(e)}"] * 3 and all(o.error for o in out)
    assert executor.saved_state() == []  # upstream keeps no instances from a failed message
    assert executor.instances["BaseApi"].wifi is True  # but the calls before the error did run
    _run(executor, ("delete_message", {"message_id": 3}))
    saved = executor.saved_state()
    assert [next(iter(s)) for s in saved] == ["BaseApi", "MessageApi"]
    assert "3" not in saved[1]["MessageApi"]["inbox"] and "1" in saved[1]["MessageApi"]["inbox"]  # str keys


def test_malformed_arguments_are_returned_not_raised(bench, data_dir):
    task = bench.find_task("agent_multi_step_en", "agent_multi_step_14")
    env = bench.start(task).env
    outcome = env.execute(ToolCall(id="1", name="send_message", arguments="{not json"))
    assert outcome.error and outcome.content.startswith("Error during execution: arguments are not valid JSON")


def test_tool_schemas_are_openai_json_schema(bench, data_dir):
    task = bench.find_task("agent_multi_step_en", "agent_multi_step_0")
    specs = {t.name: t.to_openai()["function"] for t in bench.start(task).env.agent_tools()}
    order = specs["add_food_delivery_order"]["parameters"]
    assert order["type"] == "object" and order["properties"]["items"]["type"] == "array"
    assert order["properties"]["items"]["items"]["type"] == "object"
    assert specs["turn_on_wifi"]["parameters"] == {"type": "object", "required": [], "properties": {}}


def test_declared_summary_reports_official_metrics(bench):
    rows = [{"subset": "agent_multi_turn_en", "components": {"end_state": 1.0, "process": 1.0}, "error": None},
            {"subset": "agent_multi_turn_en", "components": {"end_state": 0.0, "process": 0.5}, "error": None},
            {"subset": "agent_multi_step_zh", "components": {"end_state": 0.0, "process": 0.333}, "error": None},
            {"subset": "agent_multi_step_zh", "components": None, "error": "boom"}]
    summary = summary_fields(bench.declared_metrics(), rows)
    assert summary["end_state_accuracy"] == 0.333 and summary["process_accuracy"] == 0.611
    assert summary["by_subset"]["agent_multi_turn_en"] == {"end_state_accuracy": 0.5, "process_accuracy": 0.75}
    assert "by_subset" not in summary_fields(bench.declared_metrics(), rows[:2])


def test_starting_an_episode_is_cheap_and_fresh(bench, data_dir):
    task = bench.find_task("agent_multi_turn_en", "agent_multi_turn_0")
    first, second = bench.start(task).env, bench.start(task).env
    first.execute(ToolCall(id="1", name="delete_message", arguments='{"message_id": 1}'))
    assert first.executor.instances is not None and second.executor.instances is None  # built lazily
    second.execute(ToolCall(id="1", name="get_earliest_message_id", arguments="{}"))
    assert 1 in second.executor.instances["MessageApi"].inbox
