"""DP histograms over public, fixed bins with integer-valued noise (replace-one: L1 sensitivity 2)."""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from .._blockwise import first_block, is_out_of_core, map_reduce, n_rows
from .._rng import RNGLike
from .._validation import check_real, check_size
from ..privacy import Eps
from ._common import (
    MECHANISMS,
    NAN_POLICIES,
    Plan,
    as_data,
    check_axis,
    check_bool,
    check_choice,
    check_params,
    nan_error,
    release,
)

__all__ = ["HistogramTarget", "histogram"]


def _edges(bins: Any, range: Any, who: str) -> tuple[np.ndarray, tuple[int, float, float] | None]:
    """Public bin edges, and (count, first, last) when they are uniform (numpy's fast path)."""
    if isinstance(bins, str):
        raise TypeError(
            f"{who} needs fixed bins: an integer number of bins together with range=(lower, upper), or a sequence "
            f"of edges. Got bins={bins!r}: data-driven bin rules such as 'auto' look at the private data."
        )
    if np.ndim(bins) == 0:
        k = check_size(bins, "bins", maximum=10**7, owner=who)  # 10^9 bins would allocate ~7.5 GiB
        if range is None:
            raise TypeError(
                f"{who} with bins={k} needs range=(lower, upper): the bin range is never taken from the private "
                "data. Pass e.g. range=(0, 100), or give the bin edges as a sequence."
            )
        if not isinstance(range, (tuple, list)) or len(range) != 2:
            raise TypeError(f"The 'range' of {who} must be a pair (lower, upper). Got {range!r}.")
        first = check_real(range[0], "range lower", owner=who)
        last = check_real(range[1], "range upper", owner=who)
        if not (math.isfinite(first) and math.isfinite(last)) or not first < last:
            raise ValueError(
                f"The 'range' of {who} must be finite with lower < upper. Got {range!r}. Pass e.g. range=(0, 100)."
            )
        return np.linspace(first, last, k + 1), (k, first, last)
    raw = np.asarray(bins)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size < 2:
        raise TypeError(f"The bin edges of {who} must be a 1-D sequence of at least two numbers. Got {bins!r}.")
    edges = raw.astype(np.float64)
    if not np.all(np.isfinite(edges)) or not np.all(np.diff(edges) > 0):
        raise ValueError(
            f"The bin edges of {who} must be finite and strictly increasing. Got {bins!r}. (range= is not needed "
            "with explicit edges.)"
        )
    return edges, None


@attrs.frozen(eq=False)
class HistogramTarget:
    """Target of :func:`histogram`: the exact counts per fixed bin (numpy's rule: last bin closed, outside ignored).

    Returns the counts of every column side by side (``per_column=True``) or of all values pooled.
    """

    edges: np.ndarray
    uniform: tuple[int, float, float] | None = None
    per_column: bool = False
    nan_policy: str = "raise"
    who: str = "dp.stats.histogram"

    def __call__(self, data: Any) -> np.ndarray:
        if is_out_of_core(data):  # counts in fixed public bins add up over blocks (dask, Chunks)
            return map_reduce(data, self)
        x = as_data(data, who=self.who)
        if self.nan_policy == "raise" and x.dtype.kind == "f":
            # One cheap reduction flags NaN (or ±inf pairs); only then pay for the exact check.
            with np.errstate(invalid="ignore", over="ignore"):  # ±inf and 1e308s only make the total non-finite
                total = np.add.reduce(x, axis=None)
            if not math.isfinite(total) and np.isnan(x).any():
                raise nan_error(self.who)
        columns = [x[:, j] for j in range(x.shape[1])] if (self.per_column and x.ndim == 2) else [x.ravel()]
        return np.concatenate([self._counts(c) for c in columns]).astype(np.float64)

    def _counts(self, values: np.ndarray) -> np.ndarray:
        if self.uniform is not None:
            k, first, last = self.uniform
            return np.histogram(values, bins=k, range=(first, last))[0]
        return np.histogram(values, bins=self.edges)[0]


def histogram(
    x: Any,
    privacy_params: Eps,
    *,
    bins: Any = None,
    range: Any = None,
    axis: int | None = None,
    nan_policy: str = "raise",
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> tuple[Any, np.ndarray]:
    """Differentially private histogram over fixed, public bins; returns ``(counts, edges)`` like numpy.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bins : int or sequence of float
        The number of equal-width bins (then ``range`` is required), or the bin edges (finite, increasing).
        Data-driven rules (``"auto"``) are refused.
    range : (lower, upper), optional
        The range of equal-width bins. Values outside it are not counted, as in numpy.
    axis : {None, 0}, default None
        ``None`` counts all values; ``0`` gives one histogram per column (counts of shape (bins, d)).
    nan_policy : {"raise", "omit"}, default "raise"
        ``"omit"`` does not count NaN (a missing value falls in no bin, like a value outside the range).
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Integer-valued Laplace-type noise, or Gaussian noise (needs ``Del``) rounded to integers.
    rng, accountant
        As in :func:`diffpriv_py.stats.mean`.
    full_response : bool, default False
        Return ``(Response, edges)`` instead of ``(counts, edges)``.

    Returns
    -------
    counts : ndarray of int64
        Private counts, clipped to [0, n·values per record] (post-processing).
    edges : ndarray
        The public bin edges.

    Notes
    -----
    Under replace-one neighbours a replaced value leaves one bin and enters another: L1 sensitivity 2 and L2
    sensitivity √2 per value, whether or not values outside the range or NaN are involved (those move at most one
    count). A 2-D record contributes d values: L1 2d in both layouts, L2 √(2d) per column or d√2 pooled. The counts
    get integer-valued noise (discrete Laplace when the library provides it, otherwise Laplace noise rounded to an
    integer, which is post-processing). diffprivlib adds its geometric noise bin by bin in a Python loop; here the
    noise is one vectorised draw, so the cost is numpy's own histogram.
    """
    who = "dp.stats.histogram"
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, who=who)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, who=who)
    check_params(privacy_params, mechanism, who=who)
    full_response = check_bool(full_response, "full_response", who=who)
    if bins is None:
        raise TypeError(f"{who} needs bins=: an integer with range=(lower, upper), or a sequence of bin edges.")
    edges, uniform = _edges(bins, range, who)
    out_of_core = is_out_of_core(x)
    data = as_data(first_block(x) if out_of_core else x, who=who)
    ax = check_axis(axis, data.ndim, who=who, allowed=(None, 0))
    n = n_rows(x) if out_of_core else data.shape[0]
    d = 1 if data.ndim == 1 else data.shape[1]
    per_column = data.ndim == 2 and ax == 0
    k = edges.size - 1
    l1 = 2.0 * d
    l2 = math.sqrt(2.0 * d) if per_column else d * math.sqrt(2.0)
    cap = n if per_column else n * d

    def post(v: np.ndarray) -> np.ndarray:
        counts = np.clip(np.rint(v), 0, cap).astype(np.int64)
        return counts.reshape(d, k).T if per_column else counts

    target = HistogramTarget(edges, uniform=uniform, per_column=per_column, nan_policy=nan_policy, who=who)
    plan = Plan(target=target, l1=l1, l2=l2, dims=k * (d if per_column else 1), postprocess=post, integer=True)
    counts = release(
        plan,
        privacy_params,
        x if out_of_core else data,
        mechanism=mechanism,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
    )
    return counts, edges
