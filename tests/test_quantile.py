"""dp.stats.quantile / median: outputs on the public grid (the support attacks), scores, audit, utility, shapes."""

from __future__ import annotations

import itertools

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.stats._quantile import _rank_counts
from diffpriv_py.testing import audit, check_sensitivity

M = 1025  # the default number of candidates


def public_grid(lo: float, hi: float, m: int = M) -> np.ndarray:
    """The documented grid, recomputed here from the bounds and the resolution alone (not from the library)."""
    step = hi / (m - 1) - lo / (m - 1)
    h = (m - 1) // 2
    low = lo + np.arange(h + 1) * step
    high = hi - np.arange(m - 2 - h, -1, -1) * step
    return np.unique(np.clip(np.concatenate([[lo], low[1:], high[:-1], [hi]]), lo, hi))


def assert_on_grid(outputs: np.ndarray, grid: np.ndarray) -> None:
    """Bit-exact membership: every output's float64 bit pattern is one of the grid's."""
    bits = np.ascontiguousarray(outputs, dtype=np.float64).view(np.int64).ravel()
    allowed = np.ascontiguousarray(grid, dtype=np.float64).view(np.int64)
    outside = ~np.isin(bits, allowed)
    assert not outside.any(), f"{outside.sum()} outputs off the public grid, e.g. {outputs.ravel()[outside][:3]!r}"


def _standardised(rng):
    x = rng.normal(size=101)
    return (x - x.mean()) / x.std()


def _moved(x, i, delta):
    y = np.array(x, dtype=np.float64)
    y[i] += delta
    return y


def _replaced(x, i, value):
    y = np.array(x, dtype=np.float64)
    y[i] = value
    return y


def _setups():
    """(id, x, neighbour, bounds, q, keywords): the attacks of issue 12 and the edge cases around them."""
    rng = np.random.default_rng(12)
    std = _standardised(rng)
    straddle = np.linspace(-1e-6, 1e-6, 40)
    huge = rng.normal(0, 1e299, 64)
    grid01 = public_grid(0.0, 1.0)
    on_grid = np.concatenate([grid01[[0, 1, 2, 512, 1023, 1024]], [0.0, 1.0]])
    outside = rng.uniform(0, 1, 30)
    with_nan = rng.uniform(0, 1, 30)
    with_nan[[2, 5, 7]] = np.nan
    narrow = 1e15 + rng.integers(0, 64, 20).astype(float)
    return [
        ("standardised-normal", std, _moved(std, 0, 1.0), (-3.0, 3.0), 0.5, {}),
        ("straddle-0-moved-1e-9", straddle, _moved(straddle, 20, 1e-9), (-1.0, 1.0), 0.5, {}),
        ("straddle-0-tiny-bounds", straddle, _moved(straddle, 0, 2e-6), (-2e-6, 2e-6), [0.1, 0.5, 0.9], {}),
        ("huge-magnitudes", huge, _moved(huge, 3, -1e300), (-1.5e308, 1.5e308), 0.5, {}),
        ("values-on-grid-and-bounds", on_grid, _replaced(on_grid, 3, grid01[7]), (0.0, 1.0), [0, 0.5, 1], {}),
        ("one-record-outside", outside, _moved(outside, 0, 1e6), (0.0, 1.0), 0.5, {}),
        ("nan-omit", with_nan, _replaced(with_nan, 2, 0.5), (0.0, 1.0), 0.5, {"nan_policy": "omit"}),
        ("bounds-narrow-for-magnitude", narrow, _moved(narrow, 0, 17.0), (1e15, 1e15 + 64), 0.5, {}),
        ("coarse-grid", std, _moved(std, 1, 1e-12), (-3.0, 3.0), 0.5, {"n_candidates": 7}),
    ]


SETUPS = _setups()


def _mechanism(x, bounds, q, kw):
    return dp.stats.quantile(x, q, dp.Eps(1.0), bounds=bounds, rng=0, full_response=True, **kw).mechanism


def _many(mech, x, n, seed):
    """n releases of mech on x through the auditor's vectorised path (the same draw as release_response)."""
    return mech._sample_many(mech._evaluate(mech.target(x)), dp.Eps(1.0), np.random.default_rng(seed), n)


@pytest.mark.parametrize(("case_id", "x", "y", "bounds", "q", "kw"), SETUPS, ids=[s[0] for s in SETUPS])
def test_every_release_lies_on_the_public_grid_of_the_bounds(case_id, x, y, bounds, q, kw):
    """Thousands of releases on a dataset and its neighbour are all bit-exact points of the public grid."""
    grid = public_grid(*bounds, kw.get("n_candidates", M))
    mech = _mechanism(x, bounds, q, kw)
    np.testing.assert_array_equal(mech.candidates(0), grid)
    for data, seed in ((x, 1), (y, 2)):
        assert_on_grid(_many(mech, data, 3000, seed), grid)
        singles = [dp.stats.quantile(data, q, dp.Eps(1.0), bounds=bounds, rng=s, **kw) for s in range(20)]
        assert_on_grid(np.asarray(singles), grid)


def test_two_dimensional_releases_lie_on_each_columns_grid():
    """axis=0 with per-column bounds draws column j from column j's grid; pooled values from the widest one."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(0, 1, 50), rng.normal(100, 30, 50)])
    lo, hi = np.array([-2.0, 0.0]), np.array([2.0, 200.0])
    out = np.array([dp.stats.quantile(X, [0.2, 0.8], dp.Eps(1), bounds=(lo, hi), axis=0, rng=s) for s in range(50)])
    assert_on_grid(out[:, :, 0], public_grid(-2.0, 2.0))
    assert_on_grid(out[:, :, 1], public_grid(0.0, 200.0))
    pooled = [dp.stats.median(X, dp.Eps(1), bounds=(lo, hi), rng=s) for s in range(50)]
    assert_on_grid(np.asarray(pooled), public_grid(-2.0, 200.0))


def _old_interpolated_release(x, q, eps, lo, hi, rng):
    """The replaced mechanism in brief: pick a gap between sorted clipped points, return a + U·(b − a) in it."""
    s = np.concatenate([[lo], np.sort(np.clip(x, lo, hi)), [hi]])
    with np.errstate(divide="ignore"):
        logits = np.log(np.diff(s)) - eps / 2 * np.abs(np.arange(x.size + 1) - q * x.size)
    p = np.exp(logits - logits.max())
    i = rng.choice(x.size + 1, p=p / p.sum())
    return s[i] + rng.random() * (s[i + 1] - s[i])


@pytest.mark.parametrize("case", [0, 1], ids=["standardised-normal", "straddle-0-moved-1e-9"])
def test_grid_check_catches_the_old_interpolation_between_data_points(case):
    """The membership check has teeth: the old a + U·(b − a) release leaves the public grid at once."""
    _, x, _, (lo, hi), q, _ = SETUPS[case]
    rng = np.random.default_rng(4)
    old = np.array([_old_interpolated_release(x, q, 1.0, lo, hi, rng) for _ in range(50)])
    with pytest.raises(AssertionError, match="off the public grid"):
        assert_on_grid(old, public_grid(lo, hi))


@pytest.mark.parametrize(("case_id", "x", "y", "bounds", "q", "kw"), SETUPS, ids=[s[0] for s in SETUPS])
def test_scores_move_by_at_most_one_between_the_neighbours(case_id, x, y, bounds, q, kw):
    """Grey-box: dp.testing.check_sensitivity finds every candidate's score within 1 across each attack pair."""
    assert check_sensitivity(_mechanism(x, bounds, q, kw), x, y) <= 1.0 + 1e-9


def test_score_check_catches_pooled_values_declared_with_sensitivity_one():
    """Pooling d values per record needs Δ = d: declaring 1 is refuted by moving one whole record."""
    X = np.zeros((10, 3))
    Y = X.copy()
    Y[0] = 1.0
    mech = dp.stats.median(X, dp.Eps(1), bounds=(0, 1), rng=0, full_response=True).mechanism
    assert mech.sensitivity == 3
    check_sensitivity(mech, X, Y)
    with pytest.raises(AssertionError):
        check_sensitivity(attrs.evolve(mech, sensitivity=1.0), X, Y)


def test_rank_counts_equal_a_sorted_reference_on_awkward_bounds_and_values():
    """The counting pass equals searchsorted on the sorted clipped values: huge, tiny, on-grid, inf and NaN values."""
    rng = np.random.default_rng(8)
    for trial in range(60):
        scale = 10.0 ** rng.integers(-300, 300)
        lo, hi = np.sort(rng.normal(0, scale, 2))
        if trial % 5 == 0:
            lo, hi = 1e15, 1e15 + float(rng.integers(1, 100))
        if trial % 7 == 0:
            lo, hi = -1.7e308, 1.7e308
        grid = public_grid(lo, hi, int(rng.integers(2, 3000)))
        span = max(abs(lo), abs(hi))
        x = np.concatenate(
            [rng.uniform(-1, 1, 300) * span, lo / 2 + hi / 2 + rng.uniform(-1, 1, 300) * (hi / 2 - lo / 2)]
        )
        x = np.concatenate([x, rng.choice(grid, 200), np.nextafter(rng.choice(grid, 50), np.inf), [np.inf, -np.inf]])
        x = np.concatenate([x, [np.nan] * 3])
        less, at_most, present = _rank_counts(x, grid, "omit")
        ref = np.sort(np.clip(x[~np.isnan(x)], lo, hi))
        assert present == ref.size
        np.testing.assert_array_equal(less, np.searchsorted(ref, grid, side="left"))
        np.testing.assert_array_equal(at_most, np.searchsorted(ref, grid, side="right"))


# ---- audit -------------------------------------------------------------------------------------------------------

# A pair found by exhaustive search over small datasets on the grid: its privacy loss is close to the full ε
# (1.77 of 2 at nine candidates), so a missing factor 2 in the exponent is visible.
AUDIT_X = np.array([0.0, 0.875, 0.875, 0.875])
AUDIT_Y = np.array([1.0, 0.875, 0.875, 0.875])


def _audit_mechanism():
    kw = {"bounds": (0, 1), "n_candidates": 9, "rng": 0, "full_response": True}
    return dp.stats.quantile(AUDIT_X, 0.25, dp.Eps(2.0), **kw).mechanism


def test_audit_on_a_worst_case_pair_does_not_refute_the_claim():
    """dp.testing.audit (α = 1e-6) on a near-worst-case neighbour pair finds no violation of ε = 2."""
    report = audit(_audit_mechanism(), AUDIT_X, AUDIT_Y, dp.Eps(2.0), n=100_000, rng=5)
    assert report.passed, report


def test_audit_refutes_the_mechanism_without_its_factor_two():
    """The same audit refutes the exponential mechanism with exp(ε·u) instead of exp(ε·u/2) (half the sensitivity)."""
    bad = attrs.evolve(_audit_mechanism(), sensitivity=0.5)
    report = audit(bad, AUDIT_X, AUDIT_Y, dp.Eps(2.0), n=100_000, rng=5)
    assert not report.passed and report.epsilon_lower_bound > 2.0


def test_audit_of_the_default_grid_on_the_attack_pair_passes():
    """On the 1e-9 attack pair with the default 1025 candidates the audit finds nothing (the old release failed)."""
    _, x, y, bounds, q, kw = SETUPS[1]
    report = audit(_mechanism(x, bounds, q, kw), x, y, dp.Eps(1.0), n=40_000, rng=6)
    assert report.passed, report


# ---- utility -----------------------------------------------------------------------------------------------------


def _median_errors(eps, seeds=200, n=1000):
    x = np.random.default_rng(21).normal(50, 10, n)
    mech = dp.stats.median(x, dp.Eps(eps), bounds=(0, 100), rng=0, full_response=True).mechanism
    value = mech._evaluate(mech.target(x))
    draws = mech._sample_many(value, dp.Eps(eps), np.random.default_rng(22), seeds)[:, 0, 0]
    return np.abs(draws - np.median(x))


def test_median_of_a_thousand_normal_values_is_within_three_units_at_epsilon_one():
    """N(50, 10), n = 1000, ε = 1: all of 200 releases within 3 of the median (a miss needs ~120 ranks: p < e⁻⁵⁰)."""
    assert _median_errors(1.0).max() < 3.0


def test_the_accuracy_check_catches_a_release_that_ignores_the_scores():
    """At a vanishing ε (the draw is uniform over the grid, as if the scores were ignored) the same check fails."""
    assert _median_errors(1e-4).max() > 3.0


def test_error_shrinks_monotonically_as_epsilon_grows():
    """Mean absolute error over 300 releases strictly decreases across ε = 0.01, 0.1, 1, 10."""
    errors = [_median_errors(eps, seeds=300).mean() for eps in (0.01, 0.1, 1.0, 10.0)]
    assert all(a > b for a, b in itertools.pairwise(errors)), errors


# ---- options and shapes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.5, [0.25, 0.75]])
@pytest.mark.parametrize(("shape", "axis"), [((40,), None), ((40, 3), None), ((40, 3), 0)])
def test_keepdims_gives_numpys_shapes(shape, axis, q):
    """keepdims=True keeps the reduced axes with length one, exactly as numpy.quantile does."""
    x = np.random.default_rng(1).random(shape)
    got = dp.stats.quantile(x, q, dp.Eps(1), bounds=(0, 1), axis=axis, keepdims=True, rng=0)
    assert np.shape(got) == np.quantile(x, q, axis=axis, keepdims=True).shape
    plain = dp.stats.quantile(x, q, dp.Eps(1), bounds=(0, 1), axis=axis, rng=0)
    np.testing.assert_array_equal(np.ravel(got), np.ravel(plain))
    assert np.shape(dp.stats.median(x, dp.Eps(1), bounds=(0, 1), axis=axis, keepdims=True, rng=0)) == np.shape(
        np.median(x, axis=axis, keepdims=True)
    )


def test_the_resolution_sets_the_grid():
    """n_candidates=5 on (0, 1) releases only 0, 0.25, 0.5, 0.75 or 1; at large ε the nearest to the median."""
    x = np.random.default_rng(2).uniform(0.4, 0.6, 500)
    out = {dp.stats.median(x, dp.Eps(1.0), bounds=(0, 1), n_candidates=5, rng=s) for s in range(30)}
    assert out <= {0.0, 0.25, 0.5, 0.75, 1.0}
    assert dp.stats.median(x, dp.Eps(1e4), bounds=(0, 1), n_candidates=5, rng=0) == 0.5


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, True, "many", 2**25])
def test_bad_resolutions_are_refused_naming_the_parameter(bad):
    """n_candidates must be an integer in [2, 2^24]; anything else is refused before any budget is charged."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    with pytest.raises((TypeError, ValueError), match="n_candidates"):
        dp.stats.median(np.zeros(5), dp.Eps(1), bounds=(0, 1), n_candidates=bad, accountant=acc)
    assert acc.spent.epsilon == 0


def test_public_checks_of_the_mechanism_charge_nothing():
    """Wrong column count or non-numeric data are refused by Quantile before the accountant is charged."""
    mech = dp.stats.Quantile(quantiles=0.5, lower=[0, 0], upper=[1, 1])
    acc = dp.Accountant(budget=dp.Eps(1.0))
    with pytest.raises(ValueError, match="bounds for 2 columns but the data have 3"):
        mech.release_response(dp.Eps(1.0), np.zeros((5, 3)), accountant=acc, rng=0)
    with pytest.raises(ValueError, match="numeric"):
        mech.release_response(dp.Eps(1.0), np.array(["a", "b"]), accountant=acc, rng=0)
    assert acc.spent.epsilon == 0


@pytest.mark.parametrize(("lower", "upper", "m"), [(1, 0, 5), (0, np.inf, 5), (np.nan, 1, 5), (0, 1, 1), (0, 1, 2.5)])
def test_candidate_grid_refuses_bad_bounds_and_resolutions(lower, upper, m):
    """The public grid function validates like every entry point: finite lower < upper, an integer n_candidates ≥ 2."""
    with pytest.raises((TypeError, ValueError)):
        dp.stats.candidate_grid(lower, upper, m)


def test_candidate_grid_is_the_documented_formula():
    """dp.stats.candidate_grid equals the formula recomputed here, and 2^k + 1 points on (0, 1) are exact dyadics."""
    for lo, hi, m in [(0.0, 1.0, 1025), (-3.0, 3.0, 7), (-1.5e308, 1.5e308, 1025), (1e15, 1e15 + 64, 1025)]:
        np.testing.assert_array_equal(dp.stats.candidate_grid(lo, hi, m), public_grid(lo, hi, m))
    np.testing.assert_array_equal(dp.stats.candidate_grid(0, 1, 1025), np.arange(1025) / 1024)


# ---- axis=(): numpy's "no reduction", one answer per value ------------------------------------------------------


@pytest.mark.parametrize("shape", [(10,), (10, 5)])
@pytest.mark.parametrize("q", [0.5, [0.1, 0.5]])
def test_empty_axis_tuple_reduces_nothing_as_numpy(shape, q):
    """diffprivlib's test_axis: axis=() gives numpy's shape (each value its own answer), keepdims changes nothing."""
    x = np.random.default_rng(0).random(shape)
    expected = np.quantile(x, q, axis=())
    assert np.shape(dp.stats.quantile(x, q, dp.Eps(1), bounds=(0, 1), axis=(), rng=0)) == expected.shape
    kept = np.quantile(x, q, axis=(), keepdims=True).shape
    assert np.shape(dp.stats.quantile(x, q, dp.Eps(1), bounds=(0, 1), axis=(), keepdims=True, rng=0)) == kept
    assert np.shape(dp.stats.median(x, dp.Eps(1), bounds=(0, 1), axis=(), rng=0)) == shape


def test_empty_axis_tuple_answers_each_value_from_that_value_alone_in_one_charge():
    """At q = 0.1 and a large ε the answer for value v lies at or below v (the score of c < v beats c > v by 0.8):
    answers built from the wrong values (or pooled) would fail. One release, charged ε once, split over the values.
    """
    x = np.array([[0.05, 0.9], [0.5, 0.3], [0.95, 0.6]])
    lo, hi = np.array([0.0, 0.2]), np.array([1.0, 1.0])
    acc = dp.Accountant(budget=dp.Eps(1e6))
    for seed in range(5):
        r = dp.stats.quantile(
            x, 0.1, dp.Eps(1e5), bounds=(lo, hi), axis=(), rng=seed, accountant=acc, full_response=True
        )
        assert r.response.shape == x.shape and np.all(r.response <= x + 1e-3)
        assert np.all(r.response >= lo) and np.all(r.response <= hi)  # each value's own column bounds
        assert r.response[0, 1] >= 0.2  # the second column's grid starts at its own lower bound
    assert acc.spent.epsilon == pytest.approx(5e5)


def test_empty_axis_tuple_refuses_more_values_than_it_can_answer_before_the_charge():
    """Each answer gets ε/(levels·values): beyond 4096 values the refusal names axis=() and the alternatives."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    with pytest.raises(ValueError, match=r"axis=\(\)"):
        dp.stats.quantile(np.zeros(5000), 0.5, dp.Eps(1), bounds=(0, 1), axis=(), accountant=acc)
    assert acc.spent.epsilon == 0
