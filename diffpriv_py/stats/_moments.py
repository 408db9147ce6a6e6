"""DP count, sum, mean, variance, standard deviation and covariance of bounded data (replace-one neighbours)."""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import numpy as np

from .._blockwise import first_block, is_out_of_core, map_reduce, n_rows
from .._fixed_point import (
    GRID_SLACK,
    GRID_TINY,
    UNIT_ROUNDOFF,
    Grid,
    GridSums,
    exact_ratio,
    grid_gram,
    grid_sums,
    rounding_allowance,
    square_bits,
    sum_bits,
    to_units,
)
from .._rng import RNGLike
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
    check_bounds,
    check_choice,
    check_ddof,
    check_params,
    finish,
    nan_error,
    release,
    scalar_bounds,
    sensitivities,
)
from ._kernels import non_missing

__all__ = ["count", "covariance", "mean", "std", "sum", "var"]

# Worst change of the normalised sufficient statistics of one value under nan_policy="omit" (see _omit_plan):
# a value u ∈ [−½, ½] turning into NaN moves (count, Σu, Σu²) by (1, ½, ¼).
_OMIT_L1 = {1: 1.5, 2: 1.75}
_OMIT_L2 = {1: math.sqrt(1.25), 2: math.sqrt(1.3125)}

SMALL = 32
"""Pooled statistics of at most this many values are computed in Python arithmetic (same bits, less overhead)."""
_ROUNDER = 1.5 * 2.0**52  # see ClippedStatistic._small
# numpy's float64 descriptor: native float64 arrays carry this very object (others take the as_data path, same result)
_FLOAT64 = np.dtype(np.float64)


@attrs.frozen(eq=False)
class ClippedStatistic:
    """Target of a DP moment statistic: exact sums on a public fixed-point grid across the bounds, in grid units.

    Every value is clipped to its bounds and mapped to an integer index on a grid of 2ᵇ steps across them
    (:mod:`diffpriv_py._fixed_point`); the sums of the indices are exact integers, so the value returned — the sum
    or mean in units of the bounds' width, the variance in units of its square, or the normalised (count, Σu, Σu²)
    under ``nan_policy="omit"`` — has the declared sensitivity as a float64, not only as a real number. It is the
    same, bit for bit, for in-memory data, :class:`~diffpriv_py.Chunks` and dask. It raises on NaN under
    ``nan_policy="raise"``; it is public so that tests and the sensitivity sampler can evaluate it on neighbours.
    """

    statistic: str
    lower: np.ndarray
    upper: np.ndarray
    axis: int | None = None
    nan_policy: str = "raise"
    ddof: int = 0
    who: str = "dp.stats"
    # Per record width d: the grid, and its parameters as Python floats when they are scalars (the small path).
    _grids: dict[Any, Any] = attrs.field(init=False, factory=dict, repr=False)

    def grid(self, d: int) -> Grid:
        """The public grid for records of d values (depends on the bounds, d and the statistic only)."""
        return self._grid(d)[0]

    def _grid(self, d: int) -> tuple[Grid, tuple[float, float, float, float] | None]:
        cached = self._grids.get(d)
        if cached is None:
            grid = self._make_grid(d)
            parts = (grid.origin, grid.scale, grid.low, grid.high, grid.offset)
            small = None
            # The small path's float rounding and sums are exact while SMALL indices of the grid stay below 2^52.
            if (
                all(np.ndim(p) == 0 for p in parts)
                and float(grid.offset) == 0.0
                and max(abs(float(grid.low)), abs(float(grid.high))) * SMALL <= 2.0**52
            ):
                small = (float(grid.origin), float(grid.scale), float(grid.low), float(grid.high))
            cached = self._grids[d] = (grid, small)
        return cached

    def _make_grid(self, d: int) -> Grid:
        order = 2 if self.statistic == "var" else 1
        if order == 2:
            bits = square_bits(d, per_record=d if self.axis == 1 else 1)
        else:
            bits = sum_bits(d)
        pooled = self.axis != 0
        if self.nan_policy == "omit":
            offset = "zero" if self.statistic == "sum" else "centre"
        else:
            offset = "origin"
        return Grid.over(self.lower, self.upper, bits, pooled=pooled, offset=offset, who=self.who)

    def __call__(self, data: Any) -> np.ndarray | np.floating:
        if self.statistic == "count":
            if type(data) is not np.ndarray and is_out_of_core(data):
                if self.axis == 1:
                    raise ValueError(_AXIS1_OUT_OF_CORE.format(who=self.who))
                result: np.ndarray | np.floating[Any] = map_reduce(
                    data, lambda b: non_missing(self._block(b), self.axis)
                )
                return result
            return non_missing(as_data(data, who=self.who, allow_bool=True), self.axis)
        if type(data) is not np.ndarray and is_out_of_core(data):
            if self.axis == 1:
                raise ValueError(_AXIS1_OUT_OF_CORE.format(who=self.who))
            d = _width(as_data(first_block(data), who=self.who))
            grid = self.grid(d)
            sums = map_reduce(data, lambda b: self._sums(self._block(b), grid))
        else:
            x = (
                data
                if type(data) is np.ndarray and data.dtype is _FLOAT64 and 0 < data.ndim <= 2 and data.size
                else None
            )
            if x is None:
                x = as_data(data, who=self.who)
            grid, small = self._grid(1 if x.ndim == 1 else x.shape[1])  # _width(x), inline
            if (
                small is not None
                and x.size <= SMALL
                and self.nan_policy == "raise"
                and (x.ndim == 1 or self.axis is None)
            ):
                value = self._small(x, small, grid.bits)
                if value is not None:
                    return value
            sums = self._sums(x, grid)
        return self._finish(sums, grid)

    def _small(self, x: np.ndarray, grid: tuple[float, float, float, float], bits: int) -> np.floating | None:
        """The pooled statistic of at most :data:`SMALL` values in Python arithmetic; None if a value is NaN.

        Bit for bit the array path (:meth:`Grid.index`, then :meth:`_finish`): the same IEEE operations on the same
        float64 values ((x − origin)·scale, clip, round half to even), exact Python integer sums, and one correctly
        rounded int/int division or int→float conversion. A bounded loop here because a dozen numpy calls on a
        10-value array cost more than the whole noisy release.
        """
        origin, scale, low, high = grid
        values = x.tolist() if x.ndim == 1 else x.ravel().tolist()
        # Round half to even as float arithmetic: for |c| ≤ 2^51, c + 1.5·2^52 lies in [2^52, 2^53), where the
        # doubles are exactly the integers, so IEEE addition rounds c to the nearest integer, ties to even (as
        # round() and rint do), and subtracting 1.5·2^52 is exact. _grid keeps |low|, |high| ≤ 2^52/SMALL, so
        # the indices and their sum are integers below 2^52, all exact in float64. A NaN value stays NaN through
        # the comparisons (both false) and makes the sum NaN: one test instead of one per value.
        ks = [
            ((low if (u := (v - origin) * scale) < low else (high if u > high else u)) + _ROUNDER) - _ROUNDER
            for v in values
        ]
        total = builtins.sum(ks)
        if total != total:
            return None  # NaN: the array path gives the nan_policy's error
        m, s1 = len(ks), int(total)
        if self.statistic == "sum":
            result: np.floating[Any] | None = np.float64(math.ldexp(float(s1), -bits))
            return result
        if self.statistic == "mean":
            result = np.float64(s1 / (m << bits))
            return result
        s2 = builtins.sum(k * k for k in map(int, ks))  # Python ints: the squares exceed 2^53
        result = np.float64((m * s2 - s1 * s1) / ((m * (m - self.ddof)) << (2 * bits)))
        return result

    def _block(self, block: Any) -> np.ndarray:
        return as_data(block, who=self.who, allow_bool=self.statistic == "count")

    def _sums(self, x: np.ndarray, grid: Grid) -> GridSums:
        return grid_sums(x, grid, self.axis, 2 if self.statistic == "var" else 1)

    def _finish(self, sums: GridSums, grid: Grid) -> np.ndarray:
        """The released coordinates from the exact integer sums (one correctly rounded operation each)."""
        b, m = grid.bits, sums.values
        if self.nan_policy == "omit":
            if self.statistic == "sum":
                return to_units(sums.s1, b)
            parts = [np.asarray(sums.present, dtype=np.float64), to_units(sums.s1, b)]
            if self.statistic == "var":
                parts.append(to_units(sums.s2, 2 * b))
            return np.stack([np.atleast_1d(p) for p in parts]).ravel()
        if np.any(np.asarray(sums.present) != m):
            raise nan_error(self.who)
        if self.statistic == "sum":
            return to_units(sums.s1, b)
        if self.statistic == "mean":
            return exact_ratio(sums.s1, m, b)
        # var: n·Σk² − (Σk)² = n·SS exactly (integers), then one rounding of SS/(m − ddof).
        return exact_ratio(m * sums.s2 - sums.s1 * sums.s1, m * (m - self.ddof), 2 * b)


_AXIS1_OUT_OF_CORE = (
    "{who} with axis=1 releases one value per record, which does not fit the blockwise (out-of-core) path; "
    "use axis=None or axis=0 on dask data or Chunks, or compute per-record statistics in memory."
)


def _width(x: np.ndarray) -> int:
    return 1 if x.ndim == 1 else x.shape[1]


def _check_sum_fits(low: Any, high: Any, who: str) -> None:
    """Refuse, before any charge, bounds whose sum over the n records (the range the released sum is clipped to)
    overflows float64: the release could then be infinite."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high)))
    if not ok:
        raise ValueError(
            f"The bounds of {who} are too wide for a sum in float64: the number of values times the bounds, "
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
    statistic: str, s: _Shape, lo: np.ndarray, hi: np.ndarray, ddof: int, who: str, root: bool = False
) -> Plan:
    """Plans under nan_policy="raise": the number of values is public, so it appears in the sensitivity.

    The target works in grid units (the width of each column's bounds, or of the pooled bounds); every sensitivity
    below is the real-number bound for the quantised values plus :func:`rounding_allowance` for the one rounding
    that turns the exact integer result into a float64.
    """
    m = s.per_statistic
    if statistic == "var":
        ddof = check_ddof(ddof, m, who=who)
    target = ClippedStatistic(statistic, lo, hi, axis=s.axis, ddof=ddof, who=who)
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
            _check_sum_fits(low, high, who)
            count = m
        else:
            per = np.broadcast_to(reach / m + rounding_allowance(1.0), (s.groups,))
            low, high = (lo_d, hi_d) if s.axis == 0 else (lo_d.mean(), hi_d.mean())
            count = 1

        def clip_post(v: np.ndarray, low: Any = low, high: Any = high) -> np.ndarray:
            result: np.ndarray = np.clip(count * origin + v * unit, low, high)
            return result

        post: Callable[[np.ndarray], np.ndarray] = clip_post

        scalar_post = _scalar_clip(float(count * origin), float(unit), float(low), float(high)) if one else None
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

        def var_post(v: np.ndarray, cap: float = cap) -> np.ndarray:
            with np.errstate(over="ignore"):  # a variance beyond float64 (bounds near ±1e308) is +inf, never NaN
                # + 0.0 turns a −0.0 from clip (numpy < 2 keeps the sign of a zero) into 0.0, as the scalar path does
                result: np.ndarray = (np.clip(v, 0.0, cap) + 0.0) * unit * unit
                return result

        def std_post(v: np.ndarray, cap: float = cap) -> np.ndarray:
            # √(clip(v)·unit²) as √clip(v)·|unit|: the std of values within the bounds is always a finite double,
            # even where their variance is beyond float64.
            result: np.ndarray = np.sqrt(np.clip(v, 0.0, cap) + 0.0) * np.abs(unit)
            return result

        post = std_post if root else var_post

        scalar_post = (_scalar_std if root else _scalar_variance)(float(cap), float(unit)) if one else None
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


def _scalar_clip(shift: float, scale: float, low: float, high: float) -> Callable[[float], float]:
    """``np.clip(shift + v·scale, low, high)`` on a Python float: the same IEEE operations (clip is min∘max).

    Conditional expressions give what ``min(max(u, low), high)`` gives (the same comparisons, the same operand on
    ties), without two builtin calls.
    """
    return lambda v: low if (u := shift + v * scale) < low else (high if u > high else u)


def _scalar_variance(cap: float, scale: float) -> Callable[[float], float]:
    """``np.clip(v, 0, cap)·scale·scale`` on a Python float (an overflow is +inf there too, never NaN)."""
    return lambda v: (min(max(v, 0.0), cap) + 0.0) * scale * scale


def _scalar_std(cap: float, scale: float) -> Callable[[float], float]:
    """``√np.clip(v, 0, cap)·|scale|`` on a Python float (the std path of :func:`_raise_plan`, always finite)."""
    size = abs(scale)
    return lambda v: math.sqrt(min(max(v, 0.0), cap) + 0.0) * size


@attrs.frozen(eq=False)
class _LinearError:
    """Error bar of a sum or mean reported as clip(shift + v·unit) (v the noised target in widths, |v| ≤ top + h).

    With |noise| ≤ h (probability ≥ 1 − α) the reported value is within

        (h + allowance)·|unit|·(1 + 2⁻⁴⁰) + 2⁻⁴⁰·(|shift| + (top + h)·|unit|)

    of the exact statistic of the clipped data. Proof: the exact value is shift + W·Y (W the exact width, Y ∈
    [0, top] the exact mean or sum of positions in widths) and the target t satisfies |t − Y| ≤ allowance (the grid's
    quantisation and the target's rounding, see :func:`_raise_plan`). So shift + v·unit is within
    (h + allowance)·|unit| + top·|unit − W| of it, with |unit − W| ≤ 3.0001u·W; forming shift + v·unit in float64
    costs at most 2.0001u·(|shift| + (top + h)·|unit|), evaluating this bar a few u more; every such u-term is
    inside the 2⁻⁴⁰ terms (and 2⁻¹⁰⁷² covers their underflow). Clipping into a range that holds the exact value
    never moves the estimate further from it.
    """

    unit: Any
    allowance: float
    top: float
    shift: Any

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        with np.errstate(over="ignore"):  # bounds near ±1e308: an infinite bar, like the statistic's range
            noise = (h + self.allowance) * self.unit * (1.0 + GRID_SLACK)
            result: np.ndarray = noise + GRID_SLACK * (self.shift + (self.top + h) * self.unit) + GRID_TINY
        return result


@attrs.frozen(eq=False)
class _VarianceError:
    """Error bar of a variance reported as clip(v, 0, cap)·unit², or of its root √clip(v, 0, cap)·|unit|.

    Quantisation: with k_i = y_i + ε_i (|ε_i| ≤ e index steps, :class:`~diffpriv_py._fixed_point.Grid`) the sum of
    squared deviations moves by ΔSS = 2Σ(y_i − ȳ)ε_i + Σ(ε_i − ε̄)², and Cauchy–Schwarz gives
    |ΔSS| ≤ 2e·√(m·SS_y) + m·e². In widths² (V = SS_y/((m − ddof)·4ᵇ)) the quantised variance is therefore within
    ``slope``·√V + ``floor`` of the exact variance V of the clipped data, with slope = 2e·√(m/(m − ddof))·2⁻ᵇ and
    floor = m/(m − ddof)·e²·4⁻ᵇ + u·cap (the latter for the target's one correctly rounded division).

    Given |noise| ≤ h the clipped noisy value c satisfies |c − V| ≤ h + slope·√V + floor (V ∈ [0, cap], so clipping
    only helps). √V is unknown but V ≤ c + h + slope·√V + floor, a quadratic inequality: √V ≤ s⁺ =
    (slope + √(slope² + 4(c + h + floor)))/2 (and ≤ √cap). Hence |c − V| ≤ E = h + slope·min(s⁺, √cap) + floor —
    a public function of the released value, so low-variance data get the small allowance they deserve, and the
    worst case (V = cap) is e·2⁻ᵇ·m/(m − ddof) + … . The variance bar is E·unit² and the std bar the larger distance
    from √c to √max(c − E, 0) and √(c + E), both computed in a cancellation-free form; c is recovered from the
    reported value within a relative 2⁻⁴⁰, and the roundings of unit² against W², of the post-processing and of
    this bar are covered by the 2⁻⁴⁰ terms, their underflow (values within 1e-300 of each other) by 2⁻¹⁰⁷².
    """

    unit: Any
    cap: float
    slope: float
    floor: float
    root: bool

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        unit = self.unit
        v = np.asarray(value, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            r = v / unit  # the reported std in widths
            # c from the reported value: a variance may have underflowed (GRID_TINY covers that); a std only when c is
            # so small that its error is far inside the floor term.
            c_hi = (r * r if self.root else (v + GRID_TINY) / unit / unit) * (1.0 + GRID_SLACK)
            c_up = np.where(np.isnan(c_hi), self.cap, np.minimum(c_hi, self.cap))
            s_max = np.minimum((self.slope + np.sqrt(self.slope**2 + 4.0 * (c_up + h + self.floor))) / 2.0,
                               math.sqrt(self.cap))  # fmt: skip
            spread = h + self.slope * s_max + self.floor
            if not self.root:
                result: np.ndarray = (spread * (1.0 + GRID_SLACK) + GRID_SLACK * self.cap) * unit * unit + GRID_TINY
                return result
            # √(c_hi + E) − r and r − √max(c_lo − E, 0) (c_lo = r²(1 − 2⁻⁴⁰)) without cancellation.
            excess = GRID_SLACK * r * r + spread
            c_lo = r * r * (1.0 - GRID_SLACK) - spread
            up = excess / (np.sqrt(c_hi + spread) + r)
            down = np.where(c_lo > 0.0, excess / (r + np.sqrt(np.maximum(c_lo, 0.0))), r)
            result = (np.maximum(up, down) * (1.0 + GRID_SLACK) + GRID_SLACK * math.sqrt(self.cap)) * unit + GRID_TINY
            return result


def _count_error(h: np.ndarray, value: Any) -> np.ndarray:
    """The exact count c is an integer: |v − c| ≤ h implies |rint(v) − c| ≤ ⌊h + ½⌋ (h itself for integer noise)."""
    return np.floor(h + 0.5)


def _finished_error(error: Any, kept: tuple[int, ...] | None, scalar: bool, h: np.ndarray, value: Any) -> Any:
    """The half-widths in the shape of the reported value: numpy's keepdims shape, a Python float, or the array."""
    out = np.asarray(error(h, np.asarray(value, dtype=np.float64).reshape(np.shape(h)) if kept else value), dtype=float)
    if kept is not None:
        return out.reshape(kept)
    return finish(out, scalar)


def _omit_plan(
    statistic: str, s: _Shape, lo: np.ndarray, hi: np.ndarray, ddof: int, who: str, root: bool = False
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
            f"{who} supports nan_policy='omit' with axis=None or axis=0 only; with axis=1 use nan_policy='raise' "
            "after imputing missing values with a public value."
        )
    ddof = check_ddof(ddof, s.per_statistic, who=who)
    groups = 1 if s.axis is None else s.d
    cells = s.d if s.axis is None else 1  # values of one record inside one group
    max_count = s.n * cells
    lo_d, hi_d = np.broadcast_to(lo, (s.d,)), np.broadcast_to(hi, (s.d,))
    target = ClippedStatistic(statistic, lo, hi, axis=s.axis, nan_policy="omit", ddof=ddof, who=who)
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
        _check_sum_fits(low, high, who)

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


def _count_plan(s: _Shape, who: str) -> Plan:
    # One record changes whether each of its d values is present (or True): at most 1 per value.
    if s.axis is None:
        per, cap = np.array([float(s.d)]), s.n * s.d
    elif s.axis == 0:
        per, cap = np.ones(s.d), s.n
    else:
        per, cap = np.full(s.n, float(s.d)), s.d
    l1, l2 = sensitivities(per, together=s.together)

    def post(v: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.clip(np.rint(v), 0, cap).astype(np.int64)
        return result

    def scalar_post(v: float) -> int:
        return round(min(max(v, 0.0), float(cap)))  # clip then round: the same integer for an integer cap

    target = ClippedStatistic("count", np.asarray(0.0), np.asarray(1.0), axis=s.axis, who=who)
    return Plan(
        target=target,
        l1=l1,
        l2=l2,
        dims=per.size,
        postprocess=post,
        integer=True,
        scalar_postprocess=scalar_post,
        accuracy=_count_error,
    )


def _run(
    statistic: str,
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any,
    axis: Any,
    nan_policy: str,
    mechanism: str,
    ddof: int,
    rng: RNGLike,
    accountant: Any,
    full_response: Any,
    who: str,
    keepdims: Any = False,
    dtype: Any = None,
) -> Any:
    # The common arguments (exact option strings, True/False, a float64 array, axis=None) are accepted inline: these
    # checks are most of a small release's argument handling, and each check function returns such values unchanged.
    if type(nan_policy) is not str or nan_policy not in NAN_POLICIES:
        nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, who=who)
    if type(mechanism) is not str or mechanism not in MECHANISMS:
        mechanism = check_choice(mechanism, "mechanism", MECHANISMS, who=who)
    if mechanism != "laplace" or not isinstance(privacy_params, Eps):  # Laplace takes any Eps (check_params' rule)
        check_params(privacy_params, mechanism, who=who)
    if full_response is not False and full_response is not True:
        full_response = check_bool(full_response, "full_response", who=who)
    if keepdims is not False and keepdims is not True:
        keepdims = check_bool(keepdims, "keepdims", who=who)
    out_dtype = None if dtype is None else _check_dtype(dtype, who)
    out_of_core = type(x) is not np.ndarray and is_out_of_core(x)
    if type(x) is np.ndarray and x.dtype is _FLOAT64 and 0 < x.ndim <= 2 and x.size:  # what as_data accepts as is
        data = x
    else:
        # Out-of-core data (dask, Chunks): the first block gives the layout and dtype, one cheap pass the public n.
        data = as_data(first_block(x) if out_of_core else x, who=who, allow_bool=statistic == "count")
    ax = None if axis is None else check_axis(axis, data.ndim, who=who)
    if out_of_core and ax == 1:
        raise ValueError(_AXIS1_OUT_OF_CORE.format(who=who))
    two_d = data.ndim == 2
    n, d = n_rows(x) if out_of_core else data.shape[0], data.shape[1] if two_d else 1
    policy = "omit" if nan_policy == "omit" and data.dtype.kind == "f" else "raise"
    pair: tuple[float, float] | None = None
    arrays: tuple[np.ndarray, np.ndarray] | None = None
    if statistic != "count":
        pair = scalar_bounds(bounds)
        if pair is None:
            arrays = check_bounds(bounds, d if two_d else None, who=who)
    if (statistic in ("var", "std") or policy == "omit") and (type(ddof) is not int or ddof != 0):  # 0 < n: valid
        ddof = check_ddof(ddof, n if ax == 0 else (d if ax == 1 else n * d), who=who)
    if arrays is None:
        # Everything a plan depends on is public and hashable here, so repeated releases reuse one plan and its
        # mechanism (the same objects a fresh build would give).
        plan = _cached_plan(statistic, policy, n, d, ax, two_d, pair, ddof, who, keepdims, out_dtype)
    else:
        plan = _plan(statistic, policy, _Shape(n=n, d=d, axis=ax, two_d=two_d), *arrays, ddof, who, keepdims, out_dtype)
    return release(
        plan,
        privacy_params,
        x if out_of_core else data,
        mechanism=mechanism,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
    )


def _check_dtype(dtype: Any, who: str) -> np.dtype[Any]:
    try:
        out: np.dtype[Any] | None = np.dtype(dtype)
    except TypeError:
        out = None
    if out is None or out.kind not in "iuf":
        raise TypeError(
            f"The 'dtype' of {who} must be an integer or floating-point dtype, as numpy's; got {dtype!r}. Pass e.g. "
            "dtype=int for an integer result, or leave dtype=None for float64."
        )
    return out


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
    who: str,
    keepdims: bool,
    dtype: np.dtype | None,
) -> Plan:
    lo, hi = (np.asarray(1.0), np.asarray(2.0)) if pair is None else (np.asarray(pair[0]), np.asarray(pair[1]))
    return _plan(statistic, policy, _Shape(n=n, d=d, axis=axis, two_d=two_d), lo, hi, ddof, who, keepdims, dtype)


def _plan(
    statistic: str,
    policy: str,
    s: _Shape,
    lo: np.ndarray,
    hi: np.ndarray,
    ddof: int,
    who: str,
    keepdims: bool,
    dtype: np.dtype | None,
) -> Plan:
    """The statistic's plan with its whole post-processing: square root, numpy's output shape and dtype."""
    if statistic == "count":
        plan = _count_plan(s, who)
    else:
        stat = "var" if statistic == "std" else statistic
        # The std is the square root of the variance, taken in grid units (root=True) so it never overflows.
        plan = (_omit_plan if policy == "omit" else _raise_plan)(stat, s, lo, hi, ddof, who, statistic == "std")
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


def _integer_range(dtype: np.dtype) -> tuple[float, float]:
    """The float64 range an integer dtype's results are clipped to (float(2⁶³ − 1) rounds up to 2⁶³: one below)."""
    info = np.iinfo(dtype)
    top = float(info.max)
    if int(top) > info.max:
        top = float(np.nextafter(top, -np.inf))
    return float(info.min), top


def _as_dtype(values: Any, dtype: np.dtype) -> np.ndarray:
    """numpy's ``dtype=`` for the output: integers are the rounded values clipped to the dtype's range."""
    arr = np.asarray(values, dtype=np.float64)
    if dtype.kind in "iu":
        return np.clip(np.rint(arr), *_integer_range(dtype)).astype(dtype)
    return arr.astype(dtype)


@attrs.frozen(eq=False)
class _CastError:
    """The error bar after ``dtype=``: rounding to an integer adds ½; a value clipped to an integer dtype's end may
    hide an exact value beyond it (infinite bar there; elsewhere the clip did nothing); a float dtype's cast adds
    its relative precision and its smallest subnormal (an overflow to ±inf gives an infinite bar)."""

    inner: Any
    dtype: np.dtype

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        v = np.asarray(value, dtype=np.float64)
        bar = np.asarray(self.inner(h, v), dtype=np.float64)
        if self.dtype.kind in "iu":
            low, high = _integer_range(self.dtype)
            result: np.ndarray = np.where((v <= low) | (v >= high), np.inf, bar + 0.5)
            return result
        fine = np.finfo(self.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            result = bar + float(fine.eps) * (np.abs(v) + bar) + float(fine.smallest_subnormal)
        return result


_COMMON_PARAMS = """
    axis : {None, 0, 1} or tuple of them, default None
        Records are rows. ``None`` pools every value into one statistic; ``0`` gives one statistic per column of
        2-D data, released together as one vector; ``1`` gives one per record (row). A tuple has numpy's meaning:
        ``(0, 1)`` pools every value of 2-D data (as ``None``), ``(0,)`` is ``0``.
    keepdims : bool, default False
        As in numpy: keep the reduced axes with length one, so the result broadcasts against the data (an array
        of shape ``(1,)``, ``(1, 1)``, ``(1, d)`` or ``(n, 1)``, never a bare float).
    nan_policy : {"raise", "omit"}, default "raise"
        ``"raise"`` refuses data containing NaN (a curator-side error: the accountant, if any, has already been
        charged). ``"omit"`` leaves NaN out, with a sensitivity that accounts for the data-dependent count (see
        Notes).
    mechanism : {"laplace", "gaussian"}, default "laplace"
        The noise: Laplace (L1 sensitivity, any privacy parameters) or Gaussian (L2 sensitivity, needs ``Del``).
    rng : None, int or numpy.random.Generator, optional
        ``None`` (default) draws cryptographically strong noise; a seed is for tests only.
    accountant : Accountant, optional
        Charged with the guarantee before the data are read.
    full_response : bool, default False
        Return the :class:`~diffpriv_py.Response` (its ``response`` holds the post-processed value) instead of the
        bare value.
"""


_F = TypeVar("_F", bound=Callable[..., Any])


def _doc(func: _F) -> _F:
    # Generic in the function's type, so type checkers keep each statistic's signature (privacy_params: Eps ...).
    if func.__doc__ is not None:  # None under python -OO
        func.__doc__ = func.__doc__.replace("    {common}\n", _COMMON_PARAMS.strip("\n") + "\n")
    return func


@_doc
def mean(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
) -> Any:
    """Differentially private mean of bounded data.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D (one value per record) or 2-D (one record per row).
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public bounds; data are clipped to them. Scalars, or one value per column for 2-D data. Required: they
        are never derived from the data.
    {common}

    Returns
    -------
    float, ndarray or Response
        The private mean (a float for 1-D data or ``axis=None``, an array otherwise).

    Notes
    -----
    ε-DP with Laplace noise, (ε, δ)-DP with Gaussian noise, under replace-one neighbours (the number of records n
    is public). The mean of n values clipped to [lo, hi] changes by at most (hi − lo)/n when one record is
    replaced (Dwork, McSherry, Nissim & Smith 2006); with ``axis=0`` the column means are one vector release of
    L1 sensitivity Σ_j (hi_j − lo_j)/n, computed in units of each column's width so every column gets noise
    proportional to its own range (equivalent to splitting ε equally across columns). ``axis=None`` on 2-D data
    changes d values at once: sensitivity Σ_j (hi_j − lo_j)/(n·d).

    ``nan_policy="omit"``: the count of present values is then private, so (count, Σu) with
    u = (clip(x) − c)/(hi − lo) ∈ [−½, ½] is released as one vector (L1 sensitivity 1.5 per value, from a value
    turning into NaN) and the mean is c + (hi − lo)·Σu/count. This fixes diffprivlib's ``nanmean``, which divides
    a sensitivity by the total length while averaging only the present values.

    The noisy mean is clipped back into [lo, hi] (post-processing: it never increases the error and costs no
    privacy).

    Exact in floating point: values are clipped and mapped to integers on a public grid of 2³⁵ steps across the
    bounds, summed exactly, and divided once (correctly rounded); the sensitivity, in units of hi − lo, is 1/n plus
    2⁻⁵² for that rounding, so it holds for the computed float64 value, not only for real numbers (Casacuberta et al.
    2022). Each value moves by at most about (hi − lo)·2⁻³⁶. See ``docs/security.md``, "Exact aggregation".

    The error bar of a full response (``Response.accuracy``) covers the exact mean of the clipped data: it adds
    that quantisation (and the target's rounding) to the noise's bar (see ``_LinearError`` and ``docs/accuracy.md``).

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> ages = np.array([23, 35, 41, 52, 67, 30, 44])
    >>> m = dp.stats.mean(ages, dp.Eps(1.0), bounds=(0, 100), rng=0)
    """
    return _run(
        "mean",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=0,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        keepdims=keepdims,
        who="dp.stats.mean",
    )


@_doc
def sum(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
    dtype: Any = None,
) -> Any:
    """Differentially private sum of bounded data.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds (scalars, or one value per column). Required.
    {common}
    dtype : dtype, optional
        numpy's ``dtype=`` for the result: an integer dtype (e.g. ``dtype=int``) gives the noisy sum rounded to
        the nearest integer and clipped into the dtype's range (post-processing); a float dtype casts. With a dtype
        a scalar result is a numpy scalar of it (as ``np.sum``). Default: float64, a scalar as a Python float.

    Returns
    -------
    float, ndarray or Response
        The private sum.

    Notes
    -----
    ε-DP (Laplace) or (ε, δ)-DP (Gaussian) under replace-one neighbours: replacing one record moves the clipped
    sum by at most hi − lo per value (Σ_j (hi_j − lo_j) for a 2-D record). With ``nan_policy="omit"`` a missing
    value contributes 0, so the sensitivity is max(hi, 0) − min(lo, 0) per value. The result is clipped into the
    range of possible sums (post-processing).

    Exact in floating point: the clipped values are integers on a public grid of 2³⁵ steps across the bounds, summed
    exactly; the one rounding of the exact sum to float64 is added to the sensitivity (2⁻⁵² of the largest possible
    sum), so the guarantee holds for the computed value (Casacuberta et al. 2022). The error bar of a full response
    covers the exact sum of the clipped data: it adds m·(hi − lo)·2⁻³⁶ (about) for the quantisation of m values.
    """
    return _run(
        "sum",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=0,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        keepdims=keepdims,
        dtype=dtype,
        who="dp.stats.sum",
    )


@_doc
def var(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    ddof: int = 0,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
) -> Any:
    """Differentially private variance of bounded data.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds (scalars, or one value per column). Required.
    ddof : int, default 0
        Delta degrees of freedom, as numpy: the divisor is (number of values − ddof).
    {common}

    Returns
    -------
    float, ndarray or Response
        The private variance, in [0, (hi − lo)²·⌊m/2⌋⌈m/2⌉/(m(m − ddof))] for m values.

    Notes
    -----
    One release of the clipped variance itself (no budget split). Under replace-one neighbours the sum of squared
    deviations of n values in an interval of width r moves by at most (n − 1)/n·r²: with m and SS the mean and
    sum of squares of the other n − 1 values, SS_total = SS + (n − 1)/n·(y − m)² (Chan, Golub & LeVeque 1979)
    and (y − m)² ∈ [0, r²]. Hence the sensitivity (n − 1)·r²/(n·(n − ddof)), slightly below the common bound
    r²/n. The noisy value is clipped into the feasible range (post-processing).

    ``nan_policy="omit"`` releases (count, Σu, Σu²) with u = (clip(x) − c)/r ∈ [−½, ½] (L1 sensitivity 1.75 per
    value) and computes the variance from them.

    Exact in floating point: values are integers on a public grid of 2¹⁸ steps across the bounds, n·Σk² − (Σk)² is
    an exact integer and the variance is one correctly rounded division; the sensitivity adds 2⁻⁵² of the largest
    possible variance for that rounding. Each value moves by at most about r·2⁻¹⁹, the variance by up to about
    2⁻¹⁹·r² (2e·√V·2⁻ᵇ·√(n/(n − ddof)) + …, V the variance in units of r²).

    The error bar of a full response covers the exact variance of the clipped data: it adds that quantisation,
    bounded from the released value, to the noise's bar (proof in ``_VarianceError``; ``docs/accuracy.md``), so at
    very large n·ε it levels off near 2⁻¹⁹·r² instead of shrinking like 1/(n·ε).
    """
    return _run(
        "var",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=ddof,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        keepdims=keepdims,
        who="dp.stats.var",
    )


@_doc
def std(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    ddof: int = 0,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
) -> Any:
    """Differentially private standard deviation: the square root of :func:`var` (post-processing).

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds (scalars, or one value per column). Required.
    ddof : int, default 0
        Delta degrees of freedom of the variance.
    {common}

    Returns
    -------
    float, ndarray or Response
        The private standard deviation. With ``full_response=True`` the Response's mechanism is the variance
        release and its ``response`` the square root.

    Notes
    -----
    Same guarantee and sensitivity as :func:`var`; the square root of the clipped noisy variance is post-processing.
    The error bar covers the exact standard deviation of the clipped data (the variance's interval, grid quantisation
    included, mapped through the square root), so at very large n·ε it levels off near r·2⁻¹⁹.
    """
    return _run(
        "std",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=ddof,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        keepdims=keepdims,
        who="dp.stats.std",
    )


def count(
    x: Any,
    privacy_params: Eps,
    *,
    axis: Axis = None,
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
) -> Any:
    """Differentially private count of the present (non-NaN) values, or of the True values of a boolean array.

    Parameters
    ----------
    x : array_like or pandas object
        The private data. Numeric: NaN marks a missing value (like ``pandas.Series.count``). Boolean: a predicate
        evaluated per record, e.g. ``ages > 65``.
    privacy_params : Eps or Del
        The privacy level of the release.
    axis : {None, 0, 1} or tuple of them, default None
        ``None`` counts over all values; ``0`` per column; ``1`` per record; ``(0, 1)`` as ``None``.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Integer-valued Laplace-type noise, or Gaussian noise (needs ``Del``) rounded to an integer.
    rng, accountant, full_response, keepdims
        As in :func:`mean`.

    Returns
    -------
    float, ndarray or Response
        The private count, a whole number in [0, number of values].

    Notes
    -----
    Under replace-one neighbours the number of records n is public, so "how many records" needs no privacy and
    this function does not pretend to answer it privately. What is private is *which* values are present, or which
    records satisfy a predicate: replacing one record changes each of its values' presence by at most one, so the
    sensitivity is 1 per value (d for a 2-D record pooled, L1 d / L2 √d per column vector). Noise is
    integer-valued: discrete Laplace (two-sided geometric) for ``mechanism="laplace"``, Gaussian noise rounded to an
    integer (post-processing) for ``"gaussian"``; the result is clipped into [0, number of values].
    """
    who = "dp.stats.count"
    return _run(
        "count",
        x,
        privacy_params,
        bounds=None,
        axis=axis,
        nan_policy="omit",
        mechanism=mechanism,
        ddof=0,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        keepdims=keepdims,
        who=who,
    )


@attrs.frozen(eq=False)
class CovarianceTarget:
    """Target of :func:`covariance`: the upper triangle of the clipped covariance, each entry in units of r_j·r_k.

    Values are put on a grid of 2ᵇ steps centred in each column's bounds (v = k − 2ᵇ⁻¹, |v| ≤ 2ᵇ⁻¹) and
    (count, Σv, Σvvᵀ) summed exactly as integers (BLAS on integer-valued blocks, exact in any order). The scatter
    n·Σvvᵀ − Σv Σvᵀ is then exact and each entry is rounded once.
    """

    lower: np.ndarray
    upper: np.ndarray
    ddof: int = 1
    nan_policy: str = "raise"
    who: str = "dp.stats.covariance"

    def grid(self, d: int) -> Grid:
        return Grid.over(self.lower, self.upper, square_bits(d), pooled=False, offset="centre", who=self.who)

    def __call__(self, data: Any) -> np.ndarray:
        omit = self.nan_policy == "omit"
        if is_out_of_core(data):
            grid = self.grid(as_data(first_block(data), who=self.who).shape[1])
            sums = map_reduce(data, lambda b: self._sums(as_data(b, who=self.who), grid, omit))
        else:
            x = as_data(data, who=self.who)
            grid = self.grid(x.shape[1])
            sums = self._sums(x, grid, omit)
        count, s1, s2 = sums
        b = grid.bits
        iu = np.triu_indices(s1.shape[0])
        if omit:
            return np.concatenate([[float(count)], to_units(s1, b), to_units(s2[iu], 2 * b)])
        scatter = count * s2[iu] - np.outer(s1, s1)[iu]
        return exact_ratio(scatter, count * (count - self.ddof), 2 * b)

    def _sums(self, x: np.ndarray, grid: Grid, omit: bool) -> tuple[int, Any, Any]:
        try:
            return grid_gram(x, grid, complete_only=omit)
        except ValueError:
            raise nan_error(self.who) from None


def covariance(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    ddof: int = 1,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private covariance matrix of bounded data (records are rows, as ``np.cov(x, rowvar=False)``).

    Parameters
    ----------
    x : array_like, shape (n, d)
        The private data, one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds, scalars or one value per column. Required.
    ddof : int, default 1
        As ``numpy.cov``: the divisor is n − ddof.
    nan_policy : {"raise", "omit"}, default "raise"
        ``"omit"`` leaves out records with any NaN (listwise), releasing their count privately.
    mechanism, rng, accountant, full_response
        As in :func:`mean`.

    Returns
    -------
    ndarray of shape (d, d) or Response
        A symmetric positive semi-definite private covariance matrix.

    Notes
    -----
    The d(d+1)/2 entries of the upper triangle are released as one vector, each in units of r_j·r_k
    (r = hi − lo), so each column's noise is proportional to its range. Replacing one record y moves the scatter
    matrix by (n − 1)/n·[(y − m)(y − m)ᵀ − (y′ − m)(y′ − m)ᵀ] (m the mean of the others), and each entry of
    that difference is at most r_j·r_k in absolute value, so each released entry has sensitivity
    (n − 1)/(n(n − ddof)): L1 = d(d+1)/2 times that, L2 = √(d(d+1)/2) times that. The noisy matrix is symmetrised
    and projected onto the positive semi-definite cone (post-processing; it never increases the Frobenius error).

    ``nan_policy="omit"`` releases (count, Σu, Σuuᵀ) over the complete records with u = (clip(x) − c)/r, whose
    L1 sensitivity is the larger of 1 + d/2 + d(d+1)/8 (a record becoming incomplete) and d + d/4 + d(d−1)/4 (a
    complete record changing).

    Exact in floating point: u is an integer on a public grid of 2¹⁸ steps (divided by 2¹⁸), the sums Σu and Σuuᵀ are
    exact (BLAS on integer-valued blocks), the scatter n·Σuuᵀ − ΣuΣuᵀ is an exact integer, and each released entry
    is rounded once; the sensitivities include 2⁻⁵² of each entry's largest value for that rounding.
    """
    who = "dp.stats.covariance"
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, who=who)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, who=who)
    check_params(privacy_params, mechanism, who=who)
    full_response = check_bool(full_response, "full_response", who=who)
    out_of_core = is_out_of_core(x)
    data = as_data(first_block(x) if out_of_core else x, who=who)
    if data.ndim != 2:
        raise ValueError(
            f"{who} needs 2-D data with one record per row; got shape {data.shape}. Use dp.stats.var for one column."
        )
    n, d = (n_rows(x), data.shape[1]) if out_of_core else data.shape
    lo, hi = check_bounds(bounds, d, who=who)
    with np.errstate(over="ignore"):
        r = np.broadcast_to(hi - lo, (d,)).astype(np.float64)
    iu = np.triu_indices(d)
    entries = iu[0].size
    omit = nan_policy == "omit" and data.dtype.kind == "f"
    if omit:
        check_ddof(ddof, 2, who=who)
        # Plus one rounding per released Σu (|·| ≤ n/2) and Σuuᵀ entry (|·| ≤ n/4), to L1 and (loosely) to L2.
        allowance = d * float(rounding_allowance(n / 2)) + entries * float(rounding_allowance(n / 4))
        l1 = max(1 + d / 2 + d * (d + 1) / 8, d + d / 4 + d * (d - 1) / 4) + allowance
        l2 = max(math.sqrt(1 + d / 4 + d * (d + 1) / 32), math.sqrt(d + d / 16 + d * (d - 1) / 8)) + allowance
        dims = 1 + d + entries
    else:
        ddof = check_ddof(ddof, n, who=who)
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
            f"The bounds of {who} are too wide for a covariance in float64: columns of width up to "
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

    target = CovarianceTarget(lo, hi, ddof=ddof, nan_policy="omit" if omit else "raise", who=who)
    target.grid(d)  # public: bounds without a representable fixed-point grid are refused here, before any charge
    plan = Plan(target=target, l1=l1, l2=l2, dims=dims, postprocess=post)
    return release(
        plan,
        privacy_params,
        x if out_of_core else data,
        mechanism=mechanism,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
    )
