"""The user's phone tools for Wi-Fi, Wi-Fi calling, VPN, apps, MMS and payments, the user-side environment functions
(who and where the user is) and the phone assertions used by env_assertions. Texts as upstream."""
from __future__ import annotations

from typing import Optional

from . import data_model as dm
from . import phone
from .phone import with_status_bar
from .state import TelecomState
from .user_tools import ON_OFF, USER_TOOLS

# --- Wi-Fi and Wi-Fi calling ---


@USER_TOOLS.tool("read")
def check_wifi_status(state: TelecomState):
    d = state.device
    if not d["wifi_enabled"]:
        return "Wi-Fi is turned OFF."
    if d["wifi_connected"]:
        return f"Wi-Fi is ON and connected to '{d['wifi_ssid']}'. Signal strength: {d['wifi_signal_strength']}."
    return "Wi-Fi is ON but not connected to any network."


@USER_TOOLS.tool("write")
def toggle_wifi(state: TelecomState):
    d = state.device
    if d["airplane_mode"]:
        return with_status_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.", state)
    d["wifi_enabled"] = not d["wifi_enabled"]
    if not d["wifi_enabled"]:
        d["wifi_connected"], d["wifi_ssid"], d["wifi_signal_strength"] = False, None, "none"
    return with_status_bar(f"Wi-Fi is now {ON_OFF[d['wifi_enabled']]}.", state)


@USER_TOOLS.tool("read")
def check_wifi_calling_status(state: TelecomState):
    return f"Wi-Fi Calling is currently turned {ON_OFF[bool(state.device['wifi_calling_enabled'])]}."


@USER_TOOLS.tool("write")
def toggle_wifi_calling(state: TelecomState):
    state.device["wifi_calling_enabled"] = not state.device["wifi_calling_enabled"]
    return with_status_bar(f"Wi-Fi Calling is now {ON_OFF[state.device['wifi_calling_enabled']]}.", state)


def set_wifi_calling(state: TelecomState, enabled, mms_over_wifi=None):
    if state.device["wifi_calling_enabled"] != enabled:
        state.device["wifi_calling_enabled"] = not state.device["wifi_calling_enabled"]
    text = f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."
    if mms_over_wifi is not None:
        state.device["wifi_calling_mms_over_wifi"] = mms_over_wifi
        text += f"\nMMS over Wi-Fi is now {'ON' if mms_over_wifi else 'OFF'}."
    return text


# --- VPN ---
@USER_TOOLS.tool("read")
def check_vpn_status(state: TelecomState):
    d = state.device
    if d["vpn_connected"]:
        if d["vpn_details"]:
            return f"VPN is ON and connected. Details: {phone.vpn_details_text(d['vpn_details'])}"
        return "VPN is ON and connected (no specific details available)."
    if d["vpn_enabled_setting"]:
        return "VPN is turned ON in settings, but currently not connected."
    return "VPN is turned OFF."


@USER_TOOLS.tool("write")
def connect_vpn(state: TelecomState):
    if state.device["vpn_connected"]:
        return "VPN already connected."
    state.device["vpn_connected"] = True
    state.device["vpn_details"] = dm.vpn_details(state.vpn_server_performance)
    return with_status_bar("VPN connected successfully.", state)


@USER_TOOLS.tool("write")
def disconnect_vpn(state: TelecomState):
    text = "VPN disconnected successfully." if phone.drop_vpn(state) else "No active VPN connection to disconnect."
    return with_status_bar(text, state)


def break_vpn(state: TelecomState):
    connect_vpn(state)
    state.device["vpn_details"]["server_performance"] = "poor"  # a slow VPN server: mobile data crawls
    state.vpn_server_performance = "poor"
    return "VPN connection broken."


# --- apps ---
@USER_TOOLS.tool("read")
def check_installed_apps(state: TelecomState):
    return f"The following apps are installed on the phone: {', '.join(state.device['app_statuses'])}"


def _granted(app: dict) -> list[str]:
    return [name.replace("_", " ").lower() for name, allowed in app["permissions"].items() if allowed]


@USER_TOOLS.tool("read")
def check_app_status(state: TelecomState, app_name: str):
    app = state.device["app_statuses"].get(app_name)
    if app is None:
        return f"App '{app_name}' not found on this phone."
    granted = _granted(app)
    lines = [f"Status for App: {app_name}"]
    if granted:
        lines += [" - Permissions Granted:"] + [f"   - {p}" for p in granted]
    else:
        lines.append(" - Permissions: None granted.")
    return "\n".join(lines)


@USER_TOOLS.tool("read")
def check_app_permissions(state: TelecomState, app_name: str):
    app = state.device["app_statuses"].get(app_name)
    if app is None:
        return f"App '{app_name}' not found on this phone."
    granted = _granted(app)
    if not granted:
        return f"App '{app_name}' currently has no permissions granted."
    return f"App '{app_name}' has permission for: {', '.join(granted)}."


def _set_permission(state: TelecomState, app_name, permission, value: bool) -> tuple[bool, str]:
    app = state.device["app_statuses"].get(app_name)
    permission = permission.lower()
    verb = "granted to" if value else "removed from"
    if not app:
        return False, f"App '{app_name}' not found. Cannot {'grant' if value else 'remove'} permission."
    if permission not in app["permissions"]:
        listing = f", available permissions: {list(app['permissions'])}" if value else ""
        return False, f"Permission '{permission}' not tracked for app '{app_name}'{listing}" + ("" if value else ".")
    app["permissions"][permission] = value
    return True, f"Permission '{permission}' {verb} app '{app_name}'."


@USER_TOOLS.tool("write")
def grant_app_permission(state: TelecomState, app_name: str, permission: str):
    ok, text = _set_permission(state, app_name, permission, True)
    return with_status_bar(f"{'Success. ' if ok else 'Error. '}{text}", state)


def remove_app_permission(state: TelecomState, app_name, permission):
    return _set_permission(state, app_name, permission, False)


@USER_TOOLS.tool("read")
def can_send_mms(state: TelecomState):
    if phone.can_send_mms(state):
        return "Your messaging app can send MMS messages."
    return "Your messaging app cannot send MMS messages."


# --- payments ---
@USER_TOOLS.tool("read")
def check_payment_request(state: TelecomState):
    request = state.surroundings["payment_request"]
    if request is None:
        return "No payment request has been made."
    return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."


@USER_TOOLS.tool("write")
def make_payment(state: TelecomState):
    request = state.surroundings["payment_request"]
    if request is None:
        return "You do not have a payment request."
    request["paid"] = True  # the carrier side marks the bill paid at the next sync
    return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."


# --- who and where the user is (task initialisation) ---
def set_user_info(state: TelecomState, name, phone_number):
    state.surroundings["name"], state.surroundings["phone_number"] = name, phone_number


def set_user_location(state: TelecomState, abroad):
    state.surroundings["is_abroad"] = abroad


# --- assertions (env_assertions with env_type "user") ---
def assert_airplane_mode_status(state: TelecomState, expected_status):
    return state.device["airplane_mode"] == expected_status


def assert_service_status(state: TelecomState, expected_status):
    if expected_status not in (dm.CONNECTED, dm.SEARCHING, dm.NO_SERVICE, "emergency_only"):
        raise ValueError(f"{expected_status!r} is not a valid NetworkStatus")
    return state.device["network_connection_status"] == expected_status


def assert_mobile_data_status(state: TelecomState, expected_status):
    return phone.mobile_data_working(state) == expected_status


def assert_mobile_roaming_status(state: TelecomState, expected_status):
    return state.device["roaming_enabled"] == expected_status


def assert_mobile_data_saver_mode_status(state: TelecomState, expected_status):
    return state.device["data_saver_mode"] == expected_status


def assert_internet_speed(state: TelecomState, expected_speed, expected_desc: Optional[str] = None):
    speed, description = phone.speed_test(state)
    fast_enough = (speed or 0.0) >= expected_speed
    return fast_enough if expected_desc is None else fast_enough and description.lower() == expected_desc.lower()


def assert_internet_not_excellent(state: TelecomState):
    return phone.speed_test(state)[1].lower() != "excellent"


def assert_can_send_mms(state: TelecomState, expected_status):
    return phone.can_send_mms(state) == expected_status


def assert_mobile_data_usage_exceeded(state: TelecomState, expected_status):
    return state.surroundings["mobile_data_usage_exceeded"] == expected_status
