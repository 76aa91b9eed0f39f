import asyncio
import json

from helpers.counter_bench import CounterBenchmark

from mua.harness.agents import ScriptedAgent
from mua.harness.interfaces import Limits
from mua.harness.runner import AGENT_STOP, MAX_STEPS, MAX_TURNS, TOO_MANY_ERRORS, USER_STOP, agent_view, run_episode
from mua.harness.types import Message, ToolCall
from mua.harness.users.simulator import ScriptedUser, user_view

BENCH = CounterBenchmark()


def task(i=0):
    return BENCH.load_tasks("easy")[i]


def call(name, args, cid="c1"):
    return ToolCall(id=cid, name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def play(agent, user, bench=BENCH, t=None):
    return asyncio.run(run_episode(bench, t or task(), agent, user))


def test_gold_episode_scores_and_ends_on_user_stop():
    t = task(2)
    result = play(BENCH.gold_agent(t), BENCH.gold_user(t), t=t)
    assert result.termination == USER_STOP
    assert result.score.reward == 1.0
    roles = [m.role for m in result.messages]
    assert roles == ["assistant", "user", "assistant", "tool", "assistant", "user"]
    assert result.messages[3].content == "3" and result.messages[3].tool_call_id == "call_0"


def test_wrong_answer_scores_zero():
    agent = ScriptedAgent([[Message(role="assistant", tool_calls=[call("add", {"n": 5})]),
                            Message(role="assistant", content="ok")]])
    result = play(agent, BENCH.gold_user(task()))
    assert result.score.reward == 0.0 and result.score.info["value"] == 5


def test_agent_stop_marker_ends_episode():
    agent = ScriptedAgent([[Message(role="assistant", content="bye ###STOP###")]])
    result = play(agent, ScriptedUser(["hello", "more", "###STOP###"]))
    assert result.termination == AGENT_STOP
    assert [m.role for m in result.messages] == ["assistant", "user", "assistant"]


def test_bad_tool_calls_go_back_to_agent_and_count_as_errors():
    bad = [call("nope", {}), call("add", "{not json", "c2"), call("add", {"n": "x"}, "c3")]
    agent = ScriptedAgent([[Message(role="assistant", tool_calls=bad)] * 3])
    bench = CounterBenchmark(limits=Limits(max_errors=5))
    result = play(agent, ScriptedUser(["hi"]), bench=bench)
    assert result.termination == TOO_MANY_ERRORS
    tool_texts = [m.content for m in result.messages if m.role == "tool"]
    assert tool_texts[:3] == ["Error: unknown tool nope", "Error: arguments are not valid JSON: "
                              "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
                              "Error: n must be an integer"]


def test_per_turn_step_limit_and_message_limit():
    looping = ScriptedAgent([[Message(role="assistant", tool_calls=[call("add", {"n": 1})])] * 50])
    bench = CounterBenchmark(limits=Limits(max_agent_steps_per_turn=3))
    result = play(looping, ScriptedUser(["go"]), bench=bench)
    assert result.termination == MAX_STEPS
    assert sum(m.role == "assistant" and bool(m.tool_calls) for m in result.messages) == 3
    bench = CounterBenchmark(limits=Limits(max_messages=6))
    result = play(looping, ScriptedUser(["go"]), bench=bench)
    assert result.termination == MAX_STEPS and len(result.messages) == 6


def test_limits_argument_replaces_the_benchmark_budgets():
    t = task(2)
    chatty = ScriptedUser(["hi", "more", "again", "###STOP###"], stop_markers=["###STOP###"])
    agent = ScriptedAgent([[Message(role="assistant", content="ok")]] * 5)
    result = asyncio.run(run_episode(BENCH, t, agent, chatty, limits=Limits(max_user_turns=2)))
    assert result.termination == MAX_TURNS and result.turns == 2
    assert BENCH.start(t).limits == Limits(max_messages=40, max_errors=5)  # the benchmark's own are untouched


def test_user_tool_calls_are_executed_and_hidden_from_agent():
    peek = Message(role="user", content=None, tool_calls=[call("peek", {}, "u1")])
    user = ScriptedUser([peek, "I see 0, please add 1", "###STOP###"], stop_markers=["###STOP###"])
    agent = ScriptedAgent([[Message(role="assistant", content="sure")]])
    result = play(agent, user)
    tool = next(m for m in result.messages if m.role == "tool")
    assert tool.tool_call_id == "u1" and tool.content == "0"
    seen = agent_view(result.messages)
    assert all(m.tool_call_id != "u1" for m in seen) and all(not m.tool_calls for m in seen if m.role == "user")
    sim_view = user_view("sys", result.messages)
    assert any(m.tool_call_id == "u1" for m in sim_view)
    assert sim_view[1].role == "user" and sim_view[1].content == "Hi! How can I help?"


def test_single_kind_messages_protocol_ends_on_mixed_or_empty_messages():
    class Strict(CounterBenchmark):
        def start(self, task):
            spec = super().start(task)
            spec.single_kind_messages = True
            return spec

    mixed = Message(role="assistant", content="let me add", tool_calls=[call("add", {"n": 1})])
    result = play(ScriptedAgent([[mixed]]), ScriptedUser(["go"]), bench=Strict())
    assert result.termination == "agent_error" and not any(m.role == "tool" for m in result.messages)
    result = play(ScriptedAgent([[Message(role="assistant", content="  ")]]), ScriptedUser(["go"]), bench=Strict())
    assert result.termination == "agent_error"
    result = play(ScriptedAgent([[mixed]]), ScriptedUser([""]), bench=Strict())
    assert result.termination == "user_error"
    assert play(ScriptedAgent([[mixed]]), ScriptedUser(["go"])).termination == USER_STOP  # lenient default
