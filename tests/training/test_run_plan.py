"""`mua train` plays the user simulator (and judge) exactly as `mua eval` scores with: the benchmark's run protocol
comes from one run plan (harness/run/plan.py) both call. The user's requests of the same episode are compared
field by field; a departure from the protocol needs an explicit flag and is recorded."""
from __future__ import annotations

import asyncio
import json

import pytest
from helpers.protocol_episodes import acebench, tau2_retail
from mock_openai import MockOpenAI

from mua.harness.cli import main
from mua.harness.errors import ConfigError

pytest.importorskip("trl")

DECODING = ("temperature", "top_p", "max_tokens", "store", "tool_choice", "n", "stop")
CASES = {"tau2": (tau2_retail, "retail", "2", ["--split", "base"]),
         "acebench": (acebench, "agent_multi_turn_en", "agent_multi_turn_0", [])}


def _user_request(body: dict) -> dict:
    """What the user simulator sent: decoding fields, whether a seed went along, and the messages."""
    return {"model": body.get("model"), **{k: body[k] for k in DECODING if k in body},
            "seed": body.get("seed") is not None, "messages": body["messages"]}


def _eval_user_requests(bench: str, data_dir, tmp_path) -> tuple[list[dict], dict]:
    responder, subset, task_id, extra = CASES[bench]
    seen: list[dict] = []

    def respond(body):
        if body.get("model") == "user":
            seen.append(_user_request(body))
        return responder(body)
    out = tmp_path / "eval"
    with MockOpenAI(respond) as url:
        assert main(["eval", "--benchmark", bench, "--subset", subset, "--task-ids", task_id, *extra,
                     "--agent-model", "agent", "--agent-base-url", url, "--user-model", "user", "--user-base-url",
                     url, "--trials", "1", "--no-progress", "--data-dir", str(data_dir), "--out", str(out)]) in (0, 1)
    return seen, json.loads((out / "config.json").read_text())["protocol"]


def _train_user_requests(bench_name: str, data_dir, tmp_path, **settings) -> tuple[list[dict], dict]:
    """The user of one training episode (training's user factory), against the same mock agent."""
    from mua.harness.agents import ModelAgent
    from mua.harness.models import make_chat_model
    from mua.harness.registry import open_benchmark
    from mua.harness.runner import run_episode
    from mua.training.config import TrainConfig
    from mua.training.grpo import training_protocol, user_factory

    responder, subset, task_id, _ = CASES[bench_name]
    bench = open_benchmark(bench_name, data_dir)
    task = next(t for t in bench.load_tasks(subset) if t.id == task_id)
    seen: list[dict] = []

    def respond(body):
        if body.get("model") == "user":
            seen.append(_user_request(body))
        return responder(body)
    with MockOpenAI(respond) as url:
        cfg = TrainConfig(benchmark=bench_name, subsets=[subset], user_model="user", user_base_url=url,
                          output_dir=str(tmp_path / "train"), progress=False, **settings)
        users = user_factory(bench, cfg)

        async def play():
            agent_model = make_chat_model("agent", base_url=url)
            try:
                await run_episode(bench, task, ModelAgent(agent_model, seed=1), users(task, 12345))
            finally:
                await agent_model.aclose()
                await users.model.aclose()
        asyncio.run(play())
    return seen, training_protocol(cfg, bench, [task])


@pytest.mark.parametrize("bench", sorted(CASES))
def test_train_sends_the_user_simulator_requests_eval_sends(bench, data_dir, tmp_path):
    evaluated, eval_protocol = _eval_user_requests(bench, data_dir, tmp_path)
    trained, train_protocol = _train_user_requests(bench, data_dir, tmp_path)
    assert evaluated and trained == evaluated  # same params, same seed presence, same conversation
    assert train_protocol["roles"]["user"] == eval_protocol["roles"]["user"]
    assert train_protocol["official"] == eval_protocol["official"] and train_protocol["overrides"] == []
    if bench == "acebench":  # the bug this guards: training decoded ACEBench's user at 0.0 with a seed
        assert evaluated[0]["temperature"] == 0.001 and not evaluated[0]["seed"]


def test_a_departure_from_the_protocol_needs_the_flag_and_is_recorded(data_dir, tmp_path):
    from mua.harness.registry import open_benchmark
    from mua.training.config import TrainConfig, protocol_specs
    from mua.training.grpo import training_protocol

    bench = open_benchmark("acebench", data_dir)
    hot = dict(benchmark="acebench", user_model="user", user_base_url="http://127.0.0.1:9/v1",
               output_dir=str(tmp_path), user_params={"temperature": 0.0})
    with pytest.raises(ConfigError, match=r"user.temperature 0.0 \(official 0.001\).*allow_protocol_departure"):
        protocol_specs(TrainConfig(**hot), bench)
    client_only = TrainConfig(**{**hot, "user_params": {"retry": {"max_attempts": 1}}})
    assert protocol_specs(client_only, bench)[0].params["temperature"] == 0.001  # a client option is no departure
    allowed = TrainConfig(**hot, allow_protocol_departure=True)
    user, _, overrides = protocol_specs(allowed, bench)
    assert user.params["temperature"] == 0.0 and overrides == ["user.temperature"]
    task = bench.load_tasks("agent_multi_turn_en")[0]
    record = training_protocol(allowed, bench, [task])
    assert record["overrides"] == ["user.temperature"] and record["roles"]["user"]["params"]["temperature"] == 0.0
    assert allowed.settings()["allow_protocol_departure"] is True  # train_config.json holds the flag too


def test_the_plan_is_resolved_once_per_run_and_again_when_a_played_setting_changes(data_dir, tmp_path, monkeypatch):
    """Validation, the endpoint check, the rollout's user and judge, train_config.json's record and the periodic
    evaluation's plan all read one resolution (it ran 8 times per `mua train` with eval_steps before)."""
    import mua.training.config as config
    from mua.harness.registry import open_benchmark
    from mua.training.evaluation import eval_plan
    from mua.training.grpo import endpoint_specs, judge_model, training_protocol, user_factory

    resolved, declared = [], []
    original = config.run_protocol
    monkeypatch.setattr(config, "run_protocol", lambda *a: resolved.append(a) or original(*a))
    bench = open_benchmark("acebench", data_dir)
    own = bench.declared_protocol
    monkeypatch.setattr(bench, "declared_protocol", lambda: declared.append(1) or own())
    cfg = config.TrainConfig(benchmark="acebench", user_model="user", user_base_url="http://127.0.0.1:9/v1",
                             judge_model="judge", judge_base_url="http://127.0.0.1:9/v1", output_dir=str(tmp_path))
    config.check_user_model(cfg, bench)
    first = config.protocol_specs(cfg, bench)
    endpoint_specs(cfg, bench)
    asyncio.run(user_factory(bench, cfg).model.aclose())
    asyncio.run(judge_model(cfg, bench).aclose())
    training_protocol(cfg, bench, bench.load_tasks("agent_multi_turn_en")[:1])
    plan = eval_plan(cfg, bench, tmp_path / "policy")
    assert len(resolved) == 1 and plan.user == first[0] and plan.judge == first[1]
    assert len(declared) == 1  # the benchmark's protocol is declared once per run, train_config.json's record too
    cfg.user_params = {"temperature": 0.5}  # a changed setting is a new plan (here: a refused departure)
    with pytest.raises(ConfigError, match="user.temperature"):
        config.protocol_specs(cfg, bench)
    assert len(resolved) == 2 and len(declared) == 2
