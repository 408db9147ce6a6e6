"""Exact aggregation: the float64 targets of dp.stats have their declared sensitivity on adversarial neighbours.

Regression tests for the floating-point attack of Casacuberta et al. (CCS 2022): with offset bounds a float sum of
clipped values moves by many times the clipping width when one record is replaced. The targets now sum integer
indices on a public fixed-point grid, exactly, so the *computed* values of neighbours differ by at most the declared
sensitivity (which includes a proven allowance for the one final rounding).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py._fixed_point import (
    Grid,
    clip_rows_to_norm,
    grid_rows,
    grid_sums,
    rounding_allowance,
    row_norms,
    square_bits,
    sum_bits,
)

OFFSET_BOUNDS = [(2.0**43, 2.0**43 + 1), (-(2.0**60), -(2.0**60) + 1024), (-3.0, 5.0), (0.0, 1e-3), (-1e300, 1e300)]
EXTREMES = (1e308, -1e308, np.inf, -np.inf, 0.0, -0.0, 5e-324)


def _pairs(lo: float, hi: float, n: int, seed: int, d: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Replace-one neighbours built to stress rounding: offsets, extremes at and beyond the bounds, tiny moves."""
    rng = np.random.default_rng(seed)
    shape = (n,) if d is None else (n, d)
    w = hi - lo
    uniform = lo + w * rng.uniform(0, 1, shape)
    halves = np.full(shape, lo)
    halves[::2] = lo + w / 2
    straddle = rng.choice([lo, hi, 0.0 if lo < 0 < hi else lo, lo + w * 0.5 + w * 2.0**-40], size=shape)
    outside = rng.choice([1e308, -1e308, lo, hi], size=shape)
    pairs = []
    for base in (uniform, halves, straddle, outside, np.full(shape, lo), np.full(shape, hi)):
        for new in (lo, hi, *EXTREMES, lo + w * 1e-9, hi - w * 1e-9):
            i = int(rng.integers(n))
            other = base.copy()
            other[i] = new
            pairs.append((base, other))
        moved = base.copy()
        moved[0] = np.where(np.isfinite(moved[0]), np.nextafter(moved[0], np.inf), moved[0])
        pairs.append((base, moved))
        tiny = base.copy()
        tiny[-1] = tiny[-1] + 1e-9
        pairs.append((base, tiny))
    return pairs


def _worst(response: dp.Response, pairs: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Largest ‖target(X) − target(X′)‖ / declared sensitivity over the pairs (must be ≤ 1)."""
    mech = response.mechanism
    return max(mech.sensitivity_norm(a, b) for a, b in pairs) / response.sensitivity


STATS = {
    "sum": dp.stats.sum,
    "mean": dp.stats.mean,
    "var": dp.stats.var,
}


@pytest.mark.parametrize("bounds", OFFSET_BOUNDS)
@pytest.mark.parametrize("name", ["sum", "mean", "var"])
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_computed_targets_of_adversarial_neighbours_differ_by_at_most_the_sensitivity(bounds, name, mechanism):
    """sum/mean/var targets (float64, as computed) of adversarial 1-D neighbours move by ≤ the declared L1/L2."""
    lo, hi = bounds
    pairs = _pairs(lo, hi, 4099, seed=1)
    params = dp.Del(1.0, 1e-6) if mechanism == "gaussian" else dp.Eps(1.0)
    r = STATS[name](pairs[0][0], params, bounds=bounds, mechanism=mechanism, rng=0, full_response=True)
    assert _worst(r, pairs) <= 1.0


@pytest.mark.parametrize("bounds", OFFSET_BOUNDS[:3])
@pytest.mark.parametrize("name", ["sum", "mean", "var"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_two_dimensional_targets_of_adversarial_neighbours_stay_within_the_sensitivity(bounds, name, axis):
    """Pooled, per-column and per-record statistics of 2-D data (per-column bounds) move by ≤ the sensitivity."""
    lo, hi = bounds
    w = hi - lo
    per_column = (np.array([lo, lo, lo + w / 4]), np.array([hi, lo + w / 2, hi]))
    pairs = _pairs(lo, hi, 1031, seed=2, d=3)
    r = STATS[name](pairs[0][0], dp.Eps(1.0), bounds=per_column, axis=axis, rng=0, full_response=True)
    assert _worst(r, pairs) <= 1.0


@pytest.mark.parametrize("bounds", OFFSET_BOUNDS[:3])
@pytest.mark.parametrize("name", ["sum", "mean", "var"])
@pytest.mark.parametrize("axis", [None, 0])
def test_omit_policy_vectors_of_adversarial_neighbours_stay_within_the_sensitivity(bounds, name, axis):
    """Under nan_policy='omit' the (count, Σu, Σu²) vectors and the omit-sum move by ≤ the sensitivity, NaN too."""
    lo, hi = bounds
    pairs = _pairs(lo, hi, 1031, seed=3, d=2)
    with_nan = []
    for a, b in pairs[::2]:
        changed = np.flatnonzero(np.any(a != b, axis=1))
        i = int(changed[0]) if changed.size else 0
        nan_b, nan_a = b.copy(), a.copy()
        nan_b[i, 0] = np.nan
        nan_a[i, 1] = np.nan
        with_nan += [(a, nan_b), (nan_a, b), (nan_a, nan_b)]
    pairs += with_nan
    r = STATS[name](pairs[0][0], dp.Eps(1.0), bounds=bounds, axis=axis, nan_policy="omit", rng=0, full_response=True)
    assert _worst(r, pairs) <= 1.0


@pytest.mark.parametrize("bounds", OFFSET_BOUNDS[:3])
@pytest.mark.parametrize("nan_policy", ["raise", "omit"])
def test_covariance_targets_of_adversarial_neighbours_stay_within_the_sensitivity(bounds, nan_policy):
    """The covariance entries (and the omit-policy count, Σu, Σuuᵀ) move by ≤ the declared L1 sensitivity."""
    lo, hi = bounds
    pairs = _pairs(lo, hi, 1031, seed=4, d=3)
    r = dp.stats.covariance(pairs[0][0], dp.Eps(1.0), bounds=bounds, nan_policy=nan_policy, rng=0, full_response=True)
    assert _worst(r, pairs) <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sum", "mean", "var"])
def test_a_million_records_at_offset_bounds_keep_the_sensitivity(name):
    """n = 10⁶ values at bounds (2⁴³, 2⁴³ + 1): neighbours' computed targets move by ≤ the sensitivity."""
    lo, hi = 2.0**43, 2.0**43 + 1
    x = lo + np.random.default_rng(5).uniform(0, 1, 10**6)
    pairs = []
    for new in (lo, hi, 1e308, -1e308, lo + 0.5):
        y = x.copy()
        y[123_457] = new
        pairs.append((x, y))
    r = STATS[name](x, dp.Eps(1.0), bounds=(lo, hi), rng=0, full_response=True)
    assert _worst(r, pairs) <= 1.0


def test_the_old_float_sum_fails_the_same_check():
    """A float sum of clipped values (the old target) moves by 16× its sensitivity on these pairs: the check bites."""
    lo, hi = 2.0**43, 2.0**43 + 1
    pairs = _pairs(lo, hi, 10_000, seed=6)
    x = np.full(10_000, lo)
    x[::2] = lo + 0.5
    y = x.copy()
    y[1] = hi
    pairs.append((x, y))
    old = dp.Laplace(target=lambda v: np.clip(v, lo, hi).sum() / (hi - lo), sensitivity=1.0)
    assert max(old.sensitivity_norm(a, b) for a, b in pairs) >= 8.0
    ours = dp.stats.sum(x, dp.Eps(1.0), bounds=(lo, hi), rng=0, full_response=True)
    assert _worst(ours, pairs) <= 1.0


def test_the_rounding_allowance_is_needed_for_the_mean():
    """The correctly rounded mean of neighbours can differ by more than 1/n: the allowance is not decoration."""
    lo, hi = 2.0**43, 2.0**43 + 1
    x = np.full(100_000, lo)
    x[::2] = lo + 0.5
    y = x.copy()
    y[1] = hi
    r = dp.stats.mean(x, dp.Eps(1.0), bounds=(lo, hi), rng=0, full_response=True)
    change = r.mechanism.sensitivity_norm(x, y)
    assert change > 1 / x.size
    assert change <= r.sensitivity == 1 / x.size + rounding_allowance(1.0)


def test_sum_target_is_the_exact_grid_sum_rounded_once():
    """The sum target equals float(Σk)·2⁻ᵇ computed with Fractions from the documented index map."""
    lo, hi = -3.0, 5.0
    x = np.array([-1e308, -3.0, -2.9999, 0.0, 1.25, 4.999999, 5.0, 7.0, 1e308, np.inf, -np.inf])
    b = sum_bits(1)
    scale = 2.0**b / (hi - lo)
    with np.errstate(over="ignore", invalid="ignore"):
        k = [int(np.rint(np.clip((v - lo) * scale, 0, 2.0**b))) for v in x]
    r = dp.stats.sum(x, dp.Eps(1.0), bounds=(lo, hi), rng=0, full_response=True)
    assert r.mechanism.target(x) == float(Fraction(sum(k), 2**b))
    mean = dp.stats.mean(x, dp.Eps(1.0), bounds=(lo, hi), rng=0, full_response=True)
    assert mean.mechanism.target(x) == float(Fraction(sum(k), x.size * 2**b))


def test_no_finite_input_gives_nan_or_an_unclipped_contribution():
    """Extreme finite and infinite values give finite targets inside the range of clipped sums."""
    x = np.array([1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, np.inf, -np.inf])
    for name, f in STATS.items():
        r = f(x, dp.Eps(1.0), bounds=(-1.0, 1.0), rng=0, full_response=True)
        value = r.mechanism.target(x)
        assert np.all(np.isfinite(value)), name
    assert dp.stats.sum(x, dp.Eps(1e9), bounds=(-1.0, 1.0), rng=0) == pytest.approx(0.0, abs=1e-6)


def test_bounds_without_a_representable_grid_are_refused_before_any_charge():
    """Bounds whose width overflows or whose grid scale overflows are refused clearly, before the accountant."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    for bounds in [(-1e308, 1e308), (0.0, 1e-300)]:
        with pytest.raises(ValueError, match="fixed-point grid"):
            dp.stats.mean(np.zeros(3), dp.Eps(0.5), bounds=bounds, rng=0, accountant=acc)
    assert acc.spent.epsilon == 0


def test_bounds_that_collapse_in_float64_are_refused():
    """(−2⁶⁰, −2⁶⁰ + 8) is one float64 (its spacing there is 256): refused as lower < upper fails, not released."""
    with pytest.raises(ValueError, match="lower < upper"):
        dp.stats.sum(np.zeros(3), dp.Eps(1.0), bounds=(-(2**60), -(2**60) + 8), rng=0)


def test_exact_sums_do_not_depend_on_order_or_blocks():
    """Permuting the values leaves the exact grid sums (and so the target) unchanged, bit for bit."""
    rng = np.random.default_rng(7)
    x = 2.0**43 + rng.uniform(0, 1, 200_003)
    grid = Grid.over(np.asarray(2.0**43), np.asarray(2.0**43 + 1), sum_bits(1), pooled=True)
    a = grid_sums(x, grid, None, 1)
    b = grid_sums(rng.permutation(x), grid, None, 1)
    assert a.s1 == b.s1
    parts = [grid_sums(part, grid, None, 1) for part in np.array_split(x, 7)]
    assert sum(p.s1 for p in parts) == a.s1


def test_square_sums_are_exact_integers():
    """Σk² from the BLAS dot equals the Python-integer sum of squares of the same indices."""
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, 70_000)
    b = square_bits(1)
    grid = Grid.over(np.asarray(-1.0), np.asarray(1.0), b, pooled=True)
    sums = grid_sums(x, grid, None, 2)
    k = np.rint(np.clip((x + 1.0) * (2.0**b / 2.0), 0, 2.0**b)).astype(np.int64)
    assert sums.s1 == int(k.sum()) and sums.s2 == sum(int(v) * int(v) for v in k)


# ---- bit identity: in-memory, Chunks and dask ---------------------------------------------------------------------


@pytest.mark.parametrize("nan_policy", ["raise", "omit"])
@pytest.mark.parametrize("axis", [None, 0])
@pytest.mark.parametrize("name", ["sum", "mean", "var", "std"])
def test_in_memory_chunks_and_dask_releases_are_bit_identical(name, axis, nan_policy):
    """For a seed, the same data in memory, as dp.Chunks of uneven blocks and as dask give the same bits."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(9)
    x = 2.0**43 + rng.uniform(-0.5, 1.5, (70_001, 3))
    if nan_policy == "omit":
        x[::97, 1] = np.nan
    f = getattr(dp.stats, name)
    kw = dict(bounds=(2.0**43, 2.0**43 + 1), axis=axis, nan_policy=nan_policy, rng=11)
    mem = f(x, dp.Eps(1.0), **kw)
    blocks = np.array_split(x, [5, 40_000, 40_001, 66_000])
    chunked = f(dp.Chunks(blocks), dp.Eps(1.0), **kw)
    dasked = f(da.from_array(x, chunks=(9_999, 3)), dp.Eps(1.0), **kw)
    np.testing.assert_array_equal(np.asarray(mem), np.asarray(chunked))
    np.testing.assert_array_equal(np.asarray(mem), np.asarray(dasked))


@pytest.mark.parametrize("nan_policy", ["raise", "omit"])
def test_covariance_in_memory_chunks_and_dask_are_bit_identical(nan_policy):
    """The covariance release is the same bits for in-memory, Chunks and dask data."""
    da = pytest.importorskip("dask.array")
    x = np.random.default_rng(10).normal(0, 1, (20_001, 4))
    if nan_policy == "omit":
        x[::50, 2] = np.nan
    kw = dict(bounds=(-2.0, 2.0), nan_policy=nan_policy, rng=12)
    mem = dp.stats.covariance(x, dp.Eps(1.0), **kw)
    chunked = dp.stats.covariance(dp.Chunks(np.array_split(x, 6)), dp.Eps(1.0), **kw)
    dasked = dp.stats.covariance(da.from_array(x, chunks=(3_333, 4)), dp.Eps(1.0), **kw)
    np.testing.assert_array_equal(mem, chunked)
    np.testing.assert_array_equal(mem, dasked)


def test_histogram_counts_are_exact_integers_for_extreme_values():
    """Histogram targets are integer counts; ±inf and ±1e308 fall in no bin; NaN is refused or omitted."""
    x = np.array([0.5, np.inf, -np.inf, 1e308, -1e308, 0.0, 1.0, 2.0**43])
    with np.errstate(all="raise"):
        r = dp.stats.histogram(x, dp.Eps(1.0), bins=3, range=(0, 1), rng=0, full_response=True)[0]
        counts = r.mechanism.target(x)
    np.testing.assert_array_equal(counts, [1, 1, 1])
    assert np.all(counts == np.rint(counts))
    with pytest.raises(ValueError, match="NaN"):
        dp.stats.histogram(np.append(x, np.nan), dp.Eps(1.0), bins=3, range=(0, 1), rng=0)
    with_nan = np.append(x, np.nan)
    omitted = dp.stats.histogram(with_nan, dp.Eps(1.0), bins=[0, 0.5, 1], nan_policy="omit", rng=0, full_response=True)
    np.testing.assert_array_equal(omitted[0].mechanism.target(np.append(x, np.nan)), [1, 2])


# ---- estimators: AdaSSP / functional-mechanism statistics and PCA's second moment -------------------------------


def _row_pairs(n: int, d: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Neighbouring matrices: rows on the unit sphere, huge (1e154, 1e308), tiny and non-finite replacements."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0, 1, (n, d))
    base /= np.linalg.norm(base, axis=1)[:, None]
    base[::3] *= rng.choice([1e-9, 0.5, 1e154, 1e300], size=(len(base[::3]), 1))
    pairs = []
    for new in (np.eye(d)[0], -np.eye(d)[1], np.full(d, 1e308), np.full(d, -1e154), np.full(d, np.inf), np.zeros(d)):
        for i in (0, 1, n - 1):
            other = base.copy()
            other[i] = new
            pairs.append((base, other))
    return pairs


@pytest.mark.parametrize("method", ["adassp", "functional"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_regression_statistics_of_adversarial_neighbours_stay_within_the_sensitivity(method, fit_intercept):
    """The scaled sufficient statistics (float64, as computed) of neighbours move by ≤ the declared sensitivity."""
    n, d = 5003, 4
    mech = dp.estimators.LinearRegression(
        method=method, data_norm=1.0, label_bound=(-1.0, 1.0), fit_intercept=fit_intercept, reg_lambda=1.0
    )
    y = np.random.default_rng(12).choice([-1.0, 1.0, 1e308, -1e308, 0.3], size=n)
    worst = 0.0
    for X, X2 in [(a, b) for a, b in _row_pairs(n, d, seed=13) if np.all(np.isfinite(b))]:
        y2 = y.copy()
        changed = np.flatnonzero(np.any(X != X2, axis=1))
        y2[changed] = -y[changed]  # the label of the replaced record only
        worst = max(worst, mech.sensitivity_norm((X, y), (X2, y2)) / mech.sensitivity)
    assert worst <= 1.0


@pytest.mark.parametrize("method", ["ppca", "analyze_gauss"])
def test_pca_second_moment_of_adversarial_neighbours_stays_within_the_sensitivity(method):
    """PCA's clipped Gram matrix (exact on its grid) moves by ≤ the declared sensitivity, rows of 1e308 included."""
    mech = dp.estimators.PCA(2, method=method, data_norm=1.0)
    pairs = [(a, b) for a, b in _row_pairs(4099, 5, seed=14) if np.all(np.isfinite(b))]
    assert max(mech.sensitivity_norm(a, b) for a, b in pairs) <= mech.sensitivity


def test_pca_second_moment_is_identical_for_in_memory_chunks_and_dask():
    """The Gram matrix is an exact sum: in-memory, Chunks and dask give the same bits."""
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(15).normal(0, 1, (40_001, 6))
    target = dp.estimators.PCA(2, data_norm=2.0).target
    mem = target(X).gram
    np.testing.assert_array_equal(mem, target(dp.Chunks(np.array_split(X, 7))).gram)
    np.testing.assert_array_equal(mem, target(da.from_array(X, chunks=(7_000, 6))).gram)


def test_linear_regression_statistics_are_identical_for_in_memory_and_chunks():
    """AdaSSP statistics are exact sums: in-memory and Chunks give the same bits."""
    rng = np.random.default_rng(16)
    X, y = rng.normal(0, 1, (30_001, 3)), rng.normal(0, 1, 30_001)
    mech = dp.estimators.LinearRegression(method="adassp", data_norm=2.0, label_bound=(-3.0, 3.0))
    mem = mech.statistics((X, y)).vector
    chunks = dp.Chunks([(X[a:b], y[a:b]) for a, b in [(0, 7), (7, 20_000), (20_000, 30_001)]])
    np.testing.assert_array_equal(mem, mech.statistics(chunks).vector)


# ---- norms -------------------------------------------------------------------------------------------------------


def test_row_norms_neither_overflow_nor_underflow():
    """Rows of 1e154 and 1e-200 entries get their true norms; a row with inf or NaN gets +inf."""
    rows = np.array([[1e154, 1e154], [3e-200, 4e-200], [3.0, 4.0], [np.inf, 1.0], [np.nan, 0.0], [0.0, 0.0]])
    norms = row_norms(rows)
    np.testing.assert_allclose(norms[:3], [np.sqrt(2) * 1e154, 5e-200, 5.0], rtol=1e-15)
    assert np.isinf(norms[3]) and np.isinf(norms[4]) and norms[5] == 0


def test_clipped_rows_lie_in_the_unit_ball_as_floats_and_quantise_inside_it():
    """Clipped rows have float norm ≤ 1, non-finite rows become 0, and truncated grid rows stay inside too."""
    rng = np.random.default_rng(11)
    rows = rng.normal(0, 1, (5000, 7)) * rng.choice([1e-300, 1.0, 1e154, 1e300], size=(5000, 1))
    rows[::13, 3] = np.nan
    rows[::17, 1] = -np.inf
    unit = clip_rows_to_norm(rows, 1.0)
    assert np.all(np.isfinite(unit)) and np.all(row_norms(unit) <= 1.0)
    assert np.all(unit[::13] == 0)
    b = 20
    q = grid_rows(unit, b)
    exact = [sum(int(v) ** 2 for v in row) for row in q.astype(np.int64)]
    assert max(exact) <= 4**b


# ---- the small-input path (pooled statistics of at most SMALL values, computed in Python arithmetic) ----------------


def _array_path(target, x: np.ndarray) -> np.ndarray:
    """The target's value through the block machinery (grid_sums + _finish), skipping the small path."""
    grid = target.grid(1 if x.ndim == 1 else x.shape[1])
    return target._finish(target._sums(x, grid), grid)


@pytest.mark.parametrize("bounds", OFFSET_BOUNDS)
@pytest.mark.parametrize("name", ["sum", "mean", "var"])
def test_small_inputs_give_the_array_paths_value_bit_for_bit(bounds, name):
    """Targets of ≤ 32 values (Python arithmetic) equal the numpy block path exactly, extremes and ints included."""
    from diffpriv_py.stats._moments import SMALL

    lo, hi = bounds
    rng = np.random.default_rng(7)
    r = STATS[name](np.full(5, lo), dp.Eps(1.0), bounds=bounds, rng=0, full_response=True)
    target = r.mechanism.target
    cases = [base for base, _ in _pairs(lo, hi, 11, seed=3)] + [np.array(EXTREMES), rng.integers(-9, 9, SMALL)]
    cases += [lo + (hi - lo) * rng.uniform(-0.5, 1.5, (4, 3)), rng.normal(size=1)]
    cases += [np.array([2**63 - 1, -(2**63), 2**53 + 1], dtype=np.int64), np.array([2**64 - 1, 3], dtype=np.uint64)]
    cases += [np.array([0.5, 1.5, -7.25], dtype=np.float32), np.array([3, -4], dtype=np.int8)]
    for x in cases:
        assert x.size <= SMALL
        small, full = target(x), _array_path(target, x)
        assert np.float64(small).tobytes() == np.float64(full).tobytes(), (x, small, full)


@pytest.mark.parametrize("name", ["sum", "mean", "var"])
def test_small_inputs_of_adversarial_neighbours_stay_within_the_sensitivity(name):
    """The small path keeps the declared sensitivity on adversarial neighbours of 10 values at offset bounds."""
    for lo, hi in OFFSET_BOUNDS:
        pairs = _pairs(lo, hi, 10, seed=4)
        r = STATS[name](pairs[0][0], dp.Eps(1.0), bounds=(lo, hi), rng=0, full_response=True)
        assert _worst(r, pairs) <= 1.0


def test_small_inputs_with_nan_still_raise_after_the_charge():
    """NaN in a 10-value input takes the array path's error (nan_policy='raise'), after the budget is charged."""
    acc = dp.Accountant(budget=dp.Eps(5.0))
    x = np.array([0.1, np.nan, 0.3])
    with pytest.raises(ValueError, match="contain NaN") as info:
        dp.stats.mean(x, dp.Eps(1.0), bounds=(0, 1), rng=0, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(1.0) and "charged" in " ".join(getattr(info.value, "__notes__", []))


def _exact_squared_norms(rows: np.ndarray) -> list:
    from fractions import Fraction

    return [sum(Fraction(float(v)) ** 2 for v in row) for row in rows]


@pytest.mark.parametrize("bound", [1.0, 0.3, 20.0, 2.0**-400, 2.0**400, 1e-300, 1e300])
def test_clipped_rows_have_exact_norm_at_most_one_on_both_paths(bound):
    """Rows on the sphere, just inside/outside it, at the direct path's limits and beyond: exact ‖row‖² ≤ 1."""
    rng = np.random.default_rng(int(np.log2(bound)) % 1000)
    d = 9
    base = rng.normal(0, 1, (400, d))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    scales = bound * np.array([1.0, 1 - 2**-52, 1 + 2**-52, 0.5, 2.0, 1e-3, 1e3])
    edges = np.sqrt([2.0**-800, 2.0**800]) / np.sqrt(d)  # rows whose sum of squares sits at the direct path's limits
    scales = np.concatenate([scales, edges, edges * (1 - 2**-40), edges * (1 + 2**-40), [1e-200, 1e154, 1e300]])
    rows = np.concatenate([base * s for s in scales])
    rows[::7, 0] = -rows[::7, 0]  # signs straddling 0
    with np.errstate(over="ignore"):
        rows = rows[np.all(np.isfinite(rows), axis=1)]
    unit = clip_rows_to_norm(rows, bound)
    assert max(_exact_squared_norms(unit)) <= 1
    # Each row's output depends on that row only (same bits alone or in a batch), and the two paths agree closely.
    np.testing.assert_array_equal(clip_rows_to_norm(rows[5:6], bound), unit[5:6])
    with np.errstate(over="ignore"):
        expected = np.minimum(row_norms(rows) / bound, 1.0)
    np.testing.assert_allclose(row_norms(unit), expected, rtol=1e-13, atol=1e-300)


def test_the_clip_without_its_shrink_factor_would_leave_rows_outside_the_ball():
    """The exact check above is not vacuous: x / max(‖x‖, bound) computed naively exceeds norm 1 on some rows."""
    rng = np.random.default_rng(5)
    rows = rng.normal(0, 1, (2000, 9))
    naive = rows / np.maximum(np.linalg.norm(rows, axis=1), 0.5)[:, None]
    assert max(_exact_squared_norms(naive)) > 1
