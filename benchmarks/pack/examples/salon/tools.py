"""Tools of the salon example pack: plain functions over the pack's database (first argument ``db``)."""

SERVICES = ("cut", "colour", "trim", "perm")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday")


def book_visit(db, name: str, service: str, day: str) -> dict:
    """Book a visit to the salon next week.

    Args:
        name: the customer's name, as they said it
        service: the service the customer wants, as they said it
        day: the day of the visit, as the customer said it (monday to saturday)
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError("name must be the customer's name")
    if service not in SERVICES:
        raise ValueError("service must be one of: " + ", ".join(SERVICES))
    if day not in DAYS:
        raise ValueError("day must be one of: " + ", ".join(DAYS))
    visit_id = f"V{sum(1 for _ in db.keys('visits')) + 1}"
    record = {"visit_id": visit_id, "name": name, "service": service, "day": day}
    db.insert("visits", visit_id, record)
    return record
