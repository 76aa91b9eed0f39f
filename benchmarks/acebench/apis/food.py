"""FoodPlatform: a food-delivery platform with its own user logins, balances, merchants and orders."""
from __future__ import annotations

from .base import BaseApi

_EN = {
    "wifi_off": "Wi-Fi is not enabled, unable to login",
    "no_user": "User does not exist",
    "bad_password": "Incorrect password",
    "already": "{username} is already logged in",
    "login_ok": "User {username} has successfully logged in!",
    "nobody": "No users are currently logged in to the food platform",
    "not_logged_in": "User {username} is not logged in to the food platform",
    "no_merchant": "Merchant does not exist",
    "bad_quantity": "Invalid quantity {quantity} for product {product}",
    "no_product": "Product {product} does not exist in {merchant}'s menu",
    "no_money": "Insufficient balance to place the order",
    "ordered": "Food delivery order successfully placed with {merchant}. Total amount: {total} yuan",
    "unknown_merchant": "Merchant '{merchant}' does not exist",
    "no_orders": "User has no order records",
    "no_match": "No matching orders found",
}

_ZH = {
    "wifi_off": "wifi未打开，无法登录",
    "no_user": "用户不存在",
    "bad_password": "密码错误",
    "already": "{username} 已经登录",
    "login_ok": "用户{username}登陆成功！",
    "nobody": "当前没有登录food platform",
    "not_logged_in": "用户 {username} 未登录food platform",
    "no_merchant": "商家不存在",
    "bad_quantity": "无效的数量 {quantity} 对于商品 {product}",
    "no_product": "商品 {product} 不存在于 {merchant} 的菜单中",
    "no_money": "余额不足，无法下单",
    "ordered": "外卖订单成功下单给 {merchant}，总金额为 {total} 元",
    "unknown_merchant": "商家 '{merchant}' 不存在",
    "no_orders": "用户没有订单记录",
    "no_match": "没有找到匹配的订单",
}


def _fail(text: str) -> dict:
    return {"status": False, "message": text}


class FoodPlatform(BaseApi):
    _TEXT = {"en": _EN, "zh": _ZH}

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        super()._load_scenario(scenario, long_context)
        self.logged_in_users = scenario.get("logged_in_users", [])

    def login_food_platform(self, username, password):
        if self.wifi == False:  # noqa: E712 -- upstream compares with ==
            return _fail(self._say("wifi_off"))
        if username not in self.users:
            return _fail(self._say("no_user"))
        if self.users[username]["password"] != password:
            return _fail(self._say("bad_password"))
        if username in self.logged_in_users:
            return _fail(self._say("already", username=username))
        self.logged_in_users.append(username)
        return {"status": True, "message": self._say("login_ok", username=username)}

    def view_logged_in_users(self):
        if not self.logged_in_users:
            return _fail(self._say("nobody"))
        return {"status": True, "logged_in_users": self.logged_in_users}

    def check_balance(self, user_name):
        # upstream also prints a line for an unknown user; output on stdout is not part of the result
        if user_name in self.users:
            return self.users[user_name]["balance"]
        return 0.0

    def add_food_delivery_order(self, username, merchant_name, items):
        if username not in self.logged_in_users:
            return _fail(self._say("not_logged_in", username=username))
        if merchant_name not in self.merchant_list:
            return _fail(self._say("no_merchant"))
        total_price = 0.0
        order_items = []
        for item in items:
            product_name = item.get("product")
            quantity = item.get("quantity", 1)
            if not isinstance(quantity, int) or quantity <= 0:
                return _fail(self._say("bad_quantity", quantity=quantity, product=product_name))
            menu_entry = next((p for p in self.merchant_list[merchant_name]["menu"] if p["product"] == product_name),
                              None)
            if menu_entry is None:
                return _fail(self._say("no_product", product=product_name, merchant=merchant_name))
            total_price += menu_entry["price"] * quantity
            order_items.append({"product": product_name, "quantity": quantity,
                                "price_per_unit": menu_entry["price"]})
        balance = self.users[username]["balance"]
        # the zh class refuses an order that would use up the balance exactly; the en class allows it
        if total_price > balance or (self._lang == "zh" and total_price == balance):
            return _fail(self._say("no_money"))
        self.users[username]["balance"] -= total_price
        self.orders.append({"user_name": username, "merchant_name": merchant_name, "items": order_items,
                            "total_price": total_price})
        return {"status": True, "message": self._say("ordered", merchant=merchant_name, total=total_price)}

    def get_products(self, merchant_name):
        merchant = self.merchant_list.get(merchant_name)
        if merchant:
            return merchant["menu"]
        return _fail(self._say("unknown_merchant", merchant=merchant_name))

    def view_orders(self, user_name):
        mine = [order for order in self.orders if order["user_name"] == user_name]
        if not mine:
            return _fail(self._say("no_orders"))
        return {"status": True, "orders": mine}

    def search_orders(self, keyword):
        # keyword.lower() is evaluated per order, as upstream: with no orders a non-str keyword does not fail
        if self._lang == "zh":
            # upstream zh calls .lower() on the item dicts themselves (AttributeError once it gets there)
            def in_items(order):
                return any(keyword.lower() in item.lower() for item in order.get("items", []))
        else:
            def in_items(order):
                return any(keyword.lower() in item["product"].lower() for item in order.get("items", []))
        matched = [order for order in self.orders
                   if keyword.lower() in order["merchant_name"].lower() or in_items(order)]
        if not matched:
            return _fail(self._say("no_match"))
        return {"status": True, "orders": matched}
