"""Plans of the DP moment statistics: sensitivities, post-processing and error bars of each target.

A plan (:class:`~diffpriv_py.stats._common.Plan`) pairs a target of :mod:`diffpriv_py.stats._targets` with its L1 and
L2 sensitivities under replace-one neighbours, the post-processing that turns the noisy vector into the reported
statistic (numpy's shape and dtype included), and the public map from the noise's half-widths to the statistic's
error bar (:mod:`diffpriv_py.stats._error_bars`). Plans depend on public information only, so one built for a
layout serves every release of that layout (:func:`_cached_plan`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from .._fixed_point import UNIT_ROUNDOFF, rounding_allowance
from ._common import Plan, check_ddof, finish, sensitivities
from ._error_bars import _CastError, _count_error, _finished_error, _integer_range, _LinearError, _VarianceError
from ._targets import ClippedStatistic, CovarianceTarget

# Worst change of the normalised sufficient statistics of one value under nan_policy="omit" (see _omit_plan):
# a value u ∈ [−½, ½] turning into NaN moves (count, Σu, Σu²) by (1, ½, ¼).
_OMIT_L1 = {1: 1.5, 2: 1.75}
_OMIT_L2 = {1: math.sqrt(1.25), 2: math.sqrt(1.3125)}


def _check_sum_fits(low: Any, high: Any, owner: str) -> None:
    """Refuse, before any charge, bounds whose sum over the n records (the range the released sum is clipped to)
    overflows float64: the release could then be infinite."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high)))
    if not ok:
        raise ValueError(
            f"The bounds of {owner} are too wide for a sum in float64: the number of values times the bounds, "
            f"[{float(np.min(low)):.3g}, {float(np.max(high)):.3g}], overflows to inf, so the released sum could be "
            "infinite. Narrow the bounds, or rescale the data (e.g. report it in other units)."
        )


def _popoviciu(m: int) -> float:
    """Largest sum of squared deviations of m values in an interval of width 1: ⌊m/2⌋⌈m/2⌉/m (Popoviciu 1935)."""
    return (m // 2) * ((m + 1) // 2) / m


@attrs.frozen
class _Shape:
    """The public layout of a release (hashable: it keys the plan cache)."""

    n: int
    d: int
    axis: int | None
    two_d: bool

    @property
    def per_statistic(self) -> int:
        """Number of values each released statistic aggregates."""
        if self.axis == 0:
            return self.n
        if self.axis == 1:
            return self.d
        return self.n * self.d

    @property
    def together(self) -> bool:
        return self.axis != 1

    @property
    def groups(self) -> int:
        """Number of released statistics."""
        return {None: 1, 0: self.d, 1: self.n}[self.axis]


def _raise_plan(
    statistic: str, s: _Shape, lo: np.ndarray, hi: np.ndarray, ddof: int, owner: str, root: bool = False
) -> Plan:
    """Plans under nan_policy="raise": the number of values is public, so it appears in the sensitivity.

    The target works in grid units (the width of each column's bounds, or of the pooled bounds); every sensitivity
    below is the real-number bound for the quantised values plus :func:`rounding_allowance` for the one rounding
    that turns the exact integer result into a float64.
    """
    m = s.per_statistic
    if statistic == "var":
        ddof = check_ddof(ddof, m, owner=owner)
    target = ClippedStatistic(statistic, lo, hi, axis=s.axis, ddof=ddof, owner=owner)
    grid = target.grid(s.d)
    # Per record, the largest change of a statistic in grid units (1 per value for a per-column grid).
    reach = float(np.ldexp(grid.spans(s.d), -grid.bits).sum()) if s.axis != 0 else np.ones(s.d)
    origin, unit = grid.origin, grid.unit()
    lo_d, hi_d = np.broadcast_to(lo, (s.d,)), np.broadcast_to(hi, (s.d,))
    one = s.axis is None or not s.two_d  # one released value: post-processing also on a Python float
    if statistic in ("sum", "mean"):
        if statistic == "sum":
            per = np.broadcast_to(reach + rounding_allowance(m), (s.groups,))
            with np.errstate(over="ignore"):
                if s.axis == 0:
                    low, high = s.n * lo_d, s.n * hi_d
                elif s.axis == 1:
                    low, high = lo_d.sum(), hi_d.sum()
                else:
                    low, high = s.n * lo_d.sum(), s.n * hi_d.sum()
            _check_sum_fits(low, high, owner)
            count = m
        else:
            per = np.broadcast_to(reach / m + rounding_allowance(1.0), (s.groups,))
            low, high = (lo_d, hi_d) if s.axis == 0 else (lo_d.mean(), hi_d.mean())
            count = 1

        post = _clip(count * origin, unit, low, high)
        scalar_post = _one_clip(float(count * origin), float(unit), float(low), float(high)) if one else None
        # Quantisation: each value's index is within grid.error steps of its exact position (Grid.over), so the
        # exact mean of the indices is within error·2⁻ᵇ widths of that of the clipped values (a sum: m times
        # that); the target's one rounding adds u·|target| ≤ u (mean) or u·m (sum).
        top = float(count)
        error: Any = _LinearError(
            unit=np.abs(unit),
            allowance=top * (grid.error * 2.0**-grid.bits + UNIT_ROUNDOFF),
            top=top,
            shift=np.abs(count * origin),
        )

    else:  # var, in units of the grid width squared (every quantised value lies in an interval of width 1)
        if s.axis == 0:
            # Chan's update: SS(y ∪ rest) = SS(rest) + (n−1)/n·(y − mean(rest))², so one value moves SS by at
            # most (n−1)/n in squared width units; divided by n − ddof.
            cap = _popoviciu(m) / (m - ddof)
            per = np.full(s.d, (s.n - 1) / (s.n * (s.n - ddof)))
        elif s.axis == 1:
            # One record's row variance ranges over [0, Popoviciu bound]; only its own coordinate moves.
            cap = _popoviciu(m) / (m - ddof)
            per = np.full(s.n, cap)
        else:
            # d values of one record replaced among N = n·d: SS moves by at most
            # min(d, ⌊d²/4⌋/d + d(N−d)/N) (block version of Chan's update; d = 1 gives (N−1)/N).
            k = s.d
            cap = _popoviciu(m) / (m - ddof)
            per = np.array([min(k, _popoviciu(k) + k * (m - k) / m) / (m - ddof)])
        per = per + rounding_allowance(cap)

        post = (_std if root else _variance)(cap, unit)
        scalar_post = (_one_std if root else _one_variance)(float(cap), float(unit)) if one else None
        ratio = m / (m - ddof)
        error = _VarianceError(
            unit=np.abs(unit),
            cap=cap,
            slope=2.0 * grid.error * math.sqrt(ratio) * 2.0**-grid.bits,
            floor=ratio * grid.error**2 * 4.0**-grid.bits + UNIT_ROUNDOFF * cap,
            root=root,
        )

    l1, l2 = sensitivities(per, together=s.together)
    return Plan(
        target=target,
        l1=l1,
        l2=l2,
        dims=per.size,
        postprocess=post,
        scalar_postprocess=scalar_post,
        accuracy=error,
    )


# ---- post-maps of the "raise" plans and counts, each beside its twin on a Python float ---------------------------
#
# Twins kept on measurement: a one-value release is post-processed on the Python float (or int) the mechanism
# returns, with the same IEEE operations as the numpy map (no numpy call on a 0-d array). Without the twins
# (scalar_postprocess=None), dp.stats.mean, sum, var and count of 10 values took 1.54-1.67x as long and std of 30
# values 1.29x (CPU time, interleaved rounds). test_stats.py's test_scalar_post_processing_equals_the_array_post_
# processing pins each pair bit for bit.


def _clip(shift: Any, scale: Any, low: Any, high: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``clip(shift + v·scale, low, high)``: a sum or mean from the noisy target in grid widths."""

    def post(v: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.clip(shift + v * scale, low, high)
        return result

    return post


def _one_clip(shift: float, scale: float, low: float, high: float) -> Callable[[float], float]:
    """:func:`_clip` on a Python float: the same IEEE operations (clip is min∘max).

    Conditional expressions give what ``min(max(u, low), high)`` gives (the same comparisons, the same operand on
    ties), without two builtin calls.
    """
    return lambda v: low if (u := shift + v * scale) < low else (high if u > high else u)


def _variance(cap: float, scale: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``clip(v, 0, cap)·scale²``: a variance from the noisy target in squared grid widths."""

    def post(v: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # a variance beyond float64 (bounds near ±1e308) is +inf, never NaN
            # + 0.0 turns a −0.0 from clip (numpy < 2 keeps the sign of a zero) into 0.0, as the scalar twin does
            result: np.ndarray = (np.clip(v, 0.0, cap) + 0.0) * scale * scale
            return result

    return post


def _one_variance(cap: float, scale: float) -> Callable[[float], float]:
    """:func:`_variance` on a Python float (an overflow is +inf there too, never NaN)."""
    return lambda v: (min(max(v, 0.0), cap) + 0.0) * scale * scale


def _std(cap: float, scale: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``√clip(v, 0, cap)·|scale|``: √(clip(v)·scale²) taken this way, the std of values within the bounds is always a
    finite double, even where their variance is beyond float64."""

    def post(v: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.sqrt(np.clip(v, 0.0, cap) + 0.0) * np.abs(scale)
        return result

    return post


def _one_std(cap: float, scale: float) -> Callable[[float], float]:
    """:func:`_std` on a Python float (always finite)."""
    size = abs(scale)
    return lambda v: math.sqrt(min(max(v, 0.0), cap) + 0.0) * size


def _count(cap: int) -> Callable[[np.ndarray], np.ndarray]:
    """``clip(rint(v), 0, cap)`` as int64: a count from the noisy number of present values."""

    def post(v: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.clip(np.rint(v), 0, cap).astype(np.int64)
        return result

    return post


def _one_count(cap: int) -> Callable[[float], int]:
    """:func:`_count` on a Python float or int (clip then round: the same integer for an integer cap)."""
    top = float(cap)
    return lambda v: round(min(max(v, 0.0), top))


def _omit_plan(
    statistic: str, s: _Shape, lo: np.ndarray, hi: np.ndarray, ddof: int, owner: str, root: bool = False
) -> Plan:
    """Plans under nan_policy="omit": the number of present values is private, so it is released too (or avoided).

    Each value is put on a grid centred in its bounds, u = (k − 2ᵇ⁻¹)/2ᵇ ∈ [−½, ½] in units of the width. Mean and
    variance release the vector (count, Σu[, Σu²]) per group and divide afterwards; one value turning into NaN
    moves it by at most (1, ½, ¼), and a value changing by at most (0, 1, ¼) — so L1 ≤ 1.5 (mean) or 1.75 (var)
    per value, plus the rounding allowance of the float64 Σu and Σu². The sum needs no count: on a grid that also
    spans 0, a missing value contributes 0, so each record moves it by at most max(hi, 0) − min(lo, 0).
    """
    if s.axis == 1:
        raise ValueError(
            f"{owner} supports nan_policy='omit' with axis=None or axis=0 only; with axis=1 use nan_policy='raise' "
            "after imputing missing values with a public value."
        )
    ddof = check_ddof(ddof, s.per_statistic, owner=owner)
    groups = 1 if s.axis is None else s.d
    cells = s.d if s.axis is None else 1  # values of one record inside one group
    max_count = s.n * cells
    lo_d, hi_d = np.broadcast_to(lo, (s.d,)), np.broadcast_to(hi, (s.d,))
    target = ClippedStatistic(statistic, lo, hi, axis=s.axis, nan_policy="omit", ddof=ddof, owner=owner)
    grid = target.grid(s.d)
    unit = grid.unit()
    if statistic == "sum":
        reach = np.ldexp(grid.spans(s.d), -grid.bits)
        per = reach if s.axis == 0 else np.array([float(reach.sum())])
        per = per + rounding_allowance(max_count)
        with np.errstate(over="ignore"):
            low, high = s.n * np.minimum(lo_d, 0.0), s.n * np.maximum(hi_d, 0.0)
            if s.axis is None:
                low, high = low.sum(), high.sum()
        _check_sum_fits(low, high, owner)

        def sum_post(v: np.ndarray) -> np.ndarray:
            result: np.ndarray = np.clip(v * unit, low, high)
            return result

        l1, l2 = sensitivities(per, together=True)
        top = float(max_count)  # |target| ≤ max_count widths; the exact sum is W·Y with |Y| ≤ max_count
        error = _LinearError(
            unit=np.abs(unit),
            allowance=top * (grid.error * 2.0**-grid.bits + UNIT_ROUNDOFF),
            top=top,
            shift=np.zeros_like(np.abs(unit)),
        )
        return Plan(target=target, l1=l1, l2=l2, dims=per.size, postprocess=sum_post, accuracy=error)

    order = 2 if statistic == "var" else 1
    # One rounding per released Σu (|Σu| ≤ count/2) and Σu² (≤ count/4): added once per group, to L1 and to L2.
    allowance = float(rounding_allowance(max_count / 2) + (rounding_allowance(max_count / 4) if order == 2 else 0))
    if s.axis is None:
        l1, l2 = cells * _OMIT_L1[order] + allowance, cells * _OMIT_L2[order] + allowance
    else:
        l1, l2 = groups * (_OMIT_L1[order] + allowance), math.sqrt(groups) * (_OMIT_L2[order] + allowance)
    centre = grid.origin + grid.offset / grid.scale
    width = unit

    def post(v: np.ndarray) -> np.ndarray:
        stats = v.reshape(order + 1, groups)
        count = np.clip(stats[0], 1.0, max_count)
        mean_u = np.clip(stats[1] / count, -0.5, 0.5)
        if statistic == "mean":
            low, high = (lo_d.min(), hi_d.max()) if s.axis is None else (lo_d, hi_d)
            result: np.ndarray = np.clip(centre + width * mean_u, low, high)
            return result
        count = np.maximum(count, ddof + 1.0)
        var_u = np.clip(stats[2] / count - mean_u**2, 0.0, 0.25) * count / (count - ddof)
        if root:  # the std as √var_u·|width|: finite even where the variance is beyond float64
            result = np.sqrt(var_u) * np.abs(width)
            return result
        with np.errstate(over="ignore"):
            result = var_u * width * width
            return result

    return Plan(target=target, l1=l1, l2=l2, dims=(order + 1) * groups, postprocess=post)


def _count_plan(s: _Shape, owner: str) -> Plan:
    # One record changes whether each of its d values is present (or True): at most 1 per value.
    if s.axis is None:
        per, cap = np.array([float(s.d)]), s.n * s.d
    elif s.axis == 0:
        per, cap = np.ones(s.d), s.n
    else:
        per, cap = np.full(s.n, float(s.d)), s.d
    l1, l2 = sensitivities(per, together=s.together)

    target = ClippedStatistic("count", np.asarray(0.0), np.asarray(1.0), axis=s.axis, owner=owner)
    return Plan(
        target=target,
        l1=l1,
        l2=l2,
        dims=per.size,
        postprocess=_count(cap),
        integer=True,
        scalar_postprocess=_one_count(cap),
        accuracy=_count_error,
    )


@functools.lru_cache(maxsize=512)
def _cached_plan(
    statistic: str,
    policy: str,
    n: int,
    d: int,
    axis: int | None,
    two_d: bool,
    pair: tuple[float, float] | None,
    ddof: int,
    owner: str,
    keepdims: bool,
    dtype: np.dtype | None,
) -> Plan:
    lo, hi = (np.asarray(1.0), np.asarray(2.0)) if pair is None else (np.asarray(pair[0]), np.asarray(pair[1]))
    return _plan(statistic, policy, _Shape(n=n, d=d, axis=axis, two_d=two_d), lo, hi, ddof, owner, keepdims, dtype)


def _plan(
    statistic: str,
    policy: str,
    s: _Shape,
    lo: np.ndarray,
    hi: np.ndarray,
    ddof: int,
    owner: str,
    keepdims: bool,
    dtype: np.dtype | None,
) -> Plan:
    """The statistic's plan with its whole post-processing: square root, numpy's output shape and dtype."""
    if statistic == "count":
        plan = _count_plan(s, owner)
    else:
        stat = "var" if statistic == "std" else statistic
        # The std is the square root of the variance, taken in grid units (root=True) so it never overflows.
        plan = (_omit_plan if policy == "omit" else _raise_plan)(stat, s, lo, hi, ddof, owner, statistic == "std")
    post, scalar_post, accuracy = plan.postprocess, plan.scalar_postprocess, plan.accuracy
    scalar = not s.two_d or s.axis is None
    kept = _kept_shape(s) if keepdims else None
    if accuracy is not None:
        if dtype is not None:
            accuracy = _CastError(accuracy, dtype)
        accuracy = functools.partial(_finished_error, accuracy, kept, scalar and kept is None)
    if dtype is not None:
        post = _then(post, functools.partial(_as_dtype, dtype=dtype))
        scalar_post = None  # numpy scalars of the requested dtype, through the array path
    if kept is not None:
        post = _then(post, functools.partial(_reshaped, shape=kept))
        scalar_post = None
    elif scalar:
        post = _then(post, _item if dtype is None else _dtype_item)
    return attrs.evolve(plan, postprocess=post, scalar_postprocess=scalar_post, accuracy=accuracy)


def _then(first: Any, second: Any) -> Any:
    return lambda v: second(first(v))


def _kept_shape(s: _Shape) -> tuple[int, ...]:
    """numpy's ``keepdims=True`` shape: the reduced axes stay with length one."""
    if not s.two_d:
        return (1,)
    return {None: (1, 1), 0: (1, s.d), 1: (s.n, 1)}[s.axis]


def _reshaped(values: Any, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(values).reshape(shape)


def _item(values: Any) -> Any:
    """A scalar result as a Python float (int for counts)."""
    return finish(np.asarray(values), True)


def _dtype_item(values: Any) -> Any:
    """A scalar result: a Python ``int`` for an integer dtype, else a numpy scalar of the requested float dtype.

    An integer result is exact as a Python ``int`` (it was clipped to the dtype's range), which is what
    ``sum(x, dtype=int)`` callers compare with ``isinstance(r, int)`` (diffprivlib's contract; a numpy integer is
    not an ``int``). A float32 or float16 result stays a numpy scalar, so its dtype is kept (numpy's
    ``np.sum(x, dtype=...)``); float64 is a ``float`` either way.
    """
    value = np.asarray(values).reshape(-1)[0]
    return int(value) if value.dtype.kind in "iu" else value


def _as_dtype(values: Any, dtype: np.dtype) -> np.ndarray:
    """numpy's ``dtype=`` for the output: integers are the rounded values clipped to the dtype's range."""
    arr = np.asarray(values, dtype=np.float64)
    if dtype.kind in "iu":
        return np.clip(np.rint(arr), *_integer_range(dtype)).astype(dtype)
    return arr.astype(dtype)


def _covariance_plan(n: int, d: int, lo: np.ndarray, hi: np.ndarray, ddof: Any, omit: bool, owner: str) -> Plan:
    """The plan of :func:`~diffpriv_py.stats.covariance` (its Notes give the sensitivities)."""
    with np.errstate(over="ignore"):
        r = np.broadcast_to(hi - lo, (d,)).astype(np.float64)
    iu = np.triu_indices(d)
    entries = iu[0].size
    if omit:
        check_ddof(ddof, 2, owner=owner)
        # Plus one rounding per released Σu (|·| ≤ n/2) and Σuuᵀ entry (|·| ≤ n/4), to L1 and (loosely) to L2.
        allowance = d * float(rounding_allowance(n / 2)) + entries * float(rounding_allowance(n / 4))
        l1 = max(1 + d / 2 + d * (d + 1) / 8, d + d / 4 + d * (d - 1) / 4) + allowance
        l2 = max(math.sqrt(1 + d / 4 + d * (d + 1) / 32), math.sqrt(d + d / 16 + d * (d - 1) / 8)) + allowance
        dims = 1 + d + entries
    else:
        ddof = check_ddof(ddof, n, owner=owner)
        # In units r_j·r_k every entry is at most ⌊n/2⌋⌈n/2⌉/(n(n − ddof)) ≤ n/(4(n − ddof)) in absolute value
        # (Cauchy–Schwarz and Popoviciu), which bounds the error of its one rounding.
        per = (n - 1) / (n * (n - ddof)) + float(rounding_allowance(n / (4 * (n - ddof))))
        l1, l2, dims = entries * per, math.sqrt(entries) * per, entries
    # Every exact entry, in units r_j·r_k, lies in [−bound, bound] (the diagonal in [0, bound]): Popoviciu and
    # Cauchy–Schwarz; under "omit" |u| ≤ ½ and count/(count − ddof) ≤ ddof + 1. Clipping the noisy entries there is
    # post-processing, and keeps the PSD projection's entries within d·bound (its spectral norm is at most the
    # Frobenius norm of the clipped matrix), so the released matrix is finite if d·bound·r_j·r_k is.
    bound = 0.25 * (ddof + 1) if omit else _popoviciu(n) / (n - ddof)
    diagonal = iu[0] == iu[1]
    with np.errstate(over="ignore"):
        largest = d * bound * np.outer(r, r)
    if not np.all(np.isfinite(largest)):
        raise ValueError(
            f"The bounds of {owner} are too wide for a covariance in float64: columns of width up to "
            f"{float(np.max(r)):.3g} give entries of up to {d * bound:.3g} × width_j × width_k, which overflows to "
            "inf, so the released matrix could be infinite. Narrow the bounds, or rescale the data (e.g. report it in "
            "other units) so that every width is below about 1e154."
        )

    def post(v: np.ndarray) -> np.ndarray:
        if omit:
            c = max(float(v[0]), ddof + 1.0)
            s1, s2 = v[1 : 1 + d], v[1 + d :]
            tri = (s2 - (s1[iu[0]] * s1[iu[1]]) / c) / (c - ddof)
        else:
            tri = v
        tri = np.clip(tri, np.where(diagonal, 0.0, -bound), bound)
        m = np.zeros((d, d))
        m[iu] = tri
        m = m + np.triu(m, 1).T
        w, vecs = np.linalg.eigh(m)
        m = (vecs * np.maximum(w, 0.0)) @ vecs.T
        m = (m + m.T) / 2
        result: np.ndarray = m * np.outer(r, r)
        return result

    target = CovarianceTarget(lo, hi, ddof=ddof, nan_policy="omit" if omit else "raise", owner=owner)
    target.grid(d)  # public: bounds without a representable fixed-point grid are refused here, before any charge
    return Plan(target=target, l1=l1, l2=l2, dims=dims, postprocess=post)
