"""The telecom domain (tau2 ``TelecomEnvironment``): two toolkits over one world, kept in sync.

The agent's tools act on the carrier's records, the user's tools on the simulated phone. After every successful
tool call and every environment function, :func:`sync` carries the account into the user's surroundings
(line active, roaming allowed, data cap exceeded, payment requests and payments), exactly where upstream calls
``sync_tools``; a failing call does not sync, and a failing sync turns the call into an error, as upstream.

Known, documented differences from upstream (process-level defects, see /work/shared/notes):
* ``break_vpn`` degrades the VPN server for the rest of the episode; upstream degrades a class-level object,
  i.e. for every later episode in the same process too.
* Draft bills opened by ``refuel_data`` get a deterministic id instead of a random uuid.
* ``initialization_data`` (used by no upstream telecom task) deep-merges ``agent_data`` into the carrier DB and
  ``user_data`` into the phone/surroundings. Upstream then points the OTHER toolkit at the updated database
  too (``set_state``), which breaks that side's tools; that defect is not reproduced.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from mua.harness.io.datafiles import load_text

from ..domain import Record, Tau2Domain, ToolDef
from . import data_model as dm
from . import phone, tools, user_services, user_tools
from .state import TelecomState

USER_TOOL_MODULES = (user_tools, user_services)
USER_FUNCTIONS = {"simulate_network_search": phone.network_search}


def sync(state: TelecomState) -> None:
    """Carry the user's account into their surroundings (upstream ``TelecomEnvironment.sync_tools``)."""
    around = state.surroundings
    number = around["phone_number"]
    if number is None:
        return
    line = tools.line_by_phone(state, number)
    around["line_active"] = line["status"] == dm.LINE_ACTIVE
    around["roaming_allowed"] = bool(line["roaming_enabled"])
    plan = tools.plan_by_id(state, line["plan_id"])
    around["mobile_data_usage_exceeded"] = line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]
    request = around["payment_request"]
    if request is not None and request["paid"]:
        tools.set_bill_paid(state, request["bill_id"])
        around["payment_request"] = None
    if around["payment_request"] is None:
        awaiting = tools.bills_awaiting_payment(state, tools.get_customer_by_phone(state, number))
        if awaiting:
            around["payment_request"] = Record(bill_id=awaiting[0]["bill_id"],
                                               amount_due=float(awaiting[0]["total_due"]), paid=False)


def _synced(func: Callable) -> Callable:
    def call(state: TelecomState, **arguments: Any) -> Any:
        result = func(state, **arguments)
        sync(state)
        return result
    call.__name__ = func.__name__
    return call


def _user_function(name: str) -> Optional[Callable]:
    for module in USER_TOOL_MODULES:
        func = getattr(module, name, None)
        if callable(func) and getattr(func, "__module__", "") == module.__name__:
            return func
    return USER_FUNCTIONS.get(name)


def build_agent_tools() -> dict[str, ToolDef]:
    return tools.TOOLS.build(wrap=_synced)


def build_user_tools() -> dict[str, ToolDef]:
    return user_tools.USER_TOOLS.build(wrap=_synced)


def _merge(target: dict, update: dict) -> None:
    """addict-style deep update, as upstream's ``update_pydantic_model_with_dict``."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


class TelecomDomain(Tau2Domain):
    name = "telecom"

    def __init__(self, policies: dict[str, str], db: dict, user_db: dict):
        super().__init__(policy=policies["manual"], agent_tools=build_agent_tools(), user_tools=build_user_tools())
        self.policies = policies  # "manual" (domain telecom) and "workflow" (domain telecom-workflow)
        self.base_db, self.base_user = db, user_db

    @classmethod
    def load(cls, data_dir: Path) -> "TelecomDomain":
        folder = "tau2/domains/telecom"

        def read(name: str) -> str:
            return load_text(data_dir, f"{folder}/{name}")

        main = read("main_policy.md")
        policies = {kind: (f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n"
                           f"{read(f'tech_support_{kind}.md')}\n</tech_support_policy>")
                    for kind in ("manual", "workflow")}
        return cls(policies, *dm.load(data_dir))

    def new_state(self) -> TelecomState:
        return TelecomState.fresh(self.base_db, self.base_user)

    def initialise(self, state: TelecomState, initial_state: Optional[dict]) -> None:
        """Apply initialization_data, then run initialization_actions (each followed by a sync), as
        upstream's ``set_state``; task data errors propagate."""
        initial_state = initial_state or {}
        data = initial_state.get("initialization_data") or {}
        if data.get("agent_data"):
            raw = {table: [dict(r) for r in rows] for table, rows in state.db.items()}
            _merge(raw, data["agent_data"])
            state.db = dm.agent_db(raw)
        if data.get("user_data"):
            update = data["user_data"]
            device = dict(state.device)
            _merge(device, update.get("device") or {})
            state.user["device"] = dm.device(device)
            _merge(state.user["surroundings"], update.get("surroundings") or {})
        for action in initial_state.get("initialization_actions") or []:
            self.run_env_function(state, action.get("env_type", "assistant"), action["func_name"],
                                  action.get("arguments") or {})

    def run_env_function(self, state: TelecomState, env_type: str, func_name: str, arguments: dict) -> Any:
        if env_type == "user":
            func, owner = _user_function(func_name), "TelecomUserTools"
        elif env_type == "assistant":
            func, owner = getattr(tools, func_name, None), "TelecomTools"
            if not (callable(func) and getattr(func, "__module__", "") == tools.__name__):
                func = None
        else:
            raise ValueError(f"Invalid environment type: {env_type}")
        if func is None:
            raise AttributeError(f"'{owner}' object has no attribute '{func_name}'")
        result = func(state, **arguments)
        sync(state)
        return result

    def fingerprint(self, state: TelecomState) -> tuple[str, str]:
        return state.fingerprint()
