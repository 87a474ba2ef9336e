"""Checks shared by every algorithm: hyperparameter ranges and divergence."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np


class DivergenceError(FloatingPointError):
    """A run produced NaN or inf; the message names the round and the quantity."""

    def __init__(self, round_: int, name: str, value: float) -> None:
        super().__init__(f"diverged at round {round_}: {name} = {value}")
        self.round = round_
        self.name = name
        self.value = value


def check_range(name: str, value: Real, *, low: float = -math.inf, high: float = math.inf,
                low_open: bool = False, high_open: bool = False) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` lies in the given interval.

    >>> check_range("beta", 0.5, low=0, low_open=True)
    >>> check_range("beta", -1, low=0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: beta must be in (0, inf), got -1
    """
    ok = isinstance(value, Real) and not (isinstance(value, float) and math.isnan(value))
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high)
    if not ok:
        lb = "(" if low_open or math.isinf(low) else "["
        rb = ")" if high_open or math.isinf(high) else "]"
        raise ValueError(f"{name} must be in {lb}{_fmt(low)}, {_fmt(high)}{rb}, got {value!r}")


def check_choice(name: str, value: object, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return f"{x:g}"


def check_finite(round_: int, **values: float | np.ndarray) -> None:
    """Raise :class:`DivergenceError` if any value (scalar or array) is NaN or inf."""
    for name, v in values.items():
        arr = np.asarray(v)
        if not np.all(np.isfinite(arr)):
            bad = arr if arr.ndim == 0 else arr[~np.isfinite(arr)].flat[0]
            raise DivergenceError(round_, name, float(bad))
