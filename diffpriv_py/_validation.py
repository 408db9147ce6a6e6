"""Argument checks shared by every public entry point: finite first, then the range, then a clear message."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Sequence
from typing import Any, SupportsInt, TypeVar, cast

import numpy as np


def _describe(value: Any) -> str:
    return f"{value!r} (type {type(value).__name__})"


def check_real(value: Any, name: str, *, owner: str = "") -> float:
    """Return ``value`` as a Python float, refusing bools, non-scalars and non-numbers."""
    if type(value) is float:  # the common case, without the ABC check below
        return value
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
    finite_or_allowed = not math.isnan(x) and (allow_inf or not math.isinf(x))
    ok_low = x >= low if low_closed else x > low
    ok_high = x <= high if high_closed else x < high
    if finite_or_allowed and ok_low and ok_high:
        return x
    # The message is built only on failure (a release checks several parameters: µs count).
    where = f" of {owner}" if owner else ""
    interval = f"{'[' if low_closed else '('}{low:g}, {high:g}{']' if high_closed else ')'}"
    if not finite_or_allowed:
        raise ValueError(
            f"The '{name}' parameter{where} must be a finite number in {interval}. Got {x!r}.{fix and ' ' + fix}"
        )
    raise ValueError(f"The '{name}' parameter{where} must be in {interval}. Got {x!r}.{fix and ' ' + fix}")


def refuse_subnormal(value: float, name: str, *, owner: str = "") -> float:
    """Refuse a positive ``value`` below the smallest normal double (2.2e-308): it has lost precision, and formulas
    such as e^x − 1 or 1/x on it underflow or overflow instead of giving an answer."""
    if 0.0 < abs(value) < sys.float_info.min:
        where = f" of {owner}" if owner else ""
        raise ValueError(
            f"The '{name}' parameter{where} is subnormal ({value!r}, below {sys.float_info.min:.3g}): no computation "
            f"can use it reliably. Pass a normal positive number (or 0 where 0 is allowed)."
        )
    return value


def check_int(
    value: Any, name: str, *, minimum: int = 1, maximum: int | None = None, why: str = "", owner: str = ""
) -> int:
    """Return ``value`` as an int in [``minimum``, ``maximum``]; integral floats such as ``100.0`` are accepted, bools
    are not. ``why`` explains the maximum in the error message."""
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
    if maximum is not None and out > maximum:
        because = f" ({why})" if why else ""
        raise ValueError(f"The '{name}' parameter{where} must be at most {maximum}{because}. Got {out}.")
    return out


MAX_JOBS = 4096
"""Largest ``n_jobs`` accepted: more workers than any joblib backend can start (joblib itself fails near 10^6)."""


def check_n_jobs(value: Any, *, owner: str = "") -> int | None:
    """``None`` or 1 (in-process), -1 (all cores) or a number of workers up to :data:`MAX_JOBS`, as joblib's
    ``n_jobs``; bools, floats, strings and 0 are refused (joblib would take ``True`` or ``2.5`` silently)."""
    if value is None:
        return None
    where = f" of {owner}" if owner else ""
    rule = "must be None, -1 (all cores) or a positive integer number of workers"
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The 'n_jobs' parameter{where} {rule}. Got {_describe(value)}.")
    out = int(value)
    if out == -1 or 1 <= out <= MAX_JOBS:
        return out
    raise ValueError(
        f"The 'n_jobs' parameter{where} {rule}, at most {MAX_JOBS} (more workers than any machine runs). Got {out}. "
        "Pass n_jobs=-1 to use every core."
    )


_Option = TypeVar("_Option", bound=str)


def check_choice(value: Any, name: str, options: Sequence[_Option], *, owner: str) -> _Option:
    """One of the string ``options``; anything else (another string, an array, a list, None) is refused clearly."""
    if type(value) is str and value in options:  # the common case: an exact str equal to an option is that option
        return value  # type: ignore[return-value]
    # isinstance first: ``array in options`` would compare element-wise and raise numpy's "truth value" error.
    if not isinstance(value, str) or value not in options:
        choices = " or ".join(repr(o) for o in options)
        raise ValueError(f"The '{name}' of {owner} must be {choices}. Got {value!r}.")
    return options[options.index(value)]  # the option itself: typed as one of the Literal options


def one_of(*options: _Option) -> Callable[[Any, Any, _Option], None]:
    """attrs validator: the attribute is one of the string ``options`` (see :func:`check_choice`)."""

    def validate(instance: Any, attribute: Any, value: Any) -> None:
        check_choice(value, attribute.name, options, owner=type(instance).__name__)

    return validate


MAX_ELEMENTS = 10**8
"""Largest array a public size parameter (bins, lattice points, grid points) may ask for: 800 MB of float64."""


def check_size(value: Any, name: str, *, maximum: int = MAX_ELEMENTS, minimum: int = 1, owner: str = "") -> int:
    """An integer size parameter that is also small enough to allocate; checked before any work is done."""
    out = check_int(value, name, minimum=minimum, owner=owner)
    if out > maximum:
        where = f" of {owner}" if owner else ""
        size = f"{float(out):.3g}" if out.bit_length() < 1000 else f"about 2^{out.bit_length()}"
        raise ValueError(
            f"The '{name}' parameter{where} would allocate {size} values; at most {maximum:.0e} are supported. "
            f"Use a smaller {name}."
        )
    return out


def check_log_size(base: int, exponent: int, name: str, *, maximum: int = MAX_ELEMENTS, owner: str = "") -> int:
    """``base ** exponent`` if it is at most ``maximum``; compared in log space, so a huge exponent never hangs."""
    if exponent * math.log(base) > math.log(maximum) + 1e-9:
        where = f" of {owner}" if owner else ""
        raise ValueError(
            f"The {name}{where} would have {base}^{exponent} = 10^{exponent * math.log10(base):.4g} elements; at "
            f"most {maximum:.0e} are supported. Lower them (the size grows exponentially with the exponent)."
        )
    size: int = base**exponent  # int ** int is typed Any (a negative exponent would give a float)
    if size > maximum:  # the log-space test is only a guard against huge exponents; this one is exact
        where = f" of {owner}" if owner else ""
        raise ValueError(
            f"The {name}{where} would have {base}^{exponent} = {size:.3g} elements; at most {maximum:.0e} are "
            "supported. Lower them (the size grows exponentially with the exponent)."
        )
    return size


def refuse_masked(data: Any, name: str = "X", *, owner: str = "") -> None:
    """Refuse numpy masked arrays (alone or in an (X, y) tuple): numpy functions would silently use masked values."""
    if type(data) is np.ndarray:  # a plain array is not a MaskedArray (a subclass); the common case, answered at once
        return
    parts = data if isinstance(data, tuple) else (data,)
    if any(isinstance(part, np.ma.MaskedArray) for part in parts):
        where = f" of {owner}" if owner else ""
        raise TypeError(
            f"The '{name}' argument{where} is a numpy masked array; masks are not honoured (most numpy code reads "
            "the masked values), and dropping records changes n. Pass x.compressed() to drop masked values or "
            "x.filled(value) to replace them, before the release."
        )


def as_rectangular(value: Any, name: str, *, owner: str = "", dtype: Any = None) -> np.ndarray:
    """``np.asarray(value)``, refusing a ragged nested sequence with an error naming the parameter (not numpy's)."""
    try:
        return np.asarray(value, dtype=dtype)
    except ValueError as exc:
        if "inhomogeneous" not in str(exc) and "sequence" not in str(exc):
            raise
        where = f" of {owner}" if owner else ""
        raise ValueError(
            f"The '{name}' parameter{where} is a ragged nested sequence (its rows have different lengths): "
            f"{_describe(value)}. Pass a flat sequence or a rectangular array."
        ) from None


def check_alpha(alpha: Any, *, owner: str = "the error bar") -> float:
    """Validate a miss probability α ∈ (0, 1) (a normal double: ln(1/α) of a subnormal α overflows)."""
    level = check_in_range(
        alpha,
        "alpha",
        0.0,
        1.0,
        low_closed=False,
        high_closed=False,
        owner=owner,
        fix="Pass the probability that the error exceeds the bar, e.g. alpha=0.05 for 95% error bars.",
    )
    return refuse_subnormal(level, "alpha", owner=owner)
