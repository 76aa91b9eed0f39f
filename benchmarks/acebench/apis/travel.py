"""Travel: flight search, booking, changes and cancellation (no Wi-Fi or device login; not a BaseApi)."""
from __future__ import annotations

from datetime import datetime, timedelta

from .base import ScenarioApi

_EN = {
    "economy": "Economy Class", "business": "Business Class",
    "airline_cancelled_reason": "The airline has canceled the flight.",
    "no_direct": "There are no direct flights that meet the criteria.",
    "bad_login": "Incorrect username or password.",
    "need_id": "Please provide a valid reservation ID or user ID",
    "no_transfer": "No connecting flights that meet the criteria were found.",
    "auth_failed": "Authentication failed. Please check your user ID and password.",
    "bad_payment": "Invalid payment method",
    "no_cash": "Your cash balance is insufficient. Please consider using another payment method.",
    "no_bank": "Your bank balance is insufficient. Please consider using another payment method.",
    "booked": "Booking successful. Reservation ID: {rid}. Total cost: {cost} yuan (including baggage fees).",
    "no_reservation": "Reservation not found or user ID does not match.",
    "no_flight": "Flight information not found.",
    "no_user": "User information not found.",
    "flight_changed": "Flight number has been changed.",
    "change_failed": "Flight change failed: Invalid new flight number or destination does not match.",
    "cabin_paid": "Cabin change successful. Price difference paid: {diff}.",
    "cabin_unpaid": "Insufficient balance to pay the cabin price difference.",
    "cabin_refunded": "Cabin change successful. Price difference refunded: {diff}.",
    "baggage_paid": "Baggage has been added. Additional fee to be paid: {cost}.",
    "baggage_unpaid": "Insufficient balance to pay the additional baggage fees.",
    "no_fee": "Modification completed with no additional fees.",
    "bad_user_id": "Invalid user ID.",
    "not_yours": "Invalid reservation ID or it does not belong to the user.",
    "bad_flight": "Invalid flight information.",
    "used": "The flight segment has been used and cannot be canceled.",
    "airline_cancelled": "The flight has been canceled. Your reservation will be canceled free of charge, and "
                         "{refund} yuan has been refunded.",
    "free_cancel": "More than 24 hours before departure. Free cancellation successful, {refund} yuan has been "
                   "refunded.",
    "fee_cancel": "Less than 24 hours before departure. A cancellation fee of {fee} yuan has been deducted, and "
                  "{refund} yuan has been refunded.",
}

_ZH = {
    "economy": "经济舱", "business": "商务舱",
    "airline_cancelled_reason": "航空公司取消航班",
    "no_direct": "没有符合条件的直达航班",
    "bad_login": "用户名或密码不正确",
    "need_id": "请提供有效的预订ID或用户ID",
    "no_transfer": "未找到符合条件的中转航班。",
    "auth_failed": "认证失败，请检查用户ID和密码。",
    "bad_payment": "支付方式无效",
    "no_cash": "cash余额不足，请考虑换一种支付方式",
    "no_bank": "bank余额不足，请考虑换一种支付方式",
    "booked": "预订成功，预订号：{rid}，总费用：{cost}元（包含行李费用）。",
    "no_reservation": "预订未找到或用户ID不匹配。",
    "no_flight": "航班信息未找到。",
    "no_user": "用户信息未找到。",
    "flight_changed": "航班号已更改。",
    "change_failed": "航班更改失败：新的航班号无效或目的地不匹配。",
    "cabin_paid": "舱位更改成功。已支付差价: {diff}。",
    "cabin_unpaid": "余额不足，无法支付舱位差价。",
    "cabin_refunded": "舱位更改成功。已退款差价: {diff}。",
    "baggage_paid": "行李已增加。需支付额外费用: {cost}。",
    "baggage_unpaid": "余额不足，无法支付额外行李费用。",
    "no_fee": "修改完成，无需额外费用。",
    "bad_user_id": "用户ID无效。",
    "not_yours": "预订ID无效或与该用户无关。",
    "bad_flight": "航班信息无效。",
    "used": "航段已使用，无法取消。",
    "airline_cancelled": "航班已取消，您的预订将被免费取消，已退款{refund}元。",
    "free_cancel": "距离出发时间超过24小时，免费取消成功，已退款{refund}元。",
    "fee_cancel": "距离出发时间不足24小时，已扣除取消费{fee}元，退款{refund}元。",
}

_FREE_BAGS = {"regular": (1, 2), "silver": (2, 3), "gold": (3, 3)}  # (economy, business)
_NOW = datetime(2024, 7, 14, 6, 0, 0)  # upstream's fixed "current time" for cancellations
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_FLIGHT_KEYS = ("flight_no", "origin", "destination", "depart_time", "arrival_time", "status", "seats_available",
                "economy_price", "business_price")


class Travel(ScenarioApi):
    _TEXT = {"en": _EN, "zh": _ZH}

    def _allowances(self) -> dict:
        t = self._TEXT[self._lang]
        return {level: {t["economy"]: eco, t["business"]: bus} for level, (eco, bus) in _FREE_BAGS.items()}

    def get_flight_details(self, origin=None, destination=None):
        flights = self.flights
        if origin:
            flights = [f for f in flights if f["origin"] == origin]
        if destination:
            flights = [f for f in flights if f["destination"] == destination]
        if len(flights) == 0:
            return self._say("no_direct")
        return [{key: f[key] for key in _FLIGHT_KEYS} for f in flights]

    def get_user_details(self, user_id, password):
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return {key: value for key, value in user.items() if key != "password"}
        return {"status": "error", "message": self._say("bad_login")}

    def get_reservation_details(self, reservation_id=None, user_id=None):
        if reservation_id:
            found = [r for r in self.reservations if r["reservation_id"] == reservation_id]
        elif user_id:
            found = [r for r in self.reservations if r["user_id"] == user_id]
        else:
            return {"status": "error", "message": self._say("need_id")}
        return [{**r, "flight_info": next((f for f in self.flights if f["flight_no"] == r["flight_no"]), None)}
                for r in found]

    def authenticate_user(self, user_id, password):
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return user
        return {"status": "error", "message": self._say("bad_login")}

    def get_baggage_allowance(self, membership_level, cabin_class):
        return self._allowances().get(membership_level, {}).get(cabin_class, 0)

    def find_transfer_flights(self, origin_city, transfer_city, destination_city):
        first_legs = [f for f in self.flights if f["origin"] == origin_city and f["destination"] == transfer_city
                      and f["status"] == "available"]
        second_legs = [f for f in self.flights if f["origin"] == transfer_city
                       and f["destination"] == destination_city and f["status"] == "available"]
        pairs = []
        for first in first_legs:
            arrival = datetime.strptime(first["arrival_time"], _TIME_FORMAT)
            for second in second_legs:
                if arrival < datetime.strptime(second["depart_time"], _TIME_FORMAT):
                    pairs.append({"first_leg": first, "second_leg": second})
        return pairs if pairs else self._say("no_transfer")

    def calculate_baggage_fee(self, membership_level, cabin_class, baggage_count):
        free_limit = self._allowances()[membership_level][cabin_class]
        return max(baggage_count - free_limit, 0) * 50

    def update_balance(self, user, payment_method, amount):
        if payment_method == "cash":
            if user["cash_balance"] + amount < 0:
                return False
            user["cash_balance"] += amount
        elif payment_method == "bank":
            if user["bank_balance"] + amount < 0:
                return False
            user["bank_balance"] += amount
        return True

    def reserve_flight(self, user_id, password, flight_no, cabin, payment_method, baggage_count):
        user = self.authenticate_user(user_id, password)
        if not user:  # never true upstream: a failed login returns a (truthy) error dict
            return self._say("auth_failed")
        flight = next((f for f in self.flights if f["flight_no"] == flight_no and f["status"] == "available"), None)
        # no matching flight fails on None here as upstream does (the tool's error text is upstream's)
        total_cost = flight["economy_price"] if cabin == self._say("economy") else flight["business_price"]  # type: ignore[index]
        total_cost += self.calculate_baggage_fee(user["membership_level"], cabin, baggage_count)
        if payment_method not in ["cash", "bank"]:
            return self._say("bad_payment")
        account = "cash_balance" if payment_method == "cash" else "bank_balance"
        if total_cost > self.users.get(user_id)[account]:
            return self._say("no_cash" if payment_method == "cash" else "no_bank")
        self.users.get(user_id)[account] -= total_cost
        flight["seats_available"] -= 1  # type: ignore[index]
        rid = f"res_{len(self.reservations) + 1}"
        self.reservations.append({"reservation_id": rid, "user_id": user_id, "flight_no": flight_no,
                                  "payment_method": payment_method, "cabin": cabin, "baggage": baggage_count})
        return self._say("booked", rid=rid, cost=total_cost)

    def modify_flight(self, user_id, reservation_id, new_flight_no=None, new_cabin=None, add_baggage=0,
                      new_payment_method=None):
        reservation = next((r for r in self.reservations
                            if r["reservation_id"] == reservation_id and r["user_id"] == user_id), None)
        if not reservation:
            return self._say("no_reservation")
        current = next((f for f in self.flights if f["flight_no"] == reservation["flight_no"]), None)
        if not current:
            return self._say("no_flight")
        payment_method = new_payment_method if new_payment_method else reservation["payment_method"]
        user = self.users[user_id]
        if not user:
            return self._say("no_user")
        notes = []
        if new_flight_no and new_flight_no != reservation["flight_no"]:
            new_flight = next((f for f in self.flights if f["flight_no"] == new_flight_no), None)
            if not (new_flight and new_flight["origin"] == current["origin"]
                    and new_flight["destination"] == current["destination"]):
                return self._say("change_failed")
            reservation["flight_no"] = new_flight_no
            notes.append(self._say("flight_changed"))
        if new_cabin and new_cabin != reservation.get("cabin"):
            # priced on the reservation's original flight, as upstream
            diff = self.calculate_price_difference(current, reservation["cabin"], new_cabin)
            reservation["cabin"] = new_cabin
            if diff > 0:
                paid = self.update_balance(user, payment_method, -diff)
                notes.append(self._say("cabin_paid", diff=diff) if paid else self._say("cabin_unpaid"))
            elif diff < 0:
                self.update_balance(user, payment_method, -diff)
                notes.append(self._say("cabin_refunded", diff=-diff))
        if add_baggage > 0:
            free = self.get_baggage_allowance(user["membership_level"], reservation["cabin"])
            total_bags = reservation.get("baggage", 0) + add_baggage
            cost = max(0, total_bags - free) * 50
            if cost > 0:
                paid = self.update_balance(user, payment_method, -cost)
                notes.append(self._say("baggage_paid", cost=cost) if paid else self._say("baggage_unpaid"))
            reservation["baggage"] = total_bags
        if not notes:
            notes.append(self._say("no_fee"))
        return " ".join(notes)

    def cancel_reservation(self, user_id, reservation_id, reason):
        # upstream refunds but keeps the reservation in the list
        user = self.users.get(user_id, None)
        if not user:
            return self._say("bad_user_id")
        reservation = next((r for r in self.reservations
                            if r["reservation_id"] == reservation_id and r["user_id"] == user_id), None)
        if not reservation:
            return self._say("not_yours")
        flight = next((f for f in self.flights if f["flight_no"] == reservation["flight_no"]), None)
        if not flight:
            return self._say("bad_flight")
        depart = datetime.strptime(flight["depart_time"], _TIME_FORMAT)
        if _NOW > depart:
            return self._say("used")
        price = flight["economy_price"] if reservation["cabin"] == self._say("economy") else flight["business_price"]
        if reason == self._say("airline_cancelled_reason"):
            self.process_refund(user, price)
            return self._say("airline_cancelled", refund=price)
        if depart - _NOW > timedelta(days=1):
            self.process_refund(user, price)
            return self._say("free_cancel", refund=price)
        fee = price * 0.1
        refund = price - fee
        self.process_refund(user, refund)
        return self._say("fee_cancel", fee=fee, refund=refund)

    def process_refund(self, user, amount):
        user["cash_balance"] += amount
        user["user_name"]  # upstream prints a line naming the user: a KeyError there still fails the call

    def calculate_price_difference(self, flight, old_cabin, new_cabin):
        prices = {self._say("economy"): flight["economy_price"], self._say("business"): flight["business_price"]}
        return prices.get(new_cabin, 0) - prices.get(old_cabin, 0)
