"""Run protocols: a default `mua eval` sends each benchmark's official decoding settings, flags override them
(recorded), config.json records the protocol, and the gate refuses runs made under different protocols."""
import json

from mock_openai import MockOpenAI, by_model, text_reply, tool_call_reply

from mua.harness.cli import main
from mua.harness.protocol import differences, mismatches
from mua.harness.results.gate import GateSettings, compare
from mua.harness.results.runs import read_run

FAST = {"resamples": 200}


def recording(routes: dict):
    """A responder routing by model name that keeps every request body, per model."""
    seen: dict[str, list[dict]] = {}
    inner = by_model(routes)

    def respond(request):
        seen.setdefault(request["model"], []).append(request)
        return inner(request)
    return respond, seen


def tau2_agent(request):
    return text_reply("Anything else?") if request["messages"][-1]["role"] == "tool" else \
        tool_call_reply([("get_order_details", {"order_id": "#W2611340"})])


def tau2_user(request):
    said = sum(1 for m in request["messages"] if m["role"] == "assistant")
    return text_reply("Check order #W2611340." if said < 2 else "Thanks! ###STOP###")


def eval_args(url, out, data_dir, benchmark, subset, *extra):
    return ["eval", "--benchmark", benchmark, "--subset", subset, "--limit", "1", "--agent-model", "agent",
            "--agent-base-url", url, "--no-progress", "--data-dir", str(data_dir), "--out", str(out), *extra]


def test_default_tau2_run_sends_the_official_decoding_and_records_it(tmp_path, data_dir):
    respond, seen = recording({"agent": tau2_agent, "user": tau2_user})
    with MockOpenAI(respond) as url:
        assert main(eval_args(url, tmp_path / "run", data_dir, "tau2", "retail", "--user-model", "user",
                              "--user-base-url", url)) == 0
    for role in ("agent", "user"):
        assert seen[role] and all(r["temperature"] == 0.0 and isinstance(r["seed"], int) for r in seen[role])
    assert all(r["tool_choice"] == "auto" for r in seen["agent"])
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    protocol = config["protocol"]
    assert config["trials"] == 4 and protocol["trials"] == 4  # tau2's leaderboard asks for 4 trials
    assert protocol["roles"]["agent"] == {"model": "agent", "params": {"temperature": 0.0}, "seed": True}
    assert protocol["overrides"] == [] and protocol["data"]["unpinned"] == []
    assert "tau2/domains/retail/tasks.json" in protocol["data"]["files"]
    # the only departure from the official protocol: the user simulator is not the official default model
    assert differences(protocol) == ["user model user (official default gpt-4.1-2025-04-14)"]


def test_flags_override_the_protocol_and_the_override_is_recorded(tmp_path, data_dir):
    respond, seen = recording({"agent": tau2_agent, "user": tau2_user})
    with MockOpenAI(respond) as url:
        assert main(eval_args(url, tmp_path / "run", data_dir, "tau2", "retail", "--user-model", "user",
                              "--user-base-url", url, "--agent-temperature", "0.7", "--trials", "1",
                              "--user-params", '{"temperature": 0.2}')) == 0
    assert {r["temperature"] for r in seen["agent"]} == {0.7} and {r["temperature"] for r in seen["user"]} == {0.2}
    protocol = json.loads((tmp_path / "run" / "config.json").read_text())["protocol"]
    assert protocol["overrides"] == ["agent.temperature", "user.temperature", "trials"]
    diffs = differences(protocol)
    assert "agent temperature 0.7 (official 0.0)" in diffs and "1 trial(s) (official 4)" in diffs


def test_bfcl_and_acebench_send_what_their_official_runners_send(tmp_path, data_dir):
    def bfcl_agent(request):
        return text_reply("Done.") if request["messages"][-1]["role"] == "tool" else tool_call_reply([("ls", {})])

    def ace_user(request):
        said = sum(1 for m in request["messages"][1:] if m["role"] in ("assistant", "system"))
        return text_reply("Please send a message to Frank." if said < 2 else "finish conversation")

    respond, seen = recording({"agent": bfcl_agent})
    with MockOpenAI(respond) as url:
        assert main(eval_args(url, tmp_path / "bfcl", data_dir, "bfcl_v3", "multi_turn_base")) == 0
    for r in seen["agent"]:  # bfcl_eval's OpenAI FC handler: temperature 0.001, store false, no tool_choice/seed
        assert r["temperature"] == 0.001 and r["store"] is False and "tool_choice" not in r and "seed" not in r
    respond, seen = recording({"agent": lambda r: text_reply("I have done it."), "user": ace_user})
    with MockOpenAI(respond) as url:
        assert main(eval_args(url, tmp_path / "ace", data_dir, "acebench", "agent_multi_turn_en",
                              "--user-model", "user", "--user-base-url", url)) == 0
    for role in ("agent", "user"):  # ACEBench's API path: constructor defaults, no seed
        assert seen[role] and all(r["temperature"] == 0.001 and r["top_p"] == 1 and r["max_tokens"] == 1000
                                  and "seed" not in r for r in seen[role])


def test_gate_refuses_runs_made_under_different_protocols(make_run):
    base = make_run("base", "tau2", {"retail": {f"t{i}": [1.0] for i in range(5)}})
    record = json.loads((base / "config.json").read_text())["protocol"]
    hot = json.loads(json.dumps(record))
    hot["roles"]["agent"]["params"] = {"temperature": 1.0}
    cand = make_run("cand", "tau2", {"retail": {f"t{i}": [1.0] for i in range(5)}}, model="b", protocol=hot)
    v = compare(read_run(base), read_run(cand), GateSettings(**FAST))
    assert not v.passed and any("different protocols" in f and "agent params" in f for f in v.failures)
    v = compare(read_run(base), read_run(cand), GateSettings(allow_protocol_mismatch=True, **FAST))
    assert v.passed and any("different protocols" in w for w in v.warnings)
    assert mismatches(record, record) == []
    old = make_run("old", "tau2", {"retail": {f"t{i}": [1.0] for i in range(5)}}, protocol=False)
    assert not compare(read_run(old), read_run(base), GateSettings(**FAST)).passed
    assert differences(None) == ["protocol not recorded (run made before mua recorded it)"]


def test_leaderboard_flags_protocol_departures_with_a_footnote(make_run, capsys):
    official = make_run("official", "tau2", {"retail": {"t0": [1.0] * 4}}, model="a", trials=4)
    record = json.loads((official / "config.json").read_text())["protocol"]
    hot = json.loads(json.dumps(record))
    hot["roles"]["agent"]["params"] = {"temperature": 1.0}
    make_run("hot", "tau2", {"retail": {"t0": [1.0] * 4}}, model="b", trials=4, protocol=hot)
    old = make_run("old", "tau2", {"retail": {"t0": [1.0] * 4}}, model="c", trials=4, protocol=False)
    assert main(["leaderboard", str(official), str(official.parent / "hot"), str(old)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert any(line.startswith("a ") for line in lines) and not any(line.startswith("a †") for line in lines)
    assert any(line.startswith("b †1") for line in lines) and any(line.startswith("c †2") for line in lines)
    assert "†1 hot: agent temperature 1.0 (official 0.0)" in out
    assert "†2 old: protocol not recorded" in out


def test_published_rows_are_flagged_where_their_source_departs_or_says_nothing(make_run, capsys):
    run = make_run("official", "tau2", {"retail": {"t0": [1.0] * 4}}, model="a", trials=4)
    assert main(["leaderboard", str(run), "--published", "tau2-leaderboard", "mua-rl"]) == 0
    out = capsys.readouterr().out
    assert "Claude Opus 4.5 (published) †" in out
    assert "tau2: user model gpt-5.2 (official default gpt-4.1-2025-04-14)" in out
    assert "tau2: not stated: user simulator, agent decoding, trials" in out  # the MUA-RL rows


def test_a_run_written_before_protocols_is_not_resumed_under_new_defaults(tmp_path, data_dir, capsys):
    respond, _ = recording({"agent": tau2_agent, "user": tau2_user})
    out = tmp_path / "run"
    with MockOpenAI(respond) as url:
        args = eval_args(url, out, data_dir, "tau2", "retail", "--user-model", "user", "--user-base-url", url,
                         "--trials", "1")
        assert main(args) == 0
        config = json.loads((out / "config.json").read_text())
        del config["protocol"]
        (out / "config.json").write_text(json.dumps(config))
        assert main(args) == 2
    assert "written before mua recorded run protocols" in capsys.readouterr().err
