"""Shared plumbing of the DP statistics: argument checks, budget splits, and one release through a mechanism.

Every statistic is a *plan*: a target that maps the dataset to the vector to privatise (clipping included), the
L1 and L2 sensitivities of that target under replace-one neighbours, and a post-processing step. The plan is
released through a configured library mechanism (Laplace, Gaussian, or the integer-valued mechanism for counts),
so accounting, validation and the ``Response`` come from the mechanism template, never from ad-hoc noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from .._arguments import (
    MECHANISMS,
    NAN_POLICIES,
    MechanismName,
    NanPolicy,
    check_bool,
    check_bounds,
    check_params,
    nan_error,
    split_params,
)
from .._datasets import as_array
from .._rng import RNGLike
from .._validation import check_choice, refuse_masked
from ..mechanisms import DiscreteLaplace, Gaussian, Laplace
from ..mechanisms.base import NumericMech
from ..mechanisms.response import Response, half_width
from ..privacy import Eps

Axis = int | tuple[int, ...] | None  # numpy's axis: one axis, a tuple of them, or None for all


# ---- arguments ---------------------------------------------------------------------------------------------------


def _pandas_to_numpy(x: Any) -> np.ndarray:
    arr: np.ndarray = x.to_numpy()
    if arr.dtype == object:
        try:
            arr = x.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            pass
    return arr


def as_data(x: Any, *, owner: str, allow_bool: bool = False, allow_empty: bool = False) -> np.ndarray:
    """The dataset as a 1-D or 2-D numeric array (rows are records), without copying when possible.

    pandas objects are converted with ``to_numpy`` (nullable dtypes become float with NaN for missing values).
    ``allow_empty``: accept n = 0 records (for statistics whose release on no records is defined, e.g. histograms).
    """
    if type(x) is np.ndarray:  # the common case, without the masked-array and pandas probes below
        arr = x
    else:
        refuse_masked(x, "x", owner=owner)
        arr = _pandas_to_numpy(x) if hasattr(x, "to_numpy") else as_array(x, "x", owner=owner)
    kind = arr.dtype.kind
    ndim = arr.ndim
    if kind in "fiu" and 0 < ndim <= 2 and arr.size:  # the common case: each rule below holds (one test each)
        return arr
    if kind == "b" and not allow_bool:
        raise TypeError(
            f"{owner} needs numeric data; got a boolean array. Count True values with dp.stats.count, or cast "
            "explicitly with x.astype(float) if you mean 0/1 values."
        )
    if kind not in "biuf":
        raise TypeError(
            f"{owner} needs numeric data (integer or floating point); got an array of dtype {arr.dtype}. Convert the "
            "data to a numeric dtype first (e.g. x.astype(float)), after mapping any non-numeric codes."
        )
    if ndim == 0:
        raise ValueError(
            f"{owner} needs a dataset of records (a 1-D or 2-D array, one record per row); got a scalar {arr.dtype} "
            "value. Wrap single values in a list."
        )
    if ndim > 2:
        raise ValueError(
            f"{owner} supports 1-D and 2-D data (one record per row); got an array with shape {arr.shape}. Reshape it "
            "to (n_records, n_columns)."
        )
    empty_ok = allow_empty and arr.shape[0] == 0 and (ndim == 1 or arr.shape[1] > 0)
    if arr.size == 0 and not empty_ok:  # (no records, or records of no values)
        raise ValueError(
            f"{owner} needs at least one record; got an empty array with shape {arr.shape}. Under replace-one "
            "neighbours the number of records n is public and must be at least 1."
        )
    return arr


def _one_axis(axis: Any, ndim: int, owner: str) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(
            f"The 'axis' of {owner} must be None, 0, 1 or a tuple of them. Got {axis!r} (type {type(axis).__name__})."
        )
    ax = int(axis)
    if not -ndim <= ax < ndim:
        raise ValueError(f"The 'axis' of {owner} must be None or in [{-ndim}, {ndim - 1}] for {ndim}-D data. Got {ax}.")
    return ax % ndim


def check_axis(axis: Any, ndim: int, *, owner: str, allowed: Sequence[int | None] = (None, 0, 1)) -> int | None:
    """Normalise ``axis`` to None, 0 or 1 (negative values counted from the end); refuse anything else.

    A tuple of axes has numpy's meaning: the statistic pools the values along all of them, so ``(0, 1)`` on 2-D
    data (every axis) is ``None``, and ``(0,)`` is ``0``.
    """
    if axis is None:
        return None
    if isinstance(axis, tuple):
        axes = [_one_axis(a, ndim, owner) for a in axis]
        if not axes or len(set(axes)) != len(axes):
            raise ValueError(
                f"The 'axis' tuple of {owner} must name each axis at most once and at least one axis; got {axis!r}. "
                "Pass e.g. axis=(0, 1) to pool every value, or axis=None."
            )
        ax: int | None = axes[0] if len(axes) == 1 else None  # two distinct axes of ≤ 2-D data: all of them
    else:
        ax = _one_axis(axis, ndim, owner)
    if ndim == 1 or ax is None:
        return None
    if ax not in allowed:
        options = ", ".join("None" if a is None else str(a) for a in allowed)
        raise ValueError(
            f"{owner} supports axis in ({options}) on 2-D data; got axis={axis}. Records are rows, so axis=0 gives one "
            "value per column."
        )
    return ax


_FAST_REALS = (float, int, np.float64, np.int64)


def scalar_bounds(bounds: Any) -> tuple[float, float] | None:
    """``(lower, upper)`` as Python floats when ``bounds`` is a pair of valid finite scalars, else None.

    The cheap path of :func:`check_bounds` for the common case (µs count in small releases); anything else —
    arrays, NaN, wrong order, wrong types — goes through :func:`check_bounds`, which gives the full error messages.
    ``-0.0`` becomes ``0.0`` so that equal bounds give the same (cached) plan.

    A twin of :func:`check_bounds` kept on measurement: with check_bounds alone, dp.stats.mean and var of 10 values
    took 2.4-2.6x as long (CPU time, interleaved rounds). test_stats.py's test_cached_plans_release_what_a_fresh_
    uncached_plan_releases checks that both give the same releases.
    """
    if type(bounds) is not tuple and type(bounds) is not list:
        return None
    if len(bounds) != 2:
        return None
    lower, upper = bounds
    if type(lower) not in _FAST_REALS or type(upper) not in _FAST_REALS:
        return None
    try:
        lo, hi = float(lower) + 0.0, float(upper) + 0.0
    except OverflowError:  # an int beyond float64: check_bounds says what is wrong
        return None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        return None
    return lo, hi


def check_ddof(ddof: Any, n: int, *, owner: str) -> int:
    if type(ddof) is int and 0 <= ddof < n:  # the common case, without the isinstance tests below
        return ddof
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, np.integer)) or ddof < 0:
        raise TypeError(f"The 'ddof' of {owner} must be a non-negative integer. Got {ddof!r}.")
    if ddof >= n:
        raise ValueError(
            f"The 'ddof' of {owner} must be smaller than the number of values ({n}); got ddof={ddof}. Use ddof=0."
        )
    return int(ddof)


# ---- one release -------------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Plan:
    """A statistic ready for release: what to noise, how sensitive it is, and how to read the noisy vector."""

    target: Callable[[Any], Any]
    l1: float
    l2: float
    dims: int
    postprocess: Callable[[np.ndarray], Any]
    integer: bool = False
    """An integer-valued target (counts): discrete Laplace noise under ``"laplace"`` (Gaussian noise is rounded by
    ``postprocess``)."""
    scalar_postprocess: Callable[[float], Any] | None = None
    """The same map as ``postprocess`` on a Python float or int, for a scalar release (no numpy call on a 0-d array)."""
    _mechanisms: dict[Any, Any] = attrs.field(init=False, factory=dict, repr=False)
    accuracy: Callable[[np.ndarray, Any], Any] | None = None
    """``accuracy(h, value)``: half-widths ``h`` of the noised vector → half-widths of the reported ``value`` (a
    public map; ``None`` when there is no closed form)."""

    def mechanism(self, name: str) -> NumericMech:
        # Built once per plan (mechanisms are frozen, so a plan reused for many releases shares them).
        mech = self._mechanisms.get(name)
        if mech is None:
            if name == "gaussian":  # integer targets (counts) round the Gaussian release in their post-processing
                mech = Gaussian(target=self.target, sensitivity=self.l2, dims=self.dims)
            elif self.integer:
                mech = DiscreteLaplace(target=self.target, sensitivity=self.l1, dims=self.dims)
            else:
                mech = Laplace(target=self.target, sensitivity=self.l1, dims=self.dims)
            self._mechanisms[name] = mech
        return mech


def release(
    plan: Plan,
    privacy_params: Eps,
    data: Any,
    *,
    mechanism: str,
    rng: RNGLike,
    accountant: Any,
    full_response: bool,
) -> Any:
    """Release ``plan`` once through its mechanism; return the post-processed value or the whole Response."""
    mech = plan.mechanism(mechanism)
    response = mech.release_response(privacy_params, data, rng=rng, accountant=accountant)
    raw = response.response
    if plan.scalar_postprocess is not None and (type(raw) is float or type(raw) is int):
        value = plan.scalar_postprocess(raw)
    else:
        value = plan.postprocess(np.asarray(raw, dtype=np.float64))
    if full_response:
        return attrs.evolve(response, response=value, error_bound=_error_bound(plan, mech, response, value))
    return value


def _error_bound(plan: Plan, mech: NumericMech, response: Response, value: Any) -> StatisticErrorBound:
    return StatisticErrorBound(accuracy=plan.accuracy, mechanism=mech, privacy_params=response.privacy_params,
                               noised=np.asarray(response.response, dtype=np.float64), value=value)  # fmt: skip


@attrs.frozen(eq=False)
class StatisticErrorBound:
    """The error bar of a ``dp.stats`` Response, in the units of the post-processed statistic.

    ``accuracy(h, value)`` maps the half-widths h of the mechanism's noised vector to the statistic's (a public map;
    ``None`` when there is no closed form); called as ``bound(alpha, simultaneous)``. Picklable, like the Response.
    """

    accuracy: Any
    mechanism: NumericMech
    privacy_params: Eps
    noised: np.ndarray
    value: Any

    def __call__(self, alpha: float, simultaneous: bool) -> Any:
        if self.accuracy is None:
            raise NotImplementedError(
                "This statistic is a non-linear function of several noisy quantities (e.g. a mean or variance under "
                "nan_policy='omit', a covariance matrix, a histogram density), so it has no closed-form error bar "
                "here. Use nan_policy='raise' (after imputing missing values) for mean/var/std with error bars, and "
                "density=False for histogram counts with error bars."
            )
        noise = half_width(self.mechanism, self.privacy_params, self.noised, alpha, simultaneous=simultaneous)
        return self.accuracy(np.asarray(noise, dtype=np.float64), np.asarray(self.value, dtype=np.float64))


def finish(values: np.ndarray, scalar: bool) -> Any:
    """A scalar result as a Python float (int for counts), otherwise the array."""
    if not scalar:
        return values
    item = values.reshape(-1)[0]
    return int(item) if values.dtype.kind in "iu" else float(item)


def sensitivities(per_coordinate: np.ndarray, *, together: bool) -> tuple[float, float]:
    """L1 and L2 sensitivities from the largest change of each released coordinate.

    ``together=True``: one replaced record can move every coordinate at once (column statistics);
    ``False``: it moves only one coordinate (one statistic per record, e.g. row statistics).
    """
    w = np.abs(np.asarray(per_coordinate, dtype=np.float64)).ravel()
    if together:
        return float(w.sum()), float(math.sqrt(float(np.dot(w, w))))
    top = float(w.max())
    return top, top


__all__ = [
    "MECHANISMS",
    "NAN_POLICIES",
    "MechanismName",
    "NanPolicy",
    "Plan",
    "Response",
    "as_data",
    "check_axis",
    "check_bool",
    "check_bounds",
    "check_choice",
    "check_ddof",
    "check_params",
    "finish",
    "nan_error",
    "release",
    "scalar_bounds",
    "sensitivities",
    "split_params",
]
