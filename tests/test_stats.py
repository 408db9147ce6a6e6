"""dp.stats: accuracy against numpy, declared sensitivities bound worst-case neighbours, noise scale, bad input."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from scipy import stats as sps

import diffpriv_py as dp
from diffpriv_py.stats._common import Plan
from diffpriv_py.testing import MechCase, audit, check_sensitivity, parametrize_with_checks

LO, HI = 0.0, 10.0
BIG = dp.Eps(1e6)  # large ε: the release is the clipped statistic up to a tiny noise


@pytest.fixture
def data(rng):
    """1-D data with values outside the bounds on both sides (so clipping matters)."""
    return rng.normal(5.0, 3.0, 2000)


@pytest.fixture
def frame(rng):
    """2-D data (records are rows) with columns on different scales and per-column bounds."""
    X = np.column_stack([rng.normal(5, 3, 1500), rng.normal(50, 30, 1500), rng.uniform(-1, 1, 1500)])
    return X, (np.array([0.0, 0.0, -1.0]), np.array([10.0, 100.0, 1.0]))


# ---- accuracy: with a huge ε every statistic is the clipped numpy statistic ----------------------------------------


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("mean", np.mean),
        ("sum", np.sum),
        ("var", np.var),
        ("std", np.std),
    ],
)
def test_moment_statistics_match_numpy_on_clipped_data(data, name, reference):
    """mean/sum/var/std at large ε equal numpy's value on the data clipped to the bounds."""
    got = getattr(dp.stats, name)(data, BIG, bounds=(LO, HI), rng=0)
    assert isinstance(got, float)
    assert got == pytest.approx(reference(np.clip(data, LO, HI)), rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["mean", "sum", "var", "std"])
def test_moment_statistics_support_axis_on_two_dimensional_data(frame, name, axis):
    """On 2-D data axis=None pools, axis=0 gives one value per column, axis=1 one per record (as numpy)."""
    X, (lo, hi) = frame
    got = getattr(dp.stats, name)(X, dp.Eps(1e9), bounds=(lo, hi), axis=axis, rng=0)
    expected = getattr(np, name)(np.clip(X, lo, hi), axis=axis)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)


def test_ddof_divides_like_numpy(data):
    """ddof=1 gives numpy's var(ddof=1) of the clipped data."""
    got = dp.stats.var(data, BIG, bounds=(LO, HI), ddof=1, rng=0)
    assert got == pytest.approx(np.var(np.clip(data, LO, HI), ddof=1), rel=1e-4)


def test_integer_and_float32_data_are_accepted(rng):
    """Integer and float32 inputs are computed in float64 (no integer overflow, no float32 sums)."""
    ints = rng.integers(0, 100, 5000)
    assert dp.stats.mean(ints, BIG, bounds=(0, 100), rng=0) == pytest.approx(ints.mean(), abs=1e-3)
    f32 = rng.random(5000).astype(np.float32)
    assert dp.stats.var(f32, BIG, bounds=(0, 1), rng=0) == pytest.approx(f32.astype(float).var(), rel=1e-4)


def test_streaming_kernel_matches_numpy_across_many_blocks(rng):
    """The blockwise exact grid sums (blocks of 65536 values) equal numpy to within the grid's quantisation."""
    x = rng.normal(0.5, 0.3, 300_001)
    clipped = np.clip(x, 0, 1)
    assert dp.stats.mean(x, dp.Eps(1e12), bounds=(0, 1), rng=0) == pytest.approx(clipped.mean(), rel=1e-9)
    # Variance grid step h = 2⁻¹⁸: each value moves by ≤ h/2, so the standard deviation by ≤ h/2 (triangle
    # inequality for the centred vectors) and the variance by ≤ h·sd + h²/4.
    h = 2.0**-18
    tol = h * clipped.std() + h * h / 4
    assert dp.stats.var(x, dp.Eps(1e12), bounds=(0, 1), rng=0) == pytest.approx(clipped.var(), abs=tol)
    inside = rng.uniform(0.1, 0.9, 300_001)  # never needs clipping: the no-copy fast path
    assert dp.stats.sum(inside, dp.Eps(1e12), bounds=(0, 1), rng=0) == pytest.approx(inside.sum(), rel=1e-9)


def test_count_counts_present_values_or_true_values(rng):
    """count is the number of non-NaN values, or of True values for a boolean predicate."""
    x = rng.normal(size=1000)
    x[::4] = np.nan
    assert dp.stats.count(x, BIG, rng=0) == 750
    assert dp.stats.count(x > 0, BIG, rng=0) == int(np.sum(x > 0))
    X = np.column_stack([x, np.ones(1000)])
    np.testing.assert_array_equal(dp.stats.count(X, BIG, axis=0, rng=0), [750, 1000])
    assert isinstance(dp.stats.count(x, dp.Eps(1), rng=0), int)


def test_histogram_matches_numpy_and_returns_edges(data):
    """Counts equal numpy's at large ε (values outside the range ignored), edges are the public ones."""
    counts, edges = dp.stats.histogram(data, BIG, bins=5, range=(LO, HI), rng=0)
    ref_counts, ref_edges = np.histogram(data, bins=5, range=(LO, HI))
    np.testing.assert_array_equal(counts, ref_counts)
    np.testing.assert_array_equal(edges, ref_edges)
    assert counts.dtype == np.int64
    explicit, _ = dp.stats.histogram(data, BIG, bins=[0, 1, 5, 10], rng=0)
    np.testing.assert_array_equal(explicit, np.histogram(data, bins=[0, 1, 5, 10])[0])


def test_histogram_per_column_has_one_column_per_feature(frame):
    """axis=0 on 2-D data gives counts of shape (bins, d), each column numpy's histogram of that column."""
    X, _ = frame
    counts, _ = dp.stats.histogram(X, BIG, bins=4, range=(-1, 1), axis=0, rng=0)
    assert counts.shape == (4, 3)
    np.testing.assert_array_equal(counts[:, 2], np.histogram(X[:, 2], bins=4, range=(-1, 1))[0])


def test_counts_are_integers_and_never_negative(rng):
    """Noisy counts are whole numbers clipped at 0 (post-processing), even at tiny ε."""
    counts, _ = dp.stats.histogram(rng.random(10), dp.Eps(0.01), bins=20, range=(0, 1), rng=3)
    assert counts.dtype == np.int64 and counts.min() >= 0


def test_quantiles_are_close_at_large_epsilon(data):
    """The exponential-mechanism quantile lands between the neighbouring order statistics at large ε."""
    levels = [0.1, 0.5, 0.9]
    got = dp.stats.quantile(data, levels, dp.Eps(1e4), bounds=(LO, HI), rng=0)
    np.testing.assert_allclose(got, np.quantile(np.clip(data, LO, HI), levels), atol=0.05)
    med = dp.stats.median(data, dp.Eps(1e4), bounds=(LO, HI), rng=0)
    assert isinstance(med, float) and med == pytest.approx(np.median(data), abs=0.05)


def test_quantile_shapes_follow_numpy(frame):
    """Levels first, then columns: (k, d) for several levels on 2-D data with axis=0, (d,) for one."""
    X, (lo, hi) = frame
    assert dp.stats.quantile(X, [0.25, 0.75], dp.Eps(1e4), bounds=(lo, hi), axis=0, rng=0).shape == (2, 3)
    med = dp.stats.median(X, dp.Eps(1e4), bounds=(lo, hi), axis=0, rng=0)
    np.testing.assert_allclose(med, np.median(np.clip(X, lo, hi), axis=0), rtol=0.05, atol=0.05)
    assert isinstance(dp.stats.median(X, dp.Eps(1), bounds=(-1, 100), rng=0), float)


def test_quantile_never_leaves_the_bounds(rng):
    """Every output is inside [lower, upper], even for tiny ε, extreme levels and data outside the bounds."""
    x = rng.normal(0, 100, 200)
    out = dp.stats.quantile(x, [0, 0.01, 0.5, 0.99, 1], dp.Eps(0.01), bounds=(-1, 1), rng=1)
    assert np.all((out >= -1) & (out <= 1))


def test_covariance_matches_numpy_and_is_positive_semidefinite(frame, rng):
    """At large ε the covariance is numpy's of the clipped data; at small ε it stays symmetric PSD."""
    X, (lo, hi) = frame
    got = dp.stats.covariance(X, dp.Eps(1e9), bounds=(lo, hi), rng=0)
    np.testing.assert_allclose(got, np.cov(np.clip(X, lo, hi), rowvar=False), rtol=1e-3, atol=1e-3)
    noisy = dp.stats.covariance(X, dp.Eps(0.1), bounds=(lo, hi), rng=0)
    np.testing.assert_array_equal(noisy, noisy.T)
    assert np.linalg.eigvalsh(noisy).min() >= -1e-9 * np.abs(noisy).max()


def test_gaussian_mechanism_is_available_for_every_numeric_statistic(data):
    """mechanism='gaussian' with Del parameters releases through dp.Gaussian and reports (ε, δ)."""
    params = dp.Del(1.0, 1e-6)
    for func in (dp.stats.mean, dp.stats.sum, dp.stats.var, dp.stats.std):
        r = func(data, params, bounds=(LO, HI), mechanism="gaussian", rng=0, full_response=True)
        assert isinstance(r.mechanism, dp.Gaussian) and r.privacy_params == params
    r = dp.stats.count(data, params, mechanism="gaussian", rng=0, full_response=True)
    assert isinstance(r.mechanism, dp.Gaussian) and isinstance(r.response, int)


def test_full_response_carries_the_mechanism_and_the_post_processed_value(data):
    """full_response=True returns the Response of a library mechanism whose response is the returned value."""
    r = dp.stats.mean(data, dp.Eps(1), bounds=(LO, HI), rng=5, full_response=True)
    assert isinstance(r, dp.Response) and isinstance(r.mechanism, dp.Laplace)
    assert r.sensitivity == pytest.approx(1 / data.size)  # in units of the bounds' width hi − lo
    assert r.response == dp.stats.mean(data, dp.Eps(1), bounds=(LO, HI), rng=5)
    counts = dp.stats.count(data, dp.Eps(1), rng=0, full_response=True)
    assert isinstance(counts.mechanism, dp.DiscreteLaplace)
    q = dp.stats.median(data, dp.Eps(1), bounds=(LO, HI), rng=0, full_response=True)
    assert isinstance(q.mechanism, dp.stats.Quantile) and isinstance(q.mechanism, dp.DPMech)


def test_seeded_releases_are_reproducible_and_unseeded_ones_differ(data):
    """The same seed gives the same release; rng=None gives a fresh sample each call."""
    assert dp.stats.var(data, dp.Eps(1), bounds=(LO, HI), rng=7) == dp.stats.var(
        data, dp.Eps(1), bounds=(LO, HI), rng=7
    )
    assert dp.stats.mean(data, dp.Eps(1), bounds=(LO, HI)) != dp.stats.mean(data, dp.Eps(1), bounds=(LO, HI))


def test_input_is_never_mutated(rng):
    """Clipping, sorting and NaN handling work on copies."""
    x = rng.normal(5, 10, 500)
    x[3] = np.nan
    before = x.copy()
    dp.stats.mean(x, dp.Eps(1), bounds=(0, 1), nan_policy="omit", rng=0)
    dp.stats.var(x, dp.Eps(1), bounds=(0, 1), nan_policy="omit", rng=0)
    dp.stats.quantile(x, [0.1, 0.9], dp.Eps(1), bounds=(0, 1), nan_policy="omit", rng=0)
    dp.stats.histogram(x, dp.Eps(1), bins=3, range=(0, 1), nan_policy="omit", rng=0)
    y = rng.normal(5, 10, 500)
    y_before = y.copy()
    dp.stats.sum(y, dp.Eps(1), bounds=(0, 1), rng=0)
    dp.stats.median(y, dp.Eps(1), bounds=(0, 1), rng=0)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(y, y_before)


# ---- NaN policy ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda x: dp.stats.mean(x, dp.Eps(1), bounds=(0, 1)),
        lambda x: dp.stats.sum(x, dp.Eps(1), bounds=(0, 1)),
        lambda x: dp.stats.var(x, dp.Eps(1), bounds=(0, 1)),
        lambda x: dp.stats.std(x, dp.Eps(1), bounds=(0, 1)),
        lambda x: dp.stats.histogram(x, dp.Eps(1), bins=2, range=(0, 1)),
        lambda x: dp.stats.quantile(x, 0.5, dp.Eps(1), bounds=(0, 1)),
        lambda x: dp.stats.covariance(np.column_stack([x, x]), dp.Eps(1), bounds=(0, 1)),
    ],
    ids=["mean", "sum", "var", "std", "histogram", "quantile", "covariance"],
)
def test_nan_data_raise_by_default(call):
    """Under the default nan_policy='raise' NaN data are refused with a message naming the fix."""
    x = np.array([0.1, np.nan, 0.5, 0.7])
    with pytest.raises(ValueError, match="nan_policy='omit'"):
        call(x)


def test_nan_omit_gives_the_statistics_of_the_present_values(rng):
    """With nan_policy='omit' (large ε) each statistic is the nan-aware numpy one on the clipped values."""
    x = np.clip(rng.normal(0.5, 0.3, 4000), 0, 1)
    x[rng.random(4000) < 0.3] = np.nan
    kw = {"bounds": (0, 1), "nan_policy": "omit", "rng": 0}
    assert dp.stats.mean(x, dp.Eps(1e7), **kw) == pytest.approx(np.nanmean(x), abs=1e-5)
    assert dp.stats.var(x, dp.Eps(1e7), **kw) == pytest.approx(np.nanvar(x), abs=1e-5)
    assert dp.stats.sum(x, dp.Eps(1e7), **kw) == pytest.approx(np.nansum(x), abs=1e-3)
    assert dp.stats.median(x, dp.Eps(1e4), **kw) == pytest.approx(np.nanmedian(x), abs=0.01)
    counts, _ = dp.stats.histogram(x, dp.Eps(1e7), bins=4, range=(0, 1), nan_policy="omit", rng=0)
    assert counts.sum() == np.sum(~np.isnan(x))
    X = np.column_stack([x, rng.random(4000)])
    np.testing.assert_allclose(dp.stats.mean(X, dp.Eps(1e7), axis=0, **kw), np.nanmean(X, axis=0), atol=1e-4)
    complete = X[~np.isnan(X).any(axis=1)]
    np.testing.assert_allclose(
        dp.stats.covariance(X, dp.Eps(1e8), bounds=(0, 1), nan_policy="omit", rng=0),
        np.cov(complete, rowvar=False),
        atol=1e-4,
    )


def test_nan_omit_with_only_missing_values_still_releases_inside_the_bounds():
    """All-NaN data under 'omit' release a value inside the bounds (the count is ~0; nothing is divided by 0)."""
    x = np.full(50, np.nan)
    assert 0 <= dp.stats.mean(x, dp.Eps(1), bounds=(0, 1), nan_policy="omit", rng=0) <= 1
    assert dp.stats.var(x, dp.Eps(1), bounds=(0, 1), nan_policy="omit", rng=0) >= 0
    assert 0 <= dp.stats.median(x, dp.Eps(1), bounds=(0, 1), nan_policy="omit", rng=0) <= 1


# ---- grey-box: the declared sensitivity bounds the change of the target on neighbours ------------------------------


def _release_of(name, x, **kw):
    """The Response of one statistic (its mechanism carries the target, the norm and the declared sensitivity)."""
    if name == "histogram":
        return dp.stats.histogram(x, dp.Eps(1), bins=3, range=(LO, HI), rng=0, full_response=True, **kw)[0]
    if name in ("count",):
        return dp.stats.count(x, dp.Eps(1), rng=0, full_response=True, **kw)
    if name in ("quantile",):
        return dp.stats.quantile(x, [0.0, 0.3, 0.5, 1.0], dp.Eps(1), bounds=(LO, HI), rng=0, full_response=True, **kw)
    if name == "covariance":
        return dp.stats.covariance(x, dp.Eps(1), bounds=(LO, HI), rng=0, full_response=True, **kw)
    return getattr(dp.stats, name)(x, dp.Eps(1), bounds=(LO, HI), rng=0, full_response=True, **kw)


def _max_ratio(response, pairs):
    """Largest observed ‖target(X) − target(X′)‖ / declared sensitivity over the neighbouring pairs."""
    mech = response.mechanism
    return max(mech.sensitivity_norm(a, b) for a, b in pairs) / response.sensitivity


def _pairs(rng, n, d, *, nan, count=300):
    """Replace-one pairs: extreme records (bounds corners, far outside, NaN) and random ones, 1-D or (n, d)."""
    special = [LO, HI, (LO + HI) / 2, LO - 50, HI + 50] + ([np.nan] if nan else [])
    pairs = []
    for k in range(count):
        base_kind = k % 4
        shape = (n,) if d is None else (n, d)
        if base_kind == 0:
            base = np.full(shape, LO)
        elif base_kind == 1:
            base = np.full(shape, HI)
        else:
            base = rng.uniform(LO - 2, HI + 2, shape)
        if nan and k % 3 == 0:
            base[rng.random(shape) < 0.3] = np.nan
        other = base.copy()
        i = rng.integers(n)
        width = 1 if d is None else d
        old = rng.choice(special, size=width) if k % 2 else rng.uniform(LO - 5, HI + 5, width)
        new = rng.choice(special, size=width)
        base[i] = old if d is not None else old[0]
        other[i] = new if d is not None else new[0]
        pairs.append((base, other))
    return pairs


STATISTICS_1D = ["mean", "sum", "var", "std", "count", "histogram", "quantile"]


@pytest.mark.parametrize("nan_policy", ["raise", "omit"])
@pytest.mark.parametrize("name", STATISTICS_1D)
def test_declared_sensitivity_bounds_neighbour_change_1d(rng, name, nan_policy):
    """On 300 replace-one pairs (corners, out-of-range and NaN records) no change exceeds the declared one."""
    n = 7
    kw = {} if name == "count" else {"nan_policy": nan_policy}
    response = _release_of(name, np.full(n, (LO + HI) / 2), **kw)
    ratio = _max_ratio(response, _pairs(rng, n, None, nan=nan_policy == "omit" or name == "count"))
    assert ratio <= 1 + 1e-9


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["mean", "sum", "var", "count", "histogram", "quantile"])
def test_declared_sensitivity_bounds_neighbour_change_2d(rng, name, axis):
    """Column (axis=0), pooled (None) and per-record (axis=1) releases on 2-D data obey their declared bound."""
    if axis == 1 and name in ("histogram", "quantile"):
        pytest.skip("axis=1 is not offered for histograms and quantiles")
    n, d = 6, 3
    kw = {"axis": axis}
    response = _release_of(name, np.full((n, d), (LO + HI) / 2), **kw)
    assert _max_ratio(response, _pairs(rng, n, d, nan=name == "count", count=200)) <= 1 + 1e-9


@pytest.mark.parametrize("nan_policy", ["raise", "omit"])
def test_declared_sensitivity_bounds_neighbour_change_covariance(rng, nan_policy):
    """The covariance entries (normalised) move by at most the declared L1 sensitivity."""
    response = _release_of("covariance", np.full((6, 3), 5.0), nan_policy=nan_policy)
    assert _max_ratio(response, _pairs(rng, 6, 3, nan=nan_policy == "omit", count=200)) <= 1 + 1e-9


@pytest.mark.parametrize(
    ("name", "kw", "base", "swap", "tight"),
    [
        ("mean", {}, LO, HI, 1.0),
        ("sum", {}, LO, HI, 1.0),
        ("var", {}, LO, HI, 1.0),
        ("mean", {"nan_policy": "omit"}, LO, np.nan, 1.0),
        ("var", {"nan_policy": "omit"}, LO, np.nan, 1.0),
        ("count", {}, 1.0, np.nan, 1.0),
        ("histogram", {}, LO, HI, 1.0),
        ("quantile", {}, LO, HI, 1.0),
    ],
)
def test_declared_sensitivity_is_attained_by_a_worst_case_pair(name, kw, base, swap, tight):
    """The bounds are tight: an explicit worst-case neighbour realises the declared sensitivity exactly."""
    n = 9
    x = np.full(n, base)
    y = x.copy()
    y[0] = swap
    response = _release_of(name, x, **kw)
    assert _max_ratio(response, [(x, y)]) == pytest.approx(tight)


def test_grey_box_check_catches_diffprivlibs_nanmean_sensitivity():
    """A mean of the present values calibrated to (hi − lo)/len(x), as diffprivlib's nanmean, is caught at once."""

    def nanmean(x):
        return np.nanmean(np.clip(x, LO, HI))

    n = 100
    wrong = dp.Laplace(target=nanmean, sensitivity=(HI - LO) / n)
    x = np.full(n, np.nan)
    x[0], y = LO, np.full(n, np.nan)
    y[0] = HI
    assert wrong.sensitivity_norm(x, y) / wrong.sensitivity == pytest.approx(n)  # 100× over the claim
    ours = dp.stats.mean(x, dp.Eps(1), bounds=(LO, HI), nan_policy="omit", rng=0, full_response=True)
    assert ours.mechanism.sensitivity_norm(x, y) <= ours.sensitivity


def test_grey_box_check_catches_the_textbook_variance_bound_being_too_small():
    """Declaring var sensitivity 1/n² (hi−lo)² (a plausible slip) is refuted by a worst-case pair; ours is not."""
    n = 10
    x = np.full(n, LO)
    y = x.copy()
    y[0] = HI
    ours = dp.stats.var(x, dp.Eps(1), bounds=(LO, HI), rng=0, full_response=True)
    # The target is in units of (hi − lo)², so the slip declares 1/n².
    slip = Plan(target=ours.mechanism.target, l1=1 / n**2, l2=0, dims=1, postprocess=float)
    assert slip.mechanism("laplace").sensitivity_norm(x, y) > slip.l1
    assert ours.mechanism.sensitivity_norm(x, y) <= ours.sensitivity


# ---- noise: the release is the target plus noise of the documented scale -----------------------------------------


@pytest.mark.slow
def test_mean_noise_has_the_documented_laplace_scale_and_catches_half_the_noise():
    """KS: 1500 seeded residuals fit Lap((hi−lo)/(nε)) (p > 1e-6) and reject a scale twice too small (p < 1e-6)."""
    x = np.linspace(0, 10, 50)
    eps = 0.5
    exact = x.mean()
    residuals = np.array([dp.stats.mean(x, dp.Eps(eps), bounds=(0, 20), rng=s) - exact for s in range(1500)])
    scale = 20 / 50 / eps
    # The projection into [0, 20] never bites here: the noise scale 0.8 is far from the bounds' distance 5.
    assert sps.kstest(residuals, sps.laplace(scale=scale).cdf).pvalue > 1e-6
    assert sps.kstest(residuals, sps.laplace(scale=scale / 2).cdf).pvalue < 1e-6


@pytest.mark.slow
def test_quantile_draws_follow_the_exponential_mechanism_and_catch_a_missing_factor_two():
    """χ² over the grid: 2500 draws match p(c) ∝ exp(ε·u(c)/2) and refute exp(ε·u(c)) (the factor 2 dropped)."""
    x = np.array([1.0, 2.0, 4.0, 7.0])
    eps, q = 1.0, 0.5
    grid = np.linspace(0.0, 10.0, 11)  # n_candidates=11: the points 0, 1, …, 10
    below = np.searchsorted(np.sort(x), grid, side="left")
    at_most = np.searchsorted(np.sort(x), grid, side="right")
    u = -np.maximum(np.maximum(below - q * 4, q * 4 - at_most), 0)

    def pmf(factor):
        w = np.exp(eps * u / factor)
        return w / w.sum()

    kw = {"bounds": (0, 10), "n_candidates": 11}
    draws = np.array([dp.stats.quantile(x, q, dp.Eps(eps), rng=s, **kw) for s in range(2500)])
    observed = np.array([np.sum(draws == c) for c in grid])
    assert observed.sum() == 2500  # nothing outside the grid
    assert sps.chisquare(observed, 2500 * pmf(2.0)).pvalue > 1e-6
    assert sps.chisquare(observed, 2500 * pmf(1.0)).pvalue < 1e-6


@pytest.mark.slow
def test_budget_is_split_over_levels_and_columns():
    """k levels on d columns: each draw uses ε/(k·d), visible as wider spread than a single level."""
    x = np.linspace(0, 1, 101)
    one = [dp.stats.quantile(x, 0.5, dp.Eps(2), bounds=(0, 1), rng=s) for s in range(200)]
    many = [dp.stats.quantile(x, [0.5] * 8, dp.Eps(2), bounds=(0, 1), rng=s)[0] for s in range(200)]
    assert np.std(many) > 2 * np.std(one)


# ---- accountant --------------------------------------------------------------------------------------------------


class RecordingAccountant:
    """Stands in for dp.Accountant: records what the release template charges."""

    def __init__(self):
        self.charges = []

    def spend(self, guarantee, *, mechanism=None, privacy_params=None):
        self.charges.append(guarantee)


def test_accountant_is_charged_once_per_release_with_the_guarantee(data):
    """Each statistic charges the accountant exactly once with its privacy parameters, before the noise."""
    acc = RecordingAccountant()
    dp.stats.mean(data, dp.Eps(0.5), bounds=(LO, HI), accountant=acc, rng=0)
    dp.stats.quantile(data, [0.1, 0.9], dp.Eps(0.25), bounds=(LO, HI), accountant=acc, rng=0)
    dp.stats.histogram(data, dp.Eps(0.25), bins=3, range=(LO, HI), accountant=acc, rng=0)
    assert acc.charges == [dp.Eps(0.5), dp.Eps(0.25), dp.Eps(0.25)]


def test_nan_error_happens_after_the_charge_so_no_information_is_free():
    """A refused NaN dataset has already been charged: the error depends on the data, so it is not free."""
    acc = RecordingAccountant()
    with pytest.raises(ValueError, match="NaN"):
        dp.stats.mean(np.array([0.1, np.nan]), dp.Eps(1), bounds=(0, 1), accountant=acc, rng=0)
    assert acc.charges == [dp.Eps(1)]


def test_accountant_from_the_library_is_charged_when_available(data):
    """With dp.Accountant (when present) a release spends from the budget."""
    if not hasattr(dp, "Accountant"):
        pytest.skip("dp.Accountant has not landed yet")
    acc = dp.Accountant(budget=dp.Eps(1.0))
    dp.stats.mean(data, dp.Eps(0.4), bounds=(LO, HI), accountant=acc, rng=0)
    assert acc.spent.epsilon == pytest.approx(0.4)


# ---- bad input ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mean", "sum", "var", "std", "median"])
def test_missing_bounds_are_refused_with_the_fix(data, name):
    """No bounds, no release: they are never derived from the data."""
    with pytest.raises(TypeError, match=r"bounds=\(lower, upper\)"):
        getattr(dp.stats, name)(data, dp.Eps(1))


@pytest.mark.parametrize(
    ("bounds", "kind", "match"),
    [
        ((1, 1), ValueError, "lower < upper"),
        ((2, 1), ValueError, "lower < upper"),
        ((0, np.inf), ValueError, "finite"),
        ((np.nan, 1), ValueError, "finite"),
        ((True, 2), TypeError, "bool"),
        ((0, "1"), TypeError, "real"),
        ((0, 1, 2), TypeError, "pair"),
        (5, TypeError, "pair"),
        (([0, 0], [1, 1]), ValueError, "scalar"),
    ],
)
def test_bad_bounds_are_refused(data, bounds, kind, match):
    """lo ≥ hi, non-finite, bool, non-numeric, wrong arity, or per-column bounds on 1-D data: clear errors."""
    with pytest.raises(kind, match=match):
        dp.stats.mean(data, dp.Eps(1), bounds=bounds)
    with pytest.raises(kind, match=match):
        dp.stats.quantile(data, 0.5, dp.Eps(1), bounds=bounds)


def test_per_column_bounds_must_match_the_columns(frame):
    """Per-column bounds need exactly one value per column."""
    X, _ = frame
    with pytest.raises(ValueError, match="3 values"):
        dp.stats.mean(X, dp.Eps(1), bounds=([0, 0], [1, 1]), axis=0)


@pytest.mark.parametrize(
    ("x", "kind", "match"),
    [
        (np.array(["a", "b"]), TypeError, "numeric"),
        (np.array([True, False]), TypeError, "boolean"),
        (np.array([1 + 1j, 2]), TypeError, "numeric"),
        (np.array([object(), 1.0]), TypeError, "numeric"),
        (np.array([]), ValueError, "at least one record"),
        (np.float64(3.0), ValueError, "scalar"),
        (np.zeros((2, 2, 2)), ValueError, "1-D and 2-D"),
    ],
)
def test_wrong_data_types_and_shapes_are_refused(x, kind, match):
    """Strings, bools, complex, objects, empty, scalar and 3-D data raise before any release."""
    with pytest.raises(kind, match=match):
        dp.stats.mean(x, dp.Eps(1), bounds=(0, 1))


def test_wrong_privacy_parameters_and_options_are_refused(data):
    """Gaussian without δ, a non-parameter ε, unknown policy/mechanism/axis and bad ddof raise clearly."""
    with pytest.raises(TypeError, match="Del"):
        dp.stats.mean(data, dp.Eps(1), bounds=(0, 1), mechanism="gaussian")
    with pytest.raises(TypeError, match="privacy parameters"):
        dp.stats.mean(data, 1.0, bounds=(0, 1))
    with pytest.raises(ValueError, match="nan_policy"):
        dp.stats.mean(data, dp.Eps(1), bounds=(0, 1), nan_policy="ignore")
    with pytest.raises(ValueError, match="mechanism"):
        dp.stats.mean(data, dp.Eps(1), bounds=(0, 1), mechanism="exponential")
    with pytest.raises(ValueError, match="axis"):
        dp.stats.mean(np.ones((3, 2)), dp.Eps(1), bounds=(0, 1), axis=2)
    with pytest.raises(TypeError, match="axis"):
        dp.stats.mean(np.ones((3, 2)), dp.Eps(1), bounds=(0, 1), axis=True)
    with pytest.raises(ValueError, match="ddof"):
        dp.stats.var(np.ones(3), dp.Eps(1), bounds=(0, 1), ddof=3)
    with pytest.raises(TypeError, match="ddof"):
        dp.stats.var(np.ones(3), dp.Eps(1), bounds=(0, 1), ddof=0.5)
    with pytest.raises(TypeError, match="full_response"):
        dp.stats.mean(data, dp.Eps(1), bounds=(0, 1), full_response="yes")


def test_bad_histogram_bins_are_refused(data):
    """Data-driven bins, bins without a range, non-increasing or non-finite edges are refused."""
    with pytest.raises(TypeError, match="data-driven"):
        dp.stats.histogram(data, dp.Eps(1), bins="auto")
    with pytest.raises(TypeError, match="range="):
        dp.stats.histogram(data, dp.Eps(1), bins=10)
    with pytest.raises(TypeError, match="bins="):
        dp.stats.histogram(data, dp.Eps(1))
    with pytest.raises(ValueError, match="increasing"):
        dp.stats.histogram(data, dp.Eps(1), bins=[0, 2, 1])
    with pytest.raises(ValueError, match="finite"):
        dp.stats.histogram(data, dp.Eps(1), bins=3, range=(0, np.inf))
    with pytest.raises(ValueError, match=">= 1"):
        dp.stats.histogram(data, dp.Eps(1), bins=0, range=(0, 1))


@pytest.mark.parametrize("q", [-0.1, 1.5, np.nan, [0.5, 2.0], "median", []])
def test_bad_quantile_levels_are_refused(data, q):
    """Levels must be finite numbers in [0, 1]."""
    with pytest.raises((TypeError, ValueError), match=r"\[0, 1\]|empty"):
        dp.stats.quantile(data, q, dp.Eps(1), bounds=(0, 1))


def test_unsupported_combinations_say_what_to_do_instead(frame):
    """axis=1 with omit, quantile with axis=1, covariance of 1-D data: refused with the alternative."""
    X, (lo, hi) = frame
    with pytest.raises(ValueError, match="axis=1"):
        dp.stats.mean(X, dp.Eps(1), bounds=(lo, hi), axis=1, nan_policy="omit")
    with pytest.raises(ValueError, match="axis"):
        dp.stats.quantile(X, 0.5, dp.Eps(1), bounds=(lo, hi), axis=1)
    with pytest.raises(ValueError, match="var"):
        dp.stats.covariance(X[:, 0], dp.Eps(1), bounds=(0, 1))


def test_quantile_mechanism_refuses_bad_construction():
    """The Quantile mechanism validates its bounds and levels at construction."""
    with pytest.raises(ValueError, match="lower < upper"):
        dp.stats.Quantile(quantiles=0.5, lower=1, upper=0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        dp.stats.Quantile(quantiles=1.5, lower=0, upper=1)


def test_zero_sensitivity_statistics_are_exact_without_noise():
    """Variance of one value per record along axis=1 of a 1-column frame has sensitivity 0: it is exactly 0."""
    r = dp.stats.var(np.ones((4, 1)), dp.Eps(1), bounds=(0, 2), axis=1, rng=0, full_response=True)
    assert r.sensitivity == 0 and np.all(r.response == 0)


@pytest.mark.slow
def test_epsilon_changes_the_noise_by_the_expected_factor(data):
    """Spread of releases scales like 1/ε (a sanity check of the calibration through the whole pipeline)."""
    spread = {
        e: np.std([dp.stats.sum(data, dp.Eps(e), bounds=(LO, HI), rng=s) for s in range(200)]) for e in (0.5, 2.0)
    }
    assert 2.5 < spread[0.5] / spread[2.0] < 6.5
    assert math.isfinite(spread[2.0])


# ---- conformance kit and auditor on the mechanisms the statistics actually build ----------------------------------


def _worst_pair(n=40, d=None, swap=HI, base=LO):
    """All records at one bound, then one record moved to the other: the change equals the sensitivity."""
    X = np.full(n if d is None else (n, d), base, dtype=float)
    X2 = X.copy()
    X2[0] = swap
    return X, X2


def _stat_case(case_id, release, X, X2, params=None):
    params = dp.Eps(1.0) if params is None else params
    mech = release(X).mechanism
    # 40k samples per dataset keep the suite fast; the auditor's power at that size is shown below.
    return MechCase(mechanism=mech, privacy_params=params, dataset=X, neighbour=X2, id=case_id, audit_n=40_000)


def _stat_cases():
    X, X2 = _worst_pair()
    N, N2 = _worst_pair(swap=np.nan)
    M, M2 = _worst_pair(d=3)
    Q, Q2 = _worst_pair(n=12)
    kw = {"bounds": (LO, HI), "rng": 0, "full_response": True}
    g = {"mechanism": "gaussian"}
    dl = dp.Del(1.0, 1e-5)
    return [
        _stat_case("mean", lambda x: dp.stats.mean(x, dp.Eps(1), **kw), X, X2),
        _stat_case("mean-gaussian", lambda x: dp.stats.mean(x, dl, **g, **kw), X, X2, dl),
        _stat_case("sum", lambda x: dp.stats.sum(x, dp.Eps(1), **kw), X, X2),
        _stat_case("var", lambda x: dp.stats.var(x, dp.Eps(1), **kw), X, X2),
        _stat_case("mean-omit", lambda x: dp.stats.mean(x, dp.Eps(1), nan_policy="omit", **kw), N, N2),
        _stat_case("var-omit", lambda x: dp.stats.var(x, dp.Eps(1), nan_policy="omit", **kw), N, N2),
        _stat_case("mean-axis0", lambda x: dp.stats.mean(x, dp.Eps(1), axis=0, **kw), M, M2),
        _stat_case("covariance", lambda x: dp.stats.covariance(x, dp.Eps(1), **kw), M, M2),
        _stat_case("count", lambda x: dp.stats.count(x, dp.Eps(1), rng=0, full_response=True), N, N2),
        _stat_case(
            "histogram",
            lambda x: dp.stats.histogram(x, dp.Eps(1), bins=4, range=(LO, HI), rng=0, full_response=True)[0],
            X,
            X2,
        ),
        _stat_case("quantile", lambda x: dp.stats.quantile(x, [0.25, 0.5], dp.Eps(1), **kw), Q, Q2),
        _stat_case("median-columns", lambda x: dp.stats.median(x, dp.Eps(1), axis=0, **kw), *_worst_pair(n=8, d=2)),
    ]


@parametrize_with_checks(_stat_cases())
def test_every_statistic_passes_the_conformance_kit(case, check):
    """Each statistic's configured mechanism (with a worst-case neighbour pair) passes every shared invariant."""
    check(case)


def test_auditor_refutes_a_mean_with_half_the_sensitivity():
    """The auditor used above has power: a mean calibrated to half its sensitivity is refuted."""
    X, X2 = _worst_pair()
    good = dp.stats.mean(X, dp.Eps(1), bounds=(LO, HI), rng=0, full_response=True).mechanism
    bad = attrs.evolve(good, sensitivity=good.sensitivity / 2)
    report = audit(bad, X, X2, dp.Eps(1.0), n=40_000, rng=3)
    assert not report.passed and report.epsilon_lower_bound > 1.0


def test_grey_box_check_of_the_testing_kit_refutes_nanmeans_sensitivity():
    """dp.testing.check_sensitivity flags diffprivlib's nanmean calibration and accepts ours."""
    x, y = np.full(100, np.nan), np.full(100, np.nan)
    x[0], y[0] = LO, HI
    wrong = dp.Laplace(target=lambda v: np.nanmean(np.clip(v, LO, HI)), sensitivity=(HI - LO) / 100)
    with pytest.raises(AssertionError):
        check_sensitivity(wrong, x, y)
    ours = dp.stats.mean(x, dp.Eps(1), bounds=(LO, HI), nan_policy="omit", rng=0, full_response=True).mechanism
    check_sensitivity(ours, x, y)


# ---- per-release speed: cached plans and scalar post-processing give the same releases -----------------------------


@pytest.mark.parametrize("name", ["mean", "sum", "var", "std", "count"])
def test_scalar_post_processing_equals_the_array_post_processing(name):
    """The Python-float post-processing of a scalar release is bit for bit the numpy one, clipping included."""
    from diffpriv_py.stats._moments import _cached_plan

    for lo, hi, n in [(0.0, 1.0, 10), (-3.0, 5.0, 7), (2.0**43, 2.0**43 + 1, 3), (-1e300, 1e300, 2)]:
        plan = _cached_plan(
            name, "raise", n, 1, None, False, None if name == "count" else (lo, hi), 0, "t", False, None
        )
        noisy = np.concatenate([np.random.default_rng(0).normal(0, 3, 50) * 2.0 ** np.arange(-20, 30), [0.0, -0.0]])
        with np.errstate(over="ignore"):  # a huge noisy value at bounds ±1e300 overflows to ±inf, then is clipped
            for v in noisy:
                assert repr(plan.scalar_postprocess(float(v))) == repr(plan.postprocess(np.asarray(v))), (lo, hi, v)
            for k in (-3, 0, 1, n - 1, n, n + 4, 2**60):  # integer-valued mechanisms (counts) return Python ints
                assert repr(plan.scalar_postprocess(k)) == repr(plan.postprocess(np.asarray(float(k)))), (lo, hi, k)


@pytest.mark.parametrize("name", ["mean", "sum", "var", "std"])
def test_cached_plans_release_what_a_fresh_uncached_plan_releases(name):
    """Scalar bounds (cached plan, small path) and per-column bounds (fresh plan, array path) agree bit for bit."""
    x = np.random.default_rng(3).uniform(-1, 4, (12, 1))
    f = getattr(dp.stats, name)
    for seed in range(5):
        cached = f(x, dp.Eps(1.0), bounds=(0, 3), rng=seed)
        fresh = f(x, dp.Eps(1.0), bounds=(np.array([0.0]), np.array([3.0])), rng=seed)
        again = f(x, dp.Eps(1.0), bounds=[0, 3.0], rng=seed)
        numpy_scalars = f(x, dp.Eps(1.0), bounds=(np.int64(0), np.float32(3)), rng=seed)
        assert repr(cached) == repr(fresh) == repr(again) == repr(numpy_scalars)


def test_a_cached_plan_still_validates_every_argument_of_every_call(data):
    """A second call with the same layout but bad ddof, bounds or options is refused like a first call."""
    dp.stats.var(data, dp.Eps(1.0), bounds=(0, 10), ddof=1, rng=0)
    with pytest.raises(TypeError, match="ddof"):
        dp.stats.var(data, dp.Eps(1.0), bounds=(0, 10), ddof=True, rng=0)
    with pytest.raises(ValueError, match="lower < upper"):
        dp.stats.var(data, dp.Eps(1.0), bounds=(10, 0), rng=0)
    with pytest.raises(ValueError, match="finite"):
        dp.stats.var(data, dp.Eps(1.0), bounds=(0, np.inf), rng=0)
    with pytest.raises(TypeError, match="keepdims"):
        dp.stats.var(data, dp.Eps(1.0), bounds=(0, 10), keepdims=1, rng=0)


# ---- numpy's options: keepdims, tuple axes, dtype ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mean", "sum", "var", "std", "count"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1), (1, 0), (0,), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_axis_tuples_and_keepdims_give_numpys_shapes_and_values(frame, name, axis, keepdims):
    """Every moment statistic and count follows numpy's shape (and, at huge ε, value) for each axis and keepdims."""
    X, _ = frame
    X = np.clip(X, LO, HI)
    kw = {} if name == "count" else {"bounds": (LO, HI)}
    data = X > 5 if name == "count" else X
    got = getattr(dp.stats, name)(data, BIG, axis=axis, keepdims=keepdims, rng=0, **kw)
    ref = (
        np.count_nonzero(data, axis=axis, keepdims=keepdims)
        if name == "count"
        else getattr(np, name)(data, axis=axis, keepdims=keepdims)
    )
    assert np.shape(got) == np.shape(ref)
    assert isinstance(got, np.ndarray) or keepdims is False
    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-2)


def test_keepdims_on_one_dimensional_data_gives_a_length_one_array(data):
    """keepdims=True on 1-D data gives shape (1,), as numpy, rather than a float."""
    got = dp.stats.mean(data, BIG, bounds=(LO, HI), keepdims=True, rng=0)
    assert got.shape == (1,) and got[0] == pytest.approx(np.clip(data, LO, HI).mean(), abs=1e-3)


@pytest.mark.parametrize("axis", [(), (0, 0), (0, 2), (0.0,), "0"])
def test_bad_axis_tuples_are_refused(frame, axis):
    """Empty, repeated, out-of-range or non-integer axes are refused with the rule."""
    with pytest.raises((TypeError, ValueError), match="axis"):
        dp.stats.mean(frame[0], dp.Eps(1.0), bounds=(LO, HI), axis=axis, rng=0)


def test_sum_with_an_integer_dtype_is_the_rounded_noisy_sum(rng):
    """dtype=int gives integers (a Python int scalar, int arrays), equal to the rounded float release, same seed."""
    x = rng.integers(0, 10, (200, 3))
    for axis in (None, 0):
        as_float = dp.stats.sum(x, dp.Eps(1.0), bounds=(0, 9), axis=axis, rng=5)
        as_int = dp.stats.sum(x, dp.Eps(1.0), bounds=(0, 9), axis=axis, dtype=int, rng=5)
        assert np.asarray(as_int).dtype == np.dtype(int)
        np.testing.assert_array_equal(as_int, np.rint(as_float).astype(int))
    # A scalar is a Python int (diffprivlib's test_int_output: isinstance(r, int)), also for a narrow integer dtype.
    assert type(dp.stats.sum(x, BIG, bounds=(0, 9), dtype=int, rng=0)) is int
    assert type(dp.stats.sum(x, BIG, bounds=(0, 9), dtype=np.int16, rng=0)) is int
    assert dp.stats.sum(x, BIG, bounds=(0, 9), dtype=int, rng=0) == x.sum()
    small = dp.stats.sum(x, BIG, bounds=(0, 9), axis=0, dtype=np.uint8, rng=0)
    assert small.dtype == np.uint8 and np.all(small == 255)  # clipped into the dtype's range, not wrapped
    assert dp.stats.sum(x, BIG, bounds=(0, 9), dtype=np.float32, rng=0).dtype == np.float32


@pytest.mark.parametrize("dtype", [bool, object, complex, "not a dtype"])
def test_sum_refuses_dtypes_that_are_not_integer_or_float(data, dtype):
    """A boolean, object or complex dtype is refused, naming the parameter and the fix."""
    with pytest.raises(TypeError, match="dtype"):
        dp.stats.sum(data, dp.Eps(1.0), bounds=(LO, HI), dtype=dtype, rng=0)


# ---- histogram: density and empty data -----------------------------------------------------------------------------


@pytest.mark.parametrize("bins", [4, [0.0, 1.0, 3.0, 10.0]])
def test_histogram_density_is_numpys_formula_on_the_noisy_counts(data, bins):
    """density=True equals counts / width / total of the released counts (same seed), integrating to 1."""
    rng_kw = {"range": (LO, HI)} if np.ndim(bins) == 0 else {}
    counts, edges = dp.stats.histogram(data, dp.Eps(0.5), bins=bins, rng=9, **rng_kw)
    dens, edges2 = dp.stats.histogram(data, dp.Eps(0.5), bins=bins, rng=9, density=True, **rng_kw)
    np.testing.assert_array_equal(edges, edges2)
    np.testing.assert_array_equal(dens, counts / np.diff(edges) / counts.sum())
    assert np.sum(dens * np.diff(edges)) == pytest.approx(1.0)
    ref = np.histogram(data, bins=bins, density=True, **rng_kw)[0]
    np.testing.assert_allclose(dp.stats.histogram(data, BIG, bins=bins, density=True, rng=0, **rng_kw)[0], ref)


def test_histogram_density_per_column_normalises_each_column(frame):
    """With axis=0 each column's density integrates to 1, matching numpy column by column at huge ε."""
    X, _ = frame
    dens, _ = dp.stats.histogram(X, BIG, bins=5, range=(0, 10), axis=0, density=True, rng=0)
    for j in range(X.shape[1]):
        np.testing.assert_allclose(dens[:, j], np.histogram(X[:, j], bins=5, range=(0, 10), density=True)[0])


def test_histogram_density_of_an_all_zero_histogram_is_zero_not_nan():
    """If every noisy count is 0 (here: every value outside the range) the density is 0, never NaN."""
    dens, _ = dp.stats.histogram(np.full(50, 99.0), BIG, bins=3, range=(0, 1), density=True, rng=0)
    assert dens.dtype == np.float64 and np.all(dens == 0)


@pytest.mark.parametrize(
    "x, axis, shape", [(np.array([]), None, (3,)), (np.empty((0, 2)), 0, (3, 2)), ([], None, (3,))]
)
def test_histogram_of_no_records_is_exact_zeros_with_no_noise(x, axis, shape):
    """n = 0 is public and has no neighbour: the counts are numpy's exact zeros (sensitivity 0), at any ε."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    r, edges = dp.stats.histogram(
        x, dp.Eps(1e-3), bins=3, range=(0, 1), axis=axis, rng=0, full_response=True, accountant=acc
    )
    assert r.sensitivity == 0 and r.response.shape == shape and np.all(r.response == 0)
    np.testing.assert_array_equal(edges, np.histogram([], bins=3, range=(0, 1))[1])
    assert acc.spent.epsilon == pytest.approx(1e-3)  # charged like any release: the accountant records what was asked


def test_histogram_of_one_record_is_still_noisy():
    """The zero-sensitivity exception is for n = 0 only: one record gets the usual noise."""
    r, _ = dp.stats.histogram(np.array([0.5]), dp.Eps(1.0), bins=3, range=(0, 1), rng=0, full_response=True)
    assert r.sensitivity == 2.0


def test_moment_statistics_still_refuse_empty_data():
    """Means and sums of no records are refused (their n must be at least 1), with the rule."""
    with pytest.raises(ValueError, match="at least one record"):
        dp.stats.mean(np.array([]), dp.Eps(1.0), bounds=(0, 1), rng=0)


def test_tuple_axes_release_exactly_what_the_equivalent_axis_releases(frame):
    """axis=(0, 1) is axis=None and axis=(0,) is axis=0 for every statistic, quantiles and histograms included."""
    X, _ = frame
    X = np.clip(X, LO, HI)
    for f, kw in [
        (dp.stats.mean, {"bounds": (LO, HI)}),
        (dp.stats.var, {"bounds": (LO, HI)}),
        (dp.stats.median, {"bounds": (LO, HI)}),
        (dp.stats.histogram, {"bins": 4, "range": (LO, HI)}),
    ]:
        for tup, single in [((0, 1), None), ((1, 0), None), ((0,), 0)]:
            a, b = f(X, dp.Eps(1.0), axis=tup, rng=4, **kw), f(X, dp.Eps(1.0), axis=single, rng=4, **kw)
            np.testing.assert_array_equal(a[0] if isinstance(a, tuple) else a, b[0] if isinstance(b, tuple) else b)


def test_the_common_case_returns_of_the_checks_stop_at_the_rules_edges():
    """as_data and check_ddof return the common case first; just past it the full rules still refuse, clearly.

    (The checks run on every release, so their first test is the common case: a float or integer array of 1-D or
    2-D records, an int ddof below the number of values. A looser first test would let these through.)
    """
    from diffpriv_py.stats._common import as_data, check_ddof

    assert check_ddof(9, 10, owner="t") == 9
    with pytest.raises(ValueError, match="smaller than the number of values"):
        check_ddof(10, 10, owner="t")
    for bad in (-1, True, 1.0):
        with pytest.raises(TypeError, match="non-negative integer"):
            check_ddof(bad, 10, owner="t")
    for ok in (np.zeros(3), np.zeros((2, 2), dtype=np.int8), np.zeros(1, dtype=np.uint64), np.zeros(2, np.float32)):
        assert as_data(ok, owner="t") is ok
    refused = [
        (np.zeros(0), ValueError, "at least one record"),
        (np.zeros((3, 0)), ValueError, "at least one record"),
        (np.zeros((1, 1, 1)), ValueError, "1-D and 2-D"),
        (np.zeros(2, dtype=bool), TypeError, "boolean"),
        (np.zeros(2, dtype=complex), TypeError, "numeric"),
        (np.zeros(2, dtype="m8[s]"), TypeError, "numeric"),
    ]
    target = dp.stats.ClippedStatistic("mean", np.asarray(0.0), np.asarray(1.0))  # public: checks its input too
    for x, kind, match in refused:
        with pytest.raises(kind, match=match):
            as_data(x, owner="t")
        with pytest.raises(kind, match=match):
            target(x)
    assert as_data(np.zeros(2, dtype=bool), owner="t", allow_bool=True).dtype == bool
    assert as_data(np.zeros((0, 2)), owner="t", allow_empty=True).shape == (0, 2)


def test_clipped_statistic_still_takes_who_with_a_deprecation_warning():
    """ClippedStatistic's argument is now owner= (the library's one spelling); who= still works, with a warning."""
    with pytest.warns(DeprecationWarning, match="owner"):
        target = dp.stats.ClippedStatistic("mean", np.asarray(0.0), np.asarray(1.0), who="my.stat")
    assert target.owner == "my.stat"
    with pytest.warns(DeprecationWarning, match="owner"):
        assert target.who == "my.stat"
    assert dp.stats.ClippedStatistic("mean", np.asarray(0.0), np.asarray(1.0), owner="x").owner == "x"
