"""MathAPI (upstream math_api.py): stateless arithmetic.

``logarithm`` answers with an mpmath number and ``square_root`` with a Decimal, so upstream's result text is
``str(dict)`` (they are not JSON-serialisable), e.g. ``{'result': mpf('2.0')}``. We keep those exact texts but
compute with a local precision instead of mutating the process-wide mpmath/decimal settings.
Deliberate limit (not upstream): precisions above MAX_PRECISION and integer powers with huge exponents are
refused with an error instead of hanging the process.
"""
from __future__ import annotations

import math
from decimal import Context, Decimal, InvalidOperation

import mpmath

from .base import ApiSuite

MAX_PRECISION = 10_000
MAX_INT_EXPONENT = 100_000


class _Rendered:
    """A value whose repr was fixed when it was computed (mpmath's repr depends on the precision then)."""

    def __init__(self, text: str):
        self._text = text

    def __repr__(self) -> str:
        return self._text

    __str__ = __repr__


def _number_list_error(numbers, empty_msg: str, op):
    if not numbers:
        return {"error": empty_msg}
    try:
        return {"result": op(numbers)}
    except TypeError:
        return {"error": "All elements in the list must be numbers"}


class MathAPI(ApiSuite):
    stateless = True

    def _setup(self, scenario, long_context, extensions) -> None:  # never called upstream: no state
        pass

    def logarithm(self, value: float, base: float, precision: int):
        try:
            if isinstance(precision, int) and precision > MAX_PRECISION:
                raise ValueError(f"precision above {MAX_PRECISION} is not supported")
            ctx = mpmath.MPContext()
            ctx.dps = precision
            result = ctx.log(value) / ctx.log(base)
            return {"result": _Rendered(repr(result))}
        except Exception as e:  # upstream reports any failure in the result dict
            return {"error": str(e)}

    def mean(self, numbers: list):
        return _number_list_error(numbers, "Cannot calculate mean of an empty list", lambda xs: sum(xs) / len(xs))

    def standard_deviation(self, numbers: list):
        def std(xs):
            mu = sum(xs) / len(xs)
            return math.sqrt(sum((x - mu) ** 2 for x in xs) / len(xs))

        return _number_list_error(numbers, "Cannot calculate standard deviation of an empty list", std)

    def si_unit_conversion(self, value: float, unit_in: str, unit_out: str):
        to_m = {"km": 1000, "m": 1, "cm": 0.01, "mm": 0.001, "um": 1e-06, "nm": 1e-09}
        if not isinstance(value, (int, float)):
            return {"error": "Value must be a number"}
        if unit_in not in to_m or unit_out not in to_m:
            return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}
        try:
            return {"result": value * to_m[unit_in] * (1 / to_m[unit_out])}
        except OverflowError:
            return {"error": "Conversion resulted in a value too large to represent"}

    def imperial_si_conversion(self, value: float, unit_in: str, unit_out: str):
        factors = {"cm_to_in": 0.393701, "in_to_cm": 2.54, "m_to_ft": 3.28084, "ft_to_m": 0.3048,
                   "m_to_yd": 1.09361, "yd_to_m": 0.9144, "km_to_miles": 0.621371, "miles_to_km": 1.60934,
                   "kg_to_lb": 2.20462, "lb_to_kg": 0.453592, "celsius_to_fahrenheit": 1.8,
                   "fahrenheit_to_celsius": 5 / 9}
        if not isinstance(value, (int, float)):
            return {"error": "Value must be a number"}
        if unit_in == unit_out:
            return {"result": value}
        key = f"{unit_in}_to_{unit_out}"
        if key not in factors:
            return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}
        try:
            if unit_in == "celsius" and unit_out == "fahrenheit":
                return {"result": value * factors[key] + 32}
            if unit_in == "fahrenheit" and unit_out == "celsius":
                return {"result": (value - 32) * factors[key]}
            return {"result": value * factors[key]}
        except OverflowError:
            return {"error": "Conversion resulted in a value too large to represent"}

    def add(self, a: float, b: float):
        try:
            return {"result": a + b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def subtract(self, a: float, b: float):
        try:
            return {"result": a - b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def multiply(self, a: float, b: float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return {"error": "Both inputs must be numbers"}
        return {"result": a * b}

    def divide(self, a: float, b: float):
        try:
            if b == 0:
                return {"error": "Cannot divide by zero"}
            return {"result": a / b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def power(self, base: float, exponent: float):
        if isinstance(exponent, int) and not isinstance(exponent, bool) and abs(exponent) > MAX_INT_EXPONENT \
                and isinstance(base, int) and abs(base) > 1:
            raise OverflowError("exponent too large for exact integer power")
        try:
            return {"result": base ** exponent}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def square_root(self, number: float, precision: int):
        try:
            if number < 0:
                return {"error": "Cannot calculate square root of a negative number"}
            if isinstance(precision, int) and precision > MAX_PRECISION:
                raise InvalidOperation
            root = Decimal(number).sqrt(context=Context(prec=precision))
            return {"result": root}
        except (TypeError, InvalidOperation):
            return {"error": "Input must be a number or computation resulted in an invalid operation"}

    def absolute_value(self, number: float):
        try:
            return {"result": abs(number)}
        except TypeError:
            return {"error": "Input must be a number"}

    def round_number(self, number: float, decimal_places: int = 0):
        try:
            return {"result": round(number, decimal_places)}
        except TypeError:
            return {"error": "First input must be a number, second input must be an integer"}

    def percentage(self, part: float, whole: float):
        try:
            if whole == 0:
                return {"error": "Whole value cannot be zero"}
            return {"result": part / whole * 100}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def min_value(self, numbers: list):
        return _number_list_error(numbers, "Cannot find minimum of an empty list", min)

    def max_value(self, numbers: list):
        return _number_list_error(numbers, "Cannot find maximum of an empty list", max)

    def sum_values(self, numbers: list):
        return _number_list_error(numbers, "Cannot calculate sum of an empty list", sum)
