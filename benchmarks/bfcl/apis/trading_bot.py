"""TradingBot (upstream trading_bot.py): a brokerage account, orders, watchlist and stock quotes.

Transaction timestamps are drawn from the instance's seeded generator between CURRENT_TIME and one day later;
upstream converts through the machine's local timezone, we always use UTC (the form official runs show under
TZ=UTC), so results never depend on the host.
"""
from __future__ import annotations

import random
from datetime import datetime, time, timedelta, timezone
from typing import Optional

from .base import ApiSuite, Extensions, pick

CURRENT_TIME = datetime(2024, 9, 1, 10, 30)

_STOCKS = {
    "AAPL": (227.16, 0.17, 2.552, 227.11, 227.09), "GOOG": (2840.34, 0.24, 1.123, 2835.67, 2842.15),
    "TSLA": (667.92, -0.12, 1.654, 671.15, 668.2), "MSFT": (310.23, 0.09, 3.234, 309.88, 310.11),
    "NVDA": (220.34, 0.34, 1.234, 220.45, 220.67), "ALPH": (1320.45, -0.08, 1.567, 1321.12, 1325.78),
    "OMEG": (457.23, 0.12, 2.345, 456.78, 458.12), "QUAS": (725.89, -0.03, 1.789, 726.45, 728.0),
    "NEPT": (88.34, 0.19, 0.654, 88.21, 88.67), "SYNX": (345.67, 0.11, 2.112, 345.34, 346.12),
    "ZETA": (22.09, -0.05, 0.789, 22.12, 22.34),
}
_DEFAULTS = {
    "orders": {12345: {"id": 12345, "order_type": "Buy", "symbol": "AAPL", "price": 210.65, "amount": 10,
                       "status": "Completed"},
               12446: {"id": 12446, "order_type": "Sell", "symbol": "GOOG", "price": 2840.56, "amount": 5,
                       "status": "Pending"}},
    "account_info": {"account_id": 12345, "balance": 10000.0, "binding_card": 1974202140965533},
    "authenticated": False,
    "market_status": "Closed",
    "order_counter": 12446,
    "stocks": {sym: {"price": p, "percent_change": c, "volume": v, "MA(5)": m5, "MA(20)": m20}
               for sym, (p, c, v, m5, m20) in _STOCKS.items()},
    "watch_list": ["NVDA"],
    "transaction_history": [],
}
_DEFAULT_SEED = 1053520
_SYMBOLS = {"Apple": "AAPL", "Google": "GOOG", "Tesla": "TSLA", "Microsoft": "MSFT", "Nvidia": "NVDA",
            "Zeta Corp": "ZETA", "Alpha Tech": "ALPH", "Omega Industries": "OMEG", "Quasar Ltd.": "QUAS",
            "Neptune Systems": "NEPT", "Synex Solutions": "SYNX", "Amazon": "AMZN"}


def _utc_seconds(moment: datetime) -> int:
    return int(moment.replace(tzinfo=timezone.utc).timestamp())


class TradingBot(ApiSuite):
    def _setup(self, scenario, long_context: bool, extensions: Extensions) -> None:
        for key in _DEFAULTS:
            setattr(self, key, pick(scenario, key, _DEFAULTS[key]))
        self.orders = {int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in self.orders.items()}
        self.long_context = long_context
        self._random = random.Random(scenario.get("random_seed", _DEFAULT_SEED))
        self._ext = extensions

    def _timestamp(self) -> str:
        start = _utc_seconds(CURRENT_TIME)
        end = _utc_seconds(CURRENT_TIME + timedelta(days=1))
        drawn = self._random.randint(start, end)
        return datetime.fromtimestamp(drawn, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")

    def _need_login(self, what: str):
        return None if self.authenticated else {"error": f"User not authenticated. Please log in to {what}."}

    def get_current_time(self):
        return {"current_time": CURRENT_TIME.strftime("%I:%M %p")}

    def update_market_status(self, current_time_str: str):
        now = datetime.strptime(current_time_str, "%I:%M %p").time()
        self.market_status = "Open" if time(9, 30) <= now <= time(16, 0) else "Closed"
        return {"status": self.market_status}

    def get_symbol_by_name(self, name: str):
        return {"symbol": _SYMBOLS.get(name, "Stock not found")}

    def get_stock_info(self, symbol: str):
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if self.long_context:
            quote = self.stocks[symbol].copy()
            quote["MA(5)"] = self._ext.view("MA_5_EXTENSION")
            quote["MA(20)"] = self._ext.view("MA_20_EXTENSION")
            return quote
        return self.stocks[symbol]

    def get_order_details(self, order_id: int):
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found." + "Here is the list of orders_id: "
                    + str(list(self.orders.keys()))}
        if self.long_context:
            order = self.orders[order_id].copy()
            meta = {}
            for key, template in self._ext.view("ORDER_DETAIL_EXTENSION").items():
                try:
                    meta[key] = template.format(symbol=order["symbol"])
                except KeyError as e:
                    return {"error": f"KeyError during formatting: {str(e)}"}
            order["metadata"] = meta
            return order
        return self.orders[order_id]

    def cancel_order(self, order_id: int):
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found."}
        if self.orders[order_id]["status"] == "Completed":
            return {"error": f"Can't cancel order {order_id}. Order is already completed."}
        self.orders[order_id]["status"] = "Cancelled"
        return {"order_id": order_id, "status": "Cancelled"}

    def place_order(self, order_type: str, symbol: str, price: float, amount: int):
        if err := self._need_login("place an order"):
            return err
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        price = float(price)
        order_id = self.order_counter
        self.orders[order_id] = {"id": order_id, "order_type": order_type, "symbol": symbol, "price": price,
                                 "amount": amount, "status": "Open"}
        self.order_counter += 1
        return {"order_id": order_id, "order_type": order_type, "status": "Pending", "price": price,
                "amount": amount}

    def make_transaction(self, account_id: int, xact_type: str, amount: float):
        if err := self._need_login("make a transaction"):
            return err
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if account_id != self.account_info["account_id"]:
            return {"error": f"Account with ID {account_id} not found."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if xact_type == "deposit":
            self.account_info["balance"] += amount
            self.transaction_history.append({"type": "deposit", "amount": amount, "timestamp": self._timestamp()})
            return {"status": "Deposit successful", "new_balance": self.account_info["balance"]}
        if xact_type == "withdrawal":
            if amount > self.account_info["balance"]:
                return {"error": "Insufficient funds for withdrawal."}
            self.account_info["balance"] -= amount
            self.transaction_history.append({"type": "withdrawal", "amount": amount,
                                             "timestamp": self._timestamp()})
            return {"status": "Withdrawal successful", "new_balance": self.account_info["balance"]}
        return {"error": "Invalid transaction type. Use 'deposit' or 'withdrawal'."}

    def get_account_info(self):
        return self._need_login("view account information") or self.account_info

    def trading_login(self, username: str, password: str):
        if self.authenticated:
            return {"status": "Already logged in"}
        self.authenticated = True
        return {"status": "Logged in successfully"}

    def trading_get_login_status(self):
        return {"status": bool(self.authenticated)}

    def trading_logout(self):
        if not self.authenticated:
            return {"status": "No user is currently logged in"}
        self.authenticated = False
        return {"status": "Logged out successfully"}

    def fund_account(self, amount: float):
        if err := self._need_login("fund the account"):
            return err
        if amount <= 0:
            return {"error": "Funding amount must be positive."}
        self.account_info["balance"] += amount
        self.transaction_history.append({"type": "deposit", "amount": amount, "timestamp": self._timestamp()})
        return {"status": "Account funded successfully", "new_balance": self.account_info["balance"]}

    def remove_stock_from_watchlist(self, symbol: str):
        if err := self._need_login("modify the watchlist"):
            return err
        if symbol not in self.watch_list:
            return {"error": f"Stock {symbol} not found in watchlist."}
        self.watch_list.remove(symbol)
        return {"status": f"Stock {symbol} removed from watchlist successfully."}

    def get_watchlist(self):
        if not self.authenticated:
            return ["Error: User not authenticated. Please log in to view the watchlist."]
        if self.long_context:  # a plain list (upstream), rendered with str()
            return self.watch_list + self._ext.view("WATCH_LIST_EXTENSION")
        return {"watchlist": self.watch_list}

    def get_order_history(self):
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view order history."}]
        return {"history": list(self.orders.keys())}

    def get_transaction_history(self, start_date: Optional[str] = None, end_date: Optional[str] = None):
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view transaction history."}]
        start = datetime.strptime(start_date, "%Y-%m-%d") if start_date else datetime.min
        end = datetime.strptime(end_date, "%Y-%m-%d") if end_date else datetime.max
        kept = [t for t in self.transaction_history
                if start <= datetime.strptime(t["timestamp"], "%Y-%m-%d %H:%M:%S") <= end]
        if self.long_context:
            kept.extend(self._ext.view("TRANSACTION_HISTORY_EXTENSION"))
        return {"transaction_history": kept}

    def update_stock_price(self, symbol: str, new_price: float):
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if new_price <= 0:
            return {"error": "New price must be a positive value."}
        old = self.stocks[symbol]["price"]
        self.stocks[symbol]["price"] = new_price
        self.stocks[symbol]["percent_change"] = (new_price - old) / old * 100
        return {"symbol": symbol, "old_price": old, "new_price": new_price}

    def get_available_stocks(self, sector: str):
        sectors = {"Technology": ["AAPL", "GOOG", "MSFT", "NVDA"], "Automobile": ["TSLA", "F", "GM"]}
        if self.long_context:
            sectors["Technology"].extend(self._ext.view("TECHNOLOGY_EXTENSION"))
            sectors["Automobile"].extend(self._ext.view("AUTOMOBILE_EXTENSION"))
        return {"stock_list": sectors.get(sector, [])}

    def filter_stocks_by_price(self, stocks: list, min_price: float, max_price: float):
        def price(sym):
            return self.stocks.get(sym, {}).get("price", 0)

        return {"filtered_stocks": [s for s in stocks if price(s) >= min_price and price(s) <= max_price]}

    def add_to_watchlist(self, stock: str):
        if stock not in self.watch_list and stock in self.stocks:
            self.watch_list.append(stock)
        return {"symbol": self.watch_list}

    def notify_price_change(self, stocks: list, threshold: float):
        moved = [s for s in stocks if s in self.stocks and abs(self.stocks[s]["percent_change"]) >= threshold]
        if moved:
            return {"notification": f"Stocks {', '.join(moved)} have significant price changes."}
        return {"notification": "No significant price changes in the selected stocks."}
