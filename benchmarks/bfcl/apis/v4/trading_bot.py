"""TradingBot, v4: ``make_transaction`` becomes ``withdraw_funds`` (deposits go through ``fund_account``),
``update_market_status`` and ``update_stock_price`` are gone, a buy order needs the funds to cover it,
``add_to_watchlist`` answers under ``watchlist``, and "Gorilla" is a known company name."""
from __future__ import annotations

from ..trading_bot import _SYMBOLS
from ..trading_bot import TradingBot as TradingBotV3

_SYMBOLS_V4 = {**_SYMBOLS, "Gorilla": "GORI"}


class TradingBot(TradingBotV3):
    _retired = frozenset({"make_transaction", "update_market_status", "update_stock_price"})

    def get_symbol_by_name(self, name: str):
        return {"symbol": _SYMBOLS_V4.get(name, "Stock not found")}

    def place_order(self, order_type: str, symbol: str, price: float, amount: int):
        if err := self._need_login("place an order"):
            return err
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        if order_type.lower() == "buy":
            cost = float(price) * int(amount)
            balance = self.account_info.get("balance", 0)
            if cost > balance:
                return {"error": f"Insufficient funds: required ${cost:.2f} but only ${balance:.2f} available."}
        return super().place_order(order_type, symbol, price, amount)

    def withdraw_funds(self, amount: float):
        if err := self._need_login("make a transaction"):
            return err
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if amount > self.account_info["balance"]:
            return {"error": "Insufficient funds for withdrawal."}
        self.account_info["balance"] -= amount
        self.transaction_history.append({"type": "withdrawal", "amount": amount, "timestamp": self._timestamp()})
        return {"status": "Withdrawal successful", "new_balance": self.account_info["balance"]}

    def add_to_watchlist(self, stock: str):
        super().add_to_watchlist(stock)
        return {"watchlist": self.watch_list}
