"""Exact aggregation on a public fixed-point grid: clipped sums whose floating-point value has a provable sensitivity.

A floating-point sum of clipped values can move by far more than the clipping width when one record is replaced
(Casacuberta et al., "Widespread underestimation of sensitivity in differentially private libraries and how to fix
it", CCS 2022): with bounds (2⁴³, 2⁴³ + 1) every addition rounds to a multiple of 2⁻⁹ · 2⁴³ ≫ 1 … and the rounding
depends on the order and on the other records. Here every value is first mapped to an *integer* index on a public
grid relative to its bounds,

    k = rint(clip((x − origin) · scale, low, high)) ∈ {low, …, high} ⊂ {0, …, 2ᵇ},   scale = 2ᵇ / width,

and integers are summed exactly: integer-valued float64 blocks whose partial sums stay below 2⁵³ are summed exactly
by numpy in *any* order (pairwise, BLAS, FMA), and the block totals are accumulated as Python integers. The grid
depends only on the public bounds and the public number of columns, so in-memory, chunked and dask evaluations of the
same data give the same integers, bit for bit.

Privacy needs only that the index map is a fixed, data-independent function into {low, …, high}: whatever rounding
happens inside ``(x − origin) · scale``, one value moves the exact integer sum by at most ``high − low``. Huge or
infinite values become ±inf there and are clipped; NaN (the only non-finite value that survives) is the caller's
business (``nan_policy``). The only floating-point rounding left in a target is its final conversion of exact integers
to float64 (one correctly rounded operation per output), covered by :func:`rounding_allowance`.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

import attrs
import numpy as np

__all__ = [
    "BLOCK",
    "BLOCK_SUMS",
    "GRAM_ROWS",
    "GRID_SLACK",
    "GRID_TINY",
    "UNIT_ROUNDOFF",
    "Grid",
    "GridSums",
    "clip_rows",
    "clip_rows_to_norm",
    "clipped_grid_gram",
    "exact_ratio",
    "grid_gram",
    "grid_rows",
    "grid_sums",
    "record_bits",
    "rounding_allowance",
    "row_norms",
    "square_bits",
    "sum_bits",
    "to_units",
]

BLOCK = 1 << 16
"""Values per block of sums of squares and products: every such float reduction covers at most ``max(BLOCK, d)``
values (a smaller block leaves more grid bits for the squares)."""

BLOCK_SUMS = 1 << 17
"""Values per block of plain sums (1 MB, measured fastest: fewer Python steps, still cache-resident); every such
float reduction covers at most ``max(BLOCK_SUMS, d)`` values."""

UNIT_ROUNDOFF = 2.0**-53
"""Relative error of one correctly rounded float64 operation (round to nearest)."""

_EXACT_BITS = 52
"""Partial sums are kept ≤ 2⁵² in magnitude: every integer up to 2⁵³ is a float64, with one bit of slack."""


def _log2_ceil(values: int) -> int:
    return max(0, (max(1, values) - 1).bit_length())


def sum_bits(width: int) -> int:
    """Grid bits b for sums: ``max(BLOCK_SUMS, width)`` indices ≤ 2ᵇ sum to at most 2⁵² (exact in any order)."""
    return _EXACT_BITS - _log2_ceil(max(BLOCK_SUMS, width))


def square_bits(width: int, *, per_record: int = 1) -> int:
    """Grid bits b for sums of squares and products: ``max(BLOCK, width)`` terms ≤ 2²ᵇ sum to at most 2⁵².

    ``per_record`` > 1 (per-record variances of ``per_record`` values) also keeps ``per_record`` · Σk² ≤ 2⁵², so the
    integer combination m·Σk² − (Σk)² is exact in float64.
    """
    bits = (_EXACT_BITS - _log2_ceil(max(BLOCK, width))) // 2
    if per_record > 1:
        bits = min(bits, (_EXACT_BITS - 2 * _log2_ceil(per_record)) // 2)
    return max(bits, 1)


def rounding_allowance(max_abs: Any, roundings: int = 1) -> Any:
    """Largest |fl(a) − fl(a′) − (a − a′)| when a, a′ (|·| ≤ ``max_abs``) are each computed with ``roundings``
    correctly rounded operations from exact values: 2·((1 + u)ʳ − 1)·max|a| ≤ 2·r·u·(1 + r·u)·max|a|."""
    r = roundings
    return 2.0 * r * UNIT_ROUNDOFF * (1.0 + r * UNIT_ROUNDOFF) * np.asarray(max_abs, dtype=np.float64)


GRID_SLACK = 2.0**-40
"""Relative allowance, on the safe side, for the floating-point roundings of an error bar's back-mapping and
post-processing (each a relative u = 2⁻⁵³; a few dozen of them stay far below 2⁻⁴⁰ = 8192u)."""

GRID_TINY = 2.0**-1072
"""Absolute allowance, on the safe side, for a few roundings into the subnormal range (each at most 2⁻¹⁰⁷⁵): a
variance of values within 1e-300 of each other is below the smallest double, and rounds to 0."""


@attrs.frozen(eq=False)
class Grid:
    """A public fixed-point grid: the value x of a column becomes the integer k = rint(clip((x − origin)·scale,
    low, high)); ``offset`` is the index that stands for "nothing" (a missing value, or the centre).

    ``error`` bounds, for every value, how far k − offset lies from the value's exact position: with W = upper −
    lower of the grid (exact) and r the value the offset stands for (the origin, the centre or 0),
    |(k − offset) − (clip(x) − r)·2ᵇ/W| ≤ ``error`` (see :meth:`over`).
    """

    origin: np.ndarray
    scale: np.ndarray
    low: np.ndarray
    high: np.ndarray
    offset: np.ndarray
    bits: int
    error: float

    @classmethod
    def over(
        cls,
        lower: np.ndarray,
        upper: np.ndarray,
        bits: int,
        *,
        pooled: bool,
        offset: str = "origin",
        owner: str = "dp.stats",
    ) -> Grid:
        """The grid of 2ᵇ steps across public bounds (one grid per column, or one ``pooled`` grid for all columns).

        ``offset``: ``"origin"`` (index 0), ``"centre"`` (index 2ᵇ⁻¹, so k − offset ∈ [−2ᵇ⁻¹, 2ᵇ⁻¹]) or ``"zero"``
        (the index of the value 0, which the grid then spans too: a missing value contributes 0 to a sum).

        The quantisation ``error`` (in index steps) of a value c = clip(x) ∈ [lo, hi] of a column, against its exact
        position y = (c − a)·2ᵇ/W (a the origin, W = b − a exact): the computed p = fl(fl(c − a)·scale), with
        scale = fl(2ᵇ/fl(W)), is y·(1 + θ) with |θ| ≤ 4.0001u, so |p − y| ≤ 4.0001u·2ᵇ < 2ᵇ⁻⁵⁰ (an underflow costs
        2⁻¹⁰⁷⁴ at most, far below). On a full grid (low = 0, high = 2ᵇ) clipping p into [0, 2ᵇ] ∋ y never moves it
        away from y and rint adds ½: |k − y| ≤ ½ + 2ᵇ⁻⁵⁰. On a partial grid (pooled per-column bounds, or the grid
        of ``"zero"``) low = ⌈p(lo)⌉ and high = ⌊p(hi)⌋ (or high = low for a column narrower than one step), so
        clip moves p by less than one step and rint lands on the clip's integer end or within ½: |k − y| < 1 +
        2ᵇ⁻⁵⁰. A value outside [lo, hi] gets the index of its clipped value (every step is monotone). The offset
        of ``"origin"`` and ``"centre"`` is the exact position of the origin (0) and of the centre (2ᵇ⁻¹); that of
        ``"zero"`` is rint(p(0)), within ½ + 2ᵇ⁻⁵⁰ of the position of 0 unless a = 0 (then it is exactly 0).
        """
        lo = np.asarray(lower, dtype=np.float64)
        hi = np.asarray(upper, dtype=np.float64)
        if lo.ndim == 0 and hi.ndim == 0 and offset != "zero":
            pooled = False  # one pair of bounds: the pooled grid is the full grid {0, …, 2ᵇ}
        a, b = (lo.min(), hi.max()) if pooled else (lo, hi)
        if offset == "zero":
            a, b = np.minimum(a, 0.0), np.maximum(b, 0.0)
        with np.errstate(over="ignore", divide="ignore"):
            width = np.asarray(b - a, dtype=np.float64)
            scale = np.asarray(2.0**bits / width, dtype=np.float64)
        if not (np.all(np.isfinite(width)) and np.all(np.isfinite(scale)) and np.all(scale > 0)):
            raise ValueError(
                f"The bounds of {owner} cannot carry an exact fixed-point grid of 2^{bits} steps: their width "
                f"{width!r} must be a finite positive float64 with 2^{bits}/width finite (so above about 1e-290 and "
                "below about 1.8e308). Pass bounds of a representable width (rescale the data if needed)."
            )
        top = float(2**bits)
        if pooled or offset == "zero":
            with np.errstate(over="ignore", invalid="ignore"):
                low = np.clip(np.ceil((lo - a) * scale), 0.0, top)
                high = np.clip(np.floor((hi - a) * scale), 0.0, top)
            high = np.maximum(high, low)  # a column narrower than one step sits on one index
        else:
            low, high = np.zeros_like(lo), np.full_like(hi, top)
        if offset == "centre":
            off = np.full_like(np.asarray(a), top / 2)
        elif offset == "zero":
            off = np.clip(np.rint(-a * scale), 0.0, top)
        else:
            off = np.zeros_like(np.asarray(a))
        fuzz = 2.0 ** (bits - 50)
        error = (0.5 if bool(np.all(low == 0.0) and np.all(high == top)) else 1.0) + fuzz
        if offset == "zero" and bool(np.any(np.asarray(a) != 0.0)):
            error += 0.5 + fuzz
        return cls(
            origin=np.asarray(a), scale=scale, low=low, high=high, offset=np.asarray(off), bits=bits, error=error
        )

    def spans(self, d: int) -> np.ndarray:
        """Per column, the largest change of k − offset when a value is replaced (by another value or by NaN)."""
        low = np.broadcast_to(self.low - self.offset, (d,))
        high = np.broadcast_to(self.high - self.offset, (d,))
        result: np.ndarray = np.maximum(high, 0.0) - np.minimum(low, 0.0)
        return result

    def index(self, block: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The integer-valued indices of a block (NaN stays NaN), computed in ``out``."""
        with np.errstate(over="ignore", invalid="ignore"):
            if self.origin.ndim == 0 and self.origin == 0:
                # x − 0 is x exactly (−0 − 0 = −0, NaN stays NaN; an origin of −0 only flips the sign of zeros,
                # which sum to the same integer): the same indices with one pass over the block fewer.
                np.multiply(block, self.scale, out=out)
            else:
                np.subtract(block, self.origin, out=out)
                np.multiply(out, self.scale, out=out)
        np.clip(out, self.low, self.high, out=out)
        result: np.ndarray = np.rint(out, out=out)
        return result

    def unit(self) -> np.ndarray:
        """Data units per index unit scaled by 2ᵇ (≈ the width), to map released values back (post-processing)."""
        return np.asarray(2.0**self.bits / self.scale)


@attrs.frozen(eq=False)
class GridSums:
    """Exact sums of k − offset over the values of each statistic (Python ints; int64 per record for axis=1).

    ``values`` is the number of values per statistic, ``present`` the number of non-NaN ones (a NaN counts as the
    offset, i.e. contributes 0), ``s1`` = Σ(k − offset) and ``s2`` = Σ(k − offset)² (when requested).
    """

    values: Any
    present: Any
    s1: Any
    s2: Any = None

    def __add__(self, other: GridSums) -> GridSums:
        s2 = None if self.s2 is None else self.s2 + other.s2
        return GridSums(self.values + other.values, self.present + other.present, self.s1 + other.s1, s2)


def _exact(total: np.ndarray | np.floating) -> Any:
    """Integer-valued float64 block totals (|·| ≤ 2⁵²) as Python ints (object arrays keep arbitrary precision)."""
    arr = np.asarray(total)
    if arr.ndim == 0:
        return int(arr)
    return arr.astype(np.int64).astype(object)


def grid_sums(data: np.ndarray, grid: Grid, axis: int | None, order: int) -> GridSums:
    """Exact Σ(k − offset) (and Σ(k − offset)² for ``order=2``) per statistic: pooled for ``axis=None`` or 1-D data,
    per column for ``axis=0``, per record for ``axis=1``; the grid's bits must suit the width (:func:`sum_bits`)."""
    n = data.shape[0]
    x2 = data.reshape(n, -1)
    d = x2.shape[1]
    rows = max(1, (BLOCK if order >= 2 else BLOCK_SUMS) // d)
    pooled = data.ndim == 1 or axis is None
    buf = np.empty((min(rows, n), d))
    off = grid.offset
    has_offset = bool(np.any(off != 0))
    s1: Any
    s2: Any
    present: Any
    if axis == 1:
        s1 = np.empty(n)
        s2 = np.empty(n) if order >= 2 else None
        present = np.full(n, d, dtype=np.int64)
    else:
        s1 = 0 if pooled else np.zeros(d, dtype=np.int64).astype(object)
        s2 = (0 if pooled else np.zeros(d, dtype=np.int64).astype(object)) if order >= 2 else None
        present = 0 if pooled else np.zeros(d, dtype=np.int64)

    def reduce(a: np.ndarray) -> Any:
        if pooled:
            return np.add.reduce(a, axis=None)
        return a.sum(axis=1 if axis == 1 else 0)

    for start in range(0, n, rows):
        block = x2[start : start + rows]
        k = grid.index(block, buf[: block.shape[0]])
        total = reduce(k)
        # A NaN makes the exact block total NaN, so the common case pays no extra pass to look for missing values.
        missing = None
        if np.isnan(total).any():
            missing = np.isnan(k)
            k[missing] = np.broadcast_to(off, k.shape)[missing]
            total = reduce(k)
        if has_offset:
            np.subtract(k, off, out=k)
            total = reduce(k)
        if axis == 1:
            s1[start : start + k.shape[0]] = total
            if missing is not None:
                present[start : start + k.shape[0]] -= missing.sum(axis=1)
        else:
            s1 = s1 + _exact(total)
            lost = 0 if missing is None else (missing.sum() if pooled else missing.sum(axis=0))
            present = present + (block.shape[0] * (d if pooled else 1) - lost)
        if s2 is not None:
            if pooled:
                flat = k.reshape(-1)
                square = np.dot(flat, flat)  # integer-valued, every partial sum ≤ 2⁵²: exact in any BLAS order
            else:
                square = np.einsum("ij,ij->i" if axis == 1 else "ij,ij->j", k, k)
            if axis == 1:
                s2[start : start + k.shape[0]] = square
            else:
                s2 = s2 + _exact(square)
    values = d if axis == 1 else (n * d if pooled else n)
    if axis == 1:
        return GridSums(values, present, s1.astype(np.int64), None if s2 is None else s2.astype(np.int64))
    return GridSums(values, present, s1, s2)


def grid_gram(data: np.ndarray, grid: Grid, *, complete_only: bool) -> tuple[int, Any, Any]:
    """Exact (count, Σv, Σvvᵀ) over the records, v = k − offset per column (object arrays of Python ints).

    With ``complete_only`` a record with any NaN contributes nothing (listwise deletion); otherwise NaN raises
    ``ValueError`` for the caller to turn into its own message. Block Gram matrices are BLAS products of
    integer-valued floats with every partial sum ≤ 2⁵² (grid bits from :func:`square_bits`), hence exact.
    """
    n, d = data.shape
    rows = max(1, BLOCK // d)
    buf = np.empty((min(rows, n), d))
    count = 0
    s1 = np.zeros(d, dtype=np.int64).astype(object)
    s2 = np.zeros((d, d), dtype=np.int64).astype(object)
    for start in range(0, n, rows):
        block = data[start : start + rows]
        v = grid.index(block, buf[: block.shape[0]])
        np.subtract(v, grid.offset, out=v)
        bad = np.isnan(v).any(axis=1)
        if bad.any():
            if not complete_only:
                raise ValueError("NaN")
            v[bad] = 0.0
        count += int(v.shape[0] - bad.sum())
        s1 = s1 + _exact(v.sum(axis=0))
        s2 = s2 + _exact(v.T @ v)
    return count, s1, s2


def to_units(total: Any, bits: int) -> np.ndarray:
    """float64 of an exact integer (or object array of them) times 2⁻ᵇⁱᵗˢ: one correct rounding (int → float), then
    an exact power-of-two scaling."""
    arr = np.asarray(total)
    if arr.dtype == object:
        values = np.array([float(v) for v in arr.ravel()]).reshape(arr.shape)
    else:
        values = arr.astype(np.float64)
    result: np.ndarray = np.ldexp(values, -bits)
    return result


def exact_ratio(numerator: Any, denominator: int, bits: int) -> np.ndarray:
    """numerator / (denominator · 2ᵇⁱᵗˢ) correctly rounded (one rounding) for exact integer numerators."""
    arr = np.asarray(numerator)
    if arr.dtype != object and arr.ndim > 0 and denominator < 2**53 and np.abs(arr).max(initial=0) <= 2**53:
        # Exact float64 numerators and denominator: one correctly rounded division, then an exact 2⁻ᵇⁱᵗˢ scaling.
        return np.ldexp(arr.astype(np.float64) / float(denominator), -bits)
    den = int(denominator) << bits
    # Python's int / int true division is correctly rounded, whatever the size of the integers.
    return np.array([int(v) / den for v in arr.ravel()], dtype=np.float64).reshape(arr.shape)


# ---- norms ---------------------------------------------------------------------------------------------------------


def _by_peak(block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows divided by their largest |x| (entries in [−1, 1]), that peak, the scaled norm ∈ [1, √d], and finiteness."""
    with np.errstate(invalid="ignore", over="ignore"):
        peak = np.max(np.abs(block), axis=1) if block.shape[1] else np.zeros(block.shape[0])
    finite = np.isfinite(peak)
    safe = np.where(finite & (peak > 0), peak, 1.0)
    with np.errstate(invalid="ignore"):
        scaled = block / safe[:, None]
        rel = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
    return scaled, safe, rel, finite


def row_norms(block: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row without spurious overflow or underflow; +inf for a row that is not finite.

    Each row is scaled by the power of two 2⁻ᵉ with 2ᵉ⁻¹ ≤ max|x| < 2ᵉ before squaring (exact), so entries near 1e154
    do not overflow to inf (nor 0·inf become NaN downstream) and the result is scaled back exactly: relative error
    ≤ (d + 2)·2⁻⁵³, as for the naive formula. A finite row whose norm exceeds the largest double, and a row holding
    NaN or ±inf, get +inf (never NaN, never a finite value pretending to be a norm).
    """
    rows = np.asarray(block, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        peak = np.max(np.abs(rows), axis=1) if rows.shape[1] else np.zeros(rows.shape[0])
    finite = np.isfinite(peak)
    _, exponent = np.frexp(np.where(finite, peak, 1.0))
    scaled = np.ldexp(np.where(finite[:, None], rows, 0.0), -exponent[:, None])
    with np.errstate(over="ignore"):  # inf is the honest answer for a norm beyond the largest double
        norms: np.ndarray = np.where(finite, np.ldexp(np.sqrt(np.einsum("ij,ij->i", scaled, scaled)), exponent), np.inf)
    return norms


_FAST_SQUARES = (2.0**-800, 2.0**800)
"""Computed sums of squares for which :func:`clip_rows_to_norm` scales a row directly (see its Notes)."""
_FAST_BOUNDS = (2.0**-400, 2.0**400)


def _shrink(d: int) -> float:
    return 1.0 - 4.0 * (d + 4) * UNIT_ROUNDOFF


def _norm_factors(squares: np.ndarray, bound: float, d: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the direct path's factor c = fl(shrink / max(fl(√s), bound)) times the power of two ``scale`` and
    whether the direct path applies (see :func:`clip_rows_to_norm`); ``squares`` are the computed sums of squares s
    of the rows. On the direct path c is a normal double, so fl(shrink·scale / m) = fl(shrink / m)·scale exactly."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        direct = (squares >= _FAST_SQUARES[0]) & (squares <= _FAST_SQUARES[1])  # NaN and inf fail
        if not _FAST_BOUNDS[0] <= bound <= _FAST_BOUNDS[1]:
            direct[:] = False
        factors: np.ndarray = (_shrink(d) * scale) / np.maximum(np.sqrt(squares), bound)
    return factors, direct


def clip_rows_to_norm(block: np.ndarray, bound: float, squares: np.ndarray | None = None) -> np.ndarray:
    """Rows scaled into the unit ball, x / max(‖x‖, bound), with a proven exact norm ≤ 1 for the floats returned.

    A row that is not finite becomes the zero row (a data-independent value, never NaN). Every row is multiplied by
    (about) 1 − 4(d + 4)u (u = 2⁻⁵³) on top, which absorbs the rounding below.

    Notes
    -----
    Two paths, chosen per row from that row alone, with one bound.

    *Direct* (the common case): when the computed s = fl(Σxᵢ²) lies in [2⁻⁸⁰⁰, 2⁸⁰⁰] and ``bound`` in
    [2⁻⁴⁰⁰, 2⁴⁰⁰], the row is multiplied by c = fl(shrink / max(fl(√s), bound)). No square overflowed (s is
    finite) and underflowed squares cost at most d·2⁻¹⁰⁷⁴, a relative 2⁻²⁷⁴·d of Σxᵢ² ≥ 2⁻⁸⁰¹; so
    fl(√s) ≥ ‖x‖(1 − (d/2 + 2)u), c ≤ (shrink / max(‖x‖(1 − (d/2 + 2)u), bound))(1 + u), c is a normal double,
    and each product xᵢc adds a relative u (or 2⁻¹⁰⁷⁵ if it underflows). The true norm of the result is therefore
    at most shrink·(1 + u)²/(1 − (d/2 + 2)u) + √d·2⁻¹⁰⁷⁵ < 1 for shrink = 1 − 4(d + 4)u.

    *Scaled* (any other finite row, e.g. entries near 1e154 or 1e-200): computed as (x/p) / max(‖x/p‖, bound/p)
    with p the row's largest |x|, so rows up to 1.8e308 keep their direction. The computed norm of the scaled row has
    relative error at most (d + 4)u/(1 − (d + 4)u), and each division adds u, so the quotient's true norm can
    exceed 1 by about 2(d + 5)u; the same factor brings every row strictly inside.

    Both paths scale x by a positive factor, so the direction is kept; the output of each row depends on that row
    only. ``squares``, when given, are the rows' sums of squares as ``np.einsum("ij,ij->i", block, block)``
    computed them on the caller's block (so a subset of rows gets the bits the whole block would give).
    """
    d = block.shape[1]
    shrink = _shrink(d)
    if squares is None:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            sums: np.ndarray = np.einsum("ij,ij->i", block, block)
    else:
        sums = squares
    factors, direct = _norm_factors(sums, bound, d)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        out: np.ndarray = block * factors[:, None]
    others = np.flatnonzero(~direct)
    if others.size:
        scaled, peak, rel, finite = _by_peak(block[others])
        with np.errstate(over="ignore"):
            limit = bound / peak  # may be +inf for a tiny row: it is then scaled to (almost) 0, as x / bound is
        denom = np.where(finite, np.maximum(rel, limit), 1.0) / shrink
        with np.errstate(invalid="ignore"):
            out[others] = np.where(finite[:, None], scaled / denom[:, None], 0.0)
    return out


def clip_rows(X: np.ndarray, bound: float, scale: float = 1.0) -> np.ndarray:
    """``scale · x · min(1, bound/‖x‖₂)`` for every row, as a new array whose rows have exact norm ≤ scale·bound.

    Proven for the floats returned (the real product ``scale·bound`` of the two floats given): the rows are first
    scaled into the unit ball by :func:`clip_rows_to_norm` (exact norm ≤ 1), then multiplied by the largest float k
    with k·(1 + 2u) ≤ scale·bound, checked in exact rational arithmetic (u = 2⁻⁵³). Each product rounds with relative
    error ≤ u, plus at most 2⁻¹⁰⁷⁵ if it underflows, so a row v of norm ≤ 1 becomes one of norm
    ≤ k(1 + u)‖v‖ + √d·2⁻¹⁰⁷⁵ ≤ k(1 + 2u) ≤ scale·bound. The price is a relative shrink of at most (4d + 20)u
    (about 10⁻¹⁴ for d = 20).

    Finite rows of any magnitude keep their direction (power-of-two scaling, no overflow to inf or NaN). A row
    holding NaN or inf becomes the zero row; callers refuse such data before this point.
    """
    unit = clip_rows_to_norm(np.asarray(X, dtype=np.float64), bound)
    target = Fraction(scale) * Fraction(bound)
    slack = 1 + 2 * Fraction(UNIT_ROUNDOFF)
    k = float(min(target / slack, Fraction(sys.float_info.max)))
    while Fraction(k) * slack > target:  # float() rounds to nearest: step down until the exact check holds
        k = math.nextafter(k, 0.0)
    result: np.ndarray = unit * k
    return result


def record_bits(n: int, degree: int = 2) -> int:
    """Grid bits b that make sums over ``n`` records of products of ``degree`` grid values in [−1, 1] exact in float64:
    n·2^(degree·b) ≤ 2⁵², so every partial sum, in any order, is an integer (times 2^(−degree·b)) below 2⁵³."""
    used = _log2_ceil(max(n, 2))
    return max(1, min(30, (_EXACT_BITS - used) // degree))


def grid_rows(unit_rows: np.ndarray, bits: int) -> np.ndarray:
    """Rows of the unit ball as integer vectors q on the grid 2⁻ᵇⁱᵗˢ (integer-valued floats) with exact ‖q‖² ≤ 4ᵇⁱᵗˢ.

    Rounded to nearest (unbiased, so a Gram matrix is not shrunk) when the exact integer check Σq² ≤ 4ᵇ passes —
    exact because every partial sum is an integer ≤ d·4ᵇ ≤ 2⁵² — and toward zero otherwise (|trunc(v)| ≤ |v| in
    every coordinate, so the norm cannot grow past that of the unit row).
    """
    # One array, rounded in place: a second n×d temporary alive at the same time costs more in fresh pages than the
    # arithmetic itself. Multiplying by 2^bits (bits ≤ 30, values ≤ 1) is exact, as ldexp is.
    step = 2.0**bits
    q: np.ndarray = unit_rows * step
    if unit_rows.shape[1] * 4.0**bits > 2.0**_EXACT_BITS:
        np.trunc(q, out=q)
        return q
    np.rint(q, out=q)
    over = np.flatnonzero(np.einsum("ij,ij->i", q, q) > 4.0**bits)
    if over.size:
        q[over] = _into_ball(unit_rows[over] * step, bits)
    return q


def _into_ball(scaled: np.ndarray, bits: int) -> np.ndarray:
    """Grid rows of norm ≤ 2ᵇ for rows v = u·2ᵇ (‖u‖ ≤ 1) whose nearest grid point lies outside the ball: v shrunk by
    √d/2 grid steps first (‖rint(v)‖ ≤ ‖v‖ + √d/2), checked again exactly, and truncated toward zero if still out."""
    shrunk: np.ndarray = np.rint(scaled * (1.0 - math.sqrt(scaled.shape[1]) * 2.0 ** -(bits + 1)))
    still = np.einsum("ij,ij->i", shrunk, shrunk) > 4.0**bits
    shrunk[still] = np.trunc(scaled[still])
    return shrunk


GRAM_ROWS = 1 << 12
"""Rows per block of :func:`clipped_grid_gram`: a (4096 × d)-double workspace stays in the core's L2 cache for
d ≲ 30 (in L3 above), so every pass after the first read of a block is a cache pass, at full BLAS speed."""


def _uniform_limit(bound: float, d: int, bits: int, rounded: bool) -> float:
    """A sum of squares s up to which a row is on the direct path with factor fl(shrink/bound) and, when ``rounded``,
    provably rounds to a grid vector of norm ≤ 2ᵇ (so grid_rows' norm check passes); 0 when there is none.

    Any s ≤ limit < bound² has fl(√s) ≤ bound (the square root is correctly rounded and monotone), so
    max(fl(√s), bound) = bound and the row's factor is c = fl(shrink/bound); s ≥ 2⁻⁸⁰⁰ (checked by the caller) and
    bound ∈ [2⁻⁴⁰⁰, 2⁴⁰⁰] make it a direct row. For ``rounded``: such a row has ‖x‖² ≤ s/(1 − γ) (γ = d·u/(1 − d·u),
    the error of a float sum of d non-negative products; underflows cost a relative 2⁻²⁷⁰ at most above 2⁻⁸⁰⁰) and
    c ≤ (shrink/bound)(1 + u), so v = fl(x·c)·2ᵇ has ‖v‖ ≤ ‖x‖·(shrink/bound)(1 + u)²·2ᵇ ≤ ‖x‖·2ᵇ/bound, and
    ‖rint(v)‖ ≤ ‖v‖ + √d/2; with s ≤ bound²·(1 − √d·2⁻⁽ᵇ⁺¹⁾)²·(1 − γ) that is ≤ 2ᵇ. The float limit is computed
    with a handful of roundings and lowered by a relative 2⁻⁴⁰, far more than they cost.
    """
    margin = 1.0 - math.sqrt(d) * 2.0 ** -(bits + 1) if rounded else 1.0
    gamma_room = 1.0 - 2.0 * d * UNIT_ROUNDOFF if rounded else 1.0  # ≤ 1 − γ whenever d·u ≤ ½
    if margin <= 0.0 or gamma_room <= 0.0 or not _FAST_BOUNDS[0] <= bound <= _FAST_BOUNDS[1]:
        return 0.0
    return bound * bound * margin * margin * gamma_room * (1.0 - 2.0**-40)


def _general_rows(
    block: np.ndarray, squares: np.ndarray, q: np.ndarray, bound: float, bits: int, rounded: bool, nonfinite: str
) -> None:
    """Grid rows of a block with clipped, extreme or non-finite rows, written into ``q`` (see clipped_grid_gram)."""
    finite = np.isfinite(squares)
    if not finite.all() and not np.isfinite(block[~finite]).all():
        raise ValueError(nonfinite)
    factors, direct = _norm_factors(squares, bound, block.shape[1], 2.0**bits)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        np.multiply(block, factors[:, None], out=q)
    (np.rint if rounded else np.trunc)(q, out=q)
    if rounded:
        with np.errstate(invalid="ignore"):
            over = np.flatnonzero((np.einsum("ij,ij->i", q, q) > 4.0**bits) & direct)
        if over.size:  # block·factors is u·2ᵇ bit for bit on the direct path (see clipped_grid_gram's Notes)
            with np.errstate(under="ignore"):
                q[over] = _into_ball(block[over] * factors[over, None], bits)
    if not direct.all():
        idx = np.flatnonzero(~direct)
        q[idx] = grid_rows(clip_rows_to_norm(block[idx], bound, squares[idx]), bits)


def clipped_grid_gram(
    X: np.ndarray,
    bound: float,
    bits: int,
    *,
    extra: int = 0,
    fill: Any = None,
    ones: bool = False,
    nonfinite: str = "X contains NaN or infinite values.",
) -> np.ndarray:
    """Exact Σᵢ wᵢwᵢᵀ over the rows, w = [q | e]: q = ``grid_rows(clip_rows_to_norm(x, bound), bits)`` and ``extra``
    columns e written by ``fill(start, stop, out)`` (integer-valued, |e| ≤ 2ᵇ, e.g. labels on the same grid), then a
    column of ones if ``ones`` (the Gram matrix then also holds Σq, Σe and n).

    One fused pass over blocks of :data:`GRAM_ROWS` rows into one preallocated workspace: the rows' sums of squares
    (which also find NaN or ±inf, raised as ``ValueError(nonfinite)``), the row factors, one multiplication into the
    workspace, one rounding in place and one symmetric rank-k update (BLAS ``syrk``). ``X`` (any real dtype, any
    strides) is never copied whole nor modified; the extra memory is O(GRAM_ROWS·(d + extra)), independent of n.
    Returns the full symmetric (d + extra) × (d + extra) matrix of integer-valued float64.

    Notes
    -----
    *The same integers as the reference.* For every row the kernel produces the q that
    ``grid_rows(clip_rows_to_norm(x, bound), bits)`` gives (so releases are bit for bit those of the two-step
    reference). On the direct path (:func:`clip_rows_to_norm`) the reference rounds u = fl(x·c) and then forms
    u·2ᵇ (exact); the kernel forms fl(x·(c·2ᵇ)) in one step, with c·2ᵇ exact (c is a normal double ≤ 2⁴⁰¹). Scaling
    by a power of two commutes with rounding to nearest in the normal range, so both are the same double, and when
    x·c is subnormal both are below 2⁻⁹⁹⁰ in magnitude with the sign of x·c, which rint and trunc send to the same
    signed zero. Rows whose rounded norm exceeds 2ᵇ (grid_rows' exact integer check) go through grid_rows' own rule
    (:func:`_into_ball`) from the same u·2ᵇ; rows off the direct path are recomputed by the reference itself from the
    same sums of squares. A block whose sums of squares all
    lie in [2⁻⁸⁰⁰, :func:`_uniform_limit`] (the common case: no row clipped) has one factor fl(shrink/bound)·2ᵇ for
    every row and provably passes the check, so it is scaled by that scalar with no per-row work.

    *Exact sums.* The caller's ``bits`` satisfy n·4ᵇ ≤ 2⁵² over the whole dataset (:func:`record_bits`): every
    entry of every wwᵀ is an integer of magnitude ≤ 4ᵇ (|q·q′| ≤ ‖q‖² ≤ 4ᵇ, |e| ≤ 2ᵇ), so every partial sum of any
    entry — inside syrk in any order and blocking, and across blocks in the accumulator — is an integer of
    magnitude ≤ n·4ᵇ ≤ 2⁵², exactly representable. The result is therefore the exact integer Gram matrix, whatever
    the block size, the BLAS kernel or the chunking; the block size is chosen for the cache alone. The privacy
    argument (one record moves the exact sum by one bounded rank-one term) is untouched.
    """
    from scipy.linalg import blas  # scipy.linalg stays out of the package's import time

    n, d = X.shape
    e = extra + ones
    rows = min(GRAM_ROWS, n)
    step = 2.0**bits
    rounded = d * 4.0**bits <= 2.0**_EXACT_BITS  # else grid_rows truncates every row, with no norm check
    to_grid = np.rint if rounded else np.trunc
    limit = _uniform_limit(bound, d, bits, rounded)
    common = (_shrink(d) / bound) * step  # c = fl(shrink/bound), then an exact power-of-two scaling
    # Two contiguous workspaces (strided writes into one [q | e] array cost half again as much as the product).
    work = np.empty((rows, d))
    extras = np.empty((rows, e))
    if ones:
        extras[:, extra] = 1.0
    scratch = None if X.dtype == np.float64 else np.empty((rows, d))
    upper = np.zeros((d, d), order="F")
    cross = np.zeros((d, e))
    corner = np.zeros((e, e))
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        block = X[start:stop]
        if scratch is not None:
            block = scratch[: stop - start]
            np.copyto(block, X[start:stop], casting="unsafe")
        q = work[: stop - start]
        squares = np.einsum("ij,ij->i", block, block)  # the reference's bits; ±inf or NaN for a non-finite row
        if squares.min() >= _FAST_SQUARES[0] and squares.max() <= limit:  # False for NaN
            np.multiply(block, common, out=q)
            to_grid(q, out=q)
        else:
            _general_rows(block, squares, q, bound, bits, rounded, nonfinite)
        upper = blas.dsyrk(1.0, q.T, beta=1.0, c=upper, overwrite_c=1)
        if e:
            x = extras[: stop - start]
            if extra:
                fill(start, stop, x[:, :extra])
            cross += q.T @ x
            corner += x.T @ x
    gram = np.triu(upper) + np.triu(upper, 1).T
    result: np.ndarray = np.block([[gram, cross], [cross.T, corner]]) if e else gram
    return result
