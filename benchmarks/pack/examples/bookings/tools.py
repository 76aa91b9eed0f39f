"""Tools of the bookings example pack: plain functions over the pack's database (first argument ``db``)."""


def book_table(db, phone: str, guests: int, hour: int) -> dict:
    """Book a table at the restaurant for this evening.

    Args:
        phone: the customer's phone number, 4 digits
        guests: the number of guests, 1 to 8
        hour: the hour of the booking, 5 to 9 (pm)
    """
    if not isinstance(phone, str) or len(phone) != 4 or not phone.isdigit():
        raise ValueError("phone must be a string of 4 digits")
    if not isinstance(guests, int) or isinstance(guests, bool) or not 1 <= guests <= 8:
        raise ValueError("guests must be an integer from 1 to 8")
    if not isinstance(hour, int) or isinstance(hour, bool) or not 5 <= hour <= 9:
        raise ValueError("hour must be an integer from 5 to 9")
    booking_id = f"B{sum(1 for _ in db.keys('bookings')) + 1}"
    record = {"booking_id": booking_id, "phone": phone, "guests": guests, "hour": hour}
    db.insert("bookings", booking_id, record)
    return record
