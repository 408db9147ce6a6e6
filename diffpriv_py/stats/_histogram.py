"""DP histograms over public, fixed bins with integer-valued noise (replace-one: L1 sensitivity 2)."""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from .._blockwise import first_block, is_out_of_core, map_reduce, n_rows
from .._rng import RNGLike
from .._validation import as_rectangular, check_real, check_size
from ..privacy import Eps
from ._common import (
    MECHANISMS,
    NAN_POLICIES,
    Axis,
    MechanismName,
    NanPolicy,
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


def _edges(bins: Any, range: Any, owner: str) -> tuple[np.ndarray, tuple[int, float, float] | None]:
    """Public bin edges, and (count, first, last) when they are uniform (numpy's fast path)."""
    if isinstance(bins, str):
        raise TypeError(
            f"{owner} needs fixed bins: an integer number of bins together with range=(lower, upper), or a sequence "
            f"of edges. Got bins={bins!r}: data-driven bin rules such as 'auto' look at the private data."
        )
    raw = as_rectangular(bins, "bins", owner=owner)
    if raw.ndim == 0:
        k = check_size(bins, "bins", maximum=10**7, owner=owner)  # 10^9 bins would allocate ~7.5 GiB
        if range is None:
            raise TypeError(
                f"{owner} with bins={k} needs range=(lower, upper): the bin range is never taken from the private "
                "data. Pass e.g. range=(0, 100), or give the bin edges as a sequence."
            )
        if not isinstance(range, (tuple, list)) or len(range) != 2:
            raise TypeError(f"The 'range' of {owner} must be a pair (lower, upper). Got {range!r}.")
        first = check_real(range[0], "range lower", owner=owner)
        last = check_real(range[1], "range upper", owner=owner)
        if not (math.isfinite(first) and math.isfinite(last)) or not first < last:
            raise ValueError(
                f"The 'range' of {owner} must be finite with lower < upper. Got {range!r}. Pass e.g. range=(0, 100)."
            )
        if not math.isfinite(last - first):  # e.g. (-1e308, 1e308): numpy cannot place bins in an infinite width
            raise ValueError(
                f"The 'range' of {owner} must have a finite width upper - lower; got {range!r}, whose width overflows "
                "to inf. Pass a narrower range (|upper - lower| < 1.8e308)."
            )
        return np.linspace(first, last, k + 1), (k, first, last)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size < 2:
        raise TypeError(
            f"The 'bins' of {owner} must be a number of bins or a 1-D sequence of at least two bin edges. Got {bins!r}."
        )
    edges = raw.astype(np.float64)
    if not np.all(np.isfinite(edges)) or not np.all(np.diff(edges) > 0):
        raise ValueError(
            f"The bin edges ('bins') of {owner} must be finite and strictly increasing. Got {bins!r}. (range= is not "
            "needed with explicit edges.)"
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
    owner: str = "dp.stats.histogram"

    def __call__(self, data: Any) -> np.ndarray:
        if is_out_of_core(data):  # counts in fixed public bins add up over blocks (dask, Chunks)
            result: np.ndarray = map_reduce(data, self)
            return result
        x = as_data(data, owner=self.owner, allow_empty=True)
        if self.nan_policy == "raise" and x.dtype.kind == "f":
            # One cheap reduction flags NaN (or ±inf pairs); only then pay for the exact check.
            with np.errstate(invalid="ignore", over="ignore"):  # ±inf and 1e308s only make the total non-finite
                total = np.add.reduce(x, axis=None)
            if not math.isfinite(total) and np.isnan(x).any():
                raise nan_error(self.owner)
        columns = [x[:, j] for j in range(x.shape[1])] if (self.per_column and x.ndim == 2) else [x.ravel()]
        return np.concatenate([self._counts(c) for c in columns]).astype(np.float64)

    def _counts(self, values: np.ndarray) -> np.ndarray:
        if self.uniform is not None:
            k, first, last = self.uniform
            return np.histogram(values, bins=k, range=(first, last))[0]
        return np.histogram(values, bins=self.edges)[0]


@attrs.frozen
class _CountsError:
    """Error bar of the counts: each exact count c is an integer, so |v − c| ≤ h gives |rint(v) − c| ≤ ⌊h + ½⌋, and
    clipping into [0, cap] ∋ c never moves the count further from it; laid out as the counts are (bins × columns)."""

    d: int
    k: int
    per_column: bool

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        bar = np.floor(
            np.broadcast_to(np.asarray(h, dtype=np.float64), (self.k * (self.d if self.per_column else 1),)) + 0.5
        )
        result: np.ndarray = bar.reshape(self.d, self.k).T if self.per_column else bar
        return result


def histogram(
    x: Any,
    privacy_params: Eps,
    *,
    bins: Any = None,
    range: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    density: bool = False,
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
    density : bool, default False
        As in numpy: return the probability density counts / (total · bin width), computed from the *noisy*
        counts and their *noisy* total (post-processing, no extra budget), so it integrates to 1 over the range. If
        every noisy count is 0 the density is 0 everywhere (numpy would give NaN). Per column with ``axis=0``.

    Returns
    -------
    counts : ndarray of int64 (float64 with ``density=True``)
        Private counts, clipped to [0, n·values per record] (post-processing), or the density.
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

    An empty array (n = 0 records) gives exact zero counts, as numpy, with no noise: under replace-one neighbours
    n is public and the empty dataset has no neighbour, so a constant output is private (its sensitivity is 0).
    The release still goes through the mechanism and charges the accountant like any other (a conservative
    record of what was asked).

    With ``density=True`` the total that normalises the density is the sum of the noisy counts: the noisy
    density is post-processing of the noisy histogram, so it costs nothing more and its guarantee is that of the
    counts. Values outside the range (and NaN under ``nan_policy="omit"``) are not in that total, as in numpy.

    Error bars (``full_response=True``, counts only): ``Response.accuracy(alpha)`` is ⌊h + ½⌋ per bin, h the
    noise's half-width; it covers numpy's exact counts with the public float64 edges. A density has no closed-form
    bar and refuses.
    """
    owner = "dp.stats.histogram"
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, owner=owner)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, owner=owner)
    check_params(privacy_params, mechanism, owner=owner)
    full_response = check_bool(full_response, "full_response", owner=owner)
    density = check_bool(density, "density", owner=owner)
    if bins is None:
        raise TypeError(f"{owner} needs bins=: an integer with range=(lower, upper), or a sequence of bin edges.")
    edges, uniform = _edges(bins, range, owner)
    out_of_core = is_out_of_core(x)
    data = as_data(first_block(x) if out_of_core else x, owner=owner, allow_empty=not out_of_core)
    ax = check_axis(axis, data.ndim, owner=owner, allowed=(None, 0))
    n = n_rows(x) if out_of_core else data.shape[0]
    d = 1 if data.ndim == 1 else data.shape[1]
    per_column = data.ndim == 2 and ax == 0
    k = edges.size - 1
    l1 = 2.0 * d
    l2 = math.sqrt(2.0 * d) if per_column else d * math.sqrt(2.0)
    if n == 0:
        l1 = l2 = 0.0  # the empty dataset has no replace-one neighbour: its (zero) counts are released exactly
    cap = n if per_column else n * d
    widths = np.diff(edges)

    def post(v: np.ndarray) -> np.ndarray:
        counts: np.ndarray = np.clip(np.rint(v), 0, cap).astype(np.int64)
        counts = counts.reshape(d, k).T if per_column else counts
        if not density:
            return counts
        # numpy's formula, n / db / n.sum(), on the noisy counts; an all-zero histogram has density 0, never NaN.
        total = counts.sum(axis=0)
        result: np.ndarray = counts / (widths[:, np.newaxis] if per_column else widths) / np.maximum(total, 1)
        return result

    target = HistogramTarget(edges, uniform=uniform, per_column=per_column, nan_policy=nan_policy, owner=owner)
    accuracy = None if density else _CountsError(d=d, k=k, per_column=per_column)
    plan = Plan(
        target=target,
        l1=l1,
        l2=l2,
        dims=k * (d if per_column else 1),
        postprocess=post,
        integer=True,
        accuracy=accuracy,
    )
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
