"""The airline tools with tau2's semantics (checks, messages, state changes, fixed clock and id sequences).
``db`` is the episode's Overlay."""
from __future__ import annotations

import copy
from typing import Annotated, Literal

from .. import arithmetic
from ..domain import Record
from ..overlay import Overlay
from ..schema import INTEGER, STRING, model_def, model_list
from ..toolkit import Schema, Toolkit
from . import data_model as dm
from .tool_docs import DOCS, MODEL_DOCS

TOOLS = Toolkit("AirlineTools", DOCS)


def _models(model: str, fields: list[tuple[str, dict]]) -> Schema:
    """A ``List[Model | dict]`` argument: its schema and the model's ``$defs`` entry."""
    return Schema(model_list(model), {model: model_def(model, fields, MODEL_DOCS[model])})


# the argument models upstream's tools take (pydantic models in tau2's airline data model)
FlightInfos = Annotated[list, _models("FlightInfo", [("flight_number", STRING), ("date", STRING)])]
Passengers = Annotated[list, _models("Passenger", [("first_name", STRING), ("last_name", STRING), ("dob", STRING)])]
Payments = Annotated[list, _models("Payment", [("payment_id", STRING), ("amount", INTEGER)])]
Cabin = Literal["business", "economy", "basic_economy"]
FlightType = Literal["round_trip", "one_way"]

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")  # upstream assumes at most 3 bookings per task
NEW_CERTIFICATE_NUMBERS = (3221322, 3221323, 3221324)
NOW = "2024-05-15T15:00:00"  # upstream's fixed "current time"
AIRPORTS = [("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
            ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
            ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"),
            ("MCO", "Orlando"), ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"),
            ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia")]


def _user(db: Overlay, user_id, write=False) -> Record:
    if not db.has("users", user_id):
        raise ValueError(f"User {user_id} not found")
    return db.for_write("users", user_id) if write else db.get("users", user_id)


def _reservation(db: Overlay, reservation_id, write=False) -> Record:
    if not db.has("reservations", reservation_id):
        raise ValueError(f"Reservation {reservation_id} not found")
    return db.for_write("reservations", reservation_id) if write else db.get("reservations", reservation_id)


def _flight(db: Overlay, flight_number, write=False) -> Record:
    if not db.has("flights", flight_number):
        raise ValueError(f"Flight {flight_number} not found")
    return db.for_write("flights", flight_number) if write else db.get("flights", flight_number)


def _flight_date(db: Overlay, flight_number, date, write=False) -> Record:
    dates = _flight(db, flight_number, write)["dates"]
    if date not in dates:
        raise ValueError(f"Flight {flight_number} not found on date {date}")
    return dates[date]


def _as_models(values, build):
    # Upstream converts the list only when every element is a dict; otherwise it uses the items as given.
    return [build(v) for v in values] if all(isinstance(v, dict) for v in values) else list(values)


def _search(db: Overlay, date, origin=None, destination=None, leave_after=None) -> list[Record]:
    found = []
    for f in db.values("flights"):
        if ((origin is None or f["origin"] == origin) and (destination is None or f["destination"] == destination)
                and date in f["dates"] and f["dates"][date]["status"] == "available"
                and (leave_after is None or f["scheduled_departure_time_est"] >= leave_after)):
            day = f["dates"][date]
            found.append(Record(flight_number=f["flight_number"], origin=f["origin"],
                                destination=f["destination"], status="available",
                                scheduled_departure_time_est=f["scheduled_departure_time_est"],
                                scheduled_arrival_time_est=f["scheduled_arrival_time_est"], date=None,
                                available_seats=dict(day["available_seats"]), prices=dict(day["prices"])))
    return found


def _charge_for_update(db: Overlay, user_id, payment_id, total_price):
    methods = _user(db, user_id)["payment_methods"]
    if payment_id not in methods:
        raise ValueError("Payment method not found")
    method = methods[payment_id]
    if method["source"] == "certificate":
        raise ValueError("Certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < total_price:
        raise ValueError("Gift card balance is not enough")
    if method["source"] == "gift_card":
        card = _user(db, user_id, write=True)["payment_methods"][payment_id]
        card["amount"] -= total_price
    return dm.payment(payment_id, total_price) if total_price != 0 else None


@TOOLS.tool("write")
def book_reservation(db: Overlay, user_id: str, origin: str, destination: str, flight_type: FlightType, cabin: Cabin,
                     flights: FlightInfos, passengers: Passengers, payment_methods: Payments, total_baggages: int,
                     nonfree_baggages: int, insurance: Literal["yes", "no"]):
    flights = _as_models(flights, dm.flight_info)
    passengers = _as_models(passengers, dm.passenger_arg)
    payment_methods = _as_models(payment_methods, dm.payment_arg)
    user = _user(db, user_id)
    reservation_id = next((r for r in NEW_RESERVATION_IDS if not db.has("reservations", r)), None)
    if reservation_id is None:
        raise ValueError("Too many reservations")
    dm.check_reservation(flight_type, cabin, total_baggages, nonfree_baggages, insurance)
    booked, days, total = [], [], 0
    for info in flights:
        number = info["flight_number"]
        f = _flight(db, number)
        day = _flight_date(db, number, info["date"])
        if day["status"] != "available":
            raise ValueError(f"Flight {number} not available on date {info['date']}")
        if day["available_seats"][cabin] < len(passengers):
            raise ValueError(f"Not enough seats on flight {number}")
        price = day["prices"][cabin]
        booked.append(Record(flight_number=number, origin=f["origin"], destination=f["destination"],
                             date=info["date"], price=price))
        days.append((number, info["date"]))
        total += price * len(passengers)
    if insurance == "yes":
        total += 30 * len(passengers)
    total += 50 * nonfree_baggages
    for pay in payment_methods:
        if pay["payment_id"] not in user["payment_methods"]:
            raise ValueError(f"Payment method {pay['payment_id']} not found")
        method = user["payment_methods"][pay["payment_id"]]
        if method["source"] in {"gift_card", "certificate"} and method["amount"] < pay["amount"]:
            raise ValueError(f"Not enough balance in payment method {pay['payment_id']}")
    paid = sum(pay["amount"] for pay in payment_methods)
    if paid != total:
        raise ValueError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
    user = _user(db, user_id, write=True)
    for pay in payment_methods:
        method = user["payment_methods"][pay["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] -= pay["amount"]
        elif method["source"] == "certificate":
            user["payment_methods"].pop(pay["payment_id"])
    for number, date in days:
        _flight_date(db, number, date, write=True)["available_seats"][cabin] -= len(passengers)
    reservation = Record(reservation_id=reservation_id, user_id=user_id, origin=origin, destination=destination,
                         flight_type=flight_type, cabin=cabin, flights=booked,
                         passengers=copy.deepcopy(passengers), payment_history=copy.deepcopy(payment_methods),
                         created_at=NOW, total_baggages=int(total_baggages),
                         nonfree_baggages=int(nonfree_baggages), insurance=insurance, status=None)
    db.insert("reservations", reservation_id, reservation)
    user["reservations"].append(reservation_id)
    return reservation


@TOOLS.tool("generic")
def calculate(db: Overlay, expression: str):
    return arithmetic.calculate(expression)


@TOOLS.tool("write")
def cancel_reservation(db: Overlay, reservation_id: str):
    reservation = _reservation(db, reservation_id, write=True)
    refunds = [dm.payment(p["payment_id"], -p["amount"]) for p in reservation["payment_history"]]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"  # upstream does not release the seats
    return reservation


@TOOLS.tool("read")
def get_reservation_details(db: Overlay, reservation_id: str):
    return _reservation(db, reservation_id)


@TOOLS.tool("read")
def get_user_details(db: Overlay, user_id: str):
    return _user(db, user_id)


@TOOLS.tool("read")
def list_all_airports(db: Overlay):
    return [Record(iata=code, city=city) for code, city in AIRPORTS]


@TOOLS.tool("read")
def search_direct_flight(db: Overlay, origin: str, destination: str, date: str):
    return _search(db, date, origin=origin, destination=destination)


@TOOLS.tool("read")
def search_onestop_flight(db: Overlay, origin: str, destination: str, date: str):
    pairs = []
    for first in _search(db, date, origin=origin):
        first["date"] = date
        # Upstream's next-day date is not zero-padded ("2024-05-2"); kept, since it decides what is found.
        date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
        for second in _search(db, date2, origin=first["destination"], destination=destination,
                              leave_after=first["scheduled_arrival_time_est"]):
            second["date"] = date2
            pairs.append([first, second])
    return pairs


@TOOLS.tool("write")
def send_certificate(db: Overlay, user_id: str, amount: int):
    user = _user(db, user_id)
    for number in NEW_CERTIFICATE_NUMBERS:
        payment_id = f"certificate_{number}"
        if payment_id not in user["payment_methods"]:
            certificate = dm.certificate(payment_id, amount)
            _user(db, user_id, write=True)["payment_methods"][payment_id] = certificate
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    raise ValueError("Too many certificates")


@TOOLS.tool("generic")
def transfer_to_human_agents(db: Overlay, summary: str):
    return "Transfer successful"


@TOOLS.tool("write")
def update_reservation_baggages(db: Overlay, reservation_id: str, total_baggages: int, nonfree_baggages: int,
                                payment_id: str):
    reservation = _reservation(db, reservation_id)
    _user(db, reservation["user_id"])
    total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    payment = _charge_for_update(db, reservation["user_id"], payment_id, total_price)
    reservation = _reservation(db, reservation_id, write=True)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["total_baggages"] = total_baggages  # assigned unvalidated upstream
    reservation["nonfree_baggages"] = nonfree_baggages
    return reservation


@TOOLS.tool("write")
def update_reservation_flights(db: Overlay, reservation_id: str, cabin: Cabin, flights: FlightInfos, payment_id: str):
    flights = _as_models(flights, dm.flight_info)
    reservation = _reservation(db, reservation_id)
    _user(db, reservation["user_id"])
    n = len(reservation["passengers"])
    total_price, new_flights = 0, []
    for info in flights:
        kept = next((f for f in reservation["flights"] if f["flight_number"] == info["flight_number"]
                     and f["date"] == info["date"] and cabin == reservation["cabin"]), None)
        if kept:
            total_price += kept["price"] * n
            new_flights.append(kept)
            continue
        f = _flight(db, info["flight_number"])
        day = _flight_date(db, info["flight_number"], info["date"])
        if day["status"] != "available":
            raise ValueError(f"Flight {info['flight_number']} not available on date {info['date']}")
        if day["available_seats"][cabin] < n:
            raise ValueError(f"Not enough seats on flight {info['flight_number']}")
        seg = Record(flight_number=info["flight_number"], origin=f["origin"], destination=f["destination"],
                     date=info["date"], price=day["prices"][cabin])
        total_price += seg["price"] * n
        new_flights.append(seg)
    total_price -= sum(f["price"] for f in reservation["flights"]) * n
    payment = _charge_for_update(db, reservation["user_id"], payment_id, total_price)
    reservation = _reservation(db, reservation_id, write=True)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["flights"] = copy.deepcopy(new_flights)
    reservation["cabin"] = cabin  # seats are not updated upstream either
    return reservation


@TOOLS.tool("write")
def update_reservation_passengers(db: Overlay, reservation_id: str, passengers: Passengers):
    passengers = _as_models(passengers, dm.passenger_arg)
    reservation = _reservation(db, reservation_id)
    if len(passengers) != len(reservation["passengers"]):
        raise ValueError("Number of passengers does not match")
    reservation = _reservation(db, reservation_id, write=True)
    reservation["passengers"] = copy.deepcopy(passengers)
    return reservation


@TOOLS.tool("read")
def get_flight_status(db: Overlay, flight_number: str, date: str):
    return _flight_date(db, flight_number, date)["status"]
