"""ERM privacy at the edges: exactly clipped rows, the certified solver, and approximate-minimum noise."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

import diffpriv_py as dp
from diffpriv_py._fixed_point import clip_rows, row_norms
from diffpriv_py.estimators import SVM, LogisticRegression, _erm
from diffpriv_py.estimators.linear_models import build_problem
from diffpriv_py.testing import audit

P_ALARM = 1e-6  # statistical tests fail a correct implementation with probability below this
TINY = 5e-324


def _exact_square_norms(Z: np.ndarray) -> list[Fraction]:
    return [sum((Fraction(float(v)) ** 2 for v in row), Fraction(0)) for row in Z]


def _adversarial_rows(rng: np.random.Generator) -> np.ndarray:
    """Rows whose norms overflow, underflow, straddle zero, or sit on and just beyond the clipping sphere."""
    d = 4
    special = np.array(
        [
            [1e154, 1e154, -1e154, 1e154],
            [1.5e308, -1.5e308, 1e308, 0.0],
            [TINY, -TINY, TINY, 0.0],
            [1e-310, 2e-310, -3e-310, 4e-310],
            [1e-300, -1e-300, 1.0, -0.0],
            [-0.0, 0.0, -0.0, 0.0],
            [1.0, -1.0, 1.0, -1.0],
            [0.5, 0.5, 0.5, 0.5],
            [np.nextafter(0.5, 1.0), 0.5, 0.5, 0.5],
            [1e-8, 1.0, -1e-8, 0.0],
        ]
    )
    near = rng.normal(size=(400, d))
    near *= rng.uniform(0.999, 1.001, size=(400, 1)) / np.linalg.norm(near, axis=1, keepdims=True)
    far = rng.normal(size=(400, d)) * 10.0 ** rng.uniform(-300, 300, size=(400, 1))
    return np.vstack([special, near, far])


@pytest.mark.parametrize("data_norm", [1.0, 3.0, 1e-3, 1e250])
@pytest.mark.parametrize("intercept", [None, 0.25, 0.7, 1.0 - 2.0**-30])
def test_every_normalised_row_has_exact_norm_at_most_one_on_adversarial_rows(rng, data_norm, intercept):
    """Σ z² ≤ 1 in exact rational arithmetic for every row fed to the loss (1e154, 1e308, subnormals, the sphere)."""
    X = _adversarial_rows(rng)
    problem = build_problem(
        (X, np.arange(len(X)) % 2),
        data_norm=data_norm,
        fit_intercept=intercept is not None,
        classes=(0, 1),
        intercept_scaling=intercept or 0.25,
    )
    assert np.all(np.isfinite(problem.Z))
    assert max(_exact_square_norms(problem.Z)) <= 1
    if intercept is not None:
        assert np.all(problem.Z[:, -1] == intercept)


def test_the_old_unproven_clip_leaves_rows_above_norm_one_which_the_exact_check_catches(rng):
    """The check above has power: x·aR/max(‖x‖, R) in plain floats exceeds norm 1 on about half the clipped rows."""
    X = rng.normal(size=(300, 5))
    X *= 2.0 / np.linalg.norm(X, axis=1, keepdims=True)
    a = math.sqrt(1 - 0.25**2)
    naive = np.column_stack([X * (a / np.maximum(row_norms(X), 1.0))[:, None], np.full(300, 0.25)])
    assert sum(q > 1 for q in _exact_square_norms(naive)) > 50


def test_clip_rows_bounds_the_exact_norm_by_scale_times_bound_and_keeps_directions(rng):
    """clip_rows: exact norm ≤ scale·bound (real product), direction kept, relative shrink ≤ (4d + 20)u."""
    X = _adversarial_rows(rng)
    for bound, scale in ((1.0, 1.0), (3.0, 0.3), (0.7, 1 / 0.7), (1e-3, 7.0)):
        out = clip_rows(X, bound, scale)
        limit = (Fraction(scale) * Fraction(bound)) ** 2
        assert max(_exact_square_norms(out)) <= limit
        inside = np.all(np.abs(X) < 1e100, axis=1) & (np.linalg.norm(X, axis=1) > 1e-100)
        expected = X[inside] * (scale * bound / np.maximum(np.linalg.norm(X[inside], axis=1), bound))[:, None]
        np.testing.assert_allclose(out[inside], expected, rtol=(4 * 4 + 24) * 2.0**-53, atol=1e-300)


# ---- the certified solver ---------------------------------------------------------------------------------------


def _gradient_longdouble(Z, s, w, loss, reg, lin):
    """An independent gradient in extended precision (x87 80-bit where available) to check the certificate."""
    Zl, wl = Z.astype(np.longdouble), w.astype(np.longdouble)
    m = s * (Zl @ wl)
    if loss.name == "logistic":
        first = -1 / (1 + np.exp(m))
    else:
        h = loss.width
        first = np.where(m > 1 + h, 0, np.where(m < 1 - h, -1, -(1 + h - m) / (2 * h)))
    return Zl.T @ (s * first) / len(s) + reg * wl + lin.astype(np.longdouble)


def _adversarial_problems():
    """(name, Z, s, loss, reg, lin): separable data, tiny Λ, huge noise term, sharp Huber, near-zero rows."""
    rng = np.random.default_rng(12)
    cases = []
    n, d = 2000, 10
    X = rng.normal(size=(n, d))
    s = np.where(X[:, 0] > 0, 1.0, -1.0)  # separable with margin ~0
    Z = clip_rows(X, 4.0, 0.25)
    for reg in (1e-2, 1e-4, 1e-6, 1e-8):
        for loss in (_erm.LOGISTIC, _erm.HUBER, _erm.huber_loss(0.01)):
            cases.append((f"separable-{loss.name}{loss.width}-{reg:g}", Z, s, loss, reg, np.zeros(d)))
    far = clip_rows(rng.normal(size=(n, d)) * 1e200, 1.0, 1.0)  # every row on the sphere
    cases.append(("sphere-noisy", far, s, _erm.LOGISTIC, 1e-5, _erm.sample_gamma_ball(d, 2 / 0.01, rng) / n))
    tiny = clip_rows(rng.normal(size=(n, d)) * 1e-300, 1.0, 1.0)  # rows near 0
    cases.append(("tiny-rows", tiny, s, _erm.LOGISTIC, 1e-6, _erm.sample_gamma_ball(d, 2.0, rng) / n))
    hard = np.random.default_rng(3)
    hard.normal(size=(200, 5))
    X_hard = hard.normal(size=(5000, 30))  # measured: Newton needs > 200 steps here (sharp Huber, Λ = 1e-6)
    cases.append(
        (
            "separable-sharp-huber-hard",
            clip_rows(X_hard, 4.0, 0.25),
            np.where(X_hard[:, 0] > 0, 1.0, -1.0),
            _erm.huber_loss(0.01),
            1e-6,
            np.zeros(30),
        )
    )
    flipped = np.where(rng.random(n) < 0.5, s, -s)  # pure label noise
    cases.append(("label-noise", Z, flipped, _erm.HUBER, 1e-6, _erm.sample_gamma_ball(d, 2 / 0.1, rng) / n))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("case", _adversarial_problems(), ids=lambda c: c[0])
def test_newton_certifies_the_tolerance_on_adversarial_problems_without_the_fallback(case, monkeypatch):
    """Separable data, Λ down to 1e-8, c up to 50, rows on the sphere or near 0: certified by Newton; an
    independent extended-precision gradient confirms ‖∇J‖ ≤ τ."""
    _, Z, s, loss, reg, lin = case

    def no_fallback(*args):
        raise AssertionError("the fallback was needed")

    monkeypatch.setattr(_erm, "_accelerated_fallback", no_fallback)
    w = _erm.minimise(Z, s, loss, reg, lin=lin)
    tol = _erm.gradient_tolerance(Z.shape[0], loss.curvature)
    assert float(np.linalg.norm(_gradient_longdouble(Z, s, w, loss, reg, lin))) <= tol
    _, bound = _erm.certified_gradient(Z, s, loss, reg, lin, w, s * (Z @ w))
    assert bound <= tol


def test_certified_bound_covers_the_true_gradient_and_is_far_below_the_tolerance(rng):
    """At random points the certificate is ≥ the extended-precision gradient norm, and its allowance is < τ/100."""
    Z = clip_rows(rng.normal(size=(5000, 8)), 3.0, 1 / 3.0)
    s = np.where(rng.random(5000) < 0.5, 1.0, -1.0)
    lin = _erm.sample_gamma_ball(8, 20.0, rng) / 5000
    for loss in (_erm.LOGISTIC, _erm.HUBER):
        for scale in (1e-3, 1.0, 30.0):
            w = rng.normal(size=8) * scale
            grad, bound = _erm.certified_gradient(Z, s, loss, 1e-4, lin, w, s * (Z @ w))
            exact = float(np.linalg.norm(_gradient_longdouble(Z, s, w, loss, 1e-4, lin)))
            assert exact <= bound
            allowance = bound - float(np.linalg.norm(grad))
            assert 0 < allowance < _erm.gradient_tolerance(5000, loss.curvature) / 100


def test_block_sums_match_the_plain_product_and_report_the_tree_depth(rng):
    """The blocked Zᵀv agrees with BLAS to rounding; depth is 1 + ⌈log₂₅₆(n/256)⌉ levels."""
    for n, depth in ((10, 1), (256, 2), (5000, 2), (70_000, 3)):
        Z, v = rng.normal(size=(n, 3)), rng.normal(size=n)
        total, got = _erm._block_sums(Z, v)
        np.testing.assert_allclose(total, Z.T @ v, rtol=1e-10, atol=1e-10 * n)
        assert got == depth


def test_the_fallback_alone_certifies_within_its_step_count_and_never_returns_an_uncertified_point(rng):
    """Accelerated gradient from a far start returns a certified point (within τ/Λ of the minimiser) within
    fallback_steps; with a certificate that never holds it raises CertificationError instead of returning the last
    iterate (whose bound would hold only in exact arithmetic). Old contract: the uncertified iterate was returned."""
    Z = clip_rows(rng.normal(size=(300, 3)), 2.0, 0.5)
    s = np.where(Z[:, 0] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
    reg = 0.05
    exact = _erm.minimise(Z, s, _erm.LOGISTIC, reg)
    start = np.full(3, 5.0)
    _, start_bound = _erm.certified_gradient(Z, s, _erm.LOGISTIC, reg, np.zeros(3), start, s * (Z @ start))
    tol = _erm.gradient_tolerance(300, 0.25)
    calls = []

    def counted(w, margins):
        calls.append(1)
        return _erm.certified_gradient(Z, s, _erm.LOGISTIC, reg, np.zeros(3), w, margins, tol)

    y = _erm._accelerated_fallback(Z, s, _erm.LOGISTIC, reg, np.zeros(3), start, start_bound, counted)
    assert counted(y, s * (Z @ y))[1] <= tol
    assert len(calls) - 1 <= _erm.fallback_steps(300, 0.25, reg, 0.0, start_bound=start_bound) + 1
    assert np.linalg.norm(y - exact) <= tol / reg

    def never_certified(w, margins):
        grad, _ = _erm.certified_gradient(Z, s, _erm.LOGISTIC, reg, np.zeros(3), w, margins)
        return grad, math.inf

    with pytest.raises(dp.exceptions.CertificationError, match="could not be certified"):
        _erm._accelerated_fallback(Z, s, _erm.LOGISTIC, reg, np.zeros(3), start, start_bound, never_certified)


def test_a_regulariser_too_small_for_a_bounded_solve_is_refused_from_public_sizes_only():
    """Λ = 1e-13: the fallback's worst-case step count (n, c, Λ, ‖b‖ only) exceeds the cap; ValueError, no solve."""
    Z = np.full((10, 2), 0.5)
    with pytest.raises(ValueError, match="reg_lambda"):
        _erm.minimise(Z, np.ones(10), _erm.LOGISTIC, 1e-13)
    assert _erm.fallback_steps(10, 0.25, 1e-13, 0.0) > _erm.MAX_FALLBACK_STEPS
    assert _erm.fallback_steps(10, 0.25, 1e-8, 0.0) < _erm.MAX_FALLBACK_STEPS


# ---- approximate-minimum noise ---------------------------------------------------------------------------------


def _capture(monkeypatch, zero_noise: bool):
    solved, noise_args = [], []
    real_minimise, real_noise = _erm.minimise, _erm.solver_noise

    def minimise(*args, **kwargs):
        solved.append(real_minimise(*args, **kwargs))
        return solved[-1]

    def noise(dim, radius, epsilon, rng):
        noise_args.append((dim, radius, epsilon))
        return np.zeros(dim) if zero_noise else real_noise(dim, radius, epsilon, rng)

    monkeypatch.setattr(_erm, "minimise", minimise)
    monkeypatch.setattr(_erm, "solver_noise", noise)
    return solved, noise_args


def test_with_the_solver_noise_off_the_release_is_the_certified_solver_point(rng, monkeypatch):
    """Objective perturbation = round(θ̂ + η): with η mocked to 0 it is the solver's θ̂; r = τ/(Λ + Δ), ε₂ = 0.01ε."""
    solved, noise_args = _capture(monkeypatch, zero_noise=True)
    n, d, reg, eps = 200, 3, 0.01, 2.0
    X = rng.normal(size=(n, d)) / 3
    y = (X[:, 0] > 0).astype(int)
    mech = LogisticRegression(reg, data_norm=1.0, fit_intercept=False, classes=[0, 1], radius_share=0.0)
    w = mech.release_response(dp.Eps(eps), (X, y), rng=4).response.coef[0]
    eps1 = (eps - 0.01 * eps) * (1 - 2.0**-40)
    eps_prime, extra = _erm.objective_perturbation_budget(eps1, n, reg, 0.25)
    assert noise_args == [(d, _erm.gradient_tolerance(n, 0.25) / (reg + extra), 0.01 * eps)]
    np.testing.assert_array_equal(w, _erm.round_to_grid(solved[0], 2.0 / (eps_prime * n * (reg + extra))))


def test_solver_noise_is_a_gamma_ball_at_twice_the_radius_over_epsilon_two(rng, monkeypatch):
    """Release − θ̂ has ‖·‖ ~ Gamma(p, 2r/ε₂) (up to the 2⁻⁴⁰ grid); half that scale is refuted."""
    solved, noise_args = _capture(monkeypatch, zero_noise=False)
    n, d, reg, eps = 40, 2, 0.1, 1.0
    X = rng.normal(size=(n, d)) / 2
    y = (X[:, 0] > 0).astype(int)
    mech = SVM(reg, data_norm=1.0, fit_intercept=False, classes=[0, 1])
    norms = []
    for seed in range(300):
        w = mech.release_response(dp.Eps(eps), (X, y), rng=seed).response.coef[0]
        norms.append(np.linalg.norm(w - solved[-1]))
    (_, radius, eps2) = noise_args[0]
    scale = 2 * radius / eps2
    assert sps.kstest(norms, sps.gamma(d, scale=scale).cdf).pvalue > P_ALARM
    assert sps.kstest(norms, sps.gamma(d, scale=scale / 2).cdf).pvalue < P_ALARM


def test_response_and_accountant_record_the_whole_epsilon(rng):
    """ε₁ + ε₂ = ε is what is recorded: Response.privacy_params and the accountant's spend are Eps(ε)."""
    X = rng.normal(size=(100, 2)) / 2
    y = (X[:, 0] > 0).astype(int)

    class Recorder:
        def __init__(self):
            self.calls = []

        def spend(self, guarantee, **kwargs):
            self.calls.append(guarantee)

    for perturbation in ("objective", "output"):
        recorder, acc = Recorder(), dp.Accountant(budget=dp.Eps(3.0))
        mech = SVM(0.1, perturbation=perturbation, data_norm=1.0, classes=[0, 1])
        r = mech.release_response(dp.Eps(1.0), (X, y), rng=0, accountant=recorder)
        assert r.privacy_params == dp.Eps(1.0) and recorder.calls == [dp.Eps(1.0)]
        mech.release_response(dp.Eps(1.0), (X, y), rng=0, accountant=acc)
        assert acc.spent.epsilon == pytest.approx(1.0, rel=1e-15)  # the accountant rounds its sums upward


def test_public_checks_refuse_before_the_charge(rng):
    """A misshapen dataset costs nothing: the accountant is untouched."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    mech = LogisticRegression(0.1, data_norm=1.0, classes=[0, 1])
    with pytest.raises((ValueError, TypeError)):
        mech.release_response(dp.Eps(1.0), (np.ones((5, 2)), np.zeros(4)), rng=0, accountant=acc)
    assert acc.remaining == dp.Eps(1.0)


@pytest.mark.slow
def test_audit_of_the_worst_case_pair_passes_with_the_solver_noise():
    """The Huber worst-case neighbours (f* moves by exactly 2/(nΛ)): the auditor does not refute ε = 1."""
    X = np.ones((10, 1))
    y = np.array([1] * 5 + [0] * 5)
    y2 = y.copy()
    y2[0] = 0
    mech = SVM(1.0, perturbation="objective", data_norm=1.0, fit_intercept=False, classes=[0, 1])
    report = audit(mech, (X, y), (X.copy(), y2), dp.Eps(1.0), n=2000, rng=3)
    assert report.passed


# ---- issue 23: no uncertified path -------------------------------------------------------------------------------


def _sparse_problem(n: int, p: int, rng: np.random.Generator):
    """Rows with 2 informative features and p − 2 features zero in every row, an intercept, and a noise term like
    objective perturbation's: the weights on the zero features are −lin/Λ, set by the noise alone."""
    X = np.zeros((n, p))
    X[:, :2] = rng.normal(size=(n, 2))
    s = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    Z = np.column_stack([clip_rows(X, 3.0, math.sqrt(1 - 0.25**2) / 3.0), np.full(n, 0.25)])
    lin = _erm.sample_gamma_ball(p + 1, 2.0 / 0.5, rng) / n
    return Z, s, lin


def test_weights_on_all_zero_features_do_not_inflate_the_certificate(rng):
    """At the minimiser of the sparse problem (‖w‖ ≈ 10⁴, all but 3 coordinates set by the noise term) the
    certificate is ≤ τ: a zero entry of a row adds no rounding to its margin. The old global bound c·γ_p‖w‖ was
    about 10× τ here, so Newton could never certify (the issue's case)."""
    Z, s, lin = _sparse_problem(300, 2000, rng)
    reg, active = 1e-4, [0, 1, 2000]
    lin[active] = 0.0  # margins of moderate size (a large noise term there saturates them, which hides the bug)
    tol = _erm.gradient_tolerance(300, 0.25)
    w = -lin / reg  # exact minimiser in the zero directions (up to one rounding)
    w[active] = _erm.minimise(Z[:, active], s, _erm.LOGISTIC, reg, lin=lin[active])
    assert _erm.LOGISTIC.curvature * _erm._gamma(2001) * np.linalg.norm(w) > 5 * tol  # the old bound could not
    _, bound = _erm.certified_gradient(Z, s, _erm.LOGISTIC, reg, lin, w, s * (Z @ w), tol)
    assert bound <= tol
    assert float(np.linalg.norm(_gradient_longdouble(Z, s, w, _erm.LOGISTIC, reg, lin))) <= bound


def _no_fallback(*args):
    raise AssertionError("the fallback was needed")


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [LogisticRegression, SVM])
def test_issue_case_sparse_n_equals_p_2000_is_certified_by_newton_without_the_fallback(estimator, monkeypatch):
    """The issue's case: n = p = 2000, 1998 all-zero features, Λ = 1e-4, objective perturbation. Before: Newton ran
    its 1000 steps and the uncertified fallback followed (95 s measured); now Newton certifies (about 1 s)."""
    monkeypatch.setattr(_erm, "_accelerated_fallback", _no_fallback)
    rng = np.random.default_rng(0)
    X = np.zeros((2000, 2000))
    X[:, :2] = rng.normal(size=(2000, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=2000) > 0).astype(int)
    model = estimator(1e-4, data_norm=3.0, classes=[0, 1]).release_response(dp.Eps(1.0), (X, y), rng=1).response
    assert np.all(np.isfinite(np.asarray(model)))


def _uncertifiable_problem(rng: np.random.Generator, reg: float = 1e-8):
    """Rows on the line (1, 1)/√2 and a noise term along (1, −1): w* = −lin/reg is huge (‖w*‖ ≈ 10⁸) on a direction
    every margin cancels, margins sit near ℓ'' = 1/4, and the proven margin error γ₂·|z|ᵀ|w| ≈ 10⁻⁸ is 100× τ, so
    no float point near w* can be certified (the computed gradient stalls near 3·10⁻⁹, below that allowance)."""
    a = rng.uniform(-1.0, 1.0, size=200)
    Z = np.column_stack([a, a]) / math.sqrt(2.0) * (1 - 1e-15)
    s = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    return Z, s, np.array([1.0, -1.0]), reg


def test_a_problem_no_float_point_can_certify_fails_closed_within_a_few_steps(rng, monkeypatch):
    """CertificationError (nothing released) after _FLOOR_STEPS iterates at the rounding floor, neither the 1000
    Newton steps nor the fallback's budget. Old contract: the fallback's last iterate was returned uncertified."""
    Z, s, lin, reg = _uncertifiable_problem(rng)
    calls = []
    real = _erm.certified_gradient
    monkeypatch.setattr(_erm, "certified_gradient", lambda *a, **k: calls.append(1) or real(*a, **k))
    with pytest.raises(dp.exceptions.CertificationError, match="could not be certified"):
        _erm.minimise(Z, s, _erm.LOGISTIC, reg, lin=lin)
    assert len(calls) <= 2 * _erm._FLOOR_STEPS + 2


def test_the_fallback_never_returns_an_uncertified_point_even_when_newton_is_capped(rng, monkeypatch):
    """Newton capped at one step on the uncertifiable problem: the fallback runs and raises instead of returning."""
    monkeypatch.setattr(_erm, "_MAX_NEWTON_STEPS", 1)
    Z, s, lin, reg = _uncertifiable_problem(rng)
    with pytest.raises(dp.exceptions.CertificationError):
        _erm.minimise(Z, s, _erm.LOGISTIC, reg, lin=lin)


@pytest.mark.parametrize("perturbation", ["output", "objective"])
def test_a_regulariser_too_small_to_certify_is_refused_before_the_charge_when_classes_are_given(rng, perturbation):
    """With classes= the number of problems K is public, so each problem's Λ (+ Δ at ε/K) is too: refused before the
    accountant is charged. Objective perturbation's Δ lifts Λ + Δ to c/(n(e^{ε/4} − 1)) at this n, so only a huge n
    with ε' > 0 could be refused there: its check is run (and passes) on the same path."""
    X = rng.normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    for classes in ([0, 1], [0, 1, 2]):
        for reg_lambda in (1e-13, (1e-2, 1e-13)):
            acc = dp.Accountant(budget=dp.Eps(1.0))
            mech = LogisticRegression(reg_lambda, perturbation=perturbation, data_norm=1.0, classes=classes)
            if perturbation == "objective":
                mech.release_response(dp.Eps(1.0), (X, y), rng=0, accountant=acc)
                continue
            with pytest.raises(ValueError, match="too small to certify"):
                mech.release_response(dp.Eps(1.0), (X, y), rng=0, accountant=acc)
            assert acc.remaining == dp.Eps(1.0)


def test_public_check_matches_the_solvers_own_refusal_at_the_boundary():
    """The pre-charge check is the solver's check at ‖b‖ = 0: same verdict on each side of the threshold."""
    for reg in (1e-12, 3e-12, 1e-11, 1e-10):
        public_ok = _erm.fallback_steps(1000, 0.25, reg, 0.0) <= _erm.MAX_FALLBACK_STEPS
        try:
            _erm.check_certifiable(1000, 0.25, reg)
            refused = False
        except ValueError:
            refused = True
        assert refused != public_ok


@pytest.mark.parametrize("loss", [_erm.LOGISTIC, _erm.HUBER, _erm.huber_loss(0.01)], ids=lambda l: f"{l.name}{l.width}")
@pytest.mark.parametrize("active_scale", [1.0, 30.0, 1e4])
def test_the_per_record_certificate_still_covers_the_true_gradient_where_it_is_used(rng, loss, active_scale):
    """Points built to be near-stationary (lin cancels the gradient), with weights of 10⁵ on zero features and
    moderate to huge weights on the used ones, so the per-record refinement is what decides: the certificate is ≥
    the extended-precision gradient norm every time (a bound below the truth would be a privacy bug)."""
    n, p = 400, 300
    Z = np.zeros((n, p))
    Z[:, :4] = clip_rows(rng.normal(size=(n, 4)), 2.0, 0.5)
    s = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    reg, tol = 1e-4, _erm.gradient_tolerance(n, loss.curvature)
    refined = 0
    for _ in range(5):
        w = rng.normal(size=p) * 1e5
        w[:4] = rng.normal(size=4) * active_scale
        lin = np.asarray(-_gradient_longdouble(Z, s, w, loss, reg, np.zeros(p)), dtype=np.float64)  # ∇J(w) ≈ 0
        margins = s * (Z @ w)
        _, bound = _erm.certified_gradient(Z, s, loss, reg, lin, w, margins, tol)
        _, crude = _erm.certified_gradient(Z, s, loss, reg, lin, w, margins, 0.0)  # 0: no refinement
        exact = float(np.linalg.norm(_gradient_longdouble(Z, s, w, loss, reg, lin)))
        assert exact <= bound <= crude
        refined += bound < crude
    assert refined == 5  # the global γ_p‖w‖ term (‖w‖ ≈ 2·10⁶) is far above τ: the refinement decided each time
