"""The retail tools, with tau2's semantics: same checks in the same order, same messages, same state changes
(including upstream quirks that decide DB hashes, noted where they occur). ``db`` is the episode's Overlay."""
from __future__ import annotations

import json
from typing import Optional

from .. import arithmetic
from ..domain import Record
from ..overlay import Overlay
from ..toolkit import Toolkit
from . import data_model as dm
from .tool_docs import DOCS

TOOLS = Toolkit("RetailTools", DOCS)

CANCEL_REASONS = {"no longer needed", "ordered by mistake"}
_MISSING = {"orders": "Order not found", "users": "User not found", "products": "Product not found"}


def _record(db: Overlay, table: str, key, write: bool = False) -> Record:
    """The record ``key`` of ``table`` (with ``write``: this episode's own copy, to change); upstream's
    "... not found" error when there is none."""
    record = db.get(table, key, None)  # a database record is never null
    if record is None:
        raise ValueError(_MISSING[table])
    return db.for_write(table, key) if write else record


def _payment_method(db: Overlay, user_id, payment_method_id, write: bool = False) -> Record:
    methods = _record(db, "users", user_id, write)["payment_methods"]
    if payment_method_id not in methods:
        raise ValueError("Payment method not found")
    return methods[payment_method_id]


def _count_check(item_ids, order: Record, message) -> None:
    present = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > present.count(item_id):
            raise ValueError(message(item_id))


@TOOLS.tool("generic")
def calculate(db: Overlay, expression: str):
    return arithmetic.calculate(expression)


@TOOLS.tool("write")
def cancel_pending_order(db: Overlay, order_id: str, reason: str):
    order = _record(db, "orders", order_id)
    if order["status"] != "pending":
        raise ValueError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ValueError("Invalid reason")
    order = _record(db, "orders", order_id, write=True)
    refunds = []
    for pay in order["payment_history"]:
        method_id = pay["payment_method_id"]
        refunds.append(dm.payment("refund", pay["amount"], method_id))
        method = _payment_method(db, order["user_id"], method_id, write=True)
        if method["source"] == "gift_card":  # gift cards are refunded at once
            method["balance"] = round(method["balance"] + pay["amount"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return order


def _price_difference(db: Overlay, order: Record, item_ids, new_item_ids, same_id_check: bool):
    diff = 0
    last_variant = None
    for item_id, new_item_id in zip(item_ids, new_item_ids):
        if same_id_check and item_id == new_item_id:
            raise ValueError("The new item id should be different from the old item id")
        item = next((i for i in order["items"] if i["item_id"] == item_id), None)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        variants = _record(db, "products", item["product_id"])["variants"]
        if new_item_id not in variants:
            raise ValueError("Variant not found")
        last_variant = variants[new_item_id]
        if not last_variant["available"]:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff += last_variant["price"] - item["price"]
    return diff, last_variant


@TOOLS.tool("write")
def exchange_delivered_order_items(db: Overlay, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str):
    order = _record(db, "orders", order_id)
    if order["status"] != "delivered":
        raise ValueError("Non-delivered order cannot be exchanged")
    _count_check(item_ids, order, lambda i: f"Number of {i} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match.")
    diff, _ = _price_difference(db, order, item_ids, new_item_ids, same_id_check=False)
    diff = round(diff, 2)
    method = _payment_method(db, order["user_id"], payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < diff:
        raise ValueError("Insufficient gift card balance to pay for the price difference")
    order = _record(db, "orders", order_id, write=True)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff  # assigned unvalidated upstream: an int 0 stays an int
    return order


@TOOLS.tool("read")
def find_user_id_by_name_zip(db: Overlay, first_name: str, last_name: str, zip: str):
    for user_id, user in db.items("users"):
        if (user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip):
            return user_id
    raise ValueError("User not found")


_EMAIL_INDEX: dict[int, tuple[dict, Optional[dict[str, str]]]] = {}  # id(base users) -> (base users, index)


def _email_index(db: Overlay) -> Optional[dict[str, str]]:
    """Lowercased email -> the first user id with it, in table order (what the scan below finds), built once per
    shared base table; None where the scan must run: this episode changed a user, the table is empty, or a
    record's email is not text (the scan's own error then surfaces only if it reaches that record)."""
    users = db.unchanged("users")
    if not users:
        return None
    cached = _EMAIL_INDEX.get(id(users))
    if cached is None or cached[0] is not users:
        cached = _EMAIL_INDEX[id(users)] = (users, _index_by_email(users))
    return cached[1]


def _index_by_email(users: dict) -> Optional[dict[str, str]]:
    index: dict[str, str] = {}
    for user_id, user in users.items():
        address = user.get("email") if isinstance(user, dict) else None
        if not isinstance(address, str):
            return None
        index.setdefault(address.lower(), user_id)
    return index


@TOOLS.tool("read")
def find_user_id_by_email(db: Overlay, email: str):
    index = _email_index(db)
    if index is not None:  # the same answer as the scan, without reading every user each call
        key = email.lower()
        if key in index:
            return index[key]
        raise ValueError("User not found")
    wanted = None
    for user_id, user in db.items("users"):
        wanted = email.lower() if wanted is None else wanted  # once, but only once a record is read (as upstream)
        if user["email"].lower() == wanted:
            return user_id
    raise ValueError("User not found")


@TOOLS.tool("read")
def get_order_details(db: Overlay, order_id: str):
    return _record(db, "orders", order_id)


@TOOLS.tool("read")
def get_product_details(db: Overlay, product_id: str):
    return _record(db, "products", product_id)


@TOOLS.tool("read")
def get_item_details(db: Overlay, item_id: str):
    for product in db.values("products"):
        if item_id in product["variants"]:
            return product["variants"][item_id]
    raise ValueError("Item not found")


@TOOLS.tool("read")
def get_user_details(db: Overlay, user_id: str):
    return _record(db, "users", user_id)


@TOOLS.tool("read")
def list_all_product_types(db: Overlay):
    names = {p["name"]: p["product_id"] for p in db.values("products")}
    return json.dumps(names, sort_keys=True)


@TOOLS.tool("write")
def modify_pending_order_address(db: Overlay, order_id: str, address1: str, address2: str, city: str, state: str,
                                 country: str, zip: str):
    order = _record(db, "orders", order_id)
    if "pending" not in order["status"]:
        raise ValueError("Non-pending order cannot be modified")
    new = dm.validated_address(address1, address2, city, state, country, zip)
    order = _record(db, "orders", order_id, write=True)
    order["address"] = new
    return order


@TOOLS.tool("write")
def modify_pending_order_items(db: Overlay, order_id: str, item_ids: list[str], new_item_ids: list[str],
                               payment_method_id: str):
    order = _record(db, "orders", order_id)
    if order["status"] != "pending":
        raise ValueError("Non-pending order cannot be modified")
    _count_check(item_ids, order, lambda i: f"{i} not found")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match")
    diff, variant = _price_difference(db, order, item_ids, new_item_ids, same_id_check=True)
    method = _payment_method(db, order["user_id"], payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < diff:
        raise ValueError("Insufficient gift card balance to pay for the new item")
    order = _record(db, "orders", order_id, write=True)
    order["payment_history"].append(
        dm.payment("payment" if diff > 0 else "refund", abs(diff), payment_method_id))
    if method["source"] == "gift_card":
        method = _payment_method(db, order["user_id"], payment_method_id, write=True)
        method["balance"] = round(method["balance"] - diff, 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids):
        item = next((i for i in order["items"] if i["item_id"] == item_id), None)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        item["item_id"] = new_item_id
        # Upstream quirk kept on purpose: every modified item takes the price and options of the LAST
        # new variant checked above (the loop variable leaks), and shares that options dict.
        item["price"] = variant["price"]
        item["options"] = variant["options"]
    order["status"] = "pending (item modified)"
    return order


@TOOLS.tool("write")
def modify_pending_order_payment(db: Overlay, order_id: str, payment_method_id: str):
    order = _record(db, "orders", order_id)
    if "pending" not in order["status"]:
        raise ValueError("Non-pending order cannot be modified")
    method = _payment_method(db, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ValueError("There should be exactly one payment for a pending order")
    old_id = history[0]["payment_method_id"]
    if old_id == payment_method_id:
        raise ValueError("The new payment method should be different from the current one")
    amount = history[0]["amount"]
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise ValueError("Insufficient gift card balance to pay for the order")
    order = _record(db, "orders", order_id, write=True)
    order["payment_history"].extend([dm.payment("payment", amount, payment_method_id),
                                     dm.payment("refund", amount, old_id)])
    if method["source"] == "gift_card":
        method = _payment_method(db, order["user_id"], payment_method_id, write=True)
        method["balance"] = round(method["balance"] - amount, 2)
    old = _payment_method(db, order["user_id"], old_id)
    if old["source"] == "gift_card":
        old = _payment_method(db, order["user_id"], old_id, write=True)
        old["balance"] = round(old["balance"] + amount, 2)
    return order


@TOOLS.tool("write")
def modify_user_address(db: Overlay, user_id: str, address1: str, address2: str, city: str, state: str, country: str,
                        zip: str):
    _record(db, "users", user_id)
    new = dm.validated_address(address1, address2, city, state, country, zip)
    user = _record(db, "users", user_id, write=True)
    user["address"] = new
    return user


@TOOLS.tool("write")
def return_delivered_order_items(db: Overlay, order_id: str, item_ids: list[str], payment_method_id: str):
    order = _record(db, "orders", order_id)
    if order["status"] != "delivered":
        raise ValueError("Non-delivered order cannot be returned")
    _record(db, "users", order["user_id"])
    method = _payment_method(db, order["user_id"], payment_method_id)
    if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ValueError("Payment method should be the original payment method")
    _count_check(item_ids, order, lambda i: "Some item not found")
    order = _record(db, "orders", order_id, write=True)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return order


@TOOLS.tool("generic")
def transfer_to_human_agents(db: Overlay, summary: str):
    return "Transfer successful"
