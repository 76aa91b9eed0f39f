"""TravelAPI (upstream travel_booking.py): login token, credit cards, flight bookings, insurance.

Fixed forms (upstream depends on process accidents): the invalid-class error lists the classes in sorted order
(upstream prints a Python set); the age check in ``verify_traveler_information`` uses TODAY below instead of
the wall clock.
"""
from __future__ import annotations

import random
from datetime import date, datetime
from typing import Any, Optional

from .base import ApiSuite, Extensions, pick

TODAY = date(2025, 8, 6)  # bfcl-eval 2025.8.6.2's release day
_DEFAULTS: dict[str, Any] = {"credit_card_list": {}, "booking_record": {}, "access_token": None, "token_type": None,
             "token_expires_in": None, "token_scope": None, "user_first_name": None, "user_last_name": None,
             "budget_limit": None}
_DEFAULT_SEED = 141053
_CLASS_FACTOR = {"economy": 1, "business": 2, "first": 5}
_CLASSES_TEXT = "{'business', 'economy', 'first'}"
_AIRPORTS = ["RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND", "HKG", "CIA",
             "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK", "ORD", "BOS"]
_CITY_AIRPORT = {"Rivermist": "RMS", "Stonebrook": "SBK", "Maplecrest": "MPC", "Silverpine": "SVP",
                 "Shadowridge": "SHD", "London": "LHR", "Paris": "CDG", "Sunset Valley": "SSV",
                 "Oakendale": "OKD", "Willowbend": "WLB", "Crescent Hollow": "CRH", "Autumnville": "ATV",
                 "Pinehaven": "PHV", "Greenfield": "GFD", "San Francisco": "SFO", "Los Angeles": "LAX",
                 "New York": "JFK", "Chicago": "ORD", "Boston": "BOS", "Beijing": "PEK", "Hong Kong": "HKG",
                 "Rome": "CIA", "Tokyo": "HND"}
_RATES = [("USD", "RMB", 7), ("USD", "EUR", 0.8), ("USD", "JPY", 110), ("USD", "GBP", 0.7), ("USD", "CAD", 1.3),
          ("USD", "AUD", 1.4), ("USD", "INR", 70), ("USD", "RUB", 60), ("USD", "BRL", 3.8), ("USD", "MXN", 20)]

# Base fares: origin -> "DEST:fare ..." in upstream's table order (the order matters for long-context lists).
_FARE_ROWS = [
    ("SFO", "LAX:200 JFK:500 ORD:400 BOS:450 RMS:300 SBK:350 MPC:370 SVP:320 SHD:330 SSV:340 OKD:360 WLB:310 "
            "CRH:380 ATV:390 PHV:420 GFD:430 CIA:700"),
    ("LAX", "SFO:100 JFK:600 ORD:500 BOS:550 RMS:310 SBK:320 MPC:330 SVP:340 SHD:350 SSV:360 OKD:370 WLB:380 "
            "CRH:390 ATV:400 PHV:410 GFD:420 HND:430"),
    ("JFK", "ORD:300 BOS:250 RMS:450 SBK:460 MPC:470 SVP:480 SHD:490 SSV:500 OKD:510 WLB:520 CRH:530 ATV:540 "
            "PHV:550 GFD:560 LAX:570 HND:800 PVG:950 PEK:1000"),
    ("ORD", "LAX:180 BOS:200 RMS:350 SBK:360 MPC:370 SVP:380 SHD:390 SSV:400 OKD:410 WLB:420 CRH:430 ATV:440 "
            "PHV:450 GFD:460"),
    ("BOS", "RMS:400 SBK:410 MPC:420 SVP:430 SHD:440 SSV:450 OKD:460 WLB:470 CRH:480 ATV:490 PHV:500 GFD:510"),
    ("RMS", "BOS:200 JFK:210 SBK:220 MPC:230 SVP:240 SHD:250 SSV:260 OKD:270 WLB:280 CRH:290 ATV:300 PHV:310 "
            "GFD:320 LAX:330"),
    ("SBK", "MPC:200 SVP:210 SHD:220 SSV:230 OKD:240 WLB:250 CRH:260 ATV:270 PHV:280 GFD:290"),
    ("MPC", "SVP:210 SHD:220 SSV:230 OKD:240 WLB:250 CRH:260 ATV:270 PHV:280 GFD:290"),
    ("SVP", "SHD:230 SSV:240 OKD:250 WLB:260 CRH:270 ATV:280 PHV:290 GFD:300"),
    ("SHD", "SSV:220 OKD:230 WLB:240 CRH:250 ATV:260 PHV:270 GFD:280"),
    ("SSV", "OKD:240 WLB:250 CRH:260 ATV:270 PHV:280 GFD:290"),
    ("OKD", "WLB:230 CRH:240 ATV:250 PHV:260 GFD:270"),
    ("WLB", "CRH:250 ATV:260 PHV:270 GFD:280"),
    ("CRH", "ATV:240 PHV:250 GFD:260 SFO:270 RMS:280 HKG:290 JFK:300"),
    ("ATV", "PHV:230 GFD:240"),
    ("PHV", "GFD:220"),
    ("LHR", "CDG:100"),
    ("OKD", "LAX:220"),
]
BASE_FARES: dict[tuple[str, str], int] = {
    (origin, pair.split(":")[0]): int(pair.split(":")[1]) for origin, row in _FARE_ROWS for pair in row.split()
}


class TravelAPI(ApiSuite):
    def __init__(self) -> None:
        self._flight_cost_lookup: dict = {}

    def _setup(self, scenario, long_context: bool, extensions: Extensions) -> None:
        self._random = random.Random(scenario.get("random_seed", _DEFAULT_SEED))
        for key in _DEFAULTS:
            setattr(self, key, pick(scenario, key, _DEFAULTS[key]))
        self.long_context = long_context
        if long_context:
            for card_id, card in extensions.get("CREDIT_CARD_EXTENSION").items():
                self.credit_card_list.setdefault(card_id, card)
            for booking_id, record in extensions.get("BOOKING_RECORD_EXTENSION").items():
                self.booking_record.setdefault(booking_id, record)

    def _token_problem(self, access_token, extra: Optional[dict] = None):
        """Upstream's token check: expired, or wrong token (which also burns one use)."""
        extra = extra or {}
        if self.token_expires_in == 0:
            return {**extra, "error": "Token expired"}
        if access_token != self.access_token:
            self.token_expires_in -= 1
            return {**extra, "error": "Invalid access token"}
        return None

    def authenticate_travel(self, client_id: str, client_secret: str, refresh_token: str, grant_type: str,
                            user_first_name: str, user_last_name: str):
        self.token_expires_in = 2
        self.access_token = str(self._random.randint(100000, 999999))
        self.token_type = "Bearer"
        self.token_scope = grant_type
        self.user_first_name = user_first_name
        self.user_last_name = user_last_name
        return {"expires_in": 2, "access_token": self.access_token, "token_type": "Bearer", "scope": grant_type}

    def travel_get_login_status(self):
        return {"status": not (self.token_expires_in is None or self.token_expires_in == 0)}

    def get_budget_fiscal_year(self, lastModifiedAfter: Optional[str] = None, includeRemoved: Optional[str] = None):
        return {"budget_fiscal_year": "2018"}

    def register_credit_card(self, access_token: str, card_number: str, expiration_date: str,
                             cardholder_name: str, card_verification_number: int):
        if self.token_expires_in is None:
            return {"error": "Token not initialized"}
        if err := self._token_problem(access_token):
            return err
        if card_number in self.credit_card_list:
            return {"error": "Card already registered"}
        card_id = str(self._random.randint(100000000000, 999999999999))
        self.credit_card_list[card_id] = {"card_number": card_number, "expiration_date": expiration_date,
                                          "cardholder_name": cardholder_name,
                                          "card_verification_number": card_verification_number,
                                          "balance": self._random.randint(10000, 99999)}
        return {"card_id": card_id}

    def get_flight_cost(self, travel_from: str, travel_to: str, travel_date: str, travel_class: str):
        if (travel_from, travel_to) not in BASE_FARES:
            raise ValueError("No available route for the given airports.")
        if travel_class not in _CLASS_FACTOR:
            raise ValueError("Invalid travel class. Options are: economy, business, first.")
        factor = _CLASS_FACTOR[travel_class]
        digit_sum = sum(int(ch) for ch in travel_date if ch.isdigit())
        factor *= 2 if digit_sum % 2 == 0 else 1
        if self.long_context:  # every route's price for that class and date
            self._flight_cost_lookup = {}
            costs = []
            for (src, dst), fare in BASE_FARES.items():
                cost = float(fare * factor)
                self._flight_cost_lookup[f"{src}|{dst}|{travel_class}|{travel_date}"] = {"cost": cost}
                costs.append(cost)
            return {"travel_cost_list": costs}
        cost = float(BASE_FARES[(travel_from, travel_to)] * factor)
        self._flight_cost_lookup = {f"{travel_from}|{travel_to}|{travel_class}|{travel_date}": {"cost": cost}}
        return {"travel_cost_list": [cost]}

    def get_credit_card_balance(self, access_token: str, card_id: str):
        if err := self._token_problem(access_token):
            return err
        if card_id not in self.credit_card_list:
            return {"error": "Card not registered. Here are a list of card_id's: "
                             + str(list(self.credit_card_list.keys()))}
        return {"card_balance": self.credit_card_list[card_id]["balance"]}

    def book_flight(self, access_token: str, card_id: str, travel_date: str, travel_from: str, travel_to: str,
                    travel_class: str):
        fail = {"booking_status": False}
        if err := self._token_problem(access_token, fail):
            return err
        if card_id not in self.credit_card_list:
            return {**fail, "error": "Card not registered"}
        card = self.credit_card_list[card_id]
        if "balance" not in card:
            return {**fail, "error": "Balance not found"}
        if travel_from not in _AIRPORTS:
            return {**fail, "error": f"Invalid departure airport code: {travel_from}"}
        if travel_to not in _AIRPORTS:
            return {**fail, "error": f"Invalid destination airport code: {travel_to}"}
        try:
            datetime.strptime(travel_date, "%Y-%m-%d")
        except ValueError:
            return {**fail, "error": "Invalid date format. Use YYYY-MM-DD."}
        if travel_class not in _CLASS_FACTOR:
            return {**fail, "error": f"Invalid travel class. Must be one of {_CLASSES_TEXT}"}
        try:
            self.get_flight_cost(travel_from=travel_from, travel_to=travel_to, travel_date=travel_date,
                                 travel_class=travel_class)
            entry = self._flight_cost_lookup.get(f"{travel_from}|{travel_to}|{travel_class}|{travel_date}")
            if entry is None:
                return {**fail, "error": "No available route for the given parameters"}
            cost = entry["cost"]
        except ValueError as e:
            return {**fail, "error": str(e)}
        if card["balance"] < cost:
            return {**fail, "error": "Insufficient funds"}
        if self.budget_limit is not None and card["balance"] < self.budget_limit:
            return {**fail, "error": "Balance is less than budget limit"}
        card["balance"] -= cost
        booking_id = str(self._random.randint(1000000, 9999999))
        transaction_id = str(self._random.randint(10000000, 99999999))
        self.booking_record[booking_id] = {"card_id": card_id, "travel_date": travel_date,
                                           "travel_from": travel_from, "travel_to": travel_to,
                                           "travel_class": travel_class, "travel_cost": cost,
                                           "transaction_id": transaction_id}
        history = self.booking_record if self.long_context else {}
        return {"booking_id": booking_id, "transaction_id": transaction_id, "booking_status": True,
                "booking_history": history}

    def retrieve_invoice(self, access_token: str, booking_id: Optional[str] = None,
                         insurance_id: Optional[str] = None):
        if err := self._token_problem(access_token):
            return err
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        rec = self.booking_record[booking_id]
        keys = ("travel_date", "travel_from", "travel_to", "travel_class", "travel_cost", "transaction_id")
        return {"invoice": {"booking_id": booking_id, **{k: rec[k] for k in keys}}}

    def list_all_airports(self):
        return list(_AIRPORTS)

    def cancel_booking(self, access_token: str, booking_id: str):
        if err := self._token_problem(access_token, {"cancel_status": False}):
            return err
        if booking_id not in self.booking_record:
            return {"cancel_status": False, "error": "Booking not found"}
        rec = self.booking_record[booking_id]
        self.credit_card_list[rec["card_id"]]["balance"] += rec["travel_cost"]
        del self.booking_record[booking_id]
        return {"cancel_status": True}

    def compute_exchange_rate(self, base_currency: str, target_currency: str, value: float):
        for left, right, rate in _RATES:
            if base_currency == left and target_currency == right:
                return {"exchanged_value": value * rate}
            if base_currency == right and target_currency == left:
                return {"exchanged_value": round(value / rate, 2)}
        raise ValueError("No available exchange rate for the given currencies.")

    def verify_traveler_information(self, first_name: str, last_name: str, date_of_birth: str,
                                    passport_number: str):
        if self.user_first_name != first_name or self.user_last_name != last_name:
            return {"verification_status": False,
                    "verification_failure": "Cannot book flight information for another user."
                    + f"Expected {self.user_first_name} {self.user_last_name}, got {first_name} {last_name}"}
        try:
            born = datetime.strptime(date_of_birth, "%Y-%m-%d")
            age = TODAY.year - born.year - ((TODAY.month, TODAY.day) < (born.month, born.day))
        except ValueError:
            return {"verification_status": False,
                    "verification_failure": "Invalid date of birth format. Please use YYYY-MM-DD."}
        if age < 18:
            return {"verification_status": False, "verification_failure": "Traveler must be at least 18 years old."}
        if not passport_number.startswith("US"):
            return {"verification_status": False,
                    "verification_failure": "Passport must be issued by the United States."}
        return {"verification_status": True}

    def set_budget_limit(self, access_token: str, budget_limit: float):
        if err := self._token_problem(access_token):
            return err
        self.budget_limit = float(budget_limit)
        return {"budget_limit": self.budget_limit}

    def get_nearest_airport_by_city(self, location: str):
        return {"nearest_airport": _CITY_AIRPORT.get(location, "Unknown")}

    def purchase_insurance(self, access_token: str, insurance_type: str, booking_id: str, insurance_cost: float,
                           card_id: str):
        fail = {"insurance_status": False}
        if err := self._token_problem(access_token, fail):
            return err
        if self.budget_limit is not None and self.budget_limit < insurance_cost:
            return {**fail, "error": "Exceeded budget limit"}
        if booking_id not in self.booking_record:
            return {**fail, "error": "Booking not found"}
        if card_id not in self.credit_card_list:
            return {**fail, "error": "Credit card not registered"}
        self.credit_card_list[card_id]["balance"] -= insurance_cost
        return {"insurance_id": str(self._random.randint(100000000, 999999999)), "insurance_status": True}

    def contact_customer_support(self, booking_id: str, message: str):
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        return {"customer_support_message": "Thank you for contacting customer support. Your message has been "
                                            "received and we will get back to you shortly."}

    def get_all_credit_cards(self):
        return {"credit_card_list": self.credit_card_list}
