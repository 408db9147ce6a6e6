"""The private clipping radius of LogisticRegression (``radius_share``): budget split, the exponential mechanism's
calibration, its sensitivity on adversarial neighbours, rows still in the unit ball, and the mutants each catches."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

import diffpriv_py as dp
from diffpriv_py.estimators import SVM, LogisticRegression, _erm, linear_models
from diffpriv_py.estimators.linear_models import RADIUS_GRID, build_problem, radius_scores

P_ALARM = 1e-6


def _deep_rows(rng, n=400, d=5):
    """Rows deep inside the unit ball (norms about 0.2-0.4), two classes split by the first feature."""
    X = rng.uniform(0.0, 1.0, size=(n, d)) / (2.5 * math.sqrt(d))
    y = (X[:, 0] + 0.02 * rng.normal(size=n) > np.median(X[:, 0])).astype(int)
    return X, y


def test_the_budget_split_is_public_and_never_exceeds_epsilon():
    mech = LogisticRegression(data_norm=1.0, classes=[0, 1])
    for n, eps in [(398, 0.5), (398, 1.0), (10**6, 3.0), (360, 0.5)]:
        radius, fit = mech._radius_split(n, eps)
        assert radius == 0.1 * eps and fit < eps - radius and radius + fit <= eps
    # Too few records for an informative choice (ε_ρ(n − k)/2 < ln 13 + 4): the whole ε goes to the fit.
    assert mech._radius_split(20, 1.0) == (0.0, 1.0) and mech._radius_split(100, 0.5) == (0.0, 0.5)
    assert SVM(data_norm=1.0, classes=[0, 1])._radius_split(398, 1.0) == (0.0, 1.0)  # SVM: off by default


def test_the_fit_runs_at_the_remaining_epsilon(rng, monkeypatch):
    """Objective perturbation gets ε_fit = 0.9ε (rounded down), not ε: the radius' share is not spent twice."""
    X, y = _deep_rows(rng)
    seen = []
    real = _erm.objective_perturbation

    def spy(Z, s, loss, reg, epsilon, sensitivity, rng):
        seen.append(epsilon)
        return real(Z, s, loss, reg, epsilon, sensitivity, rng)

    monkeypatch.setattr(_erm, "objective_perturbation", spy)
    response = LogisticRegression(data_norm=1.0, classes=[0, 1]).release_response(dp.Eps(1.0), (X, y), rng=0)
    assert seen == [(1.0 - 0.1) * (1.0 - 2.0**-40)] and response.privacy_params.epsilon == 1.0


def test_scores_follow_the_formula_and_change_by_at_most_one_on_adversarial_neighbours(rng):
    """−|#{‖x‖ ≤ ρ} − (n − k)| with k = min(n/4, 100/ε); replacing a row at the largest norm by a zero row (or one
    exactly on a candidate radius by one just outside the largest) moves every count by at most 1."""
    X, _ = _deep_rows(rng, n=400)
    bound = 0.75
    radii, score = radius_scores(X, bound, 1.0)
    norms = np.linalg.norm(X, axis=1)
    expected = [-abs(np.count_nonzero(norms <= bound * g) - (400 - 100)) for g in RADIUS_GRID]
    np.testing.assert_array_equal(score, expected)
    np.testing.assert_array_equal(radii, [bound * g for g in RADIUS_GRID])
    assert radius_scores(X, bound, 0.1)[1].tolist() == [
        -abs(np.count_nonzero(norms <= bound * g) - 300) for g in RADIUS_GRID
    ]  # k capped at n/4
    for i in (int(np.argmax(norms)), int(np.argmin(norms))):
        for row in (np.zeros(5), X[i] * (bound * RADIUS_GRID[4] / norms[i]), np.full(5, bound / math.sqrt(5))):
            X2 = X.copy()
            X2[i] = row
            assert np.max(np.abs(radius_scores(X2, bound, 1.0)[1] - score)) <= 1


def test_the_choice_is_the_exponential_mechanism_at_epsilon_share(rng):
    """Frequencies of the chosen radius over 6000 releases of the radius step follow exp(ε_ρ·score/2); the mutant
    exp(ε_ρ·score) (sensitivity ½, a privacy bug) is rejected."""
    X, y = _deep_rows(rng, n=400)
    mech = LogisticRegression(data_norm=1.0, classes=[0, 1])
    problem = build_problem((X, y), data_norm=1.0, fit_intercept=True, classes=(0, 1), intercept_scaling=0.5)
    eps = 0.5
    eps_radius = mech._radius_split(problem.n, eps)[0]
    bound = linear_models._feature_norm(0.5)
    radii, score = radius_scores(problem.Z[:, :-1], bound, eps)
    gen = np.random.default_rng(3)
    draws = 6000
    chosen = np.zeros(len(radii))
    for _ in range(draws):
        scale = mech._private_radius(problem, eps_radius, eps, gen).feature_scale / problem.feature_scale
        k = 0 if scale == 1.0 else int(np.argmin(np.abs(radii * scale - bound)))
        chosen[k] += 1

    def p_value(factor):
        w = np.exp(factor * eps_radius * (score - score.max()) / 2.0)
        expected = draws * w / w.sum()
        keep = expected > 5
        obs = np.append(chosen[keep], chosen[~keep].sum())
        exp_ = np.append(expected[keep], expected[~keep].sum())
        obs, exp_ = obs[exp_ > 0], exp_[exp_ > 0]
        return sps.chisquare(obs, exp_ * obs.sum() / exp_.sum()).pvalue

    assert p_value(1.0) > P_ALARM
    assert p_value(2.0) < P_ALARM


def test_rescaled_rows_stay_in_the_unit_ball_exactly_and_the_model_maps_back(rng):
    """After the radius step every row has Σz² ≤ 1 in exact rationals, and the released coefficients predict with
    the features as given (coef = a·f·w_x/R): the decision on an unclipped row equals wᵀz."""
    X, y = _deep_rows(rng, n=400)
    X[0] *= 50.0  # one row beyond data_norm: clipped twice
    mech = LogisticRegression(data_norm=1.0, classes=[0, 1])
    problem = build_problem((X, y), data_norm=1.0, fit_intercept=True, classes=(0, 1), intercept_scaling=0.5)
    gen = np.random.default_rng(0)
    scaled = [mech._private_radius(problem, 0.1 * 5.0, 5.0, gen) for _ in range(20)]
    assert any(p.feature_scale > 2.0 * problem.feature_scale for p in scaled)  # the radius shrank here
    for p in scaled:
        for row in p.Z:
            assert sum(Fraction(float(v)) ** 2 for v in row) <= 1
        assert np.all(p.Z[:, -1] == 0.5)
        ratio = p.feature_scale / problem.feature_scale
        inside = np.linalg.norm(problem.Z[:, :-1], axis=1) * ratio <= linear_models._feature_norm(0.5) * 0.999
        np.testing.assert_allclose(p.Z[inside, :-1], X[inside] * p.feature_scale, rtol=1e-12)


def test_sampling_is_refused_while_the_radius_is_private(rng):
    mech = LogisticRegression(0.1, perturbation="output", data_norm=1.0, classes=[0, 1])
    with pytest.raises(TypeError, match="radius_share"):
        mech.sensitivity_sampler(lambda n, rng: _deep_rows(rng, n=n), n=50, m=10, gamma=0.1)


@pytest.mark.parametrize("value", [-0.1, 1.0, math.nan, "0.1"])
def test_a_bad_radius_share_is_refused_with_its_name(value):
    with pytest.raises((ValueError, TypeError), match="radius_share"):
        LogisticRegression(data_norm=1.0, radius_share=value)


def test_rows_deep_in_the_ball_are_fitted_better_than_with_data_norm_alone(rng):
    """A small-n task with rows at norms 0.2-0.4 of data_norm: the default beats radius_share=0 on 20 seeds."""
    X, y = _deep_rows(rng, n=400)
    Xt, yt = _deep_rows(np.random.default_rng(99), n=2000)

    def accuracy(**kw):
        mech = LogisticRegression(data_norm=1.0, classes=[0, 1], **kw)
        return np.mean(
            [np.mean(mech.release_response(dp.Eps(1.0), (X, y), rng=s).response.predict(Xt) == yt) for s in range(20)]
        )

    assert accuracy() > accuracy(radius_share=0.0) + 0.05


def test_below_the_public_condition_the_release_is_the_one_without_the_radius(rng):
    """n·ε too small for an informative choice: no budget is spent on the radius, bit-for-bit the radius_share=0
    release (the decision reads n and ε only, never the rows)."""
    X, y = _deep_rows(rng, n=60)
    on = LogisticRegression(data_norm=1.0, classes=[0, 1])
    off = LogisticRegression(data_norm=1.0, classes=[0, 1], radius_share=0.0)
    assert on._radius_split(60, 1.0) == (0.0, 1.0)
    a = np.asarray(on.release_response(dp.Eps(1.0), (X, y), rng=7).response)
    b = np.asarray(off.release_response(dp.Eps(1.0), (X, y), rng=7).response)
    np.testing.assert_array_equal(a, b)
