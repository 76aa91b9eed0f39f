"""Telecom agent and user tools against the official tau2 environment (fixtures recorded by running tau2 a2c0247):
schemas, tool message contents, error strings, the state both databases end in, and env-assertion results."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from mua.benchmarks.tau2.environment import Tau2Environment
from mua.benchmarks.tau2.registry import get_domain
from mua.harness.types import ToolCall
from tests.helpers.telecom import check_env_assertion

FIXTURES = Path(__file__).parent / "fixtures"
SCENARIOS = [scenario for name in ("official_calls.json", "official_calls_bad_args.json")
             for scenario in json.loads((FIXTURES / name).read_text(encoding="utf-8"))["scenarios"]]
RANDOM_BILL = re.compile(r"B[0-9a-f]{8}\b")  # draft bills: a uuid upstream, a deterministic id in mua


def _sha16(text: str) -> str:
    return hashlib.sha256(RANDOM_BILL.sub("Bxxxxxxxx", text).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def domain(data_dir):
    return get_domain("telecom", data_dir)


@pytest.fixture(scope="module")
def tasks(data_dir):
    return {t["id"]: t for t in json.loads((data_dir / "tau2/domains/telecom/tasks.json").read_text())}


def test_schemas_and_kinds_equal_official(domain):
    official = json.loads((FIXTURES / "official_tool_schemas.json").read_text(encoding="utf-8"))
    for side, tools in (("assistant", domain.agent_tools), ("user", domain.user_tools)):
        assert [t.spec.to_openai()["function"] for t in tools.values()] == [o["function"] for o in official[side]]
        assert [(t.kind, t.mutates) for t in tools.values()] == [(o["type"], o["mutates"]) for o in official[side]]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["task_id"][:60] + str(i) for i, s in enumerate(SCENARIOS)])
def test_call_sequence_matches_official(domain, tasks, scenario):
    state = domain.new_state()
    domain.initialise(state, tasks[scenario["task_id"]]["initial_state"])
    env = Tau2Environment(domain, state)
    for requestor, name, arguments, official, official_error in scenario["calls"]:
        outcome = env.execute(ToolCall(id="c", name=name, arguments=json.dumps(arguments)), requestor=requestor)
        assert outcome.error == official_error, (requestor, name, arguments, outcome.content)
        if isinstance(official, str):
            assert outcome.content == official, (requestor, name, arguments)
        else:
            assert _sha16(outcome.content) == official["sha256_16"], (name, arguments, outcome.content[:300])
    assertions = tasks[scenario["task_id"]]["evaluation_criteria"]["env_assertions"] or []
    assert [_assertion(domain, state, a) for a in assertions] == scenario["assertions"]
    agent_db, user_db = domain.fingerprint(state)
    assert _sha16(agent_db) == scenario["db_sha256_16"]
    assert _sha16(user_db) == scenario["user_db_sha256_16"]


def _assertion(domain, state, assertion):
    try:
        return check_env_assertion(domain, state, assertion)
    except Exception as e:  # upstream's evaluator raises too (e.g. after set_apn_settings with a non-object)
        return f"raise:{type(e).__name__}: {e}"


def test_user_tools_unavailable_to_the_agent_and_vice_versa(domain):
    env = Tau2Environment(domain, domain.new_state())
    assert env.call("toggle_data", {}, "assistant") == ("Error: Tool 'toggle_data' not found.", True)
    assert env.call("get_customer_by_id", {"customer_id": "C1001"}, "user") == \
        ("Error: Tool 'get_customer_by_id' not found.", True)


def test_bad_arguments_come_back_as_errors(domain):
    env = Tau2Environment(domain, domain.new_state())
    assert env.call("get_details_by_id", {"id": 5}) == ("Error: 'int' object has no attribute 'startswith'", True)
    assert env.call("refuel_data", {"customer_id": "C1001"}) == (
        "Error: TelecomTools.refuel_data() missing 2 required positional arguments: 'line_id' and 'gb_amount'", True)
    content, error = env.call("set_network_mode_preference", {"mode": 3}, "user")
    assert (content, error) == ("Error: 'int' object has no attribute 'value'", True)
    content, error = env.call("set_apn_settings", {"apn_settings": {"apn_name": "x", "bogus": 1}}, "user")
    assert error and content.startswith("Error: 2 validation errors for APNSettings\napn_name\n  Input should be "
                                        "'internet' or 'broken' [type=enum, input_value='x', input_type=str]")
    malformed = env.execute(ToolCall(id="c", name="toggle_data", arguments="{not json"), requestor="user")
    assert malformed.error and malformed.content.startswith("Error: invalid JSON")
