"""Synthetic run directories for the `mua view` tests: a failing episode with a tool call and a scorer
finding, a user's own device tool call, an unknown (null) reward, an errored episode, and hostile text."""
from __future__ import annotations

import json
from pathlib import Path

from mua.harness.results.store import dumps

HOSTILE = ('<script>document.body.dataset.pwned="1"</script><img src=x onerror="document.body.dataset.pwned=2">'
           '</script><!-- \u2028\u2029 مرحبا بالعالم 你好世界 \ud800 lone surrogate ' + "x" * 5000)


def _call(call_id: str, name: str, args: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def episode(task_id: str, reward, *, trial: int = 0, error=None) -> dict:
    messages = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": None, "tool_calls": [_call("u0", "toggle_airplane_mode", {})]},
        {"role": "tool", "content": "Airplane Mode is now OFF.", "tool_call_id": "u0", "name": "toggle_airplane_mode"},
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": None,
         "tool_calls": [_call("a0", "cancel_reservation", {"reservation_id": "EHGLP3"})]},
        {"role": "tool", "content": "{\"status\": \"cancelled\"} " + "y" * 3000, "tool_call_id": "a0",
         "name": "cancel_reservation"},
        {"role": "assistant", "content": HOSTILE},
        {"role": "user", "content": "###STOP###"},
    ]
    failed = reward is not None and reward < 1
    return {"benchmark": "tau2", "subset": "airline", "task_id": task_id, "trial": trial, "seed": 1,
            "reward": None if error else reward,
            "components": {} if error else {"db": 0.0 if failed else 1.0, "action": 0.0 if failed else 1.0,
                                            "nl_assertion": None if reward is None else 1.0},
            "termination": None if error else "user_stop", "turns": 2, "messages": [] if error else messages,
            "usage": {"agent": {"requests": 2, "prompt_tokens": 100, "completion_tokens": 20}},
            "info": {} if error else {"termination": "user_stop", "db_match": not failed,
                                      "actions_unmatched": ["cancel_EHGLP3_refund"] if failed else []},
            "error": error}


def write_run(root: Path, name: str, outcomes: dict) -> Path:
    """``outcomes``: {task_id: reward, None (unknown) or "error"}."""
    path = Path(root) / name
    path.mkdir(parents=True)
    config = {"benchmark": "tau2", "subsets": ["airline"], "split": "base", "trials": 1, "seed": 0,
              "agent": {"name": "model-a"}, "tasks": {"airline": list(outcomes)}}
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    rows = [episode(t, None, error="model error: timeout") if r == "error" else episode(t, r)
            for t, r in outcomes.items()]
    (path / "episodes.jsonl").write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


BASELINES = Path(__file__).resolve().parents[2] / "results" / "baselines"


def write_failed_tau2_run(root: Path, data_dir: Path, name: str = "tau2-failed") -> Path:
    """A real tau2 airline run of two tasks: task 1 as the gold agent played it (passes), and task 7 with the
    upgrade made in economy instead of business, rescored by the adapter (the database check fails)."""
    import asyncio

    from mua.harness.registry import open_benchmark
    from mua.harness.types import Message

    baseline = BASELINES / "tau2-airline-gold"
    config = json.loads((baseline / "config.json").read_text(encoding="utf-8"))
    config["tasks"] = {"airline": ["1", "7"]}
    rows = {r["task_id"]: r for r in map(json.loads, (baseline / "episodes.jsonl").read_text().splitlines())}
    wrong = json.loads(json.dumps(rows["7"]))
    for m in wrong["messages"]:
        for call in m.get("tool_calls") or []:
            call["function"]["arguments"] = call["function"]["arguments"].replace('"business"', '"economy"')
    bench = open_benchmark("tau2", data_dir)
    score = asyncio.run(bench.score(bench.find_task("airline", "7"),
                                    [Message.from_dict(m) for m in wrong["messages"]]))
    wrong.update(reward=score.reward, components=score.components, info=score.info)
    assert score.reward == 0.0 and score.info["db_match"] is False
    path = Path(root) / name
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (path / "episodes.jsonl").write_text(dumps(rows["1"]) + "\n" + dumps(wrong) + "\n", encoding="utf-8")
    return path
