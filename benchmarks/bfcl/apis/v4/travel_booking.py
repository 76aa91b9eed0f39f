"""TravelAPI, v4: a wrong access token no longer uses up the token (v3 counted it down, and failed with a
TypeError when no token was issued), ``get_booking_history`` is new, and an exchange by multiplication returns
a float."""
from __future__ import annotations

import copy
from typing import Optional

from ..travel_booking import _RATES
from ..travel_booking import TravelAPI as TravelAPIV3


class TravelAPI(TravelAPIV3):
    def _token_problem(self, access_token, extra: Optional[dict] = None):
        extra = extra or {}
        if self.token_expires_in == 0:
            return {**extra, "error": "Token expired"}
        if access_token != self.access_token:
            return {**extra, "error": "Invalid access token"}
        return None

    def get_booking_history(self, access_token: str):
        if err := self._token_problem(access_token):
            return err
        return {"booking_history": copy.deepcopy(self.booking_record)}

    def compute_exchange_rate(self, base_currency: str, target_currency: str, value: float):
        for left, right, rate in _RATES:
            if base_currency == left and target_currency == right:
                return {"exchanged_value": float(value * rate)}
            if base_currency == right and target_currency == left:
                return {"exchanged_value": round(value / rate, 2)}
        raise ValueError("No available exchange rate for the given currencies.")
