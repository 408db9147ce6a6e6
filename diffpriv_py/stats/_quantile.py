"""DP quantiles by the exponential mechanism over a public grid of candidates (McSherry & Talwar 2007)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import attrs
import numpy as np

from .._arguments import quantile_levels
from .._blockwise import is_out_of_core
from .._rng import RNGLike
from .._validation import check_in_range, check_int, check_real, one_of
from ..exceptions import TargetOutputError
from ..mechanisms.base import as_sensitivity, check_callable_target
from ..mechanisms.composed import ComposedMech
from ..noise import gumbel, sample_exponential_many
from ..privacy import Eps
from ._common import (
    NAN_POLICIES,
    Axis,
    NanPolicy,
    as_data,
    check_axis,
    check_bool,
    check_bounds,
    check_choice,
    check_params,
    nan_error,
)

__all__ = [
    "DEFAULT_CANDIDATES",
    "GridCounts",
    "Quantile",
    "candidate_grid",
    "default_n_candidates",
    "median",
    "quantile",
]


def _as_values(data: Any) -> Any:
    return data


def _bound_tuple(value: Any) -> tuple[float, ...]:
    arr = np.atleast_1d(np.asarray(value, dtype=np.float64))
    return tuple(float(v) for v in arr)


DEFAULT_CANDIDATES = 1025
"""Coarsest default grid: 2¹⁰ + 1 points, a step of (upper − lower)/1024 (see :func:`default_n_candidates`)."""

_MAX_CANDIDATES = 1 << 24

_MAX_DEFAULT_CANDIDATES = (1 << 22) + 1
"""Finest default grid: 2²² + 1 points (a step of (upper − lower)/4194304; about 100 MB of counts and scores)."""

_BLOCK = 1 << 16
"""Values counted per block: the block's temporaries stay in cache (about 150 blocks for 10⁷ values)."""


def _n_candidates(value: Any) -> int:
    m = check_int(value, "n_candidates", minimum=2, owner="Quantile")
    if m > _MAX_CANDIDATES:
        raise ValueError(
            f"The 'n_candidates' parameter of Quantile must be at most {_MAX_CANDIDATES} (2^24): every candidate is "
            f"scored and drawn over, so the cost grows with it. Got {m}. A grid of 2^k + 1 points with k ≤ 20 already "
            "resolves (upper − lower)/10⁶."
        )
    return m


def default_n_candidates(n_values: int, epsilon: float, sensitivity: float = 1.0) -> int:
    """The default grid size of a quantile release: fine enough that the step is not what limits the accuracy.

    Parameters
    ----------
    n_values : int
        Public number of values the release ranks (the number of records, NaN included, for one column; a public
        upper bound on it otherwise).
    epsilon : float
        The ε of one draw (the release's ε divided by the number of levels and columns).
    sensitivity : float, default 1
        The rank utility's sensitivity Δ.

    Returns
    -------
    int
        m = 2ᵏ + 1 with 2ᵏ the smallest power of two ≥ n·ε/(4Δ), clamped to k ∈ [10, 22]: 1025 (the former
        fixed default) for n·ε/Δ ≤ 4096, 2²² + 1 at most.

    Notes
    -----
    The exponential mechanism's rank error is about 2Δ/ε ranks, whatever the grid; for values spread over the bounds
    one rank is (upper − lower)/n, so the privacy error is about 2Δ·(upper − lower)/(ε·n) in value units. The step
    (upper − lower)/2ᵏ ≤ 4Δ·(upper − lower)/(ε·n) is at most twice it, and the rounding to the nearest candidate
    adds about a quarter step on average: measured on 10⁶ uniform values at ε = 1 with a median off the grid, the
    mean error is 1.6·10⁻⁶ with this grid (2¹⁸ + 1 points) and with one four times finer, and 3.3·10⁻⁶ with one
    twice coarser. A finer grid than that buys no accuracy and costs time (a draw costs O(min(m, 2n)) and the
    counting pass reads the grid at random). The size is a function of public numbers only (n, ε, Δ), so the grid,
    and the set of possible outputs, does not depend on the data; the worst-case rank error bound grows with
    ln m only.
    """
    owner = "dp.stats.default_n_candidates"
    n_values = check_int(n_values, "n_values", minimum=0, owner=owner)
    epsilon = check_in_range(epsilon, "epsilon", 0.0, math.inf, low_closed=True, high_closed=True, allow_inf=True,
                             owner=owner)  # fmt: skip
    sensitivity = check_in_range(sensitivity, "sensitivity", 0.0, math.inf, low_closed=False, high_closed=False,
                                 owner=owner)  # fmt: skip
    target = n_values * epsilon / (4.0 * sensitivity)
    if not target > 1 << 10:
        return DEFAULT_CANDIDATES
    if target >= 1 << 22:  # also ε = inf
        return _MAX_DEFAULT_CANDIDATES
    mantissa, exponent = math.frexp(target)  # target = mantissa·2^exponent, mantissa ∈ [0.5, 1)
    return (1 << (exponent - 1 if mantissa == 0.5 else exponent)) + 1


def candidate_grid(lower: float, upper: float, n_candidates: int = DEFAULT_CANDIDATES) -> np.ndarray:
    """The public candidate outputs of a quantile release on [lower, upper]: computed from the arguments alone.

    Parameters
    ----------
    lower, upper : float
        The public bounds (finite, lower < upper).
    n_candidates : int, default 1025
        Number of grid points, bounds included.

    Returns
    -------
    ndarray
        The strictly increasing float64 grid. With m = ``n_candidates``, step = upper/(m − 1) − lower/(m − 1) and
        h = ⌊(m − 1)/2⌋, the points are lower + i·step for i ≤ h and upper − (m − 1 − i)·step for i > h (each
        half measured from its own bound, so nothing overflows even for bounds near ±1.8e308 and both bounds are
        exact grid points). Points that round to the same double (bounds so close, relative to their magnitude,
        that fewer than m doubles lie between them) are kept once.
    """
    m = _n_candidates(n_candidates)
    lo, hi = check_real(lower, "lower"), check_real(upper, "upper")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(
            f"candidate_grid needs finite bounds with lower < upper; got lower={lo!r}, upper={hi!r}. Pass the public "
            "bounds of the quantile release, e.g. candidate_grid(0, 100)."
        )
    step = hi / (m - 1) - lo / (m - 1)
    half = (m - 1) // 2
    grid = np.empty(m)
    grid[: half + 1] = lo + np.arange(half + 1, dtype=np.float64) * step
    grid[half + 1 :] = hi - np.arange(m - 2 - half, -1, -1, dtype=np.float64) * step
    grid[0], grid[-1] = lo, hi
    np.clip(grid, lo, hi, out=grid)
    if not np.all(grid[1:] > grid[:-1]):  # rounding at the junction of the halves, or duplicates
        grid = np.unique(grid)
    return grid


@functools.lru_cache(maxsize=32)
def _cached_grid(lower: float, upper: float, n_candidates: int) -> np.ndarray:
    grid = candidate_grid(lower, upper, n_candidates)
    grid.flags.writeable = False
    return grid


def _grid_points(k: np.ndarray, grid: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``grid[k]`` by :func:`candidate_grid`'s formula, without reading the grid (the same float operations, so the
    same doubles): for a fine grid, arithmetic on a block is much cheaper than gathers from an array beyond cache."""
    m = grid.shape[0]
    lo, hi = float(grid[0]), float(grid[-1])
    step, half = hi / (m - 1) - lo / (m - 1), (m - 1) // 2
    kf = k.astype(np.float64)
    with np.errstate(over="ignore"):  # each half's formula can overflow only on the other half, where it is unused
        np.multiply(kf, step, out=out)
        out += lo
        upper = hi - (m - 1 - kf) * step
    np.copyto(out, upper, where=k > half)
    return np.clip(out, lo, hi, out=out)


@functools.lru_cache(maxsize=32)
def _formula_grid(lower: float, upper: float, m: int) -> bool:
    """Whether the m-point grid on [lower, upper] is exactly :func:`_grid_points` (not when rounding merged points)."""
    grid = _cached_grid(lower, upper, m)
    k = np.arange(m)
    return grid.shape[0] == m and bool(np.array_equal(_grid_points(k, grid, np.empty(m)), grid))


@attrs.frozen(eq=False)
class GridCounts:
    """The evaluated data of :class:`Quantile`: for every column j and candidate cᵢ of its grid, the rank counts.

    ``less[j, i]`` = #{x < cᵢ} and ``at_most[j, i]`` = #{x ≤ cᵢ} over the column's clipped present values, and
    ``present[j]`` their number. This is all the mechanism reads of the data.
    """

    less: tuple[np.ndarray, ...]
    at_most: tuple[np.ndarray, ...]
    present: np.ndarray


def _code_blocks(values: np.ndarray, grid: np.ndarray, nan_policy: str) -> Iterator[tuple[int, np.ndarray]]:
    """For each block of values, (start, codes) with code 2·k(x) + [x = grid[k(x)]] per value; NaN → 2m or 2m + 1.

    k(x) is the index of the largest grid point ≤ clip(x): estimated by arithmetic on the regular grid, checked
    exactly against the grid's own doubles (grid[k] ≤ x < grid[k + 1]), and looked up by binary search where the check
    fails (rounding next to a grid point, or NaN). The codes array is a buffer reused by the next block.
    """
    m = grid.size
    lo, hi = float(grid[0]), float(grid[-1])
    # The estimate assumes the regular formula; it only needs to be close, since every index is checked exactly.
    step = hi / (m - 1) - lo / (m - 1) if m > 1 else 1.0
    inv = 1.0 / step if step > 0 else math.inf
    upper_next = np.append(grid[1:], np.inf)
    # Beyond ~2¹⁵ points the two gathers per value miss the cache; the grid's own formula gives the same doubles.
    arithmetic = m > _BLOCK // 2 and _formula_grid(lo, hi, m)
    size = min(_BLOCK, values.shape[0])
    xb, t, g = np.empty(size), np.empty(size), np.empty(size)
    k = np.empty(size, dtype=np.intp)
    ok, eq = np.empty(size, dtype=bool), np.empty(size, dtype=bool)
    for start in range(0, values.shape[0], _BLOCK):
        block = values[start : start + _BLOCK]
        b = block.shape[0]
        x, kk, okb, eqb, tb, gb = xb[:b], k[:b], ok[:b], eq[:b], t[:b], g[:b]
        np.clip(block, lo, hi, out=x)  # NaN stays NaN
        with np.errstate(invalid="ignore", over="ignore"):
            np.multiply(x, inv, out=tb)
            tb -= lo * inv
            np.copyto(kk, tb, casting="unsafe")  # truncation = floor, since x ≥ lo; NaN gives garbage, caught below
        np.clip(kk, 0, m - 1, out=kk)
        if arithmetic:
            _grid_points(kk, grid, gb)
        else:
            np.take(grid, kk, out=gb)
        np.less_equal(gb, x, out=okb)
        np.equal(gb, x, out=eqb)
        if arithmetic:
            _grid_points(np.minimum(kk + 1, m - 1), grid, gb)
            gb[kk == m - 1] = np.inf
        else:
            np.take(upper_next, kk, out=gb)
        okb &= gb > x
        if not okb.all():
            bad = np.flatnonzero(~okb)
            xs = x[bad]
            fixed = np.searchsorted(grid, xs, side="right") - 1
            nan = np.isnan(xs)
            if nan.any():
                if nan_policy == "raise":
                    raise nan_error("dp.stats.quantile")
                fixed[nan] = m  # the NaN pair, dropped by the callers
            kk[bad] = fixed
            eqb[bad] = np.take(grid, np.minimum(fixed, m - 1)) == xs
        np.left_shift(kk, 1, out=kk)
        kk += eqb
        yield start, kk


def _rank_counts(values: np.ndarray, grid: np.ndarray, nan_policy: str) -> tuple[np.ndarray, np.ndarray, int]:
    """#{x < cᵢ}, #{x ≤ cᵢ} for every grid point cᵢ, and the number of present values, in one counting pass.

    One ``np.bincount`` of the codes 2·k(x) + [x = grid[k]] (:func:`_code_blocks`) gives, per candidate, the values
    in [cᵢ, cᵢ₊₁) and those equal to cᵢ; cumulative sums give both counts. No sort.
    """
    m = grid.size
    codes = np.zeros(2 * m + 2, dtype=np.int64)  # pairs (values in [cᵢ, cᵢ₊₁), values equal to cᵢ); last pair: NaN
    # A fine grid would make every block's bincount as long as the grid: keep the codes and count them once instead.
    kept = np.empty(values.shape[0], dtype=np.intp) if 2 * m + 2 > _BLOCK // 4 else None
    for start, kk in _code_blocks(values, grid, nan_policy):
        if kept is None:
            codes += np.bincount(kk, minlength=2 * m + 2)
        else:
            kept[start : start + kk.shape[0]] = kk
    if kept is not None:
        codes += np.bincount(kept, minlength=2 * m + 2)
    pairs = codes.reshape(m + 1, 2)
    at = pairs[:m, 1]
    in_bucket = pairs[:m].sum(axis=1)
    less = np.zeros(m, dtype=np.int64)
    np.cumsum(in_bucket[:-1], out=less[1:])
    present = int(values.shape[0] - pairs[m].sum())
    return less, less + at, present


@attrs.frozen(kw_only=True)
class Quantile(ComposedMech):
    """Release quantiles of bounded data with the exponential mechanism over a public grid of candidates.

    Parameters
    ----------
    quantiles : float or sequence of float
        The quantile levels q ∈ [0, 1] to release (0.5 is the median).
    lower, upper : float or sequence of float
        Public bounds: the data are clipped to them and the output is a point of the grid between them (one pair per
        column for 2-D data).
    n_candidates : int, default 1025
        Number of grid points per column, bounds included: the resolution is (upper − lower)/(n_candidates − 1).
        :func:`quantile` and :func:`median` size it to the problem by default (:func:`default_n_candidates`); this
        class takes it as given, since its target's number of values need not be public.
    target : callable, default identity
        Maps the dataset to its values: a 1-D array, or a 2-D array whose columns are released separately.
    sensitivity : float, default 1
        Sensitivity of the rank utility: how far one replaced record can move any count of values below a candidate
        (1 for one value per record; d when each record contributes d pooled values).
    nan_policy : {"raise", "omit"}, default "raise"
        ``"omit"`` leaves NaN out of each column.

    Notes
    -----
    **Output set.** Every release is a point of :func:`candidate_grid` ``(lower, upper, n_candidates)``, a set computed
    from the public bounds and resolution alone. The set of values a release can take therefore never depends on
    the data, in exact floating-point terms, and every output has positive probability under every dataset: the
    privacy loss of any output is bounded.

    **Utility.** With n the number of (present, clipped) values, L(c) = #{x < c} and R(c) = #{x ≤ c}, the score of
    candidate c is u(c) = −max(0, L(c) − q·n, q·n − R(c)): minus the number of values that would have to move for c
    to be a q-quantile (0 exactly when L(c) ≤ q·n ≤ R(c), so ties at c count as support, not as a penalty).
    Replacing one record moves L(c) and R(c) by at most one each and leaves n alone, so each term, and their
    maximum with 0, moves by at most 1: the sensitivity is Δ = 1. Under ``nan_policy="omit"`` n is itself private,
    but a record that becomes NaN (or stops being one) moves L(c) by 1 or 0 *together with* q·n by q, so L(c) − q·n
    moves by 1 − q or q, and q·n − R(c) likewise: Δ = 1 still. For pooled values, one record moves d of them: Δ = d.
    (Scores are computed in float64; the rounding of q·n is a relative 2⁻⁵³.)

    **Release.** Each (level, column) draws a candidate with probability ∝ exp(ε′·u(c)/(2Δ)), which is ε′-DP
    (McSherry & Talwar 2007), with the library's full-range Gumbel sampler, so no candidate's probability underflows
    to zero. The ε of a release is split equally over the k levels and d columns (basic composition):
    ε′ = ε/(k·d). Neighbouring relation: replace-one. The column count d is a public fact of the dataset, not of the
    settings, so the release is one part of a :class:`~diffpriv_py.mechanisms.composed.ComposedMech`, charged as its
    guarantee.

    **Why a grid.** The continuous version (Smith 2011) draws an interval between consecutive sorted data points
    and returns a uniform point a + U·(b − a) inside it. In floating point, the set of doubles that formula can
    produce depends on the data points a and b, so some outputs are impossible under a neighbouring dataset (an
    infinite privacy loss), and it needs a full sort. The grid costs a discretisation error of at most half a step
    (the resolution), and in exchange the output set is public and the scores come from one counting pass, no sort:
    the cost is O(n + n_candidates) per column, and the work per level is O(n_candidates).

    References
    ----------
    McSherry, F. & Talwar, K. (2007). Mechanism design via differential privacy. FOCS.
    Smith, A. (2011). Privacy-preserving statistical estimation with optimal convergence rates. STOC.
    """

    target: Callable[[Any], Any] = attrs.field(default=_as_values, validator=check_callable_target)
    sensitivity: float = attrs.field(default=1.0, converter=as_sensitivity)
    quantiles: tuple[float, ...] = attrs.field(converter=quantile_levels)
    lower: tuple[float, ...] = attrs.field(converter=_bound_tuple)
    upper: tuple[float, ...] = attrs.field(converter=_bound_tuple)
    n_candidates: int = attrs.field(default=DEFAULT_CANDIDATES, converter=_n_candidates)
    nan_policy: str = attrs.field(default="raise", validator=one_of(*NAN_POLICIES))

    sensitivity_is_derived: ClassVar[bool] = False
    """The rank utility's sensitivity is the user's declaration (1, or d for pooled values), as for any target."""

    accuracy_units: ClassVar[str] = "ranks"
    """Units of :meth:`Response.accuracy <diffpriv_py.Response.accuracy>` for its releases (see ``_accuracy``)."""

    def __attrs_post_init__(self) -> None:
        lo, hi = np.asarray(self.lower), np.asarray(self.upper)
        if lo.shape != hi.shape or not np.all(np.isfinite(lo) & np.isfinite(hi)) or not np.all(lo < hi):
            raise ValueError(
                f"Quantile needs finite bounds with lower < upper (one pair per column). Got lower={self.lower}, "
                f"upper={self.upper}."
            )

    def candidates(self, column: int = 0) -> np.ndarray:
        """The public grid a release for ``column`` draws from (see :func:`candidate_grid`)."""
        k = 0 if len(self.lower) == 1 else column
        return _cached_grid(self.lower[k], self.upper[k], self.n_candidates)

    def _check_dataset(self, X: Any) -> Any:
        # Only the identity target's input is the data itself; a custom target is checked on its output.
        if self.target is _as_values:
            self._check_values(np.asarray(X), error=ValueError)
        return X

    def _check_values(self, raw: np.ndarray, *, error: type[Exception]) -> np.ndarray:
        if raw.dtype.kind not in "iuf" or raw.ndim not in (1, 2) or raw.shape[0] == 0 or raw.size == 0:
            raise error(
                "The values of Quantile must be a non-empty 1-D or 2-D numeric array (rows are records); got dtype "
                f"{raw.dtype} with shape {raw.shape}. Pass numeric data, e.g. np.asarray(x, dtype=float)."
            )
        cols = raw.reshape(raw.shape[0], -1)
        if len(self.lower) not in (1, cols.shape[1]):
            raise error(
                f"Quantile has bounds for {len(self.lower)} columns but the data have {cols.shape[1]}. Pass one "
                "(lower, upper) pair for all columns or one per column."
            )
        return cols

    def _evaluate(self, output: Any) -> GridCounts:
        cols = self._check_values(np.asarray(output), error=TargetOutputError)
        less, at_most, present = [], [], []
        for j in range(cols.shape[1]):  # one counting pass per column; the grid is the column's
            column = cols[:, j] if cols.shape[1] > 1 else cols.reshape(-1)
            lt, le, count = _rank_counts(column, self.candidates(j), self.nan_policy)
            less.append(lt)
            at_most.append(le)
            present.append(count)
        return GridCounts(less=tuple(less), at_most=tuple(at_most), present=np.asarray(present, dtype=np.int64))

    def scores(self, value: GridCounts, level: int, column: int) -> np.ndarray:
        """u(c) = −max(0, #{x < c} − q·n, q·n − #{x ≤ c}) for every candidate c of ``column``'s grid."""
        qn = self.quantiles[level] * float(value.present[column])
        below = value.less[column] - qn
        above = qn - value.at_most[column]
        return -np.maximum(np.maximum(below, above), 0.0)

    def _norm(self, value1: GridCounts, value2: GridCounts) -> float:
        """Largest change of any candidate's score, over all levels and columns (the score sensitivity, L∞)."""
        worst = 0.0
        for j in range(len(value1.less)):
            for i in range(len(self.quantiles)):
                change = np.abs(self.scores(value1, i, j) - self.scores(value2, i, j))
                worst = max(worst, float(change.max()))
        return worst

    def _check_params(self, privacy_params: Eps) -> None:
        if self.sensitivity == 0:
            raise ValueError(
                "Quantile needs a positive sensitivity: one replaced record moves some rank by 1, so a rank utility "
                "with sensitivity 0 does not exist. Use sensitivity=1 (or d for pooled 2-D values)."
            )

    def _release(self, value: GridCounts, privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        result: np.ndarray = self._draw(value, privacy_params, rng, 1)[0]
        return result

    def half_width(self, privacy_params: Eps, noised: Any, alpha: float) -> Any:
        """Error bar in rank units: with probability ≥ 1 − α each released grid point c has rank error
        −u(c) ≤ −max u + (2Δ/ε′)·ln(m/α), m the number of candidates (McSherry & Talwar 2007, Thm 6). The bar
        returned is the second term: how many ranks c may be worse than the best grid point. The first is not
        included (it depends on the data).

        −max u is the grid's own discretisation: at most the number of values strictly inside one grid cell
        (0 when no two grid points bracket a run of values). In value units the error is at most the distance over
        which that many ranks spread, plus half a grid step; that depends on the data and is not computed here.
        """
        # ε is split over k levels and d columns; the released values are one per (level, column).
        eps = privacy_params.epsilon / max(len(self.quantiles), int(np.size(noised)))
        width = 2.0 * self.sensitivity / eps * math.log(self.n_candidates / alpha)
        return np.full(np.shape(noised), width) if np.ndim(noised) else width

    def _sample_many(self, value: GridCounts, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent releases from one evaluated dataset, shape (n, levels, columns) (for the auditor)."""
        return self._draw(value, privacy_params, rng, n)

    def _draw(self, value: GridCounts, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        d = len(value.less)
        k = len(self.quantiles)
        # Basic composition: every (level, column) draw gets an equal share of ε.
        scale = privacy_params.epsilon / (k * d) / (2.0 * self.sensitivity)
        out = np.empty((n, k, d))
        for j in range(d):
            grid = self.candidates(j)
            for i in range(k):
                out[:, i, j] = grid[_draw_candidates(self.scores(value, i, j), scale, rng, n)]
        return out


def _draw_candidates(scores: np.ndarray, scale: float, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` candidate indices, each with probability ∝ exp(scale·scores[i]), drawn in two exact stages.

    Neighbouring candidates with no data point between them share one score, so the grid falls into at most
    2·n_values + 1 runs of equal scores however fine it is. Stage one draws a run r with weight |r|·exp(scale·s_r)
    (the library's full-range Gumbel sampler with the log run length as base measure); stage two draws one of its
    candidates uniformly (exact integers). By the chain rule each candidate has probability exp(scale·scores[i])/Z,
    exactly as in one draw over all candidates.
    """
    starts = np.concatenate([[0], np.flatnonzero(scores[1:] != scores[:-1]) + 1])
    sizes = np.diff(np.append(starts, scores.size))
    chosen = sample_exponential_many(scores[starts], scale, rng, n, log_weights=np.log(sizes))
    result: np.ndarray = starts[chosen] + rng.integers(0, sizes[chosen])
    return result


@attrs.frozen(eq=False)
class _GroupedCells:
    """Sparse counts of (group, grid cell) pairs: everything a per-group quantile release reads of the data.

    ``keys`` are the sorted distinct g·2m + c of the values present, g the group and c = 2·k(x) + [x ≠ grid[k(x)]]
    the cell of x (2k: x equals candidate k; 2k + 1: x lies strictly between candidates k and k + 1), ``counts``
    how many values share each key, ``n_groups`` and ``n_grid`` (m) the public shape. In this coding
    #{x < cᵢ} = #{c < 2i} and #{x ≤ cᵢ} = #{c ≤ 2i}: both rank counts are prefix sums within a group. The counts do
    not depend on the order or the blocking of the rows, and their size is at most min(rows, groups · 2m).
    """

    keys: np.ndarray
    counts: np.ndarray
    n_groups: int
    n_grid: int

    @classmethod
    def of(cls, groups: np.ndarray, values: np.ndarray, n_groups: int, grid: np.ndarray) -> _GroupedCells:
        """The cells of ``values`` (finite or ±inf; NaN raises) in ``groups`` (codes in [0, n_groups))."""
        m = grid.size
        cells = np.empty(values.shape[0], dtype=np.int64)
        for start, kk in _code_blocks(values, grid, "raise"):
            cells[start : start + kk.shape[0]] = kk
        # Flipping the low bit turns 2k + [x = cₖ] into 2k + [x ≠ cₖ], which orders values equal to cₖ first. The
        # key range n_groups·2m stays below 2⁶³ for fewer than 2³⁸ rows (n_groups ≤ rows, m ≤ 2²⁴).
        cells ^= 1
        cells += groups.astype(np.int64) * (2 * m)
        keys, counts = np.unique(cells, return_counts=True)
        return cls(keys=keys, counts=counts.astype(np.int64), n_groups=n_groups, n_grid=m)

    @classmethod
    def merge(cls, parts: list[_GroupedCells]) -> _GroupedCells:
        """The counts of the union of the parts' rows (exact integers: the order of the parts does not matter)."""
        if len(parts) == 1:
            return parts[0]
        keys = np.concatenate([p.keys for p in parts])
        if keys.size == 0:
            return parts[0]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        heads = np.flatnonzero(np.append(True, keys[1:] != keys[:-1]))
        counts = np.add.reduceat(np.concatenate([p.counts for p in parts])[order], heads)  # int64: exact
        return cls(keys=keys[heads], counts=counts, n_groups=parts[0].n_groups, n_grid=parts[0].n_grid)

    def relabel(self, code: np.ndarray, n_groups: int) -> _GroupedCells:
        """These counts with group g renamed ``code[g]`` (−1: dropped), among ``n_groups`` groups; an increasing
        ``code`` keeps the keys sorted, any other is sorted again."""
        width = 2 * self.n_grid
        group, cell = np.divmod(self.keys, width)
        new = code[group].astype(np.int64)
        kept = np.flatnonzero(new >= 0)
        keys = new[kept] * width + cell[kept]
        counts = self.counts[kept]
        if keys.size > 1 and (keys[1:] < keys[:-1]).any():
            order = np.argsort(keys, kind="stable")
            keys, counts = keys[order], counts[order]
        return attrs.evolve(self, keys=keys, counts=counts, n_groups=n_groups)

    def rank_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(group_ptr, points, less, at_most, n): per group, the candidates where its rank counts may change.

        Group g's points are ``points[group_ptr[g]:group_ptr[g + 1]]``, increasing and starting at 0; between two
        consecutive points (and from the last to the end of the grid) #{x < cᵢ} and #{x ≤ cᵢ} are constant and equal
        to ``less`` and ``at_most`` at the first of them. A value in cell c changes #{x < cᵢ} at i = ⌊c/2⌋ + 1 and
        #{x ≤ cᵢ} at i = ⌈c/2⌉, so those points (inside the grid) and 0 are all the change points: at most
        2·(distinct cells) + groups points, whatever m. ``n`` is each group's number of values.
        """
        m, width, k = self.n_grid, 2 * self.n_grid, self.n_groups
        group, cell = np.divmod(self.keys, width)
        firsts = np.arange(k, dtype=np.int64) * m
        candidates = np.concatenate([firsts, group * m + (cell + 1) // 2, group * m + cell // 2 + 1])
        inside = np.concatenate([np.ones(k, bool), (cell + 1) // 2 < m, cell // 2 + 1 < m])
        # Three sorted runs (keys are sorted): a stable (merge) sort is linear here, a hash-based unique is not.
        ids = np.sort(candidates[inside], kind="stable")
        ids = ids[np.append(True, ids[1:] != ids[:-1])] if ids.size else ids
        g, points = np.divmod(ids, m)
        group_ptr = np.searchsorted(g, np.arange(k + 1))
        total = np.concatenate([[0], np.cumsum(self.counts)])
        bounds = total[np.searchsorted(self.keys, np.arange(k + 1, dtype=np.int64) * width)]
        first, n = bounds[:-1], np.diff(bounds)
        probe = g * width + 2 * points
        less = total[np.searchsorted(self.keys, probe, side="left")] - first[g]
        at_most = total[np.searchsorted(self.keys, probe, side="right")] - first[g]
        return group_ptr, points, less, at_most, n


def _draw_candidates_grouped(
    points: np.ndarray, scores: np.ndarray, group_ptr: np.ndarray, n_grid: int, scale: float, rng: np.random.Generator
) -> np.ndarray:
    """One candidate index per group, each with probability ∝ exp(scale·score), by :func:`_draw_candidates`'s sampler
    run for all groups at once.

    Group g's scores are piecewise constant on the grid of ``n_grid`` candidates: ``scores[j]`` holds from
    ``points[j]`` up to the group's next point. Per group, exactly as :func:`_draw_candidates` does on the dense
    scores: consecutive pieces of equal score are merged into runs; each run r gets the logit
    (s_r − max s)·scale + ln|r| minus the group's largest logit (the arithmetic of the full-range Gumbel sampler's
    base-measure logits, :mod:`diffpriv_py.noise.selection`); a full-range Gumbel variable is added to every
    run; the first run with the largest sum wins; a uniform integer picks the candidate inside it. The Gumbel
    variables of all groups come from one call and the offsets from one ``rng.integers`` call, so for one group the
    random stream is consumed exactly as by :func:`_draw_candidates` (same index for the same seed); for several
    groups each group's draw is that sampler applied to its own independent uniforms.
    """
    k = group_ptr.size - 1
    first = np.zeros(points.size, dtype=bool)
    first[group_ptr[:-1]] = True
    keep = first.copy()
    keep[1:] |= scores[1:] != scores[:-1]
    starts, s = points[keep], scores[keep]
    run_ptr = np.append(np.flatnonzero(first[keep]), starts.size)
    run_group = np.repeat(np.arange(k), np.diff(run_ptr))
    ends = np.append(starts[1:], n_grid)
    ends[run_ptr[1:] - 1] = n_grid  # a group's last run ends at the end of the grid
    sizes = ends - starts
    heads = run_ptr[:-1]
    logits = s - np.maximum.reduceat(s, heads)[run_group]
    with np.errstate(over="ignore"):
        logits *= scale
    logits += np.log(sizes)
    logits -= np.maximum.reduceat(logits, heads)[run_group]
    noisy = gumbel(starts.size, rng)
    noisy += logits
    best = noisy == np.maximum.reduceat(noisy, heads)[run_group]
    winners = np.flatnonzero(best)
    chosen = winners[np.append(True, run_group[winners][1:] != run_group[winners][:-1])]  # first best per group
    result: np.ndarray = starts[chosen] + rng.integers(0, sizes[chosen])
    return result


@attrs.frozen(eq=False)
class _PooledValues:
    """Target for ``axis=None`` on 2-D data: every value clipped to its column's bounds, then pooled."""

    lower: np.ndarray
    upper: np.ndarray

    def __call__(self, data: Any) -> np.ndarray:
        return np.clip(np.asarray(data, dtype=np.float64), self.lower, self.upper).ravel()


def quantile(
    x: Any,
    q: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
    n_candidates: int | None = None,
) -> Any:
    """Differentially private quantile(s) of bounded data (exponential mechanism over a public grid).

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    q : float or sequence of float
        Quantile level(s) in [0, 1].
    privacy_params : Eps
        The privacy level of the whole release (split equally over the levels and columns). δ, if given, is
        reported unchanged.
    bounds : (lower, upper)
        Public bounds (scalars, or one value per column). Required; the result always lies inside them.
    axis : {None, 0, ()}, default None
        ``0``: one quantile per column of 2-D data; ``None`` pools all values (each record then moves ranks by up to
        d, and the sensitivity is d). ``()`` reduces nothing, as numpy: one answer per value, shaped like the data
        (at most 4096 values), the quantile of that value alone, with ε split over every level and value (as
        diffprivlib does). Mostly for numpy parity: the quantile of a single value says little (at q = 0.5 the rank
        score cannot tell the two sides of the value apart, so the answer is uniform on the grid at any ε).
    nan_policy : {"raise", "omit"}, default "raise"
        ``"omit"`` leaves NaN out; the sensitivity stays 1, because a value turning into NaN moves the level q·n
        by q together with the count of values below each candidate by 1 or 0 (see :class:`Quantile`).
    rng, accountant, full_response
        As in :func:`diffpriv_py.stats.mean`.
    keepdims : bool, default False
        As in ``numpy.quantile``: keep the reduced axes with length one (the levels' axis, if any, stays first).
    n_candidates : int, optional
        The resolution: every output is one of ``n_candidates`` evenly spaced public points from the lower to the
        upper bound (:func:`candidate_grid`), so the step is (upper − lower)/(n_candidates − 1). Default: sized to
        the problem by :func:`default_n_candidates` from the public number of records n, ε and the number of levels
        and columns, 2ᵏ + 1 points with 2ᵏ ≥ n·ε′/Δ (ε′ = ε per level and column, Δ = 1, or d pooled), at least
        1025 and at most 2²² + 1: the step stays below half the privacy error for data spread over the bounds, so
        at large n·ε the error is set by the privacy noise, not by the grid. An explicit value fixes the grid (the
        same draws for a seed as before this default existed); a coarser one rounds the answer to its step.

    Returns
    -------
    float, ndarray or Response
        Shaped like ``numpy.quantile``: a float for one level on 1-D data, otherwise an array whose first axis
        runs over the levels.

    Notes
    -----
    ε-DP under replace-one neighbours; see :class:`Quantile` for the mechanism and its proof (McSherry & Talwar
    2007). The output is always a point of the public grid, never a value that depends on the data's doubles.
    The default grid's size depends on the number of records n (rows, NaN included), ε, the number of levels and
    the shape: neighbours under replace-one have the same n and shape, so both draw from the same grid, and the
    proof of :class:`Quantile` applies to it unchanged (the grid is fixed before the data are read).
    Cost: one counting pass over the data (no sort), then O(n_candidates) per level and column.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> x = np.random.default_rng(0).normal(50, 10, 1000)
    >>> med = dp.stats.quantile(x, 0.5, dp.Eps(1.0), bounds=(0, 100), rng=1)
    """
    owner = "dp.stats.quantile"
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, owner=owner)
    if not isinstance(privacy_params, Eps):
        check_params(privacy_params, "laplace", owner=owner)
    full_response = check_bool(full_response, "full_response", owner=owner)
    keepdims = check_bool(keepdims, "keepdims", owner=owner)
    levels = quantile_levels(q)
    if is_out_of_core(x):
        raise TypeError(
            f"{owner} does not accept out-of-core data (dask, Chunks): the release reads the rank counts of every "
            "candidate from all values in memory. Compute it on an in-memory sample, or use dp.stats.histogram with "
            "fine public bins (additive over blocks) and read the quantile off the private cumulative counts."
        )
    data = as_data(x, owner=owner)
    if isinstance(axis, tuple) and not axis:  # numpy's axis=(): nothing is reduced, each value is its own answer
        # One value per answer: n·ε is tiny, so the sized default is the former fixed one.
        size = DEFAULT_CANDIDATES if n_candidates is None else _n_candidates(n_candidates)
        response = _each_value(data, levels, privacy_params, bounds, nan_policy, size, rng=rng, accountant=accountant)
        each = response.response[0] if np.ndim(q) == 0 else response.response
        return attrs.evolve(response, response=each) if full_response else each
    ax = check_axis(axis, data.ndim, owner=owner, allowed=(None, 0))
    two_d = data.ndim == 2
    lo, hi = check_bounds(bounds, data.shape[1] if two_d else None, owner=owner)
    if n_candidates is not None:
        n_candidates = _n_candidates(n_candidates)
    pooled = two_d and ax is None
    if n_candidates is None:
        # The number of records is public under replace-one neighbours; ε, the levels and the columns are public.
        columns = data.shape[1] if two_d else 1
        n_values, draws = (data.size, len(levels)) if pooled else (data.shape[0], len(levels) * columns)
        n_candidates = default_n_candidates(n_values, privacy_params.epsilon / draws, columns if pooled else 1)
    if pooled:
        target: Callable[[Any], Any] = _PooledValues(lo, hi)
        mech = Quantile(
            target=target,
            quantiles=levels,
            lower=float(lo.min()),
            upper=float(hi.max()),
            sensitivity=float(data.shape[1]),
            nan_policy=nan_policy,
            n_candidates=n_candidates,
        )
    else:
        mech = Quantile(quantiles=levels, lower=lo, upper=hi, nan_policy=nan_policy, n_candidates=n_candidates)
    response = mech.release_response(privacy_params, data, rng=rng, accountant=accountant)
    out = np.asarray(response.response)  # (levels, columns)
    if not (two_d and ax == 0):
        out = out[:, 0]
    if keepdims:
        # numpy's shapes: the reduced axes stay with length one after the levels' axis.
        out = out[:, np.newaxis, :] if two_d and ax == 0 else out.reshape(out.shape[0], *(1,) * data.ndim)
    value: Any = out
    if np.ndim(q) == 0:
        value = float(out[0]) if out.ndim == 1 else out[0]
    if full_response:
        return attrs.evolve(response, response=value)
    return value


_MAX_EACH_VALUE = 4096
"""Most values ``axis=()`` answers: each gets ε/(levels·values), so more answers are noise (and cost memory)."""


def _each_value(
    data: np.ndarray,
    levels: tuple[float, ...],
    privacy_params: Eps,
    bounds: Any,
    nan_policy: str,
    n_candidates: int,
    *,
    rng: RNGLike,
    accountant: Any,
) -> Any:
    """``axis=()``: the quantile of every single value, (levels, *data.shape) (numpy's "no reduction").

    The values are released as the columns of one record (bounds broadcast to every value), so the ε is split over
    every level and value and the guarantee holds against a change of the whole dataset, a fortiori of one record
    (diffprivlib splits the same way).
    """
    owner = "dp.stats.quantile"
    if data.size > _MAX_EACH_VALUE:
        raise ValueError(
            f"{owner} with axis=() releases one quantile per value, each at ε/(levels·values), so {data.size} values "
            f"would each get ε/{len(levels) * data.size:g} (noise only); at most {_MAX_EACH_VALUE} values are "
            "answered. Reduce over an axis (axis=0 or None), or release the values themselves with dp.Laplace."
        )
    lo, hi = check_bounds(bounds, data.shape[1] if data.ndim == 2 else None, owner=owner)
    mech = Quantile(
        quantiles=levels,
        lower=np.broadcast_to(lo, data.shape).reshape(-1),
        upper=np.broadcast_to(hi, data.shape).reshape(-1),
        nan_policy=nan_policy,
        n_candidates=n_candidates,
    )
    response = mech.release_response(privacy_params, data.reshape(1, -1), rng=rng, accountant=accountant)
    return attrs.evolve(response, response=np.asarray(response.response).reshape(len(levels), *data.shape))


def median(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
    n_candidates: int | None = None,
) -> Any:
    """Differentially private median: :func:`quantile` at q = 0.5 (same parameters, guarantee and cost)."""
    return quantile(
        x,
        0.5,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        keepdims=keepdims,
        n_candidates=n_candidates,
    )
