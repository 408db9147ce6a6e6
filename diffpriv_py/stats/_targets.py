"""Targets of the DP moment statistics: the exact clipped sums on a public grid that a mechanism noises.

:class:`ClippedStatistic` (count, sum, mean, variance) and :class:`CovarianceTarget` map a dataset to the vector a
mechanism privatises, exactly in floating point (:mod:`diffpriv_py._fixed_point`); the plans in
:mod:`diffpriv_py.stats._plans` give their sensitivities and post-processing.
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import attrs
import numpy as np

from .._blockwise import first_block, is_out_of_core, map_reduce
from .._fixed_point import Grid, GridSums, exact_ratio, grid_gram, grid_sums, square_bits, sum_bits, to_units
from ._common import as_data, nan_error

__all__ = ["AXIS1_OUT_OF_CORE", "SMALL", "ClippedStatistic", "CovarianceTarget", "non_missing"]

SMALL = 32
"""Pooled statistics of at most this many values are computed in Python arithmetic (same bits, less overhead)."""
_ROUNDER = 1.5 * 2.0**52  # see ClippedStatistic._small


def non_missing(data: np.ndarray, axis: int | None) -> np.ndarray:
    """Number of non-NaN values (True values for boolean data) per statistic."""
    if data.dtype.kind == "b":
        present = data
    elif data.dtype.kind == "f":
        present = ~np.isnan(data)
    else:
        present = np.ones(data.shape, dtype=bool)
    if data.ndim == 1 or axis is None:
        return np.asarray(float(np.count_nonzero(present)))
    result: np.ndarray = np.count_nonzero(present, axis=axis).astype(np.float64)
    return result


@attrs.frozen(eq=False, init=False)
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
    owner: str = "dp.stats"
    # Per record width d: the grid, and its parameters as Python floats when they are scalars (the small path).
    _grids: dict[Any, Any] = attrs.field(init=False, factory=dict, repr=False)

    def __init__(
        self,
        statistic: str,
        lower: np.ndarray,
        upper: np.ndarray,
        axis: int | None = None,
        nan_policy: str = "raise",
        ddof: int = 0,
        owner: str = "dp.stats",
        *,
        who: str | None = None,
    ) -> None:
        if who is not None:  # the former name of ``owner`` (the library spells "who is asking" one way)
            warnings.warn("ClippedStatistic(who=...) is deprecated; pass owner=...", DeprecationWarning, stacklevel=2)
            owner = who
        self.__attrs_init__(statistic, lower, upper, axis, nan_policy, ddof, owner)  # pyright: ignore[reportAttributeAccessIssue]

    @property
    def who(self) -> str:
        """Deprecated alias of :attr:`owner`."""
        warnings.warn("ClippedStatistic.who is deprecated; read owner", DeprecationWarning, stacklevel=2)
        return self.owner

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
        return Grid.over(self.lower, self.upper, bits, pooled=pooled, offset=offset, owner=self.owner)

    def __call__(self, data: Any) -> np.ndarray | np.floating:
        if self.statistic == "count":
            if type(data) is not np.ndarray and is_out_of_core(data):
                if self.axis == 1:
                    raise ValueError(AXIS1_OUT_OF_CORE.format(owner=self.owner))
                result: np.ndarray | np.floating[Any] = map_reduce(
                    data, lambda b: non_missing(self._block(b), self.axis)
                )
                return result
            return non_missing(as_data(data, owner=self.owner, allow_bool=True), self.axis)
        if type(data) is not np.ndarray and is_out_of_core(data):
            if self.axis == 1:
                raise ValueError(AXIS1_OUT_OF_CORE.format(owner=self.owner))
            d = _width(as_data(first_block(data), owner=self.owner))
            grid = self.grid(d)
            sums = map_reduce(data, lambda b: self._sums(self._block(b), grid))
        else:
            x = as_data(data, owner=self.owner)
            grid, small = self._grid(1 if x.ndim == 1 else x.shape[1])  # _width(x), inline
            # A twin kept on measurement: _small is _sums + _finish for a few pooled values in Python arithmetic.
            # Through _sums, dp.stats.mean, sum and var of 10 values took 3.2-3.8x as long and std of 30 values
            # 2.5x (CPU time, interleaved rounds); tests/test_small_statistic_path.py pins the two bit for bit.
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
        return as_data(block, owner=self.owner, allow_bool=self.statistic == "count")

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
            raise nan_error(self.owner)
        if self.statistic == "sum":
            return to_units(sums.s1, b)
        if self.statistic == "mean":
            return exact_ratio(sums.s1, m, b)
        # var: n·Σk² − (Σk)² = n·SS exactly (integers), then one rounding of SS/(m − ddof).
        return exact_ratio(m * sums.s2 - sums.s1 * sums.s1, m * (m - self.ddof), 2 * b)


AXIS1_OUT_OF_CORE = (
    "{owner} with axis=1 releases one value per record, which does not fit the blockwise (out-of-core) path; "
    "use axis=None or axis=0 on dask data or Chunks, or compute per-record statistics in memory."
)


def _width(x: np.ndarray) -> int:
    return 1 if x.ndim == 1 else x.shape[1]


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
    owner: str = "dp.stats.covariance"

    def grid(self, d: int) -> Grid:
        return Grid.over(self.lower, self.upper, square_bits(d), pooled=False, offset="centre", owner=self.owner)

    def __call__(self, data: Any) -> np.ndarray:
        omit = self.nan_policy == "omit"
        if is_out_of_core(data):
            grid = self.grid(as_data(first_block(data), owner=self.owner).shape[1])
            sums = map_reduce(data, lambda b: self._sums(as_data(b, owner=self.owner), grid, omit))
        else:
            x = as_data(data, owner=self.owner)
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
            raise nan_error(self.owner) from None
