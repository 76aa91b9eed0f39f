"""Telecom records as tau2's pydantic models dump them (``model_dump()``, then ``json.dumps(default=str)``).

Both databases are normalised ONCE at load time into that form: fields in model order, defaults filled in,
floats as floats, enums as their string values, dates as ``str(date)`` ("2025-02-25") and datetimes as
``str(datetime)`` ("2025-01-20 14:30:00", a space, not "T": what ``default=str`` prints). Tools then mutate
plain dicts and lists, and results serialise byte-identically to upstream.
"""
from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Optional

import tomllib

from mua.harness.errors import DataError
from mua.harness.io.datafiles import FIX_HINT, load_text

from ...records import build_record, check_object
from ..domain import Record

# tau2's fixed clock for telecom (utils.get_today): every date a tool writes is this day.
TODAY = date(2025, 2, 25)

LINE_ACTIVE, LINE_SUSPENDED, LINE_PENDING = "Active", "Suspended", "Pending Activation"
BILL_DRAFT, BILL_AWAITING, BILL_PAID, BILL_OVERDUE = "Draft", "Awaiting Payment", "Paid", "Overdue"

# Phone enums (user_data_model): the values tau2 prints.
NETWORK_MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
SIM_ACTIVE, SIM_MISSING, SIM_LOCKED_PIN, SIM_LOCKED_PUK = "active", "missing", "locked_pin", "locked_puk"
CONNECTED, SEARCHING, NO_SERVICE = "connected", "searching", "no_service"
PERMISSIONS = ("sms", "storage", "phone", "network")


def _datetime_text(value: Any) -> Optional[str]:
    # TOML holds "2025-01-20T14:30:00"; pydantic parses it, default=str prints it with a space.
    return None if value is None else str(value).replace("T", " ")


def _plan(d: dict) -> Record:
    return Record(plan_id=d["plan_id"], name=d["name"], data_limit_gb=float(d["data_limit_gb"]),
                  price_per_month=float(d["price_per_month"]),
                  data_refueling_price_per_gb=float(d["data_refueling_price_per_gb"]))


def _device(d: dict) -> Record:
    return Record(device_id=d["device_id"], device_type=d["device_type"], model=d["model"], imei=d.get("imei"),
                  is_esim_capable=d["is_esim_capable"], activated=d.get("activated", False),
                  activation_date=_datetime_text(d.get("activation_date")),
                  last_esim_transfer_date=_datetime_text(d.get("last_esim_transfer_date")))


def _line(d: dict) -> Record:
    return Record(line_id=d["line_id"], phone_number=d["phone_number"], status=d.get("status", LINE_PENDING),
                  plan_id=d["plan_id"], device_id=d.get("device_id"),
                  data_used_gb=float(d.get("data_used_gb", 0.0)),
                  data_refueling_gb=float(d.get("data_refueling_gb", 0.0)),
                  roaming_enabled=d.get("roaming_enabled", False), contract_end_date=d.get("contract_end_date"),
                  last_plan_change_date=d.get("last_plan_change_date"),
                  last_sim_replacement_date=d.get("last_sim_replacement_date"),
                  suspension_start_date=d.get("suspension_start_date"))


def line_item(description: Any, amount: Any, item_type: str, day: date = TODAY) -> Record:
    # LineItem validates ``amount`` as a float (an int charge becomes 2.0).
    return Record(description=description, amount=float(amount), date=str(day), item_type=item_type)


def bill(bill_id: Any, customer_id: Any, period_start: date, period_end: date, issue_date: date,
         due_date: date, status: str, total_due: float = 0.0) -> Record:
    return Record(bill_id=bill_id, customer_id=customer_id, period_start=str(period_start),
                  period_end=str(period_end), issue_date=str(issue_date), total_due=float(total_due),
                  due_date=str(due_date), line_items=[], status=status)


def _bill(d: dict) -> Record:
    record = Record(bill_id=d["bill_id"], customer_id=d["customer_id"], period_start=d["period_start"],
                    period_end=d["period_end"], issue_date=d["issue_date"], total_due=float(d["total_due"]),
                    due_date=d["due_date"], line_items=[], status=d.get("status", BILL_DRAFT))
    record["line_items"] = [Record(description=i["description"], amount=float(i["amount"]), date=i["date"],
                                   item_type=i["item_type"]) for i in d.get("line_items", [])]
    return record


def _customer(d: dict) -> Record:
    address = d["address"]
    return Record(
        customer_id=d["customer_id"], full_name=d["full_name"], date_of_birth=d["date_of_birth"],
        email=d["email"], phone_number=d["phone_number"],
        address=Record(street=address["street"], city=address["city"], state=address["state"],
                       zip_code=address["zip_code"]),
        account_status=d.get("account_status", "Pending Verification"),
        payment_methods=[Record(method_type=p["method_type"], account_number_last_4=p["account_number_last_4"],
                                expiration_date=p["expiration_date"]) for p in d.get("payment_methods", [])],
        line_ids=list(d.get("line_ids", [])), bill_ids=list(d.get("bill_ids", [])),
        created_at=_datetime_text(d.get("created_at", "2025-01-01")),
        last_extension_date=d.get("last_extension_date"),
        goodwill_credit_used_this_year=float(d.get("goodwill_credit_used_this_year", 0.0)))


# TelecomDB's tables in model order (each a list of records) -> record normaliser.
TABLES = {"plans": _plan, "customers": _customer, "lines": _line, "bills": _bill, "devices": _device}


def agent_db(raw: dict) -> dict[str, list[Record]]:
    """The carrier database (TelecomDB), tables in model order."""
    return {table: [make(r) for r in raw.get(table, [])] for table, make in TABLES.items()}


def apn_settings(d: Optional[dict] = None) -> Record:
    d = d or {}
    return Record(apn_name=d.get("apn_name", "internet"), reset_at_reboot=d.get("reset_at_reboot", False),
                  mms_apn=d.get("mms_apn", "mms"), mmsc_url=d.get("mmsc_url", "http://mms.carrier.com/mms/wapenc"),
                  mms_proxy=d.get("mms_proxy"), mms_port=d.get("mms_port"))


def _permissions(d: dict) -> Record:
    return Record((p, d.get(p, False)) for p in PERMISSIONS)


def _apps(raw: Optional[dict]) -> dict:
    if raw is None:
        raw = {"messaging": {"app_name": "messaging", "permissions": {"sms": True, "storage": True, "phone": True}},
               "browser": {"app_name": "browser", "permissions": {"network": True, "storage": True}}}
    return {name: Record(app_name=a["app_name"], permissions=_permissions(a.get("permissions", {})))
            for name, a in raw.items()}


def device(d: dict) -> Record:
    """MockPhoneAttributes with its defaults (a healthy phone on 5G)."""
    return Record(
        sim_card_status=d.get("sim_card_status", SIM_ACTIVE), sim_card_missing=d.get("sim_card_missing", False),
        airplane_mode=d.get("airplane_mode", False),
        network_signal_strength=d.get("network_signal_strength", "good"),
        network_technology_connected=d.get("network_technology_connected", "5G"),
        network_connection_status=d.get("network_connection_status", CONNECTED),
        battery_level=d.get("battery_level", 80), data_enabled=d.get("data_enabled", True),
        roaming_enabled=d.get("roaming_enabled", False),
        network_mode_preference=d.get("network_mode_preference", NETWORK_MODES[0]),
        active_apn_settings=apn_settings(d.get("active_apn_settings")),
        wifi_enabled=d.get("wifi_enabled", False), wifi_connected=d.get("wifi_connected", False),
        wifi_ssid=d.get("wifi_ssid"), wifi_signal_strength=d.get("wifi_signal_strength", "none"),
        wifi_calling_enabled=d.get("wifi_calling_enabled", False),
        wifi_calling_mms_over_wifi=d.get("wifi_calling_mms_over_wifi", False),
        data_saver_mode=d.get("data_saver_mode", False), vpn_enabled_setting=d.get("vpn_enabled_setting", False),
        vpn_connected=d.get("vpn_connected", False), vpn_details=d.get("vpn_details"),
        app_statuses=_apps(d.get("app_statuses")))


def surroundings() -> Record:
    """UserSurroundings defaults: at home, signal on every technology, line active, no payment request."""
    return Record(name=None, phone_number=None, is_abroad=False, roaming_allowed=False,
                  signal_strength={"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"},
                  mobile_data_usage_exceeded=False, line_active=True, payment_request=None)


def vpn_details(performance: str) -> Record:
    # The VPN tau2 connects to (TelecomUserTools.default_vpn_details).
    return Record(server_address="192.168.1.1", protocol="OpenVPN", server_performance=performance)


def load(data_dir: Path) -> tuple[dict, dict]:
    """(agent DB, user DB) parsed from db.toml and user_db.toml, checked record by record (DataError naming the
    file and what is wrong). Upstream defaults a missing table to empty; the shipped db.toml has all five, so a
    missing one means a damaged file."""
    folder = "tau2/domains/telecom"
    out = []
    for name in ("db.toml", "user_db.toml"):
        text = load_text(data_dir, f"{folder}/{name}")
        try:
            out.append(tomllib.loads(text))
        except (ValueError, RecursionError) as e:  # TOML syntax, an integer of thousands of digits, deep nesting
            raise DataError(f"{folder}/{name}: not valid TOML ({type(e).__name__}: {e}). {FIX_HINT}") from None
    raw_db, raw_user = out
    db_file, user_file = f"{folder}/db.toml", f"{folder}/user_db.toml"
    check_object(raw_db, db_file, dict.fromkeys(TABLES, list))
    db = {table: [build_record(make, r, f"{db_file}, {table}[{i}]") for i, r in enumerate(raw_db[table])]
          for table, make in TABLES.items()}
    check_object(raw_user, user_file, {}, {"device": dict})
    return db, {"device": build_record(device, raw_user.get("device") or {}, f"{user_file}, device"),
                "surroundings": surroundings()}
