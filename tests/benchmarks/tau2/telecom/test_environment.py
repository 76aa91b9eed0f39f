"""Telecom world mechanics: task initialisation, account-to-phone sync, per-episode isolation, episode start cost."""
from __future__ import annotations

import json
import time

import pytest

from mua.benchmarks.tau2.environment import Tau2Environment
from mua.benchmarks.tau2.registry import get_domain
from tests.helpers.telecom import check_env_assertion


@pytest.fixture(scope="module")
def domain(data_dir):
    return get_domain("telecom", data_dir)


@pytest.fixture(scope="module")
def tasks(data_dir):
    return json.loads((data_dir / "tau2/domains/telecom/tasks.json").read_text())


def _started(domain, task):
    state = domain.new_state()
    domain.initialise(state, task["initial_state"])
    return state, Tau2Environment(domain, state)


def test_initialisation_breaks_exactly_the_fixable_tasks(domain, tasks):
    """After initialisation a task's env assertions fail, unless the task cannot be fixed by tools (its reward
    basis then adds ACTION: the agent must transfer to a human). Without initialisation every phone is healthy."""
    still_fine, unfixable = set(), set()
    for task in tasks:
        state, _ = _started(domain, task)
        if all(check_env_assertion(domain, state, a) for a in task["evaluation_criteria"]["env_assertions"]):
            still_fine.add(task["id"])
        if "ACTION" in task["evaluation_criteria"]["reward_basis"]:
            unfixable.add(task["id"])
    assert len(tasks) == 2285 and still_fine == unfixable and len(unfixable) == 32


def test_initialisation_sets_the_broken_phone_and_account(domain, tasks):
    task = next(t for t in tasks if t["id"].startswith("[service_issue]airplane_mode_on|lock_sim_card_pin"))
    state, env = _started(domain, task)
    assert env.call("check_sim_status", {}, "user") == ("The SIM card is locked with a PIN code.", False)
    assert env.call("check_status_bar", {}, "user")[0].startswith("Status Bar: \u2708\ufe0f Airplane Mode")
    assert state.surroundings["phone_number"] is not None
    fresh = domain.new_state()  # the shared base is untouched
    assert fresh.device["airplane_mode"] is False and fresh.surroundings["phone_number"] is None


def test_payment_request_flows_from_agent_to_phone_and_back(domain, tasks):
    task = next(t for t in tasks if "overdue_bill_suspension" in t["id"])
    state, env = _started(domain, task)
    overdue = next(a["arguments"] for a in task["initial_state"]["initialization_actions"]
                   if a["func_name"] == "suspend_line_for_overdue_bill")
    assert env.call("check_payment_request", {}, "user") == ("No payment request has been made.", False)
    assert env.call("send_payment_request", {"customer_id": overdue["customer_id"],
                                             "bill_id": overdue["new_bill_id"]})[1] is False
    request = env.call("check_payment_request", {}, "user")[0]
    assert request.startswith(f"You have a payment request for bill {overdue['new_bill_id']} of ")
    assert env.call("make_payment", {}, "user")[1] is False
    bill = env.call("get_details_by_id", {"id": overdue["new_bill_id"]})[0]
    assert json.loads(bill)["status"] == "Paid" and state.surroundings["payment_request"] is None
    assert check_env_assertion(domain, state, {"env_type": "assistant", "func_name": "assert_no_overdue_bill",
                                              "arguments": {"overdue_bill_id": overdue["new_bill_id"]}})


def test_agent_changes_reach_the_phone_only_through_sync(domain, tasks):
    task = next(t for t in tasks if t["id"].startswith("[mobile_data_issue]user_abroad_roaming_disabled_off"))
    state, env = _started(domain, task)
    line = next(a["arguments"] for a in task["evaluation_criteria"]["actions"] if a["name"] == "enable_roaming")
    assert state.surroundings["roaming_allowed"] is False
    assert env.call("enable_roaming", line) == ("Roaming enabled successfully", False)
    assert state.surroundings["roaming_allowed"] is True
    assert env.call("toggle_roaming", {}, "user")[1] is False
    assert env.call("run_speed_test", {}, "user")[0].startswith("Speed Test Result: ")


def test_degraded_vpn_stays_within_its_episode(domain, tasks):
    task = next(t for t in tasks if "bad_vpn" in t["id"])
    _, env = _started(domain, task)
    env.call("disconnect_vpn", {}, "user")
    env.call("connect_vpn", {}, "user")
    assert "<PerformanceLevel.POOR: 'poor'>" in env.call("check_vpn_status", {}, "user")[0]
    other = Tau2Environment(domain, domain.new_state())
    other.call("connect_vpn", {}, "user")
    assert "<PerformanceLevel.EXCELLENT: 'excellent'>" in other.call("check_vpn_status", {}, "user")[0]


def test_reruns_are_byte_identical(domain, tasks):
    task = tasks[0]
    outputs = []
    for _ in range(2):
        state, env = _started(domain, task)
        texts = [env.call("refuel_data", {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 1})[0],
                 env.call("get_bills_for_customer", {"customer_id": "C1002"})[0]]
        outputs.append((texts, domain.fingerprint(state)))
    assert outputs[0] == outputs[1]


def test_episode_start_is_cheap(domain, tasks):
    """Start (fresh state + initialisation actions) must stay well under a millisecond per episode."""
    sample = tasks[:200]
    start = time.process_time()
    for task in sample:
        _started(domain, task)
    per_episode_ms = (time.process_time() - start) / len(sample) * 1000
    assert per_episode_ms < 5, per_episode_ms  # measured about 0.25 ms


def test_initialization_data_merges_into_both_databases(domain):
    state = domain.new_state()
    domain.initialise(state, {"initialization_data": {
        "agent_data": {"plans": [{"plan_id": "P9", "name": "Tiny", "data_limit_gb": 1, "price_per_month": 1,
                                  "data_refueling_price_per_gb": 1}]},
        "user_data": {"device": {"airplane_mode": True, "active_apn_settings": {"mmsc_url": None}},
                      "surroundings": {"is_abroad": True}}}})
    env = Tau2Environment(domain, state)
    assert json.loads(env.call("get_details_by_id", {"id": "P9"})[0])["data_limit_gb"] == 1.0
    assert env.call("check_status_bar", {}, "user")[0].startswith("Status Bar: \u2708\ufe0f Airplane Mode")
    assert "MMSC URL (for picture messages): Not Set" in env.call("check_apn_settings", {}, "user")[0]
    assert state.device["active_apn_settings"]["mms_apn"] == "mms" and state.surroundings["is_abroad"] is True
    assert domain.new_state().device["airplane_mode"] is False
