"""The simulated phone's physics (tau2 ``TelecomUserTools`` internals): network search, what the status bar shows,
whether mobile data works, the speed test and MMS. The user tools in ``user_tools.py`` are thin wrappers.

Values are the strings tau2's enums hold. Where upstream reads ``.value`` of a field that a bad tool call set to
a raw non-enum value, the same AttributeError text is raised (see :func:`enum_value`).
"""
from __future__ import annotations

from typing import Any, Optional

from . import data_model as dm
from .state import TelecomState

SIGNAL_ICONS = {"none": "\U0001f4f5 No Signal", "poor": "\U0001f4f6\u00b9 Poor", "fair": "\U0001f4f6\u00b2 Fair",
                "good": "\U0001f4f6\u00b3 Good", "excellent": "\U0001f4f6\u2074 Excellent"}
# Preferred mode -> technology the phone camps on (4g_5g_preferred falls back to 4G without 5G signal).
MODE_TECHNOLOGY = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}
SPEED_RANGE_MBPS = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
SIGNAL_FACTOR = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
PERFORMANCE_NAMES = {"unknown": "UNKNOWN", "poor": "POOR", "fair": "FAIR", "good": "GOOD", "excellent": "EXCELLENT"}


def enum_value(value: Any) -> str:
    """``field.value`` as upstream reads it: enum fields hold strings here; anything else has no ``.value``."""
    if isinstance(value, str):
        return value
    raise AttributeError(f"'{type(value).__name__}' object has no attribute 'value'")


def apn_settings(state: TelecomState, accessed: str) -> dict:
    """The active APN settings. ``set_apn_settings`` with a non-object stores the raw value, after which
    upstream fails on every APN access with an AttributeError naming the attribute it ``accessed``."""
    settings = state.device["active_apn_settings"]
    if not isinstance(settings, dict):
        raise AttributeError(f"'{type(settings).__name__}' object has no attribute '{accessed}'")
    return settings


def apn(state: TelecomState, attribute: str) -> Any:
    return apn_settings(state, attribute)[attribute]


def sim_status(state: TelecomState) -> str:
    device = state.device
    return dm.SIM_MISSING if device["sim_card_missing"] else device["sim_card_status"]


def _no_service(device: dict) -> None:
    device["network_connection_status"] = dm.NO_SERVICE
    device["network_technology_connected"] = "none"
    device["network_signal_strength"] = "none"


def network_search(state: TelecomState) -> None:
    """Re-evaluate the cellular connection from SIM, preferred mode, airplane mode, APN and line status."""
    device, signals = state.device, state.surroundings["signal_strength"]
    if sim_status(state) == dm.SIM_ACTIVE:
        device["network_connection_status"] = dm.CONNECTED
        mode = device["network_mode_preference"]
        if mode == "4g_5g_preferred" and signals.get("5G", "none") != "none":
            technology = "5G"
        else:  # 4g_5g_preferred without 5G, 4g_only, and any unknown value fall back to 4G
            technology = MODE_TECHNOLOGY.get(mode, "4G") if isinstance(mode, str) else "4G"
        device["network_technology_connected"] = technology
        device["network_signal_strength"] = signals.get(technology, "none")
    else:
        _no_service(device)
    # Three separate checks, as upstream: the APN is read even in airplane mode.
    if device["airplane_mode"]:
        _no_service(device)
    if apn(state, "apn_name") == "broken":
        _no_service(device)
    if not state.surroundings["line_active"]:
        _no_service(device)


def status_bar(state: TelecomState) -> str:
    device = state.device
    shown = []
    if device["airplane_mode"]:
        shown.append("\u2708\ufe0f Airplane Mode")
    else:
        shown.append(SIGNAL_ICONS.get(device["network_signal_strength"], SIGNAL_ICONS["none"]))
        technology = device["network_technology_connected"]
        if technology != "none":
            shown.append(enum_value(technology))
        if device["data_enabled"] and technology != "none":
            shown.append("\U0001f4f1 Data Enabled")
            if device["data_saver_mode"]:
                shown.append("\U0001f53d Data Saver")
        else:
            shown.append("\U0001f4f5 Data Disabled")
    if device["wifi_enabled"] and device["wifi_connected"]:
        ssid = device["wifi_ssid"]
        shown.append(f"\U0001f4e1 Connected to {ssid}" if ssid else "\U0001f4e1 Enabled")
    if device["vpn_connected"]:
        shown.append("\U0001f512 VPN Connected")
    shown.append(f"\U0001f50b {device['battery_level']}%")
    return " | ".join(shown)


def with_status_bar(text: str, state: TelecomState) -> str:
    return f"{text}\nStatus Bar: {status_bar(state)}"


def mobile_data_working(state: TelecomState) -> bool:
    device, around = state.device, state.surroundings
    if device["airplane_mode"] or device["network_signal_strength"] == "none":
        return False
    if device["network_connection_status"] == dm.NO_SERVICE:
        return False
    if around["is_abroad"] and (not device["roaming_enabled"] or not around["roaming_allowed"]):
        return False
    return bool(device["data_enabled"]) and not around["mobile_data_usage_exceeded"]


def speed_test(state: TelecomState) -> tuple[Optional[float], str]:
    """(Mbps, description): the midpoint of the technology's range scaled by signal, VPN and data saver."""
    if not mobile_data_working(state):
        return None, "No Connection"
    device = state.device
    vpn = device["vpn_details"]
    slow_vpn = device["vpn_connected"] and vpn and vpn["server_performance"] == "poor"
    factor = 0.1 if slow_vpn else 1.0
    if device["data_saver_mode"]:
        factor *= 0.2
    low, high = SPEED_RANGE_MBPS.get(device["network_technology_connected"], (0.0, 0.0))
    signal = SIGNAL_FACTOR.get(device["network_signal_strength"], 0.0)
    speed = round((low + high) / 2.0 * signal * factor, 2)  # same operation order as upstream: same float
    for limit, label in ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good")):
        if speed < limit:
            return speed, label
    return speed, "Excellent"


def can_send_mms(state: TelecomState) -> bool:
    device = state.device
    if not mobile_data_working(state) or device["network_technology_connected"] == "2G":
        return False
    if device["wifi_calling_enabled"] and device["wifi_calling_mms_over_wifi"]:
        return False  # the carrier does not support MMS over Wi-Fi
    if apn(state, "mmsc_url") is None:
        return False
    messaging = device["app_statuses"].get("messaging")
    return bool(messaging) and messaging["permissions"]["storage"] and messaging["permissions"]["sms"]


def drop_vpn(state: TelecomState) -> bool:
    """Disconnect the VPN; False when none was connected."""
    if not state.device["vpn_connected"]:
        return False
    state.device["vpn_connected"], state.device["vpn_details"] = False, None
    return True


def vpn_details_text(details: dict) -> str:
    """``str(model_dump())`` of the VPN details: a Python dict repr with the enum member's repr."""
    performance = details["server_performance"]
    member = f"<PerformanceLevel.{PERFORMANCE_NAMES.get(performance, performance)}: {performance!r}>"
    return (f"{{'server_address': {details['server_address']!r}, 'protocol': {details['protocol']!r}, "
            f"'server_performance': {member}}}")
