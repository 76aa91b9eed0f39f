"""Users and episodes end to end through the runner with scripted chat models."""
from __future__ import annotations

import asyncio
import json

from mua.benchmarks.acebench.user import NUDGE, AceSimulatedUser, dialogue_length
from mua.harness.agents import ModelAgent
from mua.harness.runner import run_episode
from mua.harness.types import Message, ToolCall, Usage


class ScriptedModel:
    """A ChatModel that answers from a list and records what it was sent."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen = []

    async def chat(self, messages, tools=None, seed=None):
        self.seen.append((list(messages), tools))
        reply = self.replies.pop(0)
        if not isinstance(reply, Message):
            reply = Message(role="assistant", content=reply)
        return reply, Usage(requests=1)


def _call(name, **args):
    return Message(role="assistant", tool_calls=[ToolCall(id=name, name=name, arguments=json.dumps(args))])


def test_multi_turn_episode_with_simulated_user(bench, data_dir):
    task = bench.find_task("agent_multi_turn_en", "agent_multi_turn_0")
    user_model = ScriptedModel(["Please text Frank: 'Are you free tomorrow to have lunch with me?'",
                                "Delete the oldest one.", "finish conversation"])
    agent_model = ScriptedModel([
        _call("turn_on_wifi"), _call("send_message", sender_name="Grace", receiver_name="Frank",
                                     message="Are you free tomorrow to have lunch with me?"),
        "user: The inbox is full. Which message should I delete?",
        _call("get_earliest_message_id"), _call("delete_message", message_id=3),
        _call("send_message", sender_name="Grace", receiver_name="Frank",
              message="Are you free tomorrow to have lunch with me?"),
        "Sent."])
    user = bench.simulated_user(task, user_model, seed=1)
    assert isinstance(user, AceSimulatedUser)
    result = asyncio.run(run_episode(bench, task, ModelAgent(agent_model), user))
    assert result.termination == "user_stop" and result.score.reward == 1.0
    # the simulator starts from its prompt and the official greeting, and never sees tool traffic
    first_view, _ = user_model.seen[0]
    assert [m.role for m in first_view] == ["system", "user"]
    assert first_view[0].content.startswith("You are a user interacting with an agent.")
    assert task.scenario in first_view[0].content
    assert first_view[1].content == "Is there anything you need help with today?"
    second_view, _ = user_model.seen[1]
    # upstream (multi_turn/APIModel_user.py) sends the user model its own earlier replies as "system"
    assert [m.role for m in second_view] == ["system", "user", "system", "user"]
    assert second_view[3].content == " The inbox is full. Which message should I delete?"  # prefix removed
    # the agent got the official system prompt with the phone domain rules, and the record's tools
    agent_view, tools = agent_model.seen[0]
    assert agent_view[0].role == "system" and "simulated mobile assistant" in agent_view[0].content
    assert {t.name for t in tools} >= {"send_message", "delete_message", "turn_on_wifi"}


def test_finish_is_ignored_before_loop_index_two(bench, data_dir):
    task = bench.find_task("agent_multi_turn_en", "agent_multi_turn_0")
    user_model = ScriptedModel(["finish conversation", "finish conversation", "finish conversation"])
    agent_model = ScriptedModel(["How can I help?", "Are you sure?", "Bye."])
    result = asyncio.run(run_episode(bench, task, ModelAgent(agent_model), bench.simulated_user(task, user_model)))
    # initial user message (outside the loop), agent (0), user (1: not checked), agent (2), user (3: stops)
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert result.termination == "user_stop"


def test_agent_finish_ends_multi_turn(bench, data_dir):
    task = bench.find_task("agent_multi_turn_en", "agent_multi_turn_0")
    user_model = ScriptedModel(["hello", "go on"])
    agent_model = ScriptedModel(["finish conversation", "finish conversation"])
    result = asyncio.run(run_episode(bench, task, ModelAgent(agent_model), bench.simulated_user(task, user_model)))
    # the agent's finish at loop index 0 is ignored, at index 2 it ends the dialogue (no third user call)
    assert len(result.messages) == 4 and len(user_model.seen) == 2


def test_multi_step_nudges_text_and_stops_on_finish(bench, data_dir):
    task = bench.find_task("agent_multi_step_en", "agent_multi_step_2")
    agent_model = ScriptedModel(["Let me think.", _call("turn_on_wifi"), "finish conversation"])
    user = bench.simulated_user(task, ScriptedModel([]))
    result = asyncio.run(run_episode(bench, task, ModelAgent(agent_model), user))
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert result.messages[0].content == task.scenario and result.messages[2].content == NUDGE
    agent_view, _ = agent_model.seen[0]
    assert "finish conversation" in agent_view[0].content  # the multi-step system prompt


def test_dialogue_limit_is_official_forty_iterations(bench, data_dir):
    task = bench.find_task("agent_multi_step_en", "agent_multi_step_2")
    agent_model = ScriptedModel([_call("turn_on_wifi")] * 30)
    result = asyncio.run(run_episode(bench, task, ModelAgent(agent_model), bench.gold_user(task)))
    assert result.termination == "max_steps"
    assert dialogue_length(result.messages) == 41  # the initial request + 40 loop iterations
    assert sum(m.role == "assistant" for m in result.messages) == 20
