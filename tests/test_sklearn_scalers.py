"""The private scalers: scikit-learn's checks, one charge per fit, utility close to scikit-learn's scalers at large ε,
public checks before any charge, a release that is exactly the library's DP statistics, and a Pipeline with
GridSearchCV on one accountant."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

pytest.importorskip("sklearn")

import diffpriv_py as dp
from diffpriv_py import sklearn as dps
from diffpriv_py._rng import as_generator

_NO_VALUES_READ = {
    "check_estimators_nan_inf": "with quantiles=None the range is the public bounds: fit reads no value of X and "
    "charges nothing, so whether X holds NaN or infinity is private and is not revealed by an error (transform "
    "refuses such rows, on data the caller holds).",
}


def _scalers():
    return [
        dps.StandardScaler(epsilon=1.0, bounds=(-10, 10), rng=0),
        dps.StandardScaler(epsilon=1.0, delta=1e-5, bounds=(-10, 10), with_mean=False, rng=0),
        dps.StandardScaler(epsilon=1.0, bounds=(-10, 10), with_std=False, rng=0),
        dps.MinMaxScaler(epsilon=1.0, bounds=(-10, 10), rng=0),
        dps.MinMaxScaler((-1, 1), epsilon=1.0, bounds=(-10, 10), quantiles=None, clip=True),
    ]


def _expected_failures(estimator):
    declared = dps.EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})
    if isinstance(estimator, dps.MinMaxScaler) and estimator.quantiles is None:
        return declared | _NO_VALUES_READ
    return declared


from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks(_scalers(), expected_failed_checks=_expected_failures)
def test_scalers_pass_scikit_learns_estimator_checks(estimator, check):
    """Every check passes; the only exception is a configuration that reads no data (reason above)."""
    check(estimator)


@pytest.fixture
def data():
    rng = np.random.default_rng(11)
    return rng.normal([50.0, -3.0, 0.0], [10.0, 2.0, 0.5], size=(50_000, 3))


BOUNDS = ([0.0, -12.0, -3.0], [100.0, 6.0, 3.0])


# ---- budget ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: dps.StandardScaler(epsilon=0.7, bounds=BOUNDS, rng=0, accountant=acc),
        lambda acc: dps.StandardScaler(epsilon=0.7, bounds=BOUNDS, with_mean=False, rng=0, accountant=acc),
        lambda acc: dps.MinMaxScaler(epsilon=0.7, bounds=BOUNDS, rng=0, accountant=acc),
    ],
    ids=["standard", "std-only", "minmax"],
)
def test_a_fit_is_exactly_one_charge_of_epsilon_and_transforms_are_free(make, data):
    """fit and fit_transform charge ε once each; transform and inverse_transform charge nothing."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    scaler = make(acc).fit(data)
    assert len(acc.ledger) == 1 and acc.ledger[0].guarantee == dp.Eps(0.7)
    assert scaler.privacy_params_ == dp.Eps(0.7)
    scaler.inverse_transform(scaler.transform(data))
    assert len(acc.ledger) == 1
    scaler.fit_transform(data)
    assert len(acc.ledger) == 2 and acc.spent.epsilon == pytest.approx(1.4)


def test_with_delta_the_charge_is_epsilon_delta_with_gaussian_noise(data):
    acc = dp.Accountant(budget=dp.Del(10.0, 1e-3))
    dps.StandardScaler(epsilon=1.0, delta=1e-6, bounds=BOUNDS, rng=0, accountant=acc).fit(data)
    assert [c.guarantee for c in acc.ledger] == [dp.Del(1.0, 1e-6)]


@pytest.mark.parametrize(
    "scaler",
    [
        dps.StandardScaler(epsilon=1.0, bounds=BOUNDS, with_mean=False, with_std=False),
        dps.MinMaxScaler(epsilon=1.0, bounds=BOUNDS, quantiles=None),
    ],
    ids=["identity", "public-bounds"],
)
def test_a_fit_that_releases_nothing_charges_nothing(scaler, data):
    """No statistic asked for: nothing is read, nothing is charged, and the transform is public."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    scaler.set_params(accountant=acc).fit(data)
    assert acc.ledger == () and scaler.privacy_params_ is None
    out = scaler.transform(data[:5])
    if isinstance(scaler, dps.MinMaxScaler):
        np.testing.assert_allclose(out, (data[:5] - BOUNDS[0]) / (np.array(BOUNDS[1]) - BOUNDS[0]))
    else:
        np.testing.assert_array_equal(out, data[:5])


# ---- the release is the library's DP statistics -----------------------------------------------------------------


def test_standard_scaler_releases_exactly_dp_stats_mean_and_var_at_a_third_and_two_thirds(data):
    """The same noise stream through dp.stats.mean at ε/3 and dp.stats.var at 2ε/3 gives the same numbers, so the
    guarantee is those functions' (basic composition). A changed split or extra noise draw fails here."""
    scaler = dps.StandardScaler(epsilon=0.9, bounds=BOUNDS, rng=5).fit(data)
    g = as_generator(5)
    mean = dp.stats.mean(data, dp.Eps(0.3), bounds=BOUNDS, axis=0, rng=g)
    var = dp.stats.var(data, dp.Eps(0.9 * 2 / 3), bounds=BOUNDS, axis=0, rng=g, full_response=True)
    np.testing.assert_array_equal(scaler.mean_, mean)
    # The floor is var's 50% bar at the widest variance the bounds allow (a public number); it bounds the bar of
    # any released value, since the bar's grid allowance grows with the variance.
    lo, hi = np.broadcast_arrays(*map(np.asarray, BOUNDS))
    widest = attrs.evolve(var.error_bound, value=((hi - lo) / 2.0) ** 2)(0.5, False)
    np.testing.assert_array_equal(scaler.var_floor_, widest)
    assert np.all(widest >= var.accuracy(0.5))
    np.testing.assert_array_equal(scaler.var_, np.maximum(var.response, widest))
    np.testing.assert_array_equal(scaler.scale_, np.sqrt(scaler.var_))


def test_min_max_scaler_releases_exactly_dp_stats_quantile(data):
    """The released range is dp.stats.quantile at levels (0.01, 0.99), axis=0, with the same noise stream."""
    scaler = dps.MinMaxScaler(epsilon=0.9, bounds=BOUNDS, rng=5).fit(data)
    levels = dp.stats.quantile(data, [0.01, 0.99], dp.Eps(0.9), bounds=BOUNDS, axis=0, rng=5)
    np.testing.assert_array_equal(scaler.data_min_, levels.min(axis=0))
    np.testing.assert_array_equal(scaler.data_max_, levels.max(axis=0))


def test_the_floor_and_every_shape_depend_on_public_facts_only():
    """Two neighbouring datasets (one record replaced by an extreme one) give the same floor, shapes and attributes;
    the floor changes with ε, n or the bounds (public facts) only."""
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, size=(500, 2))
    Y = X.copy()
    Y[0] = [1.0, 0.0]
    a = dps.StandardScaler(epsilon=1.0, bounds=(0, 1), rng=1).fit(X)
    b = dps.StandardScaler(epsilon=1.0, bounds=(0, 1), rng=2).fit(Y)
    np.testing.assert_array_equal(a.var_floor_, b.var_floor_)
    assert sorted(k for k in vars(a) if k.endswith("_")) == sorted(k for k in vars(b) if k.endswith("_"))
    assert a.scale_.shape == b.scale_.shape == (2,)
    c = dps.StandardScaler(epsilon=2.0, bounds=(0, 1), rng=1).fit(X)
    assert np.all(c.var_floor_ < a.var_floor_)


def test_a_constant_feature_gets_a_positive_finite_scale_and_range():
    """A constant feature's noisy variance can be 0 or below: floored, never a division by zero or a negative."""
    X = np.c_[np.full(200, 3.0), np.linspace(0, 10, 200)]
    for seed in range(20):
        s = dps.StandardScaler(epsilon=0.1, bounds=(0, 10), rng=seed).fit(X)
        assert np.all(s.scale_ > 0) and np.all(np.isfinite(s.transform(X)))
        m = dps.MinMaxScaler(epsilon=0.1, bounds=(0, 10), rng=seed).fit(X)
        assert np.all(m.data_range_ >= 10 / 1024) and np.all(np.isfinite(m.transform(X)))
        assert np.all(m.data_min_ <= m.data_max_)


# ---- utility -----------------------------------------------------------------------------------------------------


def test_at_large_epsilon_the_standard_scaler_is_close_to_scikit_learns(data):
    from sklearn.preprocessing import StandardScaler as SkStandardScaler

    exact = SkStandardScaler().fit(data)
    private = dps.StandardScaler(epsilon=100.0, bounds=BOUNDS, rng=0).fit(data)
    np.testing.assert_allclose(private.mean_, exact.mean_, atol=0.01)
    np.testing.assert_allclose(private.scale_, exact.scale_, rtol=0.01)
    np.testing.assert_allclose(private.transform(data[:100]), exact.transform(data[:100]), atol=0.02)
    np.testing.assert_allclose(private.inverse_transform(private.transform(data[:10])), data[:10], rtol=1e-12)


def test_at_large_epsilon_the_min_max_scaler_maps_the_quantiles_to_the_feature_range(data):
    private = dps.MinMaxScaler((-1, 1), epsilon=100.0, bounds=BOUNDS, rng=0).fit(data)
    step = (np.array(BOUNDS[1]) - BOUNDS[0]) / 1024
    assert np.all(np.abs(private.data_min_ - np.quantile(data, 0.01, axis=0)) <= 2 * step)
    assert np.all(np.abs(private.data_max_ - np.quantile(data, 0.99, axis=0)) <= 2 * step)
    inside = np.mean(np.all(np.abs(private.transform(data)) <= 1, axis=1))
    assert 0.93 < inside < 0.97  # 1% beyond each end, per feature
    clipped = private.set_params(clip=True).transform(data)
    assert clipped.min() == -1 and clipped.max() == 1
    np.testing.assert_allclose(private.inverse_transform(private.set_params(clip=False).transform(data[:5])), data[:5])


def test_at_epsilon_one_the_standard_scaler_is_useful(data):
    """ε = 1 on 50,000 rows: standardised values within 0.05 of scikit-learn's (bounds of ±5σ around the data)."""
    from sklearn.preprocessing import StandardScaler as SkStandardScaler

    exact = SkStandardScaler().fit_transform(data[:1000])
    private = dps.StandardScaler(epsilon=1.0, bounds=BOUNDS, rng=3).fit(data).transform(data[:1000])
    assert np.sqrt(np.mean((private - exact) ** 2)) < 0.05


# ---- public checks first -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"bounds": None}, TypeError, "needs public bounds"),
        ({"bounds": ([0, 0], [1, 1])}, ValueError, "3 values"),
        ({"bounds": (0, np.inf)}, ValueError, "finite"),
        ({"bounds": (1, 0)}, ValueError, "lower < upper"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"accountant": [1]}, TypeError, "accountant"),
        ({"with_mean": "yes"}, TypeError, "with_mean"),
        ({"feature_range": (1, 0)}, ValueError, "feature_range"),
        ({"quantiles": (0.9, 0.1)}, ValueError, "quantiles"),
        ({"quantiles": (0.1, 1.5)}, ValueError, "in \\[0, 1\\]"),
        ({"clip": "no"}, TypeError, "clip"),
        ({"n_candidates": 1}, ValueError, "n_candidates"),
    ],
)
def test_public_mistakes_are_refused_before_any_charge(params, error, match, data):
    """Bounds, ε, the accountant and options are checked, with a message naming them, before anything is charged."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    minmax_only = {"feature_range", "quantiles", "clip", "n_candidates"} & set(params)
    standard_only = {"with_mean"} & set(params)
    kinds = (
        [dps.MinMaxScaler]
        if minmax_only
        else [dps.StandardScaler]
        if standard_only
        else [dps.StandardScaler, dps.MinMaxScaler]
    )
    for kind in kinds:
        base = {"epsilon": 1.0, "bounds": BOUNDS, "rng": 0, "accountant": acc}
        with pytest.raises(error, match=match):
            kind(**(base | params)).fit(data[:100])
        assert acc.ledger == ()


@pytest.mark.parametrize("kind", [dps.StandardScaler, dps.MinMaxScaler])
def test_nan_or_infinity_is_found_after_the_charge_and_says_so(kind):
    """Whether X holds NaN is private: it is found by the mechanism after the charge, and the error says so."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    X = np.zeros((20, 2))
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity") as caught:
        kind(epsilon=1.0, bounds=(-1, 1), rng=0, accountant=acc).fit(X)
    assert len(acc.ledger) == 1 and any("was charged" in note for note in caught.value.__notes__)


# ---- scikit-learn integration ------------------------------------------------------------------------------------


def test_set_output_pandas_keeps_the_feature_names():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (300, 2)), columns=["age", "income"])
    for scaler in (dps.StandardScaler(epsilon=1.0, bounds=(0, 1), rng=0), dps.MinMaxScaler(epsilon=1.0, bounds=(0, 1))):
        out = scaler.set_output(transform="pandas").fit_transform(X)
        assert list(out.columns) == ["age", "income"] and list(scaler.feature_names_in_) == ["age", "income"]


def test_pipeline_with_grid_search_on_one_accountant_charges_every_fit():
    """Pipeline(StandardScaler, LogisticRegression) in a 2-setting, 3-fold GridSearchCV plus the refit: 7 pipeline
    fits, each charging the scaler's ε and the classifier's ε once, all on one accountant (clone keeps it shared)."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal([40.0, 5.0], [10.0, 2.0], size=(3000, 2))
    y = (X[:, 0] + 5 * X[:, 1] > 65).astype(int)
    acc = dp.Accountant(budget=dp.Eps(20.0))
    pipe = make_pipeline(
        dps.StandardScaler(epsilon=0.5, bounds=([0, -5], [100, 15]), accountant=acc),
        # classes= declares the public label set
        dps.LogisticRegression(epsilon=1.0, data_norm=4.0, classes=[0, 1], accountant=acc),
    )
    search = GridSearchCV(pipe, {"logisticregression__reg_lambda": [1e-3, 1e-2]}, cv=3, error_score="raise")
    search.fit(X, y)
    labels = [c.label for c in acc.ledger]
    assert labels.count("MeansAndVariances") == 7 and len(acc.ledger) == 14
    assert acc.spent.epsilon == pytest.approx(7 * 1.5)
    assert search.score(X, y) > 0.85
