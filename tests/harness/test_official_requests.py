"""A default `mua eval` sends what the official runners send: the requests of one tau2 retail, one BFCL and
one ACEBench episode, recorded at the mock endpoint, are compared field by field (prompts, tools, decoding
parameters, whether a seed is sent) with the requests the official code sent for the same episode against
the same mock answers (fixtures/official_requests; its README says how they were recorded)."""
import json
from pathlib import Path

import pytest
from mock_openai import MockOpenAI
from protocol_episodes import acebench, bfcl, tau2_retail

from mua.harness.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "official_requests"
FIELDS = ("model", "messages", "tools", "tool_choice", "temperature", "top_p", "max_tokens", "store", "seed")


def _drop_nulls(value):
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def comparable(body: dict) -> dict:
    """The fields the official code sends, as compared: nulls dropped (a null field is not sent), a seed's
    presence only (its value is each runner's own derivation from its run seed)."""
    out = {k: _drop_nulls(body[k]) for k in FIELDS if body.get(k) is not None}
    if "seed" in out:
        out["seed"] = "<int>"
    return out


def record(responder, args: list[str], data_dir: Path, out: Path) -> dict[str, list[dict]]:
    seen: dict[str, list[dict]] = {}

    def respond(request):
        seen.setdefault(str(request["model"]), []).append(comparable(request))
        return responder(request)
    with MockOpenAI(respond) as url:
        assert main(["eval", *args, "--agent-model", "agent", "--agent-base-url", url, "--no-progress",
                     "--trials", "1", "--data-dir", str(data_dir), "--out", str(out),
                     *[a.replace("URL", url) for a in ()]]) in (0, 1)
    return seen


def official(name: str) -> dict:
    path = FIXTURES / f"{name}.json"
    if not path.is_file():
        pytest.fail(f"fixture {path} missing")
    return json.loads(path.read_text(encoding="utf-8"))


def check(fixture: dict, seen: dict[str, list[dict]], roles: tuple[str, ...]) -> None:
    for role in roles:
        model = fixture["models"][role]
        want, got = fixture["requests"][model], seen.get(model, [])
        assert len(got) == len(want), f"{role}: {len(got)} requests, official {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            for k in sorted(set(g) | set(w)):
                assert g.get(k) == w.get(k), f"{role} request {i}: field {k!r} differs from the official one"


def test_tau2_retail_requests_match_the_official_runner(tmp_path, data_dir):
    fixture = official("tau2_retail")
    seen = {}
    with MockOpenAI(lambda r: (seen.setdefault(str(r["model"]), []).append(comparable(r)), tau2_retail(r))[1]) as url:
        assert main(["eval", "--benchmark", "tau2", "--subset", "retail", "--task-ids", fixture["task"],
                     "--agent-model", "agent", "--agent-base-url", url, "--user-model", "user",
                     "--user-base-url", url, "--judge-model", fixture["models"]["judge"], "--judge-base-url", url,
                     "--trials", "1", "--no-progress", "--data-dir", str(data_dir), "--out", str(tmp_path / "r")]) == 0
    check(fixture, seen, ("agent", "user", "judge"))
