"""``mua score`` replays every order of messages the official evaluators accept, re-executing every call in
the recorded order (recorded tool results are never trusted)."""
import asyncio
import json

import pytest

from mua.harness.cli import main
from mua.harness.registry import open_benchmark
from mua.harness.runner import run_episode
from mua.harness.tools.replay import TaskIndex, parse_line, replay
from mua.harness.tools.transcript import ReplayAgent, ReplayUser, Transcript

FAKE = "recorded result (never trusted)"


def _gold_episodes(tmp_path, data_dir, benchmark, subset, limit):
    out = tmp_path / f"{benchmark}-{subset}"
    assert main(["eval", "--benchmark", benchmark, "--subset", subset, "--agent", "gold", "--limit", str(limit),
                 "--no-progress", "--data-dir", str(data_dir), "--out", str(out)]) == 0
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


def _score(tmp_path, data_dir, rows) -> list[dict]:
    src, out = tmp_path / "in.jsonl", tmp_path / "scored.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["score", "--trajectories", str(src), "--out", str(out), "--data-dir", str(data_dir)])
    return [json.loads(x) for x in out.read_text().splitlines()]


def _as_input(episode: dict, messages: list[dict]) -> dict:
    for m in messages:
        if m["role"] == "tool":
            m["content"] = FAKE
    return {"benchmark": episode["benchmark"], "subset": episode["subset"], "task_id": episode["task_id"],
            "messages": messages}


def _user_says_first(messages: list[dict]) -> list[dict]:
    """Each user block (the user's phone actions, then what they say) reordered: the user speaks, then acts
    on their phone in the same turn, before the agent replies. tau2's evaluator scores such trajectories."""
    out, block = [], []
    for m in messages:
        if m["role"] == "user" or (m["role"] == "tool" and block):
            block.append(m)
            if m["role"] == "user" and not m.get("tool_calls"):
                out += [m] + block[:-1]
                block = []
            continue
        out += block + [m]
        block = []
    return out + block


def _text_before_each_call(messages: list[dict]) -> list[dict]:
    """An agent text before each of its tool-call messages, in the same turn: BFCL's checker skips steps it
    cannot decode and goes on with the turn; tau2 and ACEBench score the calls wherever they come."""
    out = []
    for m in messages:
        if m["role"] == "assistant" and m.get("tool_calls"):
            out.append({"role": "assistant", "content": "Let me do that."})
        out.append(m)
    return out


def test_tau2_user_speaks_then_operates_the_phone_in_the_same_turn(tmp_path, data_dir):
    episodes = _gold_episodes(tmp_path, data_dir, "tau2", "telecom", 6)
    reordered = [_user_says_first(e["messages"]) for e in episodes]
    moved = [e for e, r in zip(episodes, reordered) if r != e["messages"]]
    assert moved, "the gold telecom trajectories have user phone actions to reorder"
    rows = _score(tmp_path, data_dir, [_as_input(e, r) for e, r in zip(episodes, reordered)])
    assert [r["error"] for r in rows] == [None] * len(rows)
    assert [r["reward"] for r in rows] == [e["reward"] for e in episodes] == [1.0] * len(rows)

    # The same verdicts as the scorer called directly on those messages; every call re-executed, in order.
    bench = open_benchmark("tau2", data_dir)
    index = TaskIndex(data_dir)
    for episode, messages in zip(episodes, reordered):
        _, item = parse_line(json.dumps(_as_input(episode, messages)), index)
        direct = asyncio.run(bench.score(item.task, item.messages, termination=None))
        assert asyncio.run(replay(bench, item, None)).reward == direct.reward == 1.0
        played = asyncio.run(run_episode(bench, item.task, *_replayers(item), score=False, replaying=True))
        calls = [c.id for m in played.messages if m.role in ("user", "assistant") for c in m.tool_calls or []]
        results = [m for m in played.messages if m.role == "tool"]
        assert [m.tool_call_id for m in results] == calls and calls
        assert all(m.content != FAKE for m in results)


def test_tau2_wrong_phone_action_after_the_user_spoke_still_fails(tmp_path, data_dir):
    """Accepting the order is not accepting the trajectory: its calls are still executed and checked."""
    episode = next(e for e in _gold_episodes(tmp_path, data_dir, "tau2", "telecom", 6)
                   if any(m["role"] == "user" and m.get("tool_calls") for m in e["messages"]))
    messages = _user_says_first(episode["messages"])
    user_calls = [m for m in messages if m["role"] == "user" and m.get("tool_calls")]
    cut = messages.index(user_calls[-1])
    messages = messages[:cut] + messages[cut + 2:]  # drop the user's last phone action and its result
    row, = _score(tmp_path, data_dir, [_as_input(episode, messages)])
    assert row["error"] is None and row["reward"] == 0.0


@pytest.mark.parametrize("benchmark,subset", [("tau2", "retail"), ("bfcl_v3", "multi_turn_base"),
                                              ("bfcl_v3", "multi_turn_miss_func"),
                                              ("acebench", "agent_multi_turn_en")])
def test_agent_text_then_calls_in_the_same_turn(tmp_path, data_dir, benchmark, subset):
    episodes = _gold_episodes(tmp_path, data_dir, benchmark, subset, 4)
    rows = _score(tmp_path, data_dir, [_as_input(e, _text_before_each_call(e["messages"])) for e in episodes])
    assert [r["error"] for r in rows] == [None] * len(rows)
    assert [r["reward"] for r in rows] == [e["reward"] for e in episodes]
    assert any(r["reward"] == 1.0 for r in rows)


def _replayers(item):
    transcript = Transcript(item.messages)
    return ReplayAgent(transcript), ReplayUser(transcript)
