"""Tools of the appointments example pack: a clinic looks a patient's appointments up and moves one of them.

"I need to move my appointment" is ambiguous for a patient who has two: only asking which one resolves it."""

SURNAMES = ("Abbott", "Baker", "Castro", "Dalton", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jansen",
            "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Silva", "Tanaka",
            "Ueda", "Varga", "Weber", "Young", "Zielinski", "Andersen", "Bianchi", "Chen", "Duarte", "Eriksen",
            "Ferreira", "Gupta", "Horvat", "Iqbal", "Jovanovic", "Kim", "Lopez", "Mendes", "Nakamura", "Olsen",
            "Park", "Reyes", "Sato", "Torres", "Unger", "Vidal", "Wong", "Xu", "Yilmaz", "Zhou",
            "Adler", "Brandt", "Costa", "Dubois", "Engel", "Fontaine", "Greco", "Hansen", "Ivanova", "Jaramillo")
SERVICES = ("dentist", "physio", "optician", "nurse")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")


def find_appointments(db, surname: str) -> list:
    """List a patient's appointments.

    Args:
        surname: the patient's surname, as they said it
    """
    found = [{"appointment_id": key, "service": a["service"], "day": a["day"]}
             for key, a in db.items("appointments") if a["surname"] == surname]
    if not found:
        raise ValueError("no appointments for that surname")
    return found


def move_appointment(db, appointment_id: str, day: str) -> dict:
    """Move an appointment to another day of next week.

    Args:
        appointment_id: the appointment's id from find_appointments' result
        day: the new day, as the patient said it (monday to friday)
    """
    if day not in DAYS:
        raise ValueError("day must be one of: " + ", ".join(DAYS))
    if not isinstance(appointment_id, str) or not db.has("appointments", appointment_id):
        raise ValueError("unknown appointment id")
    record = db.for_write("appointments", appointment_id)
    record["day"] = day
    return {"appointment_id": appointment_id, "service": record["service"], "day": day}
