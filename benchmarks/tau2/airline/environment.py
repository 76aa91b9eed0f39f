"""The airline domain: its database (loaded once), policy and tool table."""
from __future__ import annotations

from ..domain import ToolDef
from ..json_domain import JsonDbDomain
from ..schema import INTEGER, STRING, enum, model_def, model_list, tool_spec
from . import data_model, tools
from .tool_docs import DOCS, MODEL_DOCS

S, I = STRING, INTEGER  # noqa: E741 - short names keep the tool tables readable
CABIN = enum("business", "economy", "basic_economy")
MODELS = {
    "FlightInfo": [("flight_number", S), ("date", S)],
    "Passenger": [("first_name", S), ("last_name", S), ("dob", S)],
    "Payment": [("payment_id", S), ("amount", I)],
}
# (name, kind, parameters in signature order, argument models used), in upstream's tool order.
TOOL_TABLE = [
    ("book_reservation", "write",
     [("user_id", S), ("origin", S), ("destination", S), ("flight_type", enum("round_trip", "one_way")),
      ("cabin", CABIN), ("flights", model_list("FlightInfo")), ("passengers", model_list("Passenger")),
      ("payment_methods", model_list("Payment")), ("total_baggages", I), ("nonfree_baggages", I),
      ("insurance", enum("yes", "no"))], ["FlightInfo", "Passenger", "Payment"]),
    ("calculate", "generic", [("expression", S)], []),
    ("cancel_reservation", "write", [("reservation_id", S)], []),
    ("get_reservation_details", "read", [("reservation_id", S)], []),
    ("get_user_details", "read", [("user_id", S)], []),
    ("list_all_airports", "read", [], []),
    ("search_direct_flight", "read", [("origin", S), ("destination", S), ("date", S)], []),
    ("search_onestop_flight", "read", [("origin", S), ("destination", S), ("date", S)], []),
    ("send_certificate", "write", [("user_id", S), ("amount", I)], []),
    ("transfer_to_human_agents", "generic", [("summary", S)], []),
    ("update_reservation_baggages", "write",
     [("reservation_id", S), ("total_baggages", I), ("nonfree_baggages", I), ("payment_id", S)], []),
    ("update_reservation_flights", "write",
     [("reservation_id", S), ("cabin", CABIN), ("flights", model_list("FlightInfo")), ("payment_id", S)],
     ["FlightInfo"]),
    ("update_reservation_passengers", "write",
     [("reservation_id", S), ("passengers", model_list("Passenger"))], ["Passenger"]),
    ("get_flight_status", "read", [("flight_number", S), ("date", S)], []),
]


def build_tools() -> dict[str, ToolDef]:
    table = {}
    for name, kind, params, models in TOOL_TABLE:
        description, docs = DOCS[name]
        defs = {m: model_def(m, MODELS[m], MODEL_DOCS[m]) for m in models}
        spec, sig = tool_spec(name, description, [(p, s, True) for p, s in params], docs, defs or None)
        table[name] = ToolDef(spec=spec, func=getattr(tools, name), params=sig, owner="AirlineTools",
                              mutates=kind == "write", kind=kind)
    return table


class AirlineDomain(JsonDbDomain):
    name = "airline"
    build_tools = staticmethod(build_tools)
    tables = data_model.TABLES
