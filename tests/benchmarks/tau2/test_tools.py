"""Retail and airline tools against the official tau2 environment (fixtures recorded by running tau2 a2c0247):
schemas, tool message contents, error strings and the database records each call sequence changes."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from mua.benchmarks.tau2.environment import Tau2Environment
from mua.benchmarks.tau2.registry import get_domain
from mua.harness.types import ToolCall

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = json.loads((FIXTURES / "official_tool_runs.json").read_text())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_schemas_equal_official(data_dir, domain):
    official = json.loads((FIXTURES / "official_tool_schemas.json").read_text())[domain]
    env = Tau2Environment(get_domain(domain, data_dir), None)
    assert [spec.to_openai() for spec in env.agent_tools()] == official


@pytest.mark.parametrize("case", RUNS, ids=[c["name"] for c in RUNS])
def test_call_sequence_matches_official(data_dir, case):
    domain = get_domain(case["domain"], data_dir)
    env = Tau2Environment(domain, domain.new_state())
    for (name, args), official in zip(case["calls"], case["outputs"]):
        content, error = env.call(name, args)
        assert error == official["error"], (name, content)
        if official["content"] is not None:
            assert content == official["content"]
        assert _sha(content) == official["sha"], (name, content[:300])
    changed = {f"{table}/{key}": _sha(text) for table, key, text in domain.fingerprint(env.state())}
    assert changed == case["changed"]


def test_states_are_independent(data_dir):
    domain = get_domain("retail", data_dir)
    first, second = domain.new_state(), domain.new_state()
    env = Tau2Environment(domain, first)
    content, error = env.call("cancel_pending_order", {"order_id": "#W5918442", "reason": "no longer needed"})
    assert not error, content
    assert first.get("orders", "#W5918442")["status"] == "cancelled"
    assert second.get("orders", "#W5918442")["status"] == "pending"
    assert domain.base["orders"]["#W5918442"]["status"] == "pending"


def test_bad_tool_calls_are_errors_not_exceptions(data_dir):
    domain = get_domain("retail", data_dir)
    env = Tau2Environment(domain, domain.new_state())
    out = env.execute(ToolCall(id="1", name="get_order_details", arguments="{not json"))
    assert out.error and out.content.startswith("Error: invalid JSON")
    out = env.execute(ToolCall(id="2", name="get_order_details", arguments="[1, 2]"))
    assert out.error and "JSON object" in out.content
    out = env.execute(ToolCall(id="3", name="nope", arguments="{}"))
    assert out.error and out.content == "Error: Tool 'nope' not found."
    out = env.execute(ToolCall(id="4", name="get_order_details", arguments="{}"), requestor="user")
    assert out.error and out.content == "Error: User tools not available"
    assert domain.fingerprint(env.state()) == ()


def test_find_user_by_email_index_answers_as_the_scan(data_dir):
    """find_user_id_by_email reads an index of the shared users table built once; for every user's email (any
    case) and an unknown one it answers what the upstream scan answers, which it still runs once the episode
    has changed a user."""
    from mua.benchmarks.tau2.retail import tools

    domain = get_domain("retail", data_dir)
    fresh, changed = Tau2Environment(domain, domain.new_state()), Tau2Environment(domain, domain.new_state())
    users = list(changed.state().base["users"].items())
    changed.state().for_write("users", users[0][0])  # this episode changed a user: the scan runs
    assert tools._email_index(fresh.state()) is not None and tools._email_index(changed.state()) is None
    for _, user in users[::7]:
        first = next(u for u, r in users if r["email"].lower() == user["email"].lower())
        for env in (fresh, changed):
            assert env.call("find_user_id_by_email", {"email": user["email"].upper()}) == (first, False)
    for env in (fresh, changed):
        assert env.call("find_user_id_by_email", {"email": "nobody@example.com"}) == ("Error: User not found", True)
        assert env.call("find_user_id_by_email", {"email": 7}) == ("Error: 'int' object has no attribute 'lower'",
                                                                     True)
