"""The carrier-side tools (tau2 ``TelecomTools``): same checks in the same order, same messages and state changes.

Arguments arrive unvalidated, as upstream calls the toolkit with the model's raw JSON values; a wrong type fails
where Python fails in the same expression (e.g. ``id.startswith`` on a number). Besides the agent's tools, this
module holds the carrier-side environment functions that tasks use to break an account
(``set_data_usage``, ``suspend_line_for_overdue_bill``) and the assertions that score it.
"""
from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import Any

from ..domain import Record
from ..toolkit import Toolkit
from . import data_model as dm
from .state import TelecomState
from .tool_docs import AGENT_DOCS

TOOLS = Toolkit("TelecomTools", AGENT_DOCS)  # the agent's tools, each registered where it is defined


# --- lookups (private helpers upstream; their messages reach the agent) ---
def _find(state: TelecomState, table: str, key: str, value: Any, label: str) -> Record:
    for record in state.db[table]:
        if record[key] == value:
            return record
    raise ValueError(f"{label} with ID {value} not found")


def line_by_id(state: TelecomState, line_id: Any) -> Record:
    return _find(state, "lines", "line_id", line_id, "Line")


def line_by_phone(state: TelecomState, phone_number: Any) -> Record:
    for line in state.db["lines"]:
        if line["phone_number"] == phone_number:
            return line
    raise ValueError(f"Line with phone number {phone_number} not found")


def plan_by_id(state: TelecomState, plan_id: Any) -> Record:
    return _find(state, "plans", "plan_id", plan_id, "Plan")


def bill_by_id(state: TelecomState, bill_id: Any) -> Record:
    return _find(state, "bills", "bill_id", bill_id, "Bill")


def _target_line(state: TelecomState, customer_id: Any, line_id: Any) -> Record:
    customer = get_customer_by_id(state, customer_id)
    if line_id not in customer["line_ids"]:
        raise ValueError(f"Line {line_id} not found for customer {customer_id}")
    return line_by_id(state, line_id)


def bills_awaiting_payment(state: TelecomState, customer: Record) -> list[Record]:
    bills = (bill_by_id(state, bill_id) for bill_id in customer["bill_ids"])
    return [b for b in bills if b["status"] == dm.BILL_AWAITING]


def set_bill_paid(state: TelecomState, bill_id: Any) -> str:
    bill_by_id(state, bill_id)["status"] = dm.BILL_PAID
    return f"Bill {bill_id} set to paid"


# --- agent tools ---
@TOOLS.tool("read")
def get_customer_by_phone(state: TelecomState, phone_number: str):
    for customer in state.db["customers"]:
        if customer["phone_number"] == phone_number:
            return customer
        for line_id in customer["line_ids"]:
            if line_by_id(state, line_id)["phone_number"] == phone_number:
                return customer
    raise ValueError(f"Customer with phone number {phone_number} not found")


@TOOLS.tool("read")
def get_customer_by_id(state: TelecomState, customer_id: str):
    return _find(state, "customers", "customer_id", customer_id, "Customer")


@TOOLS.tool("read")
def get_customer_by_name(state: TelecomState, full_name: str, dob: str):
    return [c for c in state.db["customers"]
            if c["full_name"].lower() == full_name.lower() and c["date_of_birth"] == dob]


@TOOLS.tool("read")
def get_details_by_id(state: TelecomState, id: str):  # noqa: A002 - the parameter name the model sees
    for prefix, lookup in (("L", line_by_id), ("D", lambda s, i: _find(s, "devices", "device_id", i, "Device")),
                           ("B", bill_by_id), ("C", get_customer_by_id), ("P", plan_by_id)):
        if id.startswith(prefix):
            return lookup(state, id)
    raise ValueError(f"Unknown ID format or type: {id}")


@TOOLS.tool("write")
def suspend_line(state: TelecomState, customer_id: str, line_id: str, reason: str):
    line = _target_line(state, customer_id, line_id)
    if line["status"] != dm.LINE_ACTIVE:
        raise ValueError("Line must be active to suspend")
    line["status"] = dm.LINE_SUSPENDED
    line["suspension_start_date"] = str(dm.TODAY)
    return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}


@TOOLS.tool("write")
def resume_line(state: TelecomState, customer_id: str, line_id: str):
    line = _target_line(state, customer_id, line_id)
    if line["status"] not in (dm.LINE_SUSPENDED, dm.LINE_PENDING):
        raise ValueError("Line must be suspended to resume")
    line["status"] = dm.LINE_ACTIVE
    line["suspension_start_date"] = None
    return {"message": "Line resumed successfully", "line": line}


@TOOLS.tool("read")
def get_bills_for_customer(state: TelecomState, customer_id: str, limit: int = 12):
    customer = get_customer_by_id(state, customer_id)
    bills = [bill_by_id(state, bill_id) for bill_id in customer["bill_ids"]]
    # ISO date strings order like the dates; a stable reverse sort keeps upstream's tie order.
    return sorted(bills, key=lambda b: b["issue_date"], reverse=True)[:limit]


@TOOLS.tool("write")
def send_payment_request(state: TelecomState, customer_id: str, bill_id: str):
    customer = get_customer_by_id(state, customer_id)
    if bills_awaiting_payment(state, customer):
        raise ValueError("A bill is already awaiting payment for this customer")
    if bill_id not in customer["bill_ids"]:
        raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
    bill = bill_by_id(state, bill_id)
    bill["status"] = dm.BILL_AWAITING
    return f"Payment request sent to the customer for bill {bill['bill_id']}"


@TOOLS.tool("read")
def get_data_usage(state: TelecomState, customer_id: str, line_id: str):
    line = _target_line(state, customer_id, line_id)
    plan = plan_by_id(state, line["plan_id"])
    cycle_end = _first_of_next_month(dm.TODAY) - timedelta(days=1)
    return {"line_id": line_id, "data_used_gb": line["data_used_gb"], "data_limit_gb": plan["data_limit_gb"],
            "data_refueling_gb": line["data_refueling_gb"], "cycle_end_date": cycle_end}


@TOOLS.tool("write")
def enable_roaming(state: TelecomState, customer_id: str, line_id: str):
    line = _target_line(state, customer_id, line_id)
    if line["roaming_enabled"]:
        return "Roaming was already enabled"
    line["roaming_enabled"] = True
    return "Roaming enabled successfully"


@TOOLS.tool("write")
def disable_roaming(state: TelecomState, customer_id: str, line_id: str):
    line = _target_line(state, customer_id, line_id)
    if not line["roaming_enabled"]:
        return "Roaming was already disabled"
    line["roaming_enabled"] = False
    return "Roaming disabled successfully"


@TOOLS.tool("generic")
def transfer_to_human_agents(state: TelecomState, summary: str):
    return "Transfer successful"


@TOOLS.tool("write")
def refuel_data(state: TelecomState, customer_id: str, line_id: str, gb_amount: float):
    line = _target_line(state, customer_id, line_id)
    if gb_amount <= 0:
        raise ValueError("Refuel amount must be positive")
    plan = plan_by_id(state, line["plan_id"])
    price = plan["data_refueling_price_per_gb"]
    charge = gb_amount * price
    line["data_refueling_gb"] += gb_amount
    _apply_one_time_charge(state, customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB")
    return {"message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": line["data_refueling_gb"], "charge": charge}


def _first_of_next_month(day: date) -> date:
    return (day.replace(day=1) + timedelta(days=32)).replace(day=1)


def _apply_one_time_charge(state: TelecomState, customer_id: Any, amount: Any, description: str) -> None:
    """Add a charge to the customer's draft bill, opening next month's draft bill when there is none."""
    customer = get_customer_by_id(state, customer_id)
    draft = next((b for b in (bill_by_id(state, i) for i in customer["bill_ids"]) if b["status"] == dm.BILL_DRAFT),
                 None)
    if draft is None:
        start = _first_of_next_month(dm.TODAY)
        # Upstream names the bill with a random uuid; mua derives it from the customer and a per-episode
        # counter so reruns are byte-identical (telecom's reward never compares the carrier DB).
        state.new_bills += 1
        digest = hashlib.sha256(f"{customer_id}:{state.new_bills}".encode()).hexdigest()
        draft = dm.bill(f"B{digest[:8]}", customer_id, start, _first_of_next_month(start) - timedelta(days=1),
                        start, start + timedelta(days=14), dm.BILL_DRAFT)
        state.db["bills"].append(draft)
        customer["bill_ids"].append(draft["bill_id"])
    draft["line_items"].append(dm.line_item(description, amount, "Credit" if amount < 0 else "Charge"))
    draft["total_due"] += amount


# --- environment functions (task initialisation) ---
def set_data_usage(state: TelecomState, customer_id, line_id, data_used_gb):
    line = _target_line(state, customer_id, line_id)
    line["data_used_gb"] = data_used_gb
    return f"Data usage set to {data_used_gb} GB for line {line_id}"


def suspend_line_for_overdue_bill(state: TelecomState, customer_id, line_id, new_bill_id, contract_ended):
    line = line_by_id(state, line_id)
    if line["status"] != dm.LINE_ACTIVE:
        raise ValueError("Line must be active to suspend for unpaid bill")
    amount = plan_by_id(state, line["plan_id"])["price_per_month"]
    if amount <= 0:
        raise ValueError("Amount must be positive for overdue bill")
    customer = get_customer_by_id(state, customer_id)
    if any(bill_by_id(state, i)["status"] == dm.BILL_OVERDUE for i in customer["bill_ids"]):
        raise ValueError("Customer already has an overdue bill")
    last_month_end = dm.TODAY.replace(day=1) - timedelta(days=1)
    last_month_start = last_month_end.replace(day=1)
    overdue = dm.bill(new_bill_id, customer_id, last_month_start, last_month_end, last_month_start,
                      last_month_start + timedelta(days=14), dm.BILL_OVERDUE)
    overdue["line_items"].append(dm.line_item(f"Charge for line {line['line_id']}", amount, "Charge"))
    overdue["total_due"] += amount
    state.db["bills"].append(overdue)
    customer["bill_ids"].append(new_bill_id)
    line["status"] = dm.LINE_SUSPENDED
    line["suspension_start_date"] = str(dm.TODAY)
    if contract_ended:
        line["contract_end_date"] = str(last_month_end)
    return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"


# --- assertions (env_assertions with env_type "assistant") ---
def assert_data_refueling_amount(state: TelecomState, customer_id, line_id, expected_amount):
    return abs(_target_line(state, customer_id, line_id)["data_refueling_gb"] - expected_amount) < 1e-6


def assert_line_status(state: TelecomState, customer_id, line_id, expected_status):
    return _target_line(state, customer_id, line_id)["status"] == expected_status


def assert_overdue_bill_exists(state: TelecomState, customer_id, overdue_bill_id):
    customer = get_customer_by_id(state, customer_id)
    if overdue_bill_id not in customer["bill_ids"]:
        raise ValueError(f"Overdue bill {overdue_bill_id} not found")
    if bill_by_id(state, overdue_bill_id)["status"] != dm.BILL_OVERDUE:
        raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
    return True


def assert_no_overdue_bill(state: TelecomState, overdue_bill_id):
    try:
        return bill_by_id(state, overdue_bill_id)["status"] == dm.BILL_PAID
    except ValueError:
        return True
