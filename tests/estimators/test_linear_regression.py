"""Private linear regression (AdaSSP, functional mechanism): calibration, sensitivity, exact sums, utility, facade."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.estimators import LinearModel, LinearRegression
from diffpriv_py.estimators import linear_regression as lr
from diffpriv_py.mechanisms.gaussian import analytic_gaussian_sigma
from diffpriv_py.testing import MechCase, parametrize_with_checks


def _data(n, d, seed, noise=0.1):
    """y = xᵀw + 0.1 + N(0, noise²) with ‖x‖ ≤ 1 and |y| ≤ 1 (clipped)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    y = np.clip(X @ w + 0.1 + rng.normal(0, noise, n), -1, 1)
    return X, y, w


def _mse(model, X, y):
    return float(np.mean((model.predict(X) - y) ** 2))


def _worst_pair(n=10, d=1):
    """Every record at (x = 1, y = 1) but one, which flips to (x = -1, y = 1): Xᵀy moves by 2."""
    X = np.ones((n, d)) / np.sqrt(d)
    y = np.ones(n)
    X2 = X.copy()
    X2[0] = -X2[0]
    return (X, y), (X2, y.copy())


# ---- conformance kit ---------------------------------------------------------------------------------------------

_D, _D2 = _worst_pair()
CASES = [
    MechCase(
        mechanism=LinearRegression(data_norm=1.0, label_bound=1.0),
        privacy_params=dp.Del(1.0, 1e-6),
        dataset=_D,
        neighbour=_D2,
        id="LinearRegression[adassp]",
        distributional=False,
    ),
    MechCase(
        mechanism=LinearRegression(data_norm=1.0, label_bound=1.0, reg_lambda=1.0),
        privacy_params=dp.Del(1.0, 1e-6),
        dataset=_D,
        neighbour=_D2,
        id="LinearRegression[adassp-fixed-ridge]",
        distributional=False,
    ),
    MechCase(
        mechanism=LinearRegression(method="functional", data_norm=1.0, label_bound=1.0),
        privacy_params=dp.Eps(1.0),
        dataset=_D,
        neighbour=_D2,
        distributional=False,
    ),
]


@parametrize_with_checks(CASES)
def test_linear_regression_conforms(case, check):
    """LinearRegression satisfies the shared mechanism invariant named in the test id."""
    check(case)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "params"), [("adassp", dp.Del(1.0, 1e-3)), ("functional", dp.Eps(1.0))], ids=["adassp", "functional"]
)
def test_audit_on_the_worst_case_pair_does_not_refute_the_claim_and_catches_too_little_noise(method, params):
    """The auditor passes both methods on a sign-flip pair and refutes them with a quarter of the noise.

    The planted bug is shown without intercept and with a fixed ridge, where the auditor has the most power.
    """
    from diffpriv_py.testing import audit

    D, D2 = _worst_pair(n=4)
    default = LinearRegression(method=method, data_norm=1.0, label_bound=1.0)
    assert audit(default, D, D2, params, n=20_000, rng=5).passed
    mech = LinearRegression(method=method, data_norm=1.0, label_bound=1.0, fit_intercept=False, reg_lambda=1.0)
    assert audit(mech, D, D2, params, n=20_000, rng=5).passed
    with attrs.validators.disabled():  # a lowered sensitivity is refused; the planted bug bypasses the check
        weak = attrs.evolve(mech, sensitivity=0.25)
    report = audit(weak, D, D2, params, n=20_000, rng=5)
    assert not report.passed and report.epsilon_lower_bound > params.epsilon


# ---- calibration -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["adassp", "functional"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_scaled_statistics_never_move_more_than_the_declared_sensitivity(method, fit_intercept):
    """Over random and adversarial replace-one pairs the target moves by at most 1 in the mechanism's norm."""
    rng = np.random.default_rng(1)
    mech = LinearRegression(method=method, data_norm=2.0, label_bound=3.0, fit_intercept=fit_intercept)
    worst = 0.0
    for trial in range(300):
        d = int(rng.integers(1, 6))
        X = rng.normal(size=(15, d)) * 2
        y = rng.normal(size=15) * 3
        X2, y2 = X.copy(), y.copy()
        i = int(rng.integers(15))
        if trial % 3 == 0:  # adversarial: opposite extreme row and label
            X2[i] = -X[i] / np.linalg.norm(X[i]) * 5
            y2[i] = -np.sign(y[i]) * 10
        elif trial % 3 == 1:  # orthogonal unit rows with the same extreme label
            X2[i] = np.roll(X[i], 1) * 10
            y2[i] = 10.0 * np.sign(y[i])
        else:
            X2[i], y2[i] = rng.normal(size=d) * 3, rng.normal() * 4
        worst = max(worst, mech.sensitivity_norm((X, y), (X2, y2)))
    assert worst <= 1.0
    assert worst > 0.3  # the bound is not vacuous: some pairs come close


def test_functional_sensitivities_match_the_l1_bounds_on_one_record():
    """At z = (1, …, 1)/√d and t = 1 one record's quadratic coefficients sum to d, its linear ones to 2√d (+ 2√d + 2).

    So the replace-one bounds 2d and 4√d (+ 4√d + 4) are attained up to the factor 2 of the replacement.
    """
    d = 5
    z = np.full(d, 1 / np.sqrt(d))
    rows, cols = np.triu_indices(d)
    quadratic = np.abs(np.where(rows == cols, 1.0, 2.0) * np.outer(z, z)[rows, cols]).sum()
    linear = 2 * np.abs(z).sum()
    with_intercept = linear + 2 * np.abs(z).sum() + 2
    assert lr._fm_sensitivity(d, False) == pytest.approx((2 * quadratic, 2 * linear))
    assert lr._fm_sensitivity(d, True) == pytest.approx((2 * quadratic, 2 * with_intercept))


def test_joint_gaussian_release_costs_less_noise_than_three_separate_releases():
    """One Gaussian on the jointly scaled statistics beats Wang's split into three (ε/3, δ/3) Gaussians."""
    eps, delta = 1.0, 1e-6
    w = lr.ADASSP_WEIGHTS
    joint = analytic_gaussian_sigma(eps, delta) / math.sqrt(w["gram"])  # σ of XᵀX in units of its sensitivity
    split = analytic_gaussian_sigma(eps / 3, delta / 3)
    assert joint < 0.6 * split


def test_adassp_needs_delta_and_the_functional_mechanism_is_pure_epsilon():
    """AdaSSP refuses Eps (TypeError) and δ = 0 (ValueError); the functional mechanism takes Eps."""
    D, _ = _worst_pair()
    mech = LinearRegression(data_norm=1.0, label_bound=1.0)
    assert mech.privacy_params_type is dp.Del
    with pytest.raises(TypeError, match="Del"):
        mech.release_response(dp.Eps(1.0), D, rng=0)
    with pytest.raises(ValueError, match="delta > 0"):
        mech.release_response(dp.Del(1.0, 0.0), D, rng=0)
    fm = LinearRegression(method="functional", data_norm=1.0, label_bound=1.0)
    assert fm.release_response(dp.Eps(1.0), D, rng=0).privacy_params == dp.Eps(1.0)


def test_zero_sensitivity_gives_the_exact_least_squares_solution():
    """With no noise and no ridge the release is ordinary least squares on the (unclipped) data."""
    X, y, _ = _data(2000, 3, 0)
    for method in ("adassp", "functional"):
        with attrs.validators.disabled():  # sensitivity=0 is refused for users; here it isolates the solver
            mech = LinearRegression(method=method, data_norm=1.0, label_bound=1.0, reg_lambda=0.0, sensitivity=0.0)
        params = dp.Del(1.0, 1e-6) if method == "adassp" else dp.Eps(1.0)
        model = mech.release_response(params, (X, y), rng=0).response
        ols = np.linalg.lstsq(np.c_[X, np.ones(2000)], y, rcond=None)[0]
        np.testing.assert_allclose(model.coef, ols[:3], atol=1e-6)
        assert model.intercept == pytest.approx(ols[3], abs=1e-6)


def test_auto_ridge_shrinks_as_epsilon_grows():
    """The functional mechanism's ridge is ∝ 1/ε; AdaSSP's is 0 once λ_min dominates the noise."""
    X, y, _ = _data(20_000, 4, 0)
    fm = LinearRegression(method="functional", data_norm=1.0, label_bound=1.0)
    ridges = [fm.release_response(dp.Eps(e), (X, y), rng=0).response.reg_lambda for e in (0.5, 1.0, 2.0)]
    assert ridges[0] == pytest.approx(2 * ridges[1]) and ridges[1] == pytest.approx(2 * ridges[2])
    ada = LinearRegression(data_norm=1.0, label_bound=1.0)
    assert ada.release_response(dp.Del(10.0, 1e-6), (X, y), rng=0).response.reg_lambda == 0.0


# ---- exact arithmetic and normalisation ----------------------------------------------------------------------------


def test_sufficient_statistics_are_exact_and_independent_of_record_order():
    """XᵀX and Xᵀy computed by BLAS on the grid equal the exact rational sums, in any row order."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 3))
    y = rng.normal(size=500)
    mech = LinearRegression(method="functional", data_norm=1.5, label_bound=2.0)
    Z, t = mech.normalise((X, y))
    A = Z.T @ Z
    exact = [
        [sum((Fraction(a) * Fraction(b) for a, b in zip(Z[:, i], Z[:, j], strict=True)), Fraction(0)) for j in range(3)]
        for i in range(3)
    ]
    assert [[Fraction(v) for v in row] for row in A] == exact
    assert [Fraction(v) for v in Z.T @ t] == [
        sum((Fraction(a) * Fraction(b) for a, b in zip(Z[:, i], t, strict=True)), Fraction(0)) for i in range(3)
    ]
    order = rng.permutation(500)
    np.testing.assert_array_equal(mech.statistics((X, y)).vector, mech.statistics((X[order], y[order])).vector)


def test_rows_and_labels_are_clipped_into_the_unit_ball_and_the_input_is_not_modified():
    """Normalised rows have norm ≤ 1 (with the intercept column), labels lie in [-1, 1]; X and y are untouched."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4)) * 10
    y = rng.normal(size=300) * 10
    X0, y0 = X.copy(), y.copy()
    for fit_intercept in (True, False):
        Z, t = LinearRegression(data_norm=1.0, label_bound=(-2, 5), fit_intercept=fit_intercept).normalise((X, y))
        assert np.all(np.linalg.norm(Z, axis=1) <= 1.0) and np.all(np.abs(t) <= 1.0)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_label_bound_pair_is_centred_by_its_public_midpoint():
    """With label_bound=(low, high) a shifted target is fitted as well as a centred one (intercept absorbs it)."""
    X, y, w = _data(50_000, 3, 4, noise=0.05)
    mech = LinearRegression(data_norm=1.0, label_bound=(99.0, 101.0))
    model = mech.release_response(dp.Del(2.0, 1e-6), (X, y + 100.0), rng=0).response
    np.testing.assert_allclose(model.coef, w, atol=0.05)
    assert model.intercept == pytest.approx(100.1, abs=0.05)


# ---- validation ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["data_norm", "label_bound"])
def test_missing_bounds_are_refused_with_a_message_to_pass_them(missing):
    """data_norm and label_bound are never taken from the data: omitting one raises and says how to pass it."""
    kwargs = {"data_norm": 1.0, "label_bound": 1.0}
    del kwargs[missing]
    with pytest.raises(ValueError, match=f"{missing}="):
        LinearRegression(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "kind"),
    [
        ({"data_norm": np.nan}, ValueError),
        ({"data_norm": -1.0}, ValueError),
        ({"data_norm": True}, TypeError),
        ({"label_bound": math.inf}, ValueError),
        ({"label_bound": (1.0, 1.0)}, ValueError),
        ({"label_bound": (0.0, 1.0, 2.0)}, TypeError),
        ({"method": "ols"}, ValueError),
        ({"reg_lambda": "large"}, ValueError),
        ({"reg_lambda": -0.1}, ValueError),
        ({"fit_intercept": "yes"}, TypeError),
    ],
)
def test_bad_settings_are_refused(kwargs, kind):
    """NaN, negative, bool, infinite or malformed bounds and unknown options raise a clear error."""
    settings = {"data_norm": 1.0, "label_bound": 1.0, **kwargs}
    with pytest.raises(kind):
        LinearRegression(**settings)


def test_bad_data_is_refused():
    """A bare X, mismatched lengths and NaN labels raise before any noise is drawn."""
    X, y, _ = _data(50, 2, 0)
    mech = LinearRegression(method="functional", data_norm=1.0, label_bound=1.0)
    with pytest.raises(TypeError, match=r"\(X, y\)"):
        mech.release_response(dp.Eps(1.0), X, rng=0)
    with pytest.raises(ValueError, match="same"):
        mech.release_response(dp.Eps(1.0), (X, y[:-1]), rng=0)
    bad = y.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mech.release_response(dp.Eps(1.0), (X, bad), rng=0)


def test_model_is_read_only_and_predicts_linearly():
    """The released coefficients cannot be changed in place; predict is X·coef + intercept."""
    model = LinearModel(coef=[1.0, -2.0], intercept=0.5, reg_lambda=0.0, method="adassp")
    with pytest.raises(ValueError):
        model.coef[0] = 3.0
    np.testing.assert_allclose(model.predict([[1.0, 1.0], [0.0, 2.0]]), [-0.5, -3.5])
    np.testing.assert_array_equal(np.asarray(model), [1.0, -2.0, 0.5])
    with pytest.raises(ValueError, match="2 features"):
        model.predict([[1.0]])


# ---- utility -------------------------------------------------------------------------------------------------------


def _median_test_mse(mech, params, train, test, runs):
    return float(np.median([_mse(mech.release_response(params, train, rng=s).response, *test) for s in range(runs)]))


@pytest.mark.parametrize("method", ["adassp", "functional"])
def test_median_test_error_does_not_increase_with_epsilon(method):
    """Median test MSE over 12 releases is non-increasing in ε ∈ {0.1, 0.3, 1, 3, 10, 30} (n = 4000, d = 5)."""
    X, y, _ = _data(5000, 5, 0)
    train, test = (X[1000:], y[1000:]), (X[:1000], y[:1000])
    mech = LinearRegression(method=method, data_norm=1.0, label_bound=1.0)
    errors = []
    for eps in (0.1, 0.3, 1.0, 3.0, 10.0, 30.0):
        params = dp.Del(eps, 1e-6) if method == "adassp" else dp.Eps(eps)
        errors.append(_median_test_mse(mech, params, train, test, 12))
    assert all(a >= b for a, b in itertools.pairwise(errors)), errors
    assert errors[-1] < 1.1 * 0.01  # approaches the noise floor σ² = 0.01


def test_functional_mechanism_without_a_ridge_is_not_monotone_which_the_check_above_catches():
    """The bug the ridge fixes (seen in our earlier runs): with reg_lambda=0 the median error rises with ε somewhere."""
    X, y, _ = _data(5000, 30, 0)
    train, test = (X[1000:], y[1000:]), (X[:1000], y[:1000])
    mech = LinearRegression(method="functional", data_norm=1.0, label_bound=1.0, reg_lambda=0.0)
    errors = [_median_test_mse(mech, dp.Eps(eps), train, test, 12) for eps in (0.3, 1.0, 3.0, 10.0)]
    assert any(a < b for a, b in itertools.pairwise(errors)), errors


def test_adassp_is_close_to_least_squares_at_large_n():
    """At n = 80 000, ε = 1 AdaSSP's test MSE is within 5 % of the non-private least-squares one."""
    X, y, _ = _data(100_000, 10, 5)
    train, test = (X[20_000:], y[20_000:]), (X[:20_000], y[:20_000])
    ols = np.linalg.lstsq(np.c_[train[0], np.ones(80_000)], train[1], rcond=None)[0]
    ols_mse = float(np.mean((np.c_[test[0], np.ones(20_000)] @ ols - test[1]) ** 2))
    mech = LinearRegression(data_norm=1.0, label_bound=1.0)
    assert _median_test_mse(mech, dp.Del(1.0, 1e-6), train, test, 5) < 1.05 * ols_mse


# ---- facade ----------------------------------------------------------------------------------------------------------


def test_facade_fits_predicts_scores_and_explains_a_missing_delta():
    """fit/predict/score (R²) follow scikit-learn; AdaSSP without delta says to pass delta or use functional."""
    pytest.importorskip("sklearn")
    from diffpriv_py.sklearn import LinearRegression as Facade

    X, y, w = _data(20_000, 3, 6, noise=0.05)
    reg = Facade(epsilon=2.0, delta=1e-6, data_norm=1.0, label_bound=1.0, rng=0)
    with pytest.raises(dp.sklearn.NotFittedError):
        reg.predict(X)
    assert reg.fit(X, y) is reg and reg.privacy_params_ == dp.Del(2.0, 1e-6)
    np.testing.assert_allclose(reg.coef_, w, atol=0.05)
    assert reg.score(X, y) > 0.9 and reg.n_features_in_ == 3
    with pytest.raises(ValueError, match="delta"):
        Facade(epsilon=1.0, data_norm=1.0, label_bound=1.0).fit(X, y)
    fm = Facade(epsilon=2.0, method="functional", data_norm=1.0, label_bound=1.0, rng=0).fit(X, y)
    assert fm.privacy_params_ == dp.Eps(2.0)
    with pytest.raises(ValueError, match="requires y to be passed"):
        fm.fit(X)


def test_facade_works_with_clone_pipeline_and_cross_val_score():
    """clone keeps the parameters; a Pipeline with a scaler and 3-fold cross_val_score run (each fold spends ε)."""
    pytest.importorskip("sklearn")
    from sklearn.base import clone, is_regressor
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from diffpriv_py.sklearn import LinearRegression as Facade

    X, y, _ = _data(3000, 3, 7)
    reg = Facade(epsilon=1.0, delta=1e-6, data_norm=1.0, label_bound=1.0, rng=0)
    assert clone(reg).get_params() == reg.get_params() and is_regressor(reg)
    pipe = make_pipeline(FunctionTransformer(lambda a: a * 0.9), clone(reg))
    assert pipe.fit(X, y).predict(X).shape == (3000,)
    scores = cross_val_score(reg, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)
