"""The argument conventions shared by the statistics and their faces (dp.stats, the pandas accessor, the scalers).

Public-information checks only: each runs before any budget is charged and names the argument, the rule, the value
and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ._validation import as_rectangular, check_real
from .privacy import Del, Eps

__all__ = [
    "MECHANISMS",
    "NAN_POLICIES",
    "MechanismName",
    "NanPolicy",
    "check_bool",
    "check_bounds",
    "check_params",
    "nan_error",
    "quantile_levels",
    "split_params",
]

NanPolicy = Literal["raise", "omit"]
MechanismName = Literal["laplace", "gaussian"]

NAN_POLICIES: tuple[NanPolicy, ...] = ("raise", "omit")
MECHANISMS: tuple[MechanismName, ...] = ("laplace", "gaussian")


def check_bounds(bounds: Any, n_columns: int | None, *, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate public clipping bounds ``(lower, upper)``; scalars, or one value per column for 2-D data.

    Returns float64 arrays of shape ``()`` (one pair for every value) or ``(n_columns,)``.
    """
    fix = "Pass bounds=(lower, upper) from domain knowledge (e.g. bounds=(0, 120) for ages)."
    if bounds is None:
        raise TypeError(
            f"{owner} needs public bounds: the data are clipped to them and the noise is calibrated to their width. "
            f"They are never derived from the private data (that would leak it). {fix}"
        )
    if isinstance(bounds, np.ndarray) and bounds.ndim >= 1 and bounds.shape[0] == 2:
        bounds = (bounds[0], bounds[1])
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError(f"The 'bounds' of {owner} must be a pair (lower, upper). Got {bounds!r}. {fix}")
    pair = []
    for name, value in zip(("lower", "upper"), bounds, strict=True):
        if np.ndim(value) == 0:
            arr = np.asarray(check_real(value, f"bounds {name}", owner=owner), dtype=np.float64)
        else:
            raw = np.asarray(value)
            if raw.dtype.kind not in "iuf":
                raise TypeError(
                    f"The {name} bounds of {owner} must be real numbers; got an array of dtype {raw.dtype}. {fix}"
                )
            arr = raw.astype(np.float64)
            if arr.ndim != 1 or n_columns is None or arr.shape[0] != n_columns:
                expected = "a scalar" if n_columns is None else f"a scalar or {n_columns} values (one per column)"
                raise ValueError(f"The {name} bounds of {owner} must be {expected}; got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(
                f"The {name} bounds of {owner} must be finite numbers; got {value!r}. Infinite bounds would need "
                f"infinite noise. {fix}"
            )
        pair.append(arr)
    lo, hi = pair
    if not np.all(lo < hi):
        raise ValueError(
            f"The bounds of {owner} must satisfy lower < upper; got lower={bounds[0]!r}, upper={bounds[1]!r}. {fix}"
        )
    return lo, hi


def check_params(privacy_params: object, mechanism: str, *, owner: str) -> Eps:
    """Refuse wrong privacy parameters before any data are read (the mechanism checks again at release)."""
    if mechanism == "gaussian":
        if not isinstance(privacy_params, Del) or not privacy_params.delta > 0:
            raise TypeError(
                f"{owner} with mechanism='gaussian' needs Del privacy parameters with delta > 0; got "
                f"{privacy_params!r}. Pass e.g. dp.Del(1.0, 1e-6), or use mechanism='laplace' with dp.Eps(1.0)."
            )
    elif not isinstance(privacy_params, Eps):
        raise TypeError(
            f"{owner} needs privacy parameters such as dp.Eps(1.0) (or dp.Del(1.0, 1e-6)); got {privacy_params!r}."
        )
    return privacy_params


def split_params(privacy_params: Eps, fractions: Sequence[float]) -> list[Eps]:
    """Split a budget by basic sequential composition: ε·w and δ·w for each fraction w (summing to at most 1)."""
    out: list[Eps] = []
    for w in fractions:
        if privacy_params.delta > 0:
            out.append(Del(privacy_params.epsilon * w, privacy_params.delta * w))
        else:
            out.append(Eps(privacy_params.epsilon * w))
    return out


def check_bool(value: Any, name: str, *, owner: str) -> bool:
    if value is False or value is True:
        return value
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The '{name}' of {owner} must be True or False. Got {value!r}.")
    return bool(value)


def nan_error(owner: str) -> ValueError:
    return ValueError(
        f"The data passed to {owner} contain NaN and nan_policy='raise' (the default). Pass nan_policy='omit' to "
        "leave missing values out with a sensitivity that accounts for it, or impute them with a public value "
        "first. (Dropping rows yourself makes the record count depend on the data.)"
    )


def quantile_levels(value: Any) -> tuple[float, ...]:
    """The quantile levels ``q``: a number or a 1-D sequence of numbers in [0, 1], as a tuple of floats."""
    raw = as_rectangular(value, "q", owner="dp.stats.quantile")
    if raw.dtype.kind == "b" or raw.dtype.kind not in "iuf" or raw.ndim > 1:
        raise TypeError(
            f"The quantile levels 'q' must be a number or a 1-D sequence of numbers in [0, 1]. Got {value!r}."
        )
    qs = tuple(check_real(float(v), "q") for v in raw.ravel())
    if not qs:
        raise ValueError("The quantile levels 'q' must not be empty. Pass e.g. q=0.5 or q=[0.25, 0.5, 0.75].")
    for v in qs:
        if not (math.isfinite(v) and 0.0 <= v <= 1.0):
            raise ValueError(
                f"Quantile levels 'q' must be finite numbers in [0, 1]. Got {v!r}. Use 0.5 for the median."
            )
    return qs
