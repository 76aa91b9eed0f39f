"""Tools of the refills example pack: a pharmacy quotes a prescription refill, then orders it for pickup.

The order needs the quote code that only the quote's result holds (Q and four digits, from the pack's
database): the id flows from one tool's result into the next call."""

SURNAMES = ("Abbott", "Baker", "Castro", "Dalton", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jansen",
            "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Silva", "Tanaka",
            "Ueda", "Varga", "Weber", "Young", "Zielinski", "Andersen", "Bianchi", "Chen", "Duarte", "Eriksen",
            "Ferreira", "Gupta", "Horvat", "Iqbal", "Jovanovic", "Kim", "Lopez", "Mendes", "Nakamura", "Olsen",
            "Park", "Reyes", "Sato", "Torres", "Unger", "Vidal", "Wong", "Xu", "Yilmaz", "Zhou",
            "Adler", "Brandt", "Costa", "Dubois", "Engel", "Fontaine", "Greco", "Hansen", "Ivanova", "Jaramillo")
MEDICINES = ("amoxicillin", "atorvastatin", "metformin", "lisinopril", "omeprazole", "salbutamol", "sertraline",
             "levothyroxine", "ibuprofen", "cetirizine", "warfarin", "insulin")
BRANCHES = ("central", "harbour", "northgate", "riverside")


def quote_refill(db, surname: str, medicine: str) -> dict:
    """Quote a prescription refill for a customer.

    Args:
        surname: the customer's surname, as they said it
        medicine: the medicine to refill, as the customer said it
    """
    key = f"{surname}/{medicine}"
    if not db.has("quotes", key):
        raise ValueError("no prescription on file for that surname and medicine")
    quote = db.get("quotes", key)
    return {"quote": quote["code"], "surname": surname, "medicine": medicine, "price": quote["price"]}


def order_refill(db, quote: str, branch: str) -> dict:
    """Order a quoted refill for pickup at a branch.

    Args:
        quote: the quote code from quote_refill's result (Q and four digits)
        branch: the branch where the customer picks the medicine up
    """
    if branch not in BRANCHES:
        raise ValueError("branch must be one of: " + ", ".join(BRANCHES))
    if not isinstance(quote, str) or not db.has("codes", quote):
        raise ValueError("unknown quote code")
    order_id = f"R{sum(1 for _ in db.keys('orders')) + 1}"
    record = {"order_id": order_id, "quote": quote, "branch": branch}
    db.insert("orders", order_id, record)
    return record
