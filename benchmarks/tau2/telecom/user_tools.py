"""The user's phone tools (tau2 ``TelecomUserTools``), the phone-side environment functions that break a phone
at task start, and the assertions that score it. Texts and state changes as upstream; physics in ``phone.py``.

One deliberate difference: upstream connects every VPN to one class-level details object, and ``break_vpn``
mutates that shared object, so after any break_vpn task every later VPN in the same process is "poor". mua
keeps that degradation within the episode only (what a fresh process does); see environment.py.
"""
from __future__ import annotations

from typing import Annotated, Any

from ..toolkit import Schema, Toolkit
from . import apn as apn_model
from . import data_model as dm
from . import phone
from .phone import with_status_bar
from .state import TelecomState
from .tool_docs import APN_DEFS, NETWORK_MODE_DEFS, USER_DOCS

# the user's tools, here and in user_services.py (tool_docs gives upstream's order)
USER_TOOLS = Toolkit("TelecomUserTools", USER_DOCS)
# the two arguments that are an enum or a model upstream, in the schema pydantic writes for them
NetworkModeArg = Annotated[Any, Schema({"anyOf": [{"$ref": "#/$defs/NetworkModePreference"}, {"type": "string"}],
                                        "title": "Mode"}, NETWORK_MODE_DEFS)]
ApnSettingsArg = Annotated[Any, Schema({"anyOf": [{"$ref": "#/$defs/APNSettings"},
                                                  {"additionalProperties": True, "type": "object"}],
                                        "title": "Apn Settings"}, APN_DEFS)]

ON_OFF = {True: "ON", False: "OFF"}
SIM_TEXT = {dm.SIM_ACTIVE: "Your SIM card is active and working.",
            dm.SIM_MISSING: "No SIM card detected in the phone.",
            dm.SIM_LOCKED_PIN: "The SIM card is locked with a PIN code.",
            dm.SIM_LOCKED_PUK: "The SIM card is locked with a PUK code."}
SPEED_ADVICE = {"Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
                "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
                "Fair": "Connection is okay for web browsing and some standard definition streaming.",
                "Good": "Connection is good for most activities, including HD streaming.",
                "Excellent": "Connection is very fast."}


def _toggle(state: TelecomState, key: str, search: bool = True) -> bool:
    state.device[key] = not state.device[key]
    if search:
        phone.network_search(state)
    return state.device[key]


# --- status and network ---
@USER_TOOLS.tool("read")
def check_status_bar(state: TelecomState):
    return f"Status Bar: {phone.status_bar(state)}"


@USER_TOOLS.tool("read")
def check_network_status(state: TelecomState):
    d = state.device
    lines = [f"Airplane Mode: {ON_OFF[bool(d['airplane_mode'])]}",
             f"SIM Card Status: {phone.sim_status(state)}",
             f"Cellular Connection: {d['network_connection_status']}",
             f"Cellular Signal: {d['network_signal_strength']}",
             f"Cellular Network Type: {d['network_technology_connected']}",
             f"Mobile Data Enabled: {'Yes' if d['data_enabled'] else 'No'}",
             f"Data Roaming Enabled: {'Yes' if d['roaming_enabled'] else 'No'}",
             f"Wi-Fi Radio: {ON_OFF[bool(d['wifi_enabled'])]}",
             f"Wi-Fi Connected: {'Yes' if d['wifi_connected'] else 'No'}"]
    if d["wifi_connected"]:
        lines.append(f"Connected Wi-Fi Network: {d['wifi_ssid']}")
    return "\n".join(lines)


@USER_TOOLS.tool("read")
def check_network_mode_preference(state: TelecomState):
    return f"Network Mode Preference: {phone.enum_value(state.device['network_mode_preference'])}"


@USER_TOOLS.tool("write")
def set_network_mode_preference(state: TelecomState, mode: NetworkModeArg):
    failed = (f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: "
              f"{', '.join(dm.NETWORK_MODES)}")
    if isinstance(mode, str) and mode not in dm.NETWORK_MODES:
        return with_status_bar(failed, state)
    # A non-string is stored as given (upstream assigns without validation) and the network re-searched; then
    # None reads as "invalid" and any other value fails on its `.value`.
    state.device["network_mode_preference"] = mode
    phone.network_search(state)
    if mode is None:
        return with_status_bar(failed, state)
    return with_status_bar(f"Preferred Network Mode set to: {phone.enum_value(mode)}", state)


@USER_TOOLS.tool("read")
def run_speed_test(state: TelecomState):
    speed, description = phone.speed_test(state)
    if speed is None:
        return f"Speed test failed: {description or 'Could not determine speed'}."
    return f"Speed Test Result: {speed:.2f} Mbps ({description}). {SPEED_ADVICE.get(description, '')}"


# --- airplane mode ---
def _toggle_airplane_mode(state: TelecomState) -> bool:
    d = state.device
    was_on = d["airplane_mode"]
    d["airplane_mode"] = not was_on
    if was_on:
        d["network_connection_status"] = dm.SEARCHING
    if not was_on or d["wifi_enabled"]:  # turning on always drops Wi-Fi; turning off only if the radio is on
        d["wifi_connected"], d["wifi_ssid"], d["wifi_signal_strength"] = False, None, "none"
    if not was_on and d["vpn_connected"]:
        phone.drop_vpn(state)
    phone.network_search(state)
    return d["airplane_mode"]


@USER_TOOLS.tool("write")
def toggle_airplane_mode(state: TelecomState):
    return with_status_bar(f"Airplane Mode is now {ON_OFF[_toggle_airplane_mode(state)]}.", state)


def turn_airplane_mode_on(state: TelecomState):
    if not _toggle_airplane_mode(state):
        _toggle_airplane_mode(state)
    return "Airplane Mode is now ON."


def turn_airplane_mode_off(state: TelecomState):
    if _toggle_airplane_mode(state):
        _toggle_airplane_mode(state)
    return "Airplane Mode is now OFF."


# --- SIM ---
@USER_TOOLS.tool("read")
def check_sim_status(state: TelecomState):
    status = phone.sim_status(state)
    return SIM_TEXT.get(status, f"Unknown SIM status: {status}")


@USER_TOOLS.tool("write")
def reseat_sim_card(state: TelecomState):
    state.device["sim_card_missing"] = False
    phone.network_search(state)
    return with_status_bar("SIM card re-seated successfully.", state)


def unseat_sim_card(state: TelecomState):
    state.device["sim_card_missing"] = True
    phone.network_search(state)
    return "SIM card un-seated successfully."


def lock_sim_card(state: TelecomState, mode):
    if mode in ("pin", "puk"):
        state.device["sim_card_status"] = dm.SIM_LOCKED_PIN if mode == "pin" else dm.SIM_LOCKED_PUK
    phone.network_search(state)
    return f"SIM card locked successfully in {mode} mode."


# --- mobile data, roaming, data saver ---
@USER_TOOLS.tool("write")
def toggle_data(state: TelecomState):
    return with_status_bar(f"Mobile Data is now {ON_OFF[_toggle(state, 'data_enabled')]}.", state)


def turn_data_on(state: TelecomState):
    state.device["data_enabled"] = True  # no network search, as upstream
    return "Data connection restored."


def turn_data_off(state: TelecomState):
    if _toggle(state, "data_enabled"):
        _toggle(state, "data_enabled")
    return "Data connection broken."


@USER_TOOLS.tool("write")
def toggle_roaming(state: TelecomState):
    return with_status_bar(f"Data Roaming is now {ON_OFF[_toggle(state, 'roaming_enabled')]}.", state)


def turn_roaming_on(state: TelecomState):
    if not _toggle(state, "roaming_enabled"):
        _toggle(state, "roaming_enabled")
    return "Data Roaming is now ON."


def turn_roaming_off(state: TelecomState):
    if _toggle(state, "roaming_enabled"):
        _toggle(state, "roaming_enabled")
    return "Data Roaming is now OFF."


@USER_TOOLS.tool("read")
def check_data_restriction_status(state: TelecomState):
    return "Data Saver mode is ON (limits data usage)." if state.device["data_saver_mode"] else \
        "Data Saver mode is OFF."


@USER_TOOLS.tool("write")
def toggle_data_saver_mode(state: TelecomState):
    new = _toggle(state, "data_saver_mode", search=False)
    return with_status_bar(f"Data Saver Mode is now {ON_OFF[new]}.", state)


def turn_data_saver_mode_on(state: TelecomState):
    if not _toggle(state, "data_saver_mode", search=False):
        _toggle(state, "data_saver_mode", search=False)
    return "Data Saver Mode is now ON."


def turn_data_saver_mode_off(state: TelecomState):
    if _toggle(state, "data_saver_mode", search=False):
        _toggle(state, "data_saver_mode", search=False)
    return "Data Saver Mode is now OFF."


# --- APN ---
@USER_TOOLS.tool("read")
def check_apn_settings(state: TelecomState):
    settings = phone.apn_settings(state, "model_copy")
    name, url = settings["apn_name"], settings["mmsc_url"]
    return (f"Current APN Name: {name or 'Not Set'}\nMMSC URL (for picture messages): {url or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)")


@USER_TOOLS.tool("write")
def set_apn_settings(state: TelecomState, apn_settings: ApnSettingsArg):
    if isinstance(apn_settings, dict):
        apn_settings = apn_model.validate(apn_settings)
    state.device["active_apn_settings"] = apn_settings  # a non-object is stored raw, as upstream
    text = f"APN settings set to: {phone.apn(state, 'apn_name')}"
    phone.network_search(state)
    return with_status_bar(text, state)


@USER_TOOLS.tool("write")
def reset_apn_settings(state: TelecomState):
    phone.apn_settings(state, "reset_at_reboot")["reset_at_reboot"] = True  # applied at the next reboot
    phone.network_search(state)
    return with_status_bar("APN settings will reset at reboot.", state)


def break_apn_settings(state: TelecomState):
    state.device["active_apn_settings"]["apn_name"] = "broken"
    phone.network_search(state)
    return "APN settings broken. Please call reset_apn_settings() to fix."


def break_apn_mms_setting(state: TelecomState):
    state.device["active_apn_settings"]["mmsc_url"] = None
    return "APN MMS setting broken. Please call reset_apn_settings() to fix."


@USER_TOOLS.tool("write")
def reboot_device(state: TelecomState):
    lines = []
    if phone.apn(state, "reset_at_reboot"):
        lines.append("Resetting APN settings...")
        state.device["active_apn_settings"] = dm.apn_settings()
    lines.append("Restarting network services...")
    state.device["network_connection_status"] = dm.SEARCHING
    phone.network_search(state)
    return with_status_bar("\n".join(lines), state)
