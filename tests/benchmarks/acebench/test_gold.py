"""Gold replays reach the official checker's verdict on every record, through the one runner."""
from __future__ import annotations

import asyncio

import pytest

from mua.harness.runner import run_episode

# (subset, task id) -> why the official checker fails its own gold (replaying the first milestone list)
OFFICIAL_GOLD_FAILURES = {
    ("agent_multi_turn_en", "agent_multi_turn_6"): "milestones never log the device in; expected logged_in True",
    ("agent_multi_turn_zh", "agent_multi_turn_6"): "milestones never log the device in; expected logged_in True",
    ("agent_multi_step_en", "agent_multi_step_0"): "orders 'Super Supreme'; the menu item is 'Super Supreme Pizza'",
    ("agent_multi_step_en", "agent_multi_step_1"): "orders 'Super Supreme'; the menu item is 'Super Supreme Pizza'",
    **{(f"agent_multi_step_{lang}", f"agent_multi_step_{n}"): "no food-platform login before the order"
       for lang in ("en", "zh") for n in (12, 13)},
    **{(f"agent_multi_step_{lang}", "agent_multi_step_16"): "milestones never log the device in"
       for lang in ("en", "zh")},
    **{(f"agent_multi_step_{lang}", f"agent_multi_step_{n}"): "deletes a message the expected state keeps and "
       "sends the text with a different final period" for lang in ("en", "zh") for n in (14, 15, 17)},
}
OFFICIAL_GOLD_PASS = {"agent_multi_turn_en": 29, "agent_multi_step_en": 12, "agent_multi_turn_zh": 29,
                      "agent_multi_step_zh": 14}


@pytest.mark.parametrize("subset", ["agent_multi_turn_en", "agent_multi_step_en", "agent_multi_turn_zh",
                                    "agent_multi_step_zh"])
def test_gold_matches_official_verdicts(bench, data_dir, official, subset):
    tasks = bench.load_tasks(subset)
    assert len(tasks) == (30 if "multi_turn" in subset else 20)
    passed = 0
    for task in tasks:
        result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task)))
        end_state, process = official["gold"][subset][task.id]
        assert result.score.reward == (1.0 if end_state else 0.0), task.id
        assert result.score.components == {"end_state": float(end_state), "process": process}, task.id
        assert ((subset, task.id) in OFFICIAL_GOLD_FAILURES) == (not end_state), task.id
        assert result.termination == "user_stop"
        passed += end_state
    assert passed == OFFICIAL_GOLD_PASS[subset]


def test_gold_agent_emits_structured_calls(bench, data_dir):
    task = bench.find_task("agent_multi_turn_en", "agent_multi_turn_0")
    result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task)))
    calls = [c for m in result.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    assert [c.name for c in calls] == ["turn_on_wifi", "get_earliest_message_id", "delete_message", "send_message"]
    assert calls[2].parsed_arguments() == {"message_id": 3}
    tool_texts = [m.content for m in result.messages if m.role == "tool"]
    assert tool_texts[0] == '{"status": true, "message": "Wi-Fi has been turned on"}'
    assert result.messages[0].content == task.scenario and result.messages[-1].content == "finish conversation"
