"""Airline records as tau2's pydantic models dump them (model field order and value types), normalised once
at load time; plus the argument models (FlightInfo, Passenger, Payment) that tools build from agent input."""
from __future__ import annotations

from ..domain import Record
from ..validation import check_fields

_STATUS_FIELDS = {
    "available": ("available_seats", "prices"),
    "on time": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "flying": ("actual_departure_time_est", "estimated_arrival_time_est"),
    "landed": ("actual_departure_time_est", "actual_arrival_time_est"),
    "cancelled": (),
    "delayed": ("estimated_departure_time_est", "estimated_arrival_time_est"),
}


def flight_date(d: dict) -> Record:
    rec = Record(status=d["status"])
    for key in _STATUS_FIELDS[d["status"]]:
        rec[key] = {k: int(v) for k, v in d[key].items()} if key in ("available_seats", "prices") else d[key]
    return rec


def flight(d: dict) -> Record:
    return Record(flight_number=d["flight_number"], origin=d["origin"], destination=d["destination"],
                  scheduled_departure_time_est=d["scheduled_departure_time_est"],
                  scheduled_arrival_time_est=d["scheduled_arrival_time_est"],
                  dates={k: flight_date(v) for k, v in d["dates"].items()})


def payment_method(d: dict) -> Record:
    if d["source"] == "credit_card":
        return Record(source="credit_card", id=d["id"], brand=d["brand"], last_four=d["last_four"])
    return Record(source=d["source"], id=d["id"], amount=float(d["amount"]))


def passenger(d: dict) -> Record:
    return Record(first_name=d["first_name"], last_name=d["last_name"], dob=d["dob"])


def user(d: dict) -> Record:
    a = d["address"]
    return Record(user_id=d["user_id"], name=Record(first_name=d["name"]["first_name"],
                                                    last_name=d["name"]["last_name"]),
                  address=Record(address1=a["address1"], address2=a.get("address2"), city=a["city"],
                                 country=a["country"], state=a["state"], zip=a["zip"]),
                  email=d["email"], dob=d["dob"],
                  payment_methods={k: payment_method(v) for k, v in d["payment_methods"].items()},
                  saved_passengers=[passenger(p) for p in d["saved_passengers"]],
                  membership=d["membership"], reservations=list(d["reservations"]))


def reservation_flight(d: dict) -> Record:
    return Record(flight_number=d["flight_number"], origin=d["origin"], destination=d["destination"],
                  date=d["date"], price=int(d["price"]))


def payment(payment_id, amount) -> Record:
    return Record(payment_id=payment_id, amount=int(amount))


def reservation(d: dict) -> Record:
    return Record(reservation_id=d["reservation_id"], user_id=d["user_id"], origin=d["origin"],
                  destination=d["destination"], flight_type=d["flight_type"], cabin=d["cabin"],
                  flights=[reservation_flight(f) for f in d["flights"]],
                  passengers=[passenger(p) for p in d["passengers"]],
                  payment_history=[payment(p["payment_id"], p["amount"]) for p in d["payment_history"]],
                  created_at=d["created_at"], total_baggages=int(d["total_baggages"]),
                  nonfree_baggages=int(d["nonfree_baggages"]), insurance=d["insurance"], status=d.get("status"))


# db.json's tables (each {id: record}) and how one record of each is normalised.
TABLES = {"flights": flight, "users": user, "reservations": reservation}


def _from_kwargs(model: str, d: dict, fields: list[tuple[str, str]]) -> Record:
    """``Model(**d)`` for the argument models: unknown keys are ignored, missing/wrong ones fail as pydantic."""
    missing = [f for f, _ in fields if f not in d]
    if missing:
        lines = [f"{f}\n  Field required [type=missing, input_value={_short(d)}, input_type=dict]\n"
                 f"    For further information visit https://errors.pydantic.dev/2.14/v/missing" for f in missing]
        noun = "error" if len(lines) == 1 else "errors"
        raise ValueError(f"{len(lines)} validation {noun} for {model}\n" + "\n".join(lines))
    check_fields(model, [(f, d[f], kind) for f, kind in fields])
    return Record((f, int(d[f]) if kind == "integer" else d[f]) for f, kind in fields)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 50 else text[:25] + "..." + text[-24:]


def flight_info(d: dict) -> Record:
    return _from_kwargs("FlightInfo", d, [("flight_number", "string"), ("date", "string")])


def passenger_arg(d: dict) -> Record:
    return _from_kwargs("Passenger", d, [("first_name", "string"), ("last_name", "string"), ("dob", "string")])


def payment_arg(d: dict) -> Record:
    return _from_kwargs("Payment", d, [("payment_id", "string"), ("amount", "integer")])


def certificate(payment_id: str, amount) -> Record:
    check_fields("Certificate", [("amount", amount, "number")])
    return Record(source="certificate", id=payment_id, amount=float(amount))


def check_reservation(flight_type, cabin, total_baggages, nonfree_baggages, insurance) -> None:
    """The checks ``Reservation(...)`` makes on the scalar arguments it is built from."""
    check_fields("Reservation", [("flight_type", flight_type, ("round_trip", "one_way")),
                                 ("cabin", cabin, ("business", "economy", "basic_economy")),
                                 ("total_baggages", total_baggages, "integer"),
                                 ("nonfree_baggages", nonfree_baggages, "integer"),
                                 ("insurance", insurance, ("yes", "no"))])
