"""A default `mua eval` sends what the official runners send. One tau2 retail, one BFCL and one ACEBench
episode are played against the mock endpoint with fixed answers (helpers/protocol_episodes.py); every request
mua sends is compared, field by field, with the request the official code sent for the same episode and the
same answers (fixtures/official_requests, recorded from the official code: see the README there)."""
import hashlib
import json
from pathlib import Path
from typing import Optional

from helpers.protocol_episodes import acebench, bfcl, tau2_retail
from mock_openai import MockOpenAI

from mua.harness.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "official_requests"
DECODING = ("temperature", "top_p", "max_tokens", "store", "tool_choice")


def _drop_nulls(value):
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False,
                                     separators=(",", ":")).encode()).hexdigest()


def summarize(body: dict) -> dict:
    """What is compared of one request: the model name and decoding fields as sent, whether a seed is sent
    (its value is each runner's own derivation from its run seed), and the messages and tools exactly (as
    sha256 of their canonical JSON, so that the fixtures hold no copy of upstream prompts; roles and tool
    names are kept readable). A null field counts as not sent. tau2's litellm messages repeat each tool
    call's function name as a non-standard ``name`` beside ``function``; that duplicate is not compared."""
    messages = _drop_nulls(body.get("messages") or [])
    for m in messages:
        for call in m.get("tool_calls") or []:
            call.pop("name", None)
    tools = _drop_nulls(body.get("tools") or [])
    out = {"model": body.get("model")}
    out.update({k: body[k] for k in DECODING if body.get(k) is not None})
    out["seed"] = "<int>" if body.get("seed") is not None else None
    out["messages"] = {"roles": [m.get("role") for m in messages], "sha256": _digest(messages)}
    out["tools"] = {"names": [t["function"]["name"] for t in tools], "sha256": _digest(tools)} if tools else None
    return out


def played(responder, args: list[str], data_dir: Path, out: Path) -> list[dict]:
    """The requests of one default `mua eval` run (one trial), summarized, in arrival order."""
    seen: list[dict] = []

    def respond(request):
        seen.append(summarize(request))
        return responder(request)
    with MockOpenAI(respond) as url:
        assert main(["eval", *[a.replace("URL", url) for a in args], "--agent-model", "agent",
                     "--agent-base-url", url, "--trials", "1", "--no-progress", "--data-dir", str(data_dir),
                     "--out", str(out)]) in (0, 1)  # 1: the episode scored 0, which is fine here
    return seen


def check(name: str, got: list[dict], agent_fields: Optional[dict] = None) -> None:
    """Every request as the official one; ``agent_fields`` limits the comparison of a model's requests to
    the named fields."""
    fixture = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    want = fixture["requests"]
    if agent_fields:
        want = [{k: w.get(k) for k in agent_fields[w["model"]]} if w["model"] in agent_fields else w for w in want]
    assert [r["model"] for r in got] == [r["model"] for r in want], "requests per role differ in number or order"
    for i, (g, w) in enumerate(zip(got, want)):
        for field in sorted(set(g) | set(w)):
            assert g.get(field) == w.get(field), (f"{name} request {i} ({w['model']}): {field} differs from the "
                                                  f"official runner's: {g.get(field)} != {w.get(field)}")


def test_tau2_retail_episode_sends_what_tau2_run_sends(tmp_path, data_dir):
    got = played(tau2_retail, ["--benchmark", "tau2", "--subset", "retail", "--task-ids", "2",
                               "--user-model", "user", "--user-base-url", "URL",
                               "--judge-model", "gpt-4.1-2025-04-14", "--judge-base-url", "URL"],
                 data_dir, tmp_path / "run")
    check("tau2_retail", got)


def test_bfcl_episode_sends_what_bfcl_generate_sends(tmp_path, data_dir):
    got = played(bfcl, ["--benchmark", "bfcl_v3", "--subset", "multi_turn_base", "--task-ids",
                        "multi_turn_base_0"], data_dir, tmp_path / "run")
    check("bfcl_multi_turn_base_0", got)


def test_acebench_episode_sends_the_official_decoding_and_user_prompts(tmp_path, data_dir):
    """The user simulator's requests match exactly. The agent's match in decoding only: ACEBench prompts the
    agent with the function list and the dialogue as text in one user message and parses calls from its
    text, whereas mua gives the agent structured tools (the verdict code is the same; see the adapter)."""
    got = played(acebench, ["--benchmark", "acebench", "--subset", "agent_multi_turn_en", "--task-ids",
                            "agent_multi_turn_0", "--user-model", "user", "--user-base-url", "URL"],
                 data_dir, tmp_path / "run")
    agent_fields = ("model", "seed", *DECODING)
    check("acebench_agent_multi_turn_0", [r if r["model"] == "user" else {k: r.get(k) for k in agent_fields}
                                          for r in got],
          agent_fields={"agent": agent_fields})
