"""Tools of the bookings example pack: plain functions over the pack's database (first argument ``db``)."""

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def book_table(db, name: str, day: str, guests: int) -> dict:
    """Book a table at the restaurant.

    Args:
        name: the name the booking is under
        day: the day of the week, lower case (e.g. friday)
        guests: the number of guests, 1 to 8
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError("name must be a non-empty string")
    if day not in DAYS:
        raise ValueError(f"day must be one of {', '.join(DAYS)}")
    if not isinstance(guests, int) or isinstance(guests, bool) or not 1 <= guests <= 8:
        raise ValueError("guests must be an integer from 1 to 8")
    booking_id = f"B{sum(1 for _ in db.keys('bookings')) + 1}"
    record = {"booking_id": booking_id, "name": name, "day": day, "guests": guests}
    db.insert("bookings", booking_id, record)
    return record
