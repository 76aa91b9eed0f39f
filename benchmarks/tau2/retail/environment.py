"""The retail domain: its database (loaded once), policy and tool table."""
from __future__ import annotations

from ..domain import ToolDef
from ..json_domain import JsonDbDomain
from ..schema import STRING, STRING_LIST, tool_spec
from . import data_model, tools
from .tool_docs import DOCS

S, L = STRING, STRING_LIST
ADDRESS = [("address1", S), ("address2", S), ("city", S), ("state", S), ("country", S), ("zip", S)]
# (name, kind, parameters in signature order), in upstream's tool order.
TOOL_TABLE: list[tuple[str, str, list[tuple[str, dict]]]] = [
    ("calculate", "generic", [("expression", S)]),
    ("cancel_pending_order", "write", [("order_id", S), ("reason", S)]),
    ("exchange_delivered_order_items", "write",
     [("order_id", S), ("item_ids", L), ("new_item_ids", L), ("payment_method_id", S)]),
    ("find_user_id_by_name_zip", "read", [("first_name", S), ("last_name", S), ("zip", S)]),
    ("find_user_id_by_email", "read", [("email", S)]),
    ("get_order_details", "read", [("order_id", S)]),
    ("get_product_details", "read", [("product_id", S)]),
    ("get_item_details", "read", [("item_id", S)]),
    ("get_user_details", "read", [("user_id", S)]),
    ("list_all_product_types", "read", []),
    ("modify_pending_order_address", "write", [("order_id", S)] + ADDRESS),
    ("modify_pending_order_items", "write",
     [("order_id", S), ("item_ids", L), ("new_item_ids", L), ("payment_method_id", S)]),
    ("modify_pending_order_payment", "write", [("order_id", S), ("payment_method_id", S)]),
    ("modify_user_address", "write", [("user_id", S)] + ADDRESS),
    ("return_delivered_order_items", "write", [("order_id", S), ("item_ids", L), ("payment_method_id", S)]),
    ("transfer_to_human_agents", "generic", [("summary", S)]),
]


def build_tools() -> dict[str, ToolDef]:
    table = {}
    for name, kind, params in TOOL_TABLE:
        description, docs = DOCS[name]
        spec, sig = tool_spec(name, description, [(p, s, True) for p, s in params], docs)
        table[name] = ToolDef(spec=spec, func=getattr(tools, name), params=sig, owner="RetailTools",
                              mutates=kind == "write", kind=kind)
    return table


class RetailDomain(JsonDbDomain):
    name = "retail"
    build_tools = staticmethod(build_tools)
    tables = data_model.TABLES
