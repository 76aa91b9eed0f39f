"""The API suites as BFCL v4 runs execute them (bfcl-eval 2025.11.10 to 2026.3.23, checked version by version).

Each changed class subclasses its v3 suite under the same class name (Python's own binding errors name the
class, as upstream's do) and overrides only what v4 changed; MathAPI and VehicleControlAPI did not change.
"""
from __future__ import annotations

from ..base import ApiSuite
from ..math_api import MathAPI
from ..vehicle_control import VehicleControlAPI
from .file_system import GorillaFileSystem
from .messaging import MessageAPI, TicketAPI, TwitterAPI
from .trading_bot import TradingBot
from .travel_booking import TravelAPI

SUITES_V4: dict[str, type[ApiSuite]] = {cls.__name__: cls for cls in (
    GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI, VehicleControlAPI)}

__all__ = ["SUITES_V4"]
