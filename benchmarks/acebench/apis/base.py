"""Shared base of the ACEBench scenario classes (phone platform and travel).

The classes mirror upstream's scenario classes: same class and method names, same parameters, same results and
result texts, same state changes, and the same Python exceptions for bad input (upstream reports ``str(e)`` to
the agent, so e.g. a missing argument must read ``MessageApi.send_message() missing 1 required ...``).

Rules that keep the agent-visible surface identical to upstream:
- every public method (no leading underscore) is callable by the agent, as upstream exposes all public methods
  of the involved instances; our own helpers are therefore private;
- class names equal upstream's (they appear in TypeError texts);
- the default state comes from the data file ``default_states.json``, not from code; each language has its own
  texts, and the few behavioural differences between the en and zh classes are keyed on ``self._lang``.
"""
from __future__ import annotations

from typing import Any


class ScenarioApi:
    """Machinery shared by all scenario classes; it has no public methods."""

    _TEXT: dict[str, dict[str, str]] = {}
    _ONLY_IN: dict[str, str] = {}  # public method -> the one language whose upstream class defines it

    @classmethod
    def _create(cls, lang: str, attrs: dict[str, Any]):
        """An instance in its constructor state (``attrs`` in upstream ``vars()`` order, already fresh copies)."""
        obj = object.__new__(cls)
        obj.__dict__.update(attrs)
        obj.__dict__["_lang"] = lang
        return obj

    @classmethod
    def _public_methods(cls, lang: str) -> list[str]:
        """Names the agent may call on this class in ``lang`` (sorted, as inspect.getmembers lists them)."""
        names = [n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))]
        return [n for n in names if cls._ONLY_IN.get(n, lang) == lang]

    def _say(self, key: str, **fields: Any) -> str:
        return self._TEXT[self._lang][key].format(**fields)

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        """Upstream applies each record's initial configuration through this hook."""


class BaseApi(ScenarioApi):
    """The phone itself: Wi-Fi and device login. The other phone classes inherit its two methods, so upstream
    runs ``turn_on_wifi``/``login_device`` on every involved phone instance."""

    _TEXT = {
        "en": {"wifi_on": "Wi-Fi has been turned on", "logged_in": "Device has been logged in"},
        "zh": {"wifi_on": "wifi已经打开", "logged_in": "设备已经登录"},
    }

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        self.wifi = scenario.get("wifi", False)
        self.logged_in = scenario.get("logged_in", True)

    def turn_on_wifi(self):
        self.wifi = True
        return {"status": True, "message": BaseApi._TEXT[self._lang]["wifi_on"]}

    def login_device(self):
        self.logged_in = True
        return {"status": True, "message": BaseApi._TEXT[self._lang]["logged_in"]}
