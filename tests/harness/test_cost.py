"""Cost of a run: provider-prefixed models routed to mocks of their wire formats (tau2 retail through `mua eval`),
the recorded cost checked against the price tables, unknown prices null and flagged, keys never written."""
import json
import logging
import re

import pytest
from helpers.responders import agent as retail_agent
from helpers.responders import user as retail_user
from mock_openai import MockOpenAI, text_reply, usage
from mock_providers import MockAnthropic, MockGemini

from mua.harness.cli import main
from mua.harness.results.cost import RunCost, episode_cost, role_cost
from mua.harness.results.episodes import EpisodeRecord
from mua.harness.results.price_table import builtin, price_of

SECRET = "sk-test-secret-provider-key-0042"
FAST = json.dumps({"retry": {"max_attempts": 3, "initial_wait_s": 0.001, "max_wait_s": 0.01}, "timeout_s": 5})
AGENT, USER = "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"


def with_usage(responder, prompt, completion):
    def respond(request):
        reply = responder(request)
        reply["usage"] = usage(prompt, completion)
        return reply
    return respond


def judge(request):
    prompt = request["messages"][-1]["content"]
    outcomes = re.findall(r"^- (.+)$", prompt, flags=re.M) or ["?"]
    return text_reply(json.dumps({"results": [{"expectedOutcome": o, "reasoning": "mock", "metExpectation": True}
                                              for o in outcomes]}), usage_=usage(700, 50))


def eval_args(out, data_dir, *extra):
    return ["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "3", "--trials", "1", "--no-progress",
            "--data-dir", str(data_dir), "--out", str(out), *extra]


def test_provider_models_route_and_cost_matches_the_price_tables(tmp_path, data_dir, monkeypatch, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"source": "our rate card", "models": {"local-judge": {"input": 0.5, "output": 1.0}}}))
    anthropic = MockAnthropic(with_usage(retail_agent, 1000, 100), key=SECRET)
    gemini = MockGemini(with_usage(retail_user, 400, 20), key=SECRET)
    with anthropic as a_url, gemini as g_url, MockOpenAI(judge) as j_url:
        code = main(eval_args(tmp_path / "run", data_dir,
                              "--agent-model", AGENT, "--agent-base-url", a_url, "--agent-params", FAST,
                              "--user-model", USER, "--user-base-url", g_url, "--user-params", FAST,
                              "--judge-model", "local-judge", "--judge-base-url", j_url, "--prices", str(prices)))
    out = capsys.readouterr().out
    assert code == 0, out
    run = tmp_path / "run"
    rows = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(r["error"] is None for r in rows)
    assert all(h["x-api-key"] == SECRET for h in anthropic.headers)
    assert anthropic.bodies[0]["model"] == "claude-sonnet-4-5"  # the prefix routes; the API gets the bare name
    assert all(h["x-goog-api-key"] == SECRET for h in gemini.headers)
    cost = json.loads((run / "summary.json").read_text())["cost"]

    # the recorded cost is the tokens in the episode records times the price tables' rates
    table = {"agent": builtin()[AGENT], "user": builtin()[USER], "judge": None}
    assert (table["agent"].input, table["agent"].output, table["user"].input) == (3.0, 15.0, 0.3)
    expected_total = 0.0
    for role, rates in table.items():
        tokens = [r["usage"].get(role, {}) for r in rows]
        prompt, completion = sum(t.get("prompt_tokens", 0) for t in tokens), sum(t.get("completion_tokens", 0)
                                                                              for t in tokens)
        rate_in, rate_out = (0.5, 1.0) if rates is None else (rates.input, rates.output)
        want = (prompt * rate_in + completion * rate_out) / 1e6
        got = cost["roles"][role]
        assert (got["prompt_tokens"], got["completion_tokens"]) == (prompt, completion) and prompt > 0, role
        assert got["cost"] == pytest.approx(want, abs=1e-6), role
        expected_total += want
    assert cost["roles"]["judge"]["price"]["source"] == "our rate card"
    assert cost["total"] == pytest.approx(expected_total, abs=1e-6) and cost["unknown"] == []
    assert cost["per_episode"]["mean"] == pytest.approx(expected_total / 3, abs=1e-6)
    assert f"cost: ${cost['total']:.4f}" in out

    # the leaderboard shows it in a "$" column
    assert main(["leaderboard", str(run)]) == 0
    board = capsys.readouterr().out
    assert "$" in board.splitlines()[0] and f"{cost['total']:.4f}" in board

    # and the viewer's headline panel: total, each role's share, per episode
    from mua.harness.view.panel import headline
    shown = headline(run, config=json.loads((run / "config.json").read_text()))["cost"]
    assert shown.startswith(f"cost ${cost['total']:.4f} (agent ${cost['roles']['agent']['cost']:.4f}, ")
    assert f"per episode mean ${cost['per_episode']['mean']:.4f}" in shown

    # the key is in no result file, no output and no log line
    for f in run.iterdir():
        assert SECRET not in f.read_text(), f.name
    assert SECRET not in out + board + caplog.text
    config = json.loads((run / "config.json").read_text())
    assert config["agent"]["api_key_env"] == "ANTHROPIC_API_KEY" and config["user"]["client"]["backend"] == "gemini"


def test_one_model_plays_every_role_and_unknown_price_is_null_never_zero(tmp_path, data_dir, capsys):
    def respond(request):
        if "expectedOutcome" in json.dumps(request["messages"]):
            return judge(request)
        played_agent = any(m["role"] == "system" and "retail" in (m["content"] or "").lower()
                           for m in request["messages"]) and request.get("tools")
        return (retail_agent if played_agent else retail_user)(request)
    with MockOpenAI(respond) as url:
        assert main(eval_args(tmp_path / "one", data_dir, "--model", "my-local-model", "--base-url", url,
                              "--agent-params", FAST)) == 0
    config = json.loads((tmp_path / "one" / "config.json").read_text())
    assert {config[r]["name"] for r in ("agent", "user", "judge")} == {"my-local-model"}
    assert {config[r]["base_url"] for r in ("agent", "user", "judge")} == {url}
    cost = json.loads((tmp_path / "one" / "summary.json").read_text())["cost"]
    assert cost["total"] is None and cost["per_episode"]["mean"] is None
    assert cost["unknown"] == ["agent", "user", "judge"] and cost["roles"]["agent"]["cost"] is None
    assert cost["roles"]["agent"]["prompt_tokens"] > 0  # tokens are still counted
    assert "cost: unknown" in capsys.readouterr().out
    assert main(["leaderboard", str(tmp_path / "one")]) == 0
    board = capsys.readouterr().out
    assert board.splitlines()[0].rstrip().endswith("$") and "? = some model's price is unknown" in board
    from mua.harness.view.panel import headline
    shown = headline(tmp_path / "one", config=config)["cost"]
    assert shown.startswith("cost ? (agent ?, user ?, judge ?)") and "no price for agent, user, judge" in shown


def test_bad_price_table_is_one_line_and_exit_2(tmp_path, data_dir, capsys):
    bad = tmp_path / "prices.json"
    for text in ('{"models": {"m": {"input": -1, "output": 2}}}', '{"m": 1}', "{", '{"models": {"m": {"input": 1}}}'):
        bad.write_text(text)
        assert main(eval_args(tmp_path / "x", data_dir, "--agent-model", "m", "--base-url", "http://127.0.0.1:9/v1",
                              "--prices", str(bad))) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and str(bad) in err and len(err.strip().splitlines()) == 1, err


def _episode(usage: dict, error=None) -> EpisodeRecord:
    return EpisodeRecord.new(benchmark="b", subset="s", task_id="0", trial=0, seed=0, reward=None, components={},
                             termination=None, turns=0, messages=[], usage=usage, info={}, error=error)


def test_run_cost_counts_per_episode_and_never_prices_unknown_tokens_at_zero():
    config = {"prices": {"agent": {"model": "a", "price": {"input": 2.0, "output": 10.0, "source": "t"}},
                         "user": {"model": "u", "price": None}}}
    acc = RunCost(config)
    acc.add(_episode({"agent": {"requests": 1, "prompt_tokens": 1000, "completion_tokens": 100}, "user": {}}))
    acc.add(_episode({"agent": {"requests": 1, "prompt_tokens": 3000, "completion_tokens": 0}}))
    acc.add(_episode({}, error="model error: down"))
    out = acc.result()
    assert out["total"] == pytest.approx(0.003 + 0.006) and out["unknown"] == []  # the user used no tokens
    assert out["per_episode"] == {"mean": pytest.approx(0.0045), "max": 0.006, "episodes": 2}
    assert out["errored_episodes"] == 1 and out["roles"]["user"]["cost"] == 0.0
    acc.add(_episode({"user": {"requests": 1, "prompt_tokens": 5, "completion_tokens": 1}}))
    out = acc.result()
    assert out["total"] is None and out["unknown"] == ["user"] and out["per_episode"]["mean"] is None
    assert RunCost({}).result() is None  # gold runs: no block at all (baselines stay byte-identical)
    assert role_cost(None, 0, 0) == 0.0 and role_cost(None, 1, 0) is None
    prices = {role: e["price"] for role, e in config["prices"].items()}  # what a viewer shows per episode
    assert episode_cost({"agent": {"prompt_tokens": 500000, "completion_tokens": 0}}, prices) == 1.0


def test_prices_are_looked_up_by_provider_name_or_api_host():
    assert price_of("openai/gpt-4o").input == builtin()["openai/gpt-4o"].input
    assert price_of("gpt-4o", "https://api.openai.com/v1") == builtin()["openai/gpt-4o"]
    assert price_of("gpt-4o", "http://127.0.0.1:8000/v1") is None  # a local server's model is not OpenAI's
    assert price_of("Qwen/Qwen3-8B") is None
