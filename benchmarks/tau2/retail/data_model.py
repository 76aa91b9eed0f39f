"""Retail records as tau2's pydantic models dump them: fields in model order, floats as floats, optional
order fields present as null. The database is normalised into this form once, at load time, so tool results
serialise byte-identically to upstream and DB comparison is type-exact like upstream's hash."""
from __future__ import annotations

from ..domain import Record
from ..validation import check_fields

ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                  "exchange_price_difference", "return_items", "return_payment_method_id")


def address(d: dict) -> Record:
    return Record(address1=d["address1"], address2=d["address2"], city=d["city"], country=d["country"],
                  state=d["state"], zip=d["zip"])


def product(d: dict) -> Record:
    return Record(name=d["name"], product_id=d["product_id"],
                  variants={k: Record(item_id=v["item_id"], options=dict(v["options"]), available=v["available"],
                                      price=float(v["price"]))
                            for k, v in d["variants"].items()})


def payment_method(d: dict) -> Record:
    source = d["source"]
    if source == "credit_card":
        return Record(source=source, id=d["id"], brand=d["brand"], last_four=d["last_four"])
    if source == "gift_card":
        return Record(source=source, id=d["id"], balance=float(d["balance"]))
    return Record(source=source, id=d["id"])


def user(d: dict) -> Record:
    return Record(user_id=d["user_id"], name=Record(first_name=d["name"]["first_name"],
                                                    last_name=d["name"]["last_name"]),
                  address=address(d["address"]), email=d["email"],
                  payment_methods={k: payment_method(v) for k, v in d["payment_methods"].items()},
                  orders=list(d["orders"]))


def payment(transaction_type: str, amount: float, payment_method_id: str) -> Record:
    return Record(transaction_type=transaction_type, amount=float(amount), payment_method_id=payment_method_id)


def order(d: dict) -> Record:
    rec = Record(order_id=d["order_id"], user_id=d["user_id"], address=address(d["address"]),
                 items=[Record(name=i["name"], product_id=i["product_id"], item_id=i["item_id"],
                               price=float(i["price"]), options=dict(i["options"])) for i in d["items"]],
                 status=d["status"],
                 fulfillments=[Record(tracking_id=list(f["tracking_id"]), item_ids=list(f["item_ids"]))
                               for f in d["fulfillments"]],
                 payment_history=[payment(p["transaction_type"], p["amount"], p["payment_method_id"])
                                  for p in d["payment_history"]])
    for key in ORDER_OPTIONAL:
        value = d.get(key)
        if key == "exchange_price_difference" and value is not None:
            value = float(value)
        rec[key] = value
    return rec


# db.json's tables (each {id: record}) and how one record of each is normalised.
TABLES = {"products": product, "users": user, "orders": order}


def validated_address(address1, address2, city, state, country, zip) -> Record:
    """``UserAddress(...)`` built from agent arguments: pydantic rejects non-strings with its own message."""
    check_fields("UserAddress", [("address1", address1, "string"), ("address2", address2, "string"),
                                 ("city", city, "string"), ("country", country, "string"),
                                 ("state", state, "string"), ("zip", zip, "string")])
    return Record(address1=address1, address2=address2, city=city, country=country, state=state, zip=zip)
