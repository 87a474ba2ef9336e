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


# ----------------------------------------------------------------- inputs of the public API
# Each helper raises ``ValueError`` naming the argument, what was expected and what was found.

def _show(v: object) -> str:
    try:
        return f"{float(v):g}"
    except (TypeError, ValueError):
        return repr(v)


def check_vector(name: str, values: object, *, length: int | None = None,
                 length_of: str = "") -> np.ndarray:
    """``values`` as a one-dimensional array, of ``length`` entries when given.

    >>> check_vector("s", [1, 0], length=3, length_of="y")
    Traceback (most recent call last):
    ...
    ValueError: s must have one entry per row of y (3), got 2
    """
    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one entry per sample), got shape "
                         f"{a.shape}")
    if length is not None and len(a) != length:
        raise ValueError(f"{name} must have one entry per row of {length_of} ({length}), "
                         f"got {len(a)}")
    return a


def nonempty_vector(values: object, name: str) -> np.ndarray:
    """``values`` as a one-dimensional array with at least one entry (the metrics' inputs)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    return arr


def check_matrix(name: str, values: object) -> np.ndarray:
    """``values`` as a two-dimensional array (rows = samples)."""
    a = np.asarray(values)
    if a.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (rows, features), got shape {a.shape}")
    return a


def check_labels(name: str, values: object, allowed: tuple, *, shown: str,
                 remedy: str = "") -> None:
    """Raise unless every entry of ``values`` is one of ``allowed`` (``shown`` says which).

    >>> check_labels("y", [1, 0], (-1, 1), shown="labels in {-1, +1}",
    ...              remedy="map 0/1 with 2 * y - 1")
    Traceback (most recent call last):
    ...
    ValueError: y must hold labels in {-1, +1}, got 0; map 0/1 with 2 * y - 1
    """
    a = np.asarray(values)
    bad = ~np.isin(a, np.asarray(allowed))
    if bad.any():
        raise ValueError(f"{name} must hold {shown}, got {_show(a[bad].flat[0])}"
                         + (f"; {remedy}" if remedy else ""))


def check_class_labels(name: str, values: object, classes: int) -> None:
    """Raise unless ``values`` are integers in ``0..classes-1``."""
    a = np.asarray(values)
    if a.dtype.kind in "iub":
        bad = (a < 0) | (a >= classes)
    else:
        with np.errstate(invalid="ignore"):
            bad = ~((a == np.round(a)) & (a >= 0) & (a < classes))
    if bad.any():
        raise ValueError(f"{name} must hold integer labels in 0..{classes - 1} "
                         f"(classes = {classes}), got {_show(a[bad].flat[0])}")


def check_shape(name: str, values: object, shape: tuple, meaning: str = "") -> np.ndarray:
    """``values`` as an array of ``shape`` (``None`` entries: any size), else ``ValueError``
    naming ``name``, the expected and the found shape.

    >>> check_shape("G", np.zeros((5, 2)), (5, None, 4), "(clients, constraints, d)")
    Traceback (most recent call last):
    ...
    ValueError: G must have shape (5, *, 4) (clients, constraints, d), got (5, 2)
    """
    a = np.asarray(values)
    if a.ndim != len(shape) or any(e is not None and n != e for n, e in zip(a.shape, shape,
                                                                             strict=True)):
        want = "(" + ", ".join("*" if e is None else str(e) for e in shape) + \
            ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{name} must have shape {want}" + (f" {meaning}" if meaning else "")
                         + f", got {tuple(a.shape)}")
    return a


def check_rows(name: str, rows: int, expected: int, of: str, why: str = "") -> None:
    """Raise unless ``name`` has ``expected`` rows (as many as ``of``)."""
    if rows != expected:
        raise ValueError(f"{name} has {rows} rows, {of} has {expected}"
                         + (f"; {why}" if why else ""))
