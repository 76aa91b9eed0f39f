"""Tools of the bookings example pack: plain functions over the pack's database (first argument ``db``)."""

# The restaurant's regular customers and where they can sit (generate.py draws the tasks from these)
NAMES = ("Anna", "Ben", "Clara", "David", "Emma", "Felix", "Grace", "Hugo", "Iris", "Jack", "Lena", "Mateo",
         "Nora", "Oscar", "Paula", "Ruben", "Sofia", "Tom", "Vera", "Yusuf", "Zoe", "Kofi", "Mei", "Priya", "Omar",
         "Elena", "Lucas", "Hana", "Ivan", "Julia", "Kenji", "Laura", "Marco", "Nadia", "Pablo", "Rosa", "Samir",
         "Tara", "Viktor", "Wendy", "Aaron", "Bianca", "Carlos", "Dana", "Eric", "Fatima", "Gustav", "Helen",
         "Isaac", "Jana", "Karl", "Lily", "Max", "Nina", "Otto", "Petra", "Quinn", "Rita", "Simon", "Tina", "Umar",
         "Vivian", "Walter", "Xenia", "Yara", "Zane", "Alma", "Boris", "Chloe", "Dmitri", "Edith", "Frank",
         "Gloria", "Hassan", "Ines", "Jonas", "Kira", "Leon", "Maya", "Nils", "Olga", "Pedro", "Rahul", "Sara",
         "Theo", "Una", "Vito", "Willa", "Axel", "Bruno", "Cora", "Dario", "Elsa", "Fiona", "Gino", "Hilda",
         "Ilse", "Jorge", "Kai", "Luca", "Mira", "Noah", "Odile", "Paolo", "Rina", "Sven", "Tomas", "Ugo", "Vlad",
         "Wanda", "Yoko", "Amir", "Bea", "Cyril", "Dora", "Emil", "Flora", "Gabe", "Heidi", "Igor", "Joy", "Kurt",
         "Lars", "Mona", "Ned", "Orla", "Piet", "Rhea", "Saul", "Teo", "Uma", "Ada", "Basil", "Celia", "Dean",
         "Enzo", "Faye", "Glen", "Hugh", "Ivy")
SEATS = ("window", "terrace", "garden", "bar", "booth")
HOURS = (5, 6, 7, 8, 9)  # pm


def book_table(db, name: str, seat: str, hour: int) -> dict:
    """Book a table at the restaurant for this evening.

    Args:
        name: the customer's name, as they said it
        seat: where the customer wants to sit, as they said it
        hour: the hour of the booking in the evening (pm)
    """
    if name not in NAMES:
        raise ValueError("no regular customer has that name")
    if seat not in SEATS:
        raise ValueError("seat must be one of: " + ", ".join(SEATS))
    if not isinstance(hour, int) or isinstance(hour, bool) or hour not in HOURS:
        raise ValueError("hour must be an integer from 5 to 9")
    booking_id = f"B{sum(1 for _ in db.keys('bookings')) + 1}"
    record = {"booking_id": booking_id, "name": name, "seat": seat, "hour": hour}
    db.insert("bookings", booking_id, record)
    return record
