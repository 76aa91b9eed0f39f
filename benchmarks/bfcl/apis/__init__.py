"""The eight BFCL multi-turn API suites, by the class names used in ``involved_classes``."""
from __future__ import annotations

from .base import ApiSuite, Extensions
from .file_system import GorillaFileSystem
from .math_api import MathAPI
from .message_api import MessageAPI
from .posting_api import TwitterAPI
from .ticket_api import TicketAPI
from .trading_bot import TradingBot
from .travel_booking import TravelAPI
from .vehicle_control import VehicleControlAPI

SUITES: dict[str, type[ApiSuite]] = {cls.__name__: cls for cls in (
    GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI, VehicleControlAPI)}


def suites_for(version: str) -> dict[str, type[ApiSuite]]:
    """The classes of one data release ("v3" or "v4"; see data.DataVersion)."""
    from .v4 import SUITES_V4  # the v4 classes build on the v3 ones above

    return SUITES_V4 if version == "v4" else SUITES


# involved class -> function-doc file in multi_turn_func_doc/
DOC_FILES = {"GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api", "MessageAPI": "message_api",
             "TwitterAPI": "posting_api", "TicketAPI": "ticket_api", "TradingBot": "trading_bot",
             "TravelAPI": "travel_booking", "VehicleControlAPI": "vehicle_control"}

__all__ = ["ApiSuite", "Extensions", "SUITES", "DOC_FILES", "suites_for"]
