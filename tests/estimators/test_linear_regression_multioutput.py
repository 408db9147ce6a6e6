"""Multi-output linear regression: t outputs in one release, with a sensitivity that grows with t and is proven."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.estimators import linear_regression as lr
from diffpriv_py.estimators.linear_regression import LinearRegression
from diffpriv_py.testing import MechCase, audit, parametrize_with_checks

CONFIGS = list(itertools.product(["adassp", "functional"], [True, False], ["auto", 0.5]))


def _flip_pair(n, t):
    """Every record at (x = 1, y = (1, …, 1)) but one, whose x flips to -1: Xᵀy moves by 2√t, its bound."""
    X, Y = np.ones((n, 1)), np.ones((n, t))
    X2 = X.copy()
    X2[0] = -1.0
    return (X, Y), (X2, Y.copy())


_D, _D2 = _flip_pair(10, 3)
CASES = [
    MechCase(
        mechanism=LinearRegression(method=method, data_norm=1.0, label_bound=1.0),
        privacy_params=dp.Del(1.0, 1e-3) if method == "adassp" else dp.Eps(1.0),
        dataset=_D,
        neighbour=_D2,
        id=f"LinearRegression[{method}-3-outputs]",
        distributional=False,
    )
    for method in ("adassp", "functional")
]


@parametrize_with_checks(CASES)
def test_multi_output_linear_regression_conforms(case, check):
    """LinearRegression with three outputs satisfies the shared mechanism invariant named in the test id."""
    check(case)


@pytest.mark.parametrize(
    ("method", "params"), [("adassp", dp.Del(1.0, 1e-3)), ("functional", dp.Eps(1.0))], ids=["adassp", "functional"]
)
def test_audit_of_nine_outputs_passes_and_refutes_the_one_output_calibration(method, params, monkeypatch):
    """The auditor does not refute t = 9 outputs on the flip pair, and refutes them calibrated as for one output."""
    D, D2 = _flip_pair(4, 9)
    mech = LinearRegression(method=method, data_norm=1.0, label_bound=1.0, fit_intercept=False, reg_lambda=1.0)
    assert audit(mech, D, D2, params, n=20_000, rng=5).passed
    monkeypatch.setattr(lr, "_label_l2_sensitivity", lambda t: 2.0)
    original = lr._fm_sensitivity
    monkeypatch.setattr(lr, "_fm_sensitivity", lambda d, fit_intercept, t=1: original(d, fit_intercept, 1))
    report = audit(mech, D, D2, params, n=20_000, rng=5)
    assert not report.passed and report.epsilon_lower_bound > params.epsilon


def _params(method):
    return dp.Del(1.0, 1e-6) if method == "adassp" else dp.Eps(1.0)


def _adversarial_neighbours(d, t, rng):
    """Pairs of records (z, y), (z', y') at the bounds: flipped, orthogonal and random rows, labels at ±1."""
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    flat = np.full(d, 1.0 / np.sqrt(d))  # ‖z‖₁ = √d, the functional mechanism's worst row
    ones = np.ones(t)
    pairs = [
        ((flat, ones), (-flat, ones)),
        ((flat, ones), (-flat, -ones)),
        ((e1, ones), (e2, -ones)),
        ((e1, ones), (-e1, ones)),
        ((flat, ones), (e1, -ones)),
    ]
    for _ in range(20):
        z = rng.normal(size=(2, d))
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        signs = rng.choice([-1.0, 1.0], size=(2, t))
        pairs.append(((z[0], signs[0]), (z[1], signs[1])))
    return pairs


def _largest_move(mech, t, rng, n=40, d=4):
    """The largest change of the scaled statistics over adversarial replace-one neighbours (in the mechanism's norm)."""
    X = rng.uniform(-0.4, 0.4, size=(n, d))
    Y = rng.uniform(-1.0, 1.0, size=(n, t))
    worst = 0.0
    for (z, y), (z2, y2) in _adversarial_neighbours(d, t, rng):
        X1, Y1, X2, Y2 = X.copy(), Y.copy(), X.copy(), Y.copy()
        X1[0], Y1[0], X2[0], Y2[0] = z, y, z2, y2
        worst = max(worst, mech._norm(mech.statistics((X1, Y1)), mech.statistics((X2, Y2))))
    return worst


@pytest.mark.parametrize("t", [2, 5])
@pytest.mark.parametrize(("method", "fit_intercept", "reg_lambda"), CONFIGS)
def test_scaled_statistics_of_t_outputs_move_at_most_the_declared_sensitivity(method, fit_intercept, reg_lambda, t):
    """Grey box: on adversarial neighbours the scaled statistics of t outputs move by at most 1, the declared bound."""
    mech = LinearRegression(
        method=method, data_norm=1.0, label_bound=1.0, fit_intercept=fit_intercept, reg_lambda=reg_lambda
    )
    worst = _largest_move(mech, t, np.random.default_rng(t))
    assert worst <= 1.0 + 1e-9
    assert worst > 0.5  # the neighbours are adversarial: a large part of the budget is reached


@pytest.mark.parametrize("method", ["adassp", "functional"])
def test_the_one_output_sensitivity_would_be_exceeded_by_several_outputs(method, monkeypatch):
    """The grey-box check catches the bug of calibrating t outputs with the one-output sensitivity."""
    monkeypatch.setattr(lr, "_label_l2_sensitivity", lambda t: 2.0)
    original = lr._fm_sensitivity
    monkeypatch.setattr(lr, "_fm_sensitivity", lambda d, fit_intercept, t=1: original(d, fit_intercept, 1))
    mech = LinearRegression(method=method, data_norm=1.0, label_bound=1.0, fit_intercept=False, reg_lambda=0.5)
    assert _largest_move(mech, 5, np.random.default_rng(0)) > 1.2


@pytest.mark.parametrize(("method", "fit_intercept", "reg_lambda"), CONFIGS)
def test_one_output_column_releases_the_one_dimensional_model_bit_for_bit(method, fit_intercept, reg_lambda):
    """y of shape (n, 1) gives the same bits as the 1-D y for a seed, with scikit-learn's (1, d) layout."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=300)
    mech = LinearRegression(
        method=method, data_norm=3.0, label_bound=5.0, fit_intercept=fit_intercept, reg_lambda=reg_lambda
    )
    flat = mech.release_response(_params(method), (X, y), rng=7).response
    column = mech.release_response(_params(method), (X, y[:, None]), rng=7).response
    assert flat.coef.shape == (3,) and column.coef.shape == (1, 3)
    assert np.array_equal(column.coef[0], flat.coef)
    assert column.intercept.shape == (1,) and column.intercept[0] == flat.intercept


def test_several_outputs_are_released_in_one_response_with_one_charge():
    """Three outputs: one Response, coef of shape (t, d), one charge of (ε, δ), predictions of shape (n, t)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(20_000, 3))
    truth = np.array([[0.5, -0.3, 0.1], [-0.2, 0.4, 0.0], [0.0, 0.0, 0.6]])
    Y = X @ truth.T + [0.3, -0.1, 0.0] + rng.normal(0, 0.05, size=(20_000, 3))
    acc = dp.Accountant(budget=dp.Del(2.0, 1e-5))
    response = LinearRegression(data_norm=np.sqrt(3), label_bound=2.0).release_response(
        dp.Del(1.0, 1e-6), (X, Y), rng=3, accountant=acc
    )
    model = response.response
    assert model.coef.shape == (3, 3) and model.intercept.shape == (3,) and model.n_outputs == 3
    assert acc.spent.epsilon == pytest.approx(1.0, rel=1e-5)  # one charge, not t
    assert np.abs(model.coef - truth).max() < 0.1
    assert model.predict(X[:5]).shape == (5, 3)
    assert np.asarray(model).shape == (12,)


@pytest.mark.parametrize("method", ["adassp", "functional"])
def test_each_output_of_a_joint_fit_matches_its_own_fit_in_law_on_noise_free_data(method):
    """With ε large the joint release agrees with separate fits: the outputs are not mixed up."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(5_000, 2))
    Y = np.stack([X @ [0.5, -0.5], X @ [-0.25, 0.75] + 0.2], axis=1)
    mech = LinearRegression(method=method, data_norm=np.sqrt(2), label_bound=2.0)
    params = dp.Del(400.0, 1e-6) if method == "adassp" else dp.Eps(400.0)
    joint = mech.release_response(params, (X, Y), rng=5).response
    for j in range(2):
        alone = mech.release_response(params, (X, Y[:, j]), rng=6).response
        assert np.allclose(joint.coef[j], alone.coef, atol=2e-2)
        assert joint.intercept[j] == pytest.approx(alone.intercept, abs=2e-2)


@pytest.mark.parametrize("method", ["adassp", "functional"])
def test_per_output_label_bounds_equal_to_the_shared_bound_release_the_same_bits(method):
    """One (low, high) pair per output, all equal to the shared bound, gives the shared bound's release for a seed."""
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
    shared = LinearRegression(method=method, data_norm=3.0, label_bound=2.0)
    per_output = LinearRegression(method=method, data_norm=3.0, label_bound=[(-2.0, 2.0)] * 3)
    a = shared.release_response(_params(method), (X, Y), rng=8).response
    b = per_output.release_response(_params(method), (X, Y), rng=8).response
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.intercept, b.intercept)


def test_per_output_label_bounds_scale_each_output_back_to_its_own_units():
    """With bounds (-1, 1) and (0, 8) on y and 4y + 4 the second output's model is 4 times the first, plus 4."""
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(20_000, 2))
    y = X @ [0.3, -0.2]
    mech = LinearRegression(data_norm=np.sqrt(2), label_bound=np.array([[-1.0, 1.0], [0.0, 8.0]]))
    model = mech.release_response(dp.Del(400.0, 1e-6), (X, np.stack([y, 4 * y + 4], axis=1)), rng=9).response
    np.testing.assert_allclose(model.coef[1], 4 * model.coef[0], atol=2e-3)
    assert model.intercept[1] == pytest.approx(4 * model.intercept[0] + 4, abs=2e-3)


def test_per_output_label_bounds_must_match_the_number_of_outputs_before_any_charge():
    """Two pairs of bounds for three outputs is refused before the accountant is charged."""
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-5))
    mech = LinearRegression(data_norm=1.0, label_bound=[(-1, 1), (0, 2)])
    with pytest.raises(ValueError, match="2 per-output label bounds but y has 3 output"):
        mech.release_response(dp.Del(1.0, 1e-6), (np.zeros((5, 2)), np.zeros((5, 3))), accountant=acc)
    assert acc.spent.epsilon == 0.0
    with pytest.raises(ValueError, match="low < high"):
        LinearRegression(data_norm=1.0, label_bound=[(-1, 1), (2, 2)])
