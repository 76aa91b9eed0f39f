"""The airline tools' descriptions exactly as tau2 shows them to the model (generated from the official
OpenAI schemas; interface data, not code). ``DOCS[tool] = (description, {param: description})`` in upstream's tool
order; the tools themselves are declared once, by their implementations in ``tools.py`` (see ``../toolkit.py``)."""

DOCS = {'book_reservation': ('Book a reservation.',
                      {'user_id': "The ID of the user to book the reservation such as 'sara_doe_496'`.",
                       'origin': "The IATA code for the origin city such as 'SFO'.",
                       'destination': "The IATA code for the destination city such as 'JFK'.",
                       'flight_type': "The type of flight such as 'one_way' or 'round_trip'.",
                       'cabin': "The cabin class such as 'basic_economy', 'economy', or 'business'.",
                       'flights': 'An array of objects containing details about each piece of flight.',
                       'passengers': 'An array of objects containing details about each passenger.',
                       'payment_methods': 'An array of objects containing details about each payment method.',
                       'total_baggages': 'The total number of baggage items to book the reservation.',
                       'nonfree_baggages': 'The number of non-free baggage items to book the reservation.',
                       'insurance': 'Whether the reservation has insurance.'}),
 'calculate': ('Calculate the result of a mathematical expression.',
               {'expression': "The mathematical expression to calculate, such as '2 + 2'. The expression can "
                              'contain numbers, operators (+, -, *, /), parentheses, and spaces.'}),
 'cancel_reservation': ('Cancel the whole reservation.',
                        {'reservation_id': "The reservation ID, such as 'ZFA04Y'."}),
 'get_reservation_details': ('Get the details of a reservation.',
                             {'reservation_id': "The reservation ID, such as '8JX2WO'."}),
 'get_user_details': ('Get the details of a user, including their reservations.',
                      {'user_id': "The user ID, such as 'sara_doe_496'."}),
 'list_all_airports': ('Returns a list of all available airports.', {}),
 'search_direct_flight': ('Search for direct flights between two cities on a specific date.',
                          {'origin': "The origin city airport in three letters, such as 'JFK'.",
                           'destination': "The destination city airport in three letters, such as 'LAX'.",
                           'date': "The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'."}),
 'search_onestop_flight': ('Search for one-stop flights between two cities on a specific date.',
                           {'origin': "The origin city airport in three letters, such as 'JFK'.",
                            'destination': "The destination city airport in three letters, such as 'LAX'.",
                            'date': "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'."}),
 'send_certificate': ('Send a certificate to a user. Be careful!',
                      {'user_id': "The ID of the user to book the reservation, such as 'sara_doe_496'.",
                       'amount': 'The amount of the certificate to send.'}),
 'transfer_to_human_agents': ("Transfer the user to a human agent, with a summary of the user's issue.\n"
                              '\n'
                              'Only transfer if\n'
                              ' -  the user explicitly asks for a human agent\n'
                              " -  given the policy and the available tools, you cannot solve the user's issue.",
                              {'summary': "A summary of the user's issue."}),
 'update_reservation_baggages': ('Update the baggage information of a reservation.',
                                 {'reservation_id': "The reservation ID, such as 'ZFA04Y'",
                                  'total_baggages': 'The updated total number of baggage items included in the '
                                                    'reservation.',
                                  'nonfree_baggages': 'The updated number of non-free baggage items included in '
                                                      'the reservation.',
                                  'payment_id': 'The payment id stored in user profile, such as '
                                                "'credit_card_7815826', 'gift_card_7815826', "
                                                "'certificate_7815826'."}),
 'update_reservation_flights': ('Update the flight information of a reservation.',
                                {'reservation_id': "The reservation ID, such as 'ZFA04Y'.",
                                 'cabin': 'The cabin class of the reservation',
                                 'flights': 'An array of objects containing details about each piece of flight in '
                                            'the ENTIRE new reservation. Even if the a flight segment is not '
                                            'changed, it should still be included in the array.',
                                 'payment_id': 'The payment id stored in user profile, such as '
                                               "'credit_card_7815826', 'gift_card_7815826', "
                                               "'certificate_7815826'."}),
 'update_reservation_passengers': ('Update the passenger information of a reservation.',
                                   {'reservation_id': "The reservation ID, such as 'ZFA04Y'.",
                                    'passengers': 'An array of objects containing details about each passenger.'}),
 'get_flight_status': ('Get the status of a flight.',
                       {'flight_number': 'The flight number.', 'date': 'The date of the flight.'})}

# Field descriptions of the argument models that tau2 exposes under $defs.
MODEL_DOCS = {'FlightInfo': {'flight_number': "Flight number, such as 'HAT001'.",
                'date': "The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'."},
 'Passenger': {'first_name': "Passenger's first name",
               'last_name': "Passenger's last name",
               'dob': 'Date of birth in YYYY-MM-DD format'},
 'Payment': {'payment_id': 'Unique identifier for the payment', 'amount': 'Payment amount in dollars'}}
