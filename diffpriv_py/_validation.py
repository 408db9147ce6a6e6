"""Argument checks shared by every public entry point: finite first, then the range, then a clear message."""

from __future__ import annotations

import math
import numbers
from typing import Any, SupportsInt, cast

import numpy as np


def _describe(value: Any) -> str:
    return f"{value!r} (type {type(value).__name__})"


def check_real(value: Any, name: str, *, owner: str = "") -> float:
    """Return ``value`` as a Python float, refusing bools, non-scalars and non-numbers."""
    where = f" of {owner}" if owner else ""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The '{name}' parameter{where} must be a real number, not a bool. Got {value!r}.")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"The '{name}' parameter{where} must be a real scalar. Got {_describe(value)}.")
    return float(value)


def check_in_range(
    value: Any,
    name: str,
    low: float,
    high: float,
    *,
    low_closed: bool,
    high_closed: bool,
    owner: str = "",
    allow_inf: bool = False,
    fix: str = "",
) -> float:
    """Validate a real scalar against an interval; NaN and (by default) infinities are refused first."""
    x = check_real(value, name, owner=owner)
    where = f" of {owner}" if owner else ""
    interval = f"{'[' if low_closed else '('}{low:g}, {high:g}{']' if high_closed else ')'}"
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise ValueError(
            f"The '{name}' parameter{where} must be a finite number in {interval}. Got {x!r}.{fix and ' ' + fix}"
        )
    ok_low = x >= low if low_closed else x > low
    ok_high = x <= high if high_closed else x < high
    if not (ok_low and ok_high):
        raise ValueError(f"The '{name}' parameter{where} must be in {interval}. Got {x!r}.{fix and ' ' + fix}")
    return x


def check_int(value: Any, name: str, *, minimum: int = 1, owner: str = "") -> int:
    """Return ``value`` as an int >= ``minimum``; integral floats such as ``100.0`` are accepted, bools are not."""
    where = f" of {owner}" if owner else ""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The '{name}' parameter{where} must be an integer, not a bool. Got {value!r}.")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        # numbers.Real does not declare __int__ in typeshed, but every concrete Real (float, numpy floating,
        # Fraction, Decimal) has it.
        out = int(cast("SupportsInt", value))
    else:
        raise TypeError(f"The '{name}' parameter{where} must be an integer >= {minimum}. Got {_describe(value)}.")
    if out < minimum:
        raise ValueError(f"The '{name}' parameter{where} must be an integer >= {minimum}. Got {out}.")
    return out
