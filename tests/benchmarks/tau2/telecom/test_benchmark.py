"""tau2 telecom through Tau2Benchmark: splits, prompts (vs official), gold episodes through run_episode,
verdicts vs the official evaluator, and a model-driven episode where both agent and user call tools."""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import mock_openai as mock
import pytest
from helpers.data import DATA_DIR

from mua.benchmarks.tau2 import Tau2Benchmark
from mua.benchmarks.tau2.prompts import agent_system_prompt
from mua.benchmarks.tau2.registry import get_domain
from mua.harness.agents import ModelAgent
from mua.harness.models.openai_client import OpenAIChatModel
from mua.harness.runner import run_episode
from mua.harness.types import Message, ToolCall

FIXTURES = Path(__file__).parent / "fixtures"
BENCH = Tau2Benchmark(DATA_DIR)


@pytest.fixture(scope="module")
def all_tasks(data_dir):
    return {t.id: t for t in BENCH.load_tasks("telecom", None)}


@pytest.fixture(scope="module")
def base_tasks(data_dir):
    return BENCH.load_tasks("telecom", "base")


def test_splits(data_dir, all_tasks, base_tasks):
    assert len(all_tasks) == 2285 and len(base_tasks) == 114
    assert {s: len(BENCH.load_tasks("telecom", s)) for s in ("train", "test", "small")} == \
        {"train": 74, "test": 40, "small": 20}


def test_prompts_equal_official(data_dir, all_tasks):
    official = json.loads((FIXTURES / "official_prompts.json").read_text(encoding="utf-8"))
    domain = get_domain("telecom", data_dir)
    some = next(iter(all_tasks.values()))
    for key, prompt in (("agent", BENCH.start(some).system_prompt),
                        ("agent_workflow", agent_system_prompt(domain.policies["workflow"]))):
        assert (hashlib.sha256(prompt.encode()).hexdigest(), len(prompt)) == \
            (official[key]["sha256"], official[key]["chars"]), key
    for task_id, prompt in official["users"].items():
        assert BENCH.simulated_user(all_tasks[task_id], model=None).system_prompt == prompt


def test_gold_passes_every_task(all_tasks):
    """The official evaluator passes the gold actions of all 2285 tasks (checked by running it on the same
    gold trajectories), so no exceptions are expected here. About 4 s for the full task file."""
    async def run_all():
        return [(t, await run_episode(BENCH, t, BENCH.gold_agent(t), BENCH.gold_user(t)))
                for t in all_tasks.values()]
    for task, result in asyncio.run(run_all()):
        assert result.termination == "user_stop"
        assert result.score.reward == 1.0, (task.id, result.score)
        assert asyncio.run(BENCH.score(task, result.messages)).reward == 1.0, task.id  # replayed, no env
        user_calls = [c.name for m in result.messages if m.role == "user" for c in m.tool_calls or []]
        expected = [a["name"] for a in task.evaluation["actions"] if a.get("requestor") == "user"]
        assert user_calls == expected


def _trajectory(task, steps) -> list[Message]:
    """The trajectory shape the official verdicts were computed on (see the fixture's ``about``)."""
    gold = task.evaluation["actions"]
    messages = [Message(role="assistant", content="Hi! How can I help you today?"),
                Message(role="user", content="My phone has a problem.")]
    for k, step in enumerate(steps):
        requestor, name, arguments = ((gold[step].get("requestor") or "assistant", gold[step]["name"],
                                       gold[step]["arguments"]) if isinstance(step, int) else step)
        call = ToolCall(id=f"call_{k}", name=name, arguments=json.dumps(arguments))
        messages.append(Message(role="user" if requestor == "user" else "assistant", tool_calls=[call]))
        messages.append(Message(role="tool", content="(not trusted)", tool_call_id=call.id, name=name))
    messages += [Message(role="assistant", content="Everything should work now."),
                 Message(role="user", content="Thanks! ###STOP###")]
    return messages


CASES = json.loads((FIXTURES / "official_verdicts.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['variant']}-{i}" for i, c in enumerate(CASES)])
def test_verdict_matches_official(all_tasks, case):
    task = all_tasks[case["task_id"]]
    messages = _trajectory(task, case["steps"])
    score = asyncio.run(BENCH.score(task, messages, termination=case.get("termination", "user_stop")))
    assert score.reward == case["reward"], score.info
    expected = {k.lower(): v for k, v in case["components"].items()}
    assert {k: v for k, v in score.components.items()} == expected, score.info
    assert len(score.info.get("env_assertions_failed", [])) == case["env_assertions"].count(False)


def test_model_episode_with_agent_and_user_tool_calls(all_tasks):
    """Both sides call tools through run_episode: the user's calls reach the phone, are hidden from the agent,
    and appear in the trajectory as user tool calls answered by tool messages."""
    task = all_tasks["[service_issue]airplane_mode_on[PERSONA:None]"]
    requests = {"agent": [], "user": []}

    def recorded(name, replies):
        respond = mock.script(replies)

        def answer(request):
            requests[name].append(request)
            return respond(request)
        return answer
    phone = next(a["arguments"]["phone_number"] for a in task.initial_state["initialization_actions"]
                 if a["func_name"] == "set_user_info")
    user_replies = [mock.tool_call_reply([("check_status_bar", {})]),
                    mock.text_reply("My phone has no service at all."),
                    mock.tool_call_reply([("toggle_airplane_mode", {})]),
                    mock.text_reply("It works now, thanks! ###STOP###")]
    agent_replies = [mock.tool_call_reply([("get_customer_by_phone", {"phone_number": phone})]),
                     mock.text_reply("Please turn airplane mode off.")]
    routes = mock.by_model({"agent": recorded("agent", agent_replies), "user": recorded("user", user_replies)})
    with mock.MockOpenAI(routes) as url:
        async def play():
            agent_model, user_model = OpenAIChatModel("agent", url), OpenAIChatModel("user", url)
            try:
                return await run_episode(BENCH, task, ModelAgent(agent_model),
                                         BENCH.simulated_user(task, user_model))
            finally:
                await agent_model.aclose()
                await user_model.aclose()
        result = asyncio.run(play())
    assert result.termination == "user_stop" and result.score.reward == 1.0, result.score
    roles = [(m.role, m.tool_calls[0].name if m.tool_calls else None) for m in result.messages]
    assert roles == [("assistant", None), ("user", "check_status_bar"), ("tool", None), ("user", None),
                     ("assistant", "get_customer_by_phone"), ("tool", None), ("assistant", None),
                     ("user", "toggle_airplane_mode"), ("tool", None), ("user", None)]
    assert result.messages[2].content.startswith("Status Bar: \u2708\ufe0f Airplane Mode")
    assert result.messages[8].content.startswith("Airplane Mode is now OFF.")
    user_tools = {t["function"]["name"] for t in requests["user"][0]["tools"]}
    agent_tools = {t["function"]["name"] for t in requests["agent"][0]["tools"]}
    assert "toggle_airplane_mode" in user_tools and "get_customer_by_phone" not in user_tools
    assert "get_customer_by_phone" in agent_tools and "toggle_airplane_mode" not in agent_tools
    seen_by_agent = json.dumps(requests["agent"][-1]["messages"][1:])  # after the system prompt (the policy)
    assert "check_status_bar" not in seen_by_agent and "Airplane Mode" not in seen_by_agent
    assert "check_status_bar" in json.dumps(requests["user"][-1]["messages"][1:])  # the user sees its own calls
    assert asyncio.run(BENCH.score(task, result.messages)).reward == 1.0
