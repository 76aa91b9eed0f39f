"""The ACEBench scenario classes, by the class names that records list in ``involved_classes``."""
from .base import BaseApi, ScenarioApi
from .food import FoodPlatform
from .message import MessageApi
from .reminder import ReminderApi
from .travel import Travel

SCENARIO_CLASSES: dict[str, type[ScenarioApi]] = {
    "BaseApi": BaseApi,
    "MessageApi": MessageApi,
    "ReminderApi": ReminderApi,
    "FoodPlatform": FoodPlatform,
    "Travel": Travel,
}

__all__ = ["SCENARIO_CLASSES", "ScenarioApi", "BaseApi", "MessageApi", "ReminderApi", "FoodPlatform", "Travel"]
