"""The telecom tools' descriptions exactly as tau2 shows them to the model (generated from the official
OpenAI schemas; interface data, not code). ``AGENT_DOCS`` / ``USER_DOCS``: ``{tool: (description, {param:
description})}``, each in upstream's tool order. The tools themselves are declared once, by their
implementations (``tools.py``, ``user_tools.py``, ``user_services.py``; see ``../toolkit.py``)."""

AGENT_DOCS = {'get_customer_by_phone': ('Finds a customer by their primary contact or line phone number.',
                           {'phone_number': 'The phone number to search for.'}),
 'get_customer_by_id': ('Retrieves a customer directly by their unique ID.',
                        {'customer_id': 'The unique identifier of the customer.'}),
 'get_customer_by_name': ('Searches for customers by name and DOB. May return multiple matches if names are '
                          'similar,\n'
                          '\n'
                          'DOB helps disambiguate.',
                          {'full_name': 'The full name of the customer.',
                           'dob': 'Date of birth for verification, in the format YYYY-MM-DD.'}),
 'get_details_by_id': ('Retrieves the details for a given ID.\n'
                       '\n'
                       'The ID must be a valid ID for a Customer, Line, Device, Bill, or Plan.',
                       {'id': 'The ID of the object to retrieve.'}),
 'suspend_line': ('Suspends a specific line (max 6 months).\n'
                  '\n'
                  'Checks: Line status must be Active.\n'
                  'Logic: Sets line status to Suspended, records suspension_start_date.',
                  {'customer_id': 'ID of the customer who owns the line.',
                   'line_id': 'ID of the line to suspend.',
                   'reason': 'Reason for suspension.'}),
 'resume_line': ('Resumes a suspended line.\n'
                 '\n'
                 'Checks: Line status must be Suspended or Pending Activation.\n'
                 'Logic: Sets line status to Active, clears suspension_start_date.',
                 {'customer_id': 'ID of the customer who owns the line.', 'line_id': 'ID of the line to resume.'}),
 'get_bills_for_customer': ("Retrieves a list of the customer's bills, most recent first.",
                            {'customer_id': 'ID of the customer.', 'limit': 'Maximum number of bills to return.'}),
 'send_payment_request': ('Sends a payment request to the customer for a specific bill.\n'
                          '\n'
                          'Checks:\n'
                          '    - Customer exists\n'
                          '    - Bill exists and belongs to the customer\n'
                          '    - No other bills are already awaiting payment for this customer\n'
                          'Logic: Sets bill status to AWAITING_PAYMENT and notifies customer.\n'
                          'Warning: This method does not check if the bill is already PAID.\n'
                          'Always check the bill status before calling this method.',
                          {'customer_id': 'ID of the customer who owns the bill.',
                           'bill_id': 'ID of the bill to send payment request for.'}),
 'get_data_usage': ('Retrieves current billing cycle data usage for a line, including data\n'
                    '\n'
                    'refueling amount, data limit, and cycle end date.',
                    {'customer_id': 'ID of the customer who owns the line.',
                     'line_id': 'ID of the line to check usage for.'}),
 'enable_roaming': ('Enables international roaming on a line.',
                    {'customer_id': 'ID of the customer who owns the line.',
                     'line_id': 'ID of the line to enable roaming for.'}),
 'disable_roaming': ('Disables international roaming on a line.',
                     {'customer_id': 'ID of the customer who owns the line.',
                      'line_id': 'ID of the line to disable roaming for.'}),
 'transfer_to_human_agents': ("Transfer the user to a human agent, with a summary of the user's issue.\n"
                              '\n'
                              'Only transfer if\n'
                              ' -  the user explicitly asks for a human agent\n'
                              " -  given the policy and the available tools, you cannot solve the user's issue.",
                              {'summary': "A summary of the user's issue."}),
 'refuel_data': ("Refuels data for a specific line, adding to the customer's bill.\n"
                 '\n'
                 'Checks: Line status must be Active, Customer owns the line.\n'
                 "Logic: Adds data to the line and charges customer based on the plan's refueling rate.",
                 {'customer_id': 'ID of the customer who owns the line.',
                  'line_id': 'ID of the line to refuel data for.',
                  'gb_amount': 'Amount of data to add in gigabytes.'})}

USER_DOCS = {'check_status_bar': ("Shows what icons are currently visible in your phone's status bar (the area at the top of "
                      'the screen). Displays network signal strength, mobile data status (enabled, disabled, data '
                      'saver), Wi-Fi status, and battery level.',
                      {}),
 'check_network_status': ("Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane "
                          'mode status, signal strength, network type, whether mobile data is enabled, and whether '
                          'data roaming is enabled.',
                          {}),
 'check_network_mode_preference': ('Shows the current network mode preference.', {}),
 'set_network_mode_preference': ('Changes the type of cellular network your phone prefers to connect to (e.g., 5G, '
                                 'LTE/4G, 3G). Higher-speed networks (LTE/5G) provide faster data but may use more '
                                 'battery.',
                                 {}),
 'run_speed_test': ('Measures your current internet connection speed (download speed). Provides information about '
                    'connection quality and what activities it can support.',
                    {}),
 'toggle_airplane_mode': ('Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications '
                          'including cellular, Wi-Fi, and Bluetooth.\n'
                          '\n'
                          'Returns the new state of airplane_mode.',
                          {}),
 'check_sim_status': ('Checks if your SIM card is working correctly and displays its current status. Shows if the '
                      'SIM is active, missing, or locked with a PIN or PUK code.',
                      {}),
 'reseat_sim_card': ('Simulates removing and reinserting your SIM card. This can help resolve recognition issues.',
                     {}),
 'toggle_data': ("Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use "
                 'cellular data for internet access when Wi-Fi is unavailable.\n'
                 '\n'
                 'Returns the new data connection status.',
                 {}),
 'toggle_roaming': ('Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside '
                    "your carrier's coverage.\n"
                    '\n'
                    'Returns the new data roaming status.',
                    {}),
 'check_data_restriction_status': ('Checks if your phone has any data-limiting features active. Shows if Data '
                                   'Saver mode is on.',
                                   {}),
 'toggle_data_saver_mode': ('Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect '
                            'data speed.\n'
                            '\n'
                            'Returns the new data saver mode status.',
                            {}),
 'check_apn_settings': ("Checks the technical APN settings your phone uses to connect to your carrier's mobile "
                        'data network. Shows current APN name and MMSC URL for picture messaging.',
                        {}),
 'set_apn_settings': ('Sets the APN settings for the phone.', {}),
 'reset_apn_settings': ('Resets your APN settings to the default settings.', {}),
 'check_wifi_status': ("Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're "
                       'connected to (if any), and the signal strength.',
                       {}),
 'toggle_wifi': ("Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect "
                 'to wireless networks for internet access.\n'
                 '\n'
                 'Returns the new Wi-Fi status.',
                 {}),
 'check_wifi_calling_status': ('Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make '
                               'and receive calls over a Wi-Fi network instead of using the cellular network.',
                               {}),
 'toggle_wifi_calling': ('Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over '
                         'Wi-Fi instead of the cellular network, which can help in areas with weak cellular '
                         'signal.\n'
                         '\n'
                         'Returns the new Wi-Fi Calling status.',
                         {}),
 'check_vpn_status': ("Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is "
                      'active, connected, and displays any available connection details.',
                      {}),
 'connect_vpn': ('Connects to your VPN (Virtual Private Network).', {}),
 'disconnect_vpn': ('Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet '
                    'traffic through a VPN server, which might affect connection speed or access to content.',
                    {}),
 'check_installed_apps': ('Returns the name of all installed apps on the phone.', {}),
 'check_app_status': ('Checks detailed information about a specific app. Shows its permissions and background data '
                      'usage settings.',
                      {}),
 'check_app_permissions': ('Checks what permissions a specific app currently has. Shows if the app has access to '
                           'features like storage, camera, location, etc.',
                           {}),
 'grant_app_permission': ('Gives a specific permission to an app (like access to storage, camera, or location). '
                          'Required for some app functions to work properly.',
                          {'app_name': 'The name of the app to grant the permission to.',
                           'permission': 'The permission to grant, should be lowercase.'}),
 'can_send_mms': ('Checks if the default messaging app can send MMS messages.', {}),
 'reboot_device': ('Restarts your phone completely. This can help resolve many temporary software glitches by '
                   'refreshing all running services and connections.',
                   {}),
 'check_payment_request': ('Checks if the agent has sent you a payment request.', {}),
 'make_payment': ('Makes a payment for the bill that the agent has sent you.', {})}
# Argument models tau2 shows under ``$defs`` (pydantic JSON schemas of upstream's enums and APNSettings).
NETWORK_MODE_DEFS = {"NetworkModePreference": {"enum": ["4g_5g_preferred", "4g_only", "3g_only", "2g_only"],
                                               "title": "NetworkModePreference", "type": "string"}}
_NULLABLE_STRING = [{"type": "string"}, {"type": "null"}]
APN_DEFS = {
    "APNNames": {"enum": ["internet", "broken"], "title": "APNNames", "type": "string"},
    "APNSettings": {
        "additionalProperties": False,
        "description": "Represents the configuration for a single Access Point Name (APN).",
        "properties": {
            "apn_name": {"$ref": "#/$defs/APNNames", "default": "internet",
                         "description": "The name identifier for the APN connection."},
            "reset_at_reboot": {"default": False,
                                "description": "Whether the APN settings will be reset at the next reboot.",
                                "title": "Reset At Reboot", "type": "boolean"},
            "mms_apn": {"anyOf": _NULLABLE_STRING, "default": "mms",
                        "description": "Specific APN name used for MMS traffic, if different from general data.",
                        "title": "Mms Apn"},
            "mmsc_url": {"anyOf": _NULLABLE_STRING, "default": "http://mms.carrier.com/mms/wapenc",
                         "description": "The URL of the Multimedia Messaging Service Center (MMSC). Crucial for MMS.",
                         "title": "Mmsc Url"},
            "mms_proxy": {"anyOf": _NULLABLE_STRING, "default": None,
                          "description": "The proxy server address required for MMS traffic on some networks.",
                          "title": "Mms Proxy"},
            "mms_port": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None,
                         "description": "The proxy server port required for MMS traffic on some networks.",
                         "title": "Mms Port"}},
        "title": "APNSettings", "type": "object"}}
