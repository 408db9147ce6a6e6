"""Error bars on releases: Response.accuracy / confidence_interval cover the exact value at the stated rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import diffpriv_py as dp
from diffpriv_py.accuracy import discrete_laplace_half_width, half_width

N_DRAWS = 40_000
P_FALSE_ALARM = 1e-7


def coverage_bounds(n: int, level: float) -> tuple[float, float]:
    """Two-sided binomial acceptance region for the coverage rate at false-alarm probability ~2e-7."""
    return sps.binom.ppf(P_FALSE_ALARM, n, level) / n, sps.binom.isf(P_FALSE_ALARM, n, level) / n


MECHS = {
    "laplace-safe": (dp.Laplace(target=np.sum, sensitivity=2.0), dp.Eps(0.7)),
    "laplace-float": (dp.Laplace(target=np.sum, sensitivity=2.0, noise="float"), dp.Eps(0.7)),
    "gaussian-safe": (dp.Gaussian(target=np.sum, sensitivity=2.0), dp.Del(0.7, 1e-5)),
    "gaussian-float": (dp.Gaussian(target=np.sum, sensitivity=2.0, noise="float"), dp.Del(0.7, 1e-5)),
}


@pytest.mark.parametrize("alpha", [0.05, 0.3])
@pytest.mark.parametrize("name", sorted(MECHS))
def test_continuous_noise_stays_within_the_half_width_at_exactly_the_stated_rate(name, alpha):
    """The half-width is the exact 1 − α quantile of |noise|: coverage is 1 − α within binomial bounds."""
    mech, params = MECHS[name]
    true = 1234.5
    draws = mech._sample_many(np.float64(true), params, np.random.default_rng(7), N_DRAWS)
    width = half_width(mech, params, true, alpha)
    rate = float(np.mean(np.abs(draws - true) <= width))
    low, high = coverage_bounds(N_DRAWS, 1 - alpha)
    assert low <= rate <= high
    # The same test refutes a bar that is too small (the noise scale halved) or too large (doubled).
    assert float(np.mean(np.abs(draws - true) <= width / 2)) < low
    assert float(np.mean(np.abs(draws - true) <= width * 2)) > high


@pytest.mark.parametrize("alpha", [0.01, 0.2])
def test_discrete_laplace_half_width_is_the_smallest_integer_covering_one_minus_alpha(alpha):
    """DiscreteLaplace: the bar is the exact integer quantile, and its empirical coverage matches the exact one."""
    mech, params = dp.DiscreteLaplace(target=np.sum, sensitivity=3), dp.Eps(0.5)
    width = half_width(mech, params, 10, alpha)
    law = sps.dlaplace(0.5 / 3)  # the safe sampler's parameter differs from ε/Δ by a relative 2⁻⁴⁰
    exact = law.cdf(width) - law.cdf(-width - 1)
    assert exact >= 1 - alpha > law.cdf(width - 1) - law.cdf(-width)
    draws = mech._sample_many(np.int64(10), params, np.random.default_rng(3), N_DRAWS)
    rate = float(np.mean(np.abs(draws - 10) <= width))
    low, high = coverage_bounds(N_DRAWS, exact)
    assert low <= rate <= high
    assert float(np.mean(np.abs(draws - 10) <= width // 2)) < coverage_bounds(N_DRAWS, 1 - alpha)[0]


def test_discrete_laplace_half_width_matches_its_closed_form_tail():
    """P(|K| > h) = 2e^{−t(h+1)}/(1 + e^{−t}) ≤ α at h and > α at h − 1, over many parameters."""
    for t in (0.01, 0.3, 1.0, 5.0):
        for alpha in (1e-9, 1e-3, 0.05, 0.5, 0.99):
            h = discrete_laplace_half_width(t, alpha)
            tail = lambda k, t=t: 2 * math.exp(-t * (k + 1)) / (1 + math.exp(-t))  # noqa: E731
            assert tail(h) <= alpha and (h == 0 or tail(h - 1) > alpha)


def test_simultaneous_bars_cover_every_coordinate_at_once():
    """simultaneous=True (Bonferroni) covers all d coordinates together with probability ≥ 1 − α."""
    mech, params = dp.Laplace(target=np.asarray, sensitivity=1.0), dp.Eps(1.0)
    true = np.zeros(10)
    draws = mech._sample_many(true, params, np.random.default_rng(11), N_DRAWS // 4)
    joint = half_width(mech, params, true, 0.1, simultaneous=True)
    single = half_width(mech, params, true, 0.1)
    inside = np.all(np.abs(draws) <= joint, axis=1).mean()
    assert inside >= coverage_bounds(N_DRAWS // 4, 0.9)[0]
    assert np.all(np.abs(draws) <= single, axis=1).mean() < coverage_bounds(N_DRAWS // 4, 0.9)[0]


def test_confidence_interval_is_the_release_plus_minus_the_accuracy():
    """Response.confidence_interval = response ∓ accuracy, and computing it charges no budget."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    r = dp.Laplace(target=np.mean, sensitivity=0.1).release_response(dp.Eps(0.5), np.ones(10), rng=0, accountant=acc)
    spent = acc.spent.epsilon
    low, high = r.confidence_interval(0.1)
    assert low == pytest.approx(r.response - r.accuracy(0.1)) and high == pytest.approx(r.response + r.accuracy(0.1))
    assert acc.spent.epsilon == spent


STATS = {
    "mean": (dp.stats.mean, np.mean),
    "sum": (dp.stats.sum, np.sum),
    "var": (dp.stats.var, np.var),
    "std": (dp.stats.std, np.std),
}


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("name", [*sorted(STATS), "count"])
def test_dp_stats_error_bars_are_in_the_units_of_the_statistic_and_cover_it(name, mechanism):
    """dp.stats full responses: the bar is in the statistic's units (post-processing scale included) and covers."""
    x = np.random.default_rng(1).uniform(0, 4, 40)  # small n: the noise dominates, so the bar is tested
    params = dp.Eps(2.0) if mechanism == "laplace" else dp.Del(2.0, 1e-3)
    runs, alpha = 1500, 0.2
    rng = np.random.default_rng(5)
    hits = half_hits = 0
    for _ in range(runs):
        if name == "count":
            # a small ε: integer noise needs a wide bar for a four-times-smaller one to be wrong
            small = dp.Eps(0.2) if mechanism == "laplace" else dp.Del(0.2, 1e-3)
            r = dp.stats.count(x > 2, small, mechanism=mechanism, rng=rng, full_response=True)
            true = float(np.sum(x > 2))
        else:
            func, ref = STATS[name]
            r = func(x * 10, params, bounds=(0, 40), mechanism=mechanism, rng=rng, full_response=True)
            true = float(ref(x * 10))
        width = r.accuracy(alpha)
        hits += abs(r.response - true) <= width
        half_hits += abs(r.response - true) <= width / 4
    low = sps.binom.ppf(P_FALSE_ALARM, runs, 1 - alpha) / runs
    assert hits / runs >= low
    assert half_hits / runs < low  # a bar four times too small is caught


def test_quantile_error_bar_is_in_rank_units_and_has_no_value_interval():
    """Quantiles report a rank-unit bar (2Δ/ε·ln(m/α)) and refuse a value-unit confidence interval clearly."""
    x = np.random.default_rng(0).uniform(0, 10, 500)
    r = dp.stats.quantile(x, 0.5, dp.Eps(1.0), bounds=(0, 10), n_candidates=1025, rng=1, full_response=True)
    assert r.accuracy(0.05) == pytest.approx(2 / 1.0 * math.log(1025 / 0.05))
    with pytest.raises(NotImplementedError, match="rank units"):
        r.confidence_interval(0.05)


@pytest.mark.slow
def test_quantile_rank_error_stays_within_the_bar():
    """The released median's rank error (values to move) is within the rank bar at rate ≥ 1 − α."""
    x = np.sort(np.random.default_rng(0).uniform(0, 10, 301))
    hits, runs, alpha = 0, 400, 0.2
    rng = np.random.default_rng(2)
    for _ in range(runs):
        r = dp.stats.quantile(x, 0.5, dp.Eps(0.05), bounds=(0, 10), rng=rng, full_response=True)
        c = r.response
        rank_error = max(0.0, np.sum(x < c) - 0.5 * x.size, 0.5 * x.size - np.sum(x <= c))
        hits += rank_error <= r.accuracy(alpha) + 1  # + 1: values inside one grid cell (the grid's own error)
    assert hits / runs >= sps.binom.ppf(P_FALSE_ALARM, runs, 1 - alpha) / runs


def test_releases_without_a_closed_form_bar_say_so():
    """Exponential-mechanism and omit-policy releases raise NotImplementedError naming what is supported."""
    ex = dp.Exponential(target=lambda X: lambda r: -abs(r - np.mean(X)), response_set=[0, 1, 2], sensitivity=1.0)
    r = ex.release_response(dp.Eps(1.0), np.ones(5), rng=0)
    with pytest.raises(NotImplementedError, match="Laplace, Gaussian and DiscreteLaplace"):
        r.accuracy()
    x = np.array([1.0, np.nan, 3.0, 4.0])
    m = dp.stats.mean(x, dp.Eps(1.0), bounds=(0, 5), nan_policy="omit", rng=0, full_response=True)
    with pytest.raises(NotImplementedError, match="nan_policy"):
        m.accuracy()


@pytest.mark.parametrize("alpha", [0.0, 1.0, float("nan"), -0.1, True, "0.05"])
def test_bad_alpha_is_refused_with_the_rule(alpha):
    """α must be a real number strictly between 0 and 1."""
    r = dp.Laplace(target=np.mean, sensitivity=0.1).release_response(dp.Eps(0.5), np.ones(10), rng=0)
    with pytest.raises((TypeError, ValueError), match="alpha"):
        r.accuracy(alpha)


def test_a_dp_stats_response_with_its_error_bar_survives_pickling():
    """The error bar travels with the Response (e.g. back from a worker process) and gives the same half-width."""
    import pickle

    r = dp.stats.std(np.linspace(0, 1, 50), dp.Eps(1.0), bounds=(0, 1), rng=0, full_response=True)
    again = pickle.loads(pickle.dumps(r))
    assert again.accuracy(0.1) == r.accuracy(0.1) and again.confidence_interval(0.1) == r.confidence_interval(0.1)
