"""Bernstein mechanism: R's test_bernstein.R mechanism cases ported, calibration Δ·(k+1)^d/ε, norm, sampler, release."""

import math
import pickle

import attrs
import numpy as np
import pytest
from scipy import stats

import diffpriv_py as dp
from diffpriv_py.approximation import BernsteinApproximation
from diffpriv_py.exceptions import SensitivityError, TargetOutputError
from diffpriv_py.testing import MechCase, audit, parametrize_with_checks


def r_target(X):
    """R's test target: the data are ignored and xs[1]·sin(10·xs[2]) is returned."""
    return lambda xs: xs[0] * np.sin(xs[1] * 10)


def kde_target(X, bandwidth=0.1):
    """A Gaussian kernel density estimate of 1-D data, vectorised over query points."""
    X = np.asarray(X, dtype=float)
    norm = 1.0 / (X.size * bandwidth * math.sqrt(2 * math.pi))
    return lambda y: norm * np.exp(-0.5 * ((np.asarray(y)[..., None] - X) / bandwidth) ** 2).sum(axis=-1)


# ---- R: construction ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"lattice_k": 1.2, "dims": 2}, TypeError, "'lattice_k'.*integer"),
        ({"lattice_k": 0, "dims": 2}, ValueError, "'lattice_k'.*integer"),
        ({"dims": 1.2, "lattice_k": 2}, TypeError, "'dims'.*integer"),
        ({"dims": 0, "lattice_k": 2}, ValueError, "'dims'.*integer"),
        ({"dims": 1, "lattice_k": 2, "order": 0}, ValueError, "'order'"),
        ({"dims": 1, "lattice_k": 2, "vectorized": "yes"}, TypeError, "vectorized"),
        ({"dims": 2, "lattice_k": 2, "bounds": (0, [1, 2, 3])}, ValueError, "one entry per dimension"),
        ({"dims": 1, "lattice_k": 2, "sensitivity": -1}, ValueError, "sensitivity"),
        ({"dims": 1, "lattice_k": 2, "sensitivity": math.nan}, ValueError, "sensitivity"),
        ({"dims": 6, "lattice_k": 50}, ValueError, "exponentially"),
        ({"dims": 1, "lattice_k": 2, "noise": "fast"}, ValueError, "noise"),
    ],
)
def test_invalid_settings_are_refused(kwargs, error, match):
    """R's validity: latticeK and dims positive integers (1.2 and 0 fail); plus order, vectorized, bounds, Δ."""
    with pytest.raises(error, match=match):
        dp.Bernstein(target=r_target, **kwargs)


def test_lattice_k_and_dims_are_required():
    """R's defaults are 'invalid' NA; here leaving them out is a TypeError at construction."""
    with pytest.raises(TypeError):
        dp.Bernstein(target=r_target, dims=1)
    with pytest.raises(TypeError):
        dp.Bernstein(target=r_target, lattice_k=3)


def test_repr_shows_the_mechanism_and_its_settings():
    """R's show() prints 'Bernstein mechanism', sensitivity, gamma, lattice resolution and dimension."""
    text = repr(dp.Bernstein(target=r_target, lattice_k=5, dims=2))
    assert "Bernstein" in text and "lattice_k=5" in text and "dims=2" in text and "sensitivity=inf" in text


def test_r_alias_is_the_same_class():
    """DPMechBernstein is Bernstein, and bernstein is exported at top level."""
    assert dp.DPMechBernstein is dp.Bernstein
    assert dp.bernstein is dp.approximation.bernstein


# ---- R: release ------------------------------------------------------------------------------------------------


def test_release_refuses_a_target_that_does_not_return_a_function():
    """R: a target returning data (not a function) errors with 'not a function'."""
    mech = dp.Bernstein(target=lambda X: X, lattice_k=5, dims=2, sensitivity=1)
    with pytest.raises(TargetOutputError, match="not a function"):
        mech.release_response(dp.Eps(1), np.random.default_rng(0).normal(size=2), rng=0)


def test_release_returns_a_callable_private_function():
    """R: the response is a function giving length 1 at (0.5, 0.5) and length 2 on a 2×2 matrix."""
    mech = dp.Bernstein(target=r_target, lattice_k=5, dims=2, sensitivity=1)
    r = mech.release_response(dp.Eps(1), np.zeros(2), rng=0)
    assert callable(r.response) and isinstance(r.response, BernsteinApproximation)
    assert isinstance(r.response([0.5, 0.5]), float)
    assert r.response(np.arange(1, 5).reshape(2, 2, order="F") / 4).shape == (2,)
    assert r.privacy_params == dp.Eps(1) and r.sensitivity == 1 and r.mechanism is mech


def test_release_refuses_an_unset_sensitivity():
    """Δ = inf (the default) never releases: a clear SensitivityError instead of R's NaN."""
    mech = dp.Bernstein(target=r_target, lattice_k=5, dims=2)
    with pytest.raises(SensitivityError, match="sensitivity_sampler"):
        mech.release_response(dp.Eps(1), [0.0], rng=0)


def test_release_refuses_non_finite_function_values():
    """A function that is NaN somewhere on the lattice cannot be released."""
    mech = dp.Bernstein(target=lambda X: lambda y: math.inf if y == 0 else y, lattice_k=4, dims=1, sensitivity=1)
    with pytest.raises(TargetOutputError, match="non-finite"):
        mech.release_response(dp.Eps(1), [0.0], rng=0)


def test_release_refuses_functions_returning_non_numbers():
    """Each lattice value must be one real number; the message names the target's function."""
    mech = dp.Bernstein(target=lambda X: lambda y: "high", lattice_k=4, dims=1, sensitivity=1)
    with pytest.raises(TargetOutputError, match="returned by the target"):
        mech.release_response(dp.Eps(1), [0.0], rng=0)


def test_release_refuses_wrong_privacy_parameters():
    """privacy_params must be an Eps (or subclass)."""
    mech = dp.Bernstein(target=r_target, lattice_k=2, dims=2, sensitivity=1)
    with pytest.raises(TypeError, match="Eps"):
        mech.release_response(1.0, [0.0], rng=0)


# ---- R: sensitivity norm ----------------------------------------------------------------------------------------


def test_sensitivity_norm_refuses_a_target_that_does_not_return_a_function():
    """R: sensitivityNorm errors with 'not a function' when the target returns a number."""
    mech = dp.Bernstein(target=lambda D: 2, lattice_k=10, dims=1)
    with pytest.raises(TargetOutputError, match="not a function"):
        mech.sensitivity_norm(1, 2)


def test_sensitivity_norm_is_the_sup_over_the_lattice():
    """R: D·x·sin(10x) at X1 = 1, X2 = 2 lies in [0, |X2 − X1|]; exactly max_ν |ν/k·sin(10ν/k)|."""
    mech = dp.Bernstein(target=lambda D: lambda x: D * (x * math.sin(x * 10)), lattice_k=10, dims=1)
    r = mech.sensitivity_norm(1, 2)
    assert 0 <= r <= 1
    assert r == pytest.approx(max(abs(v / 10 * math.sin(v)) for v in range(11)), abs=1e-15)


def test_sensitivity_norm_ignores_differences_between_lattice_points():
    """Two functions equal on the lattice (k = 2) but not between have norm 0: only lattice values are released."""
    mech = dp.Bernstein(target=lambda D: lambda x: D * math.sin(2 * math.pi * x), lattice_k=2, dims=1)
    assert mech.sensitivity_norm(1.0, 5.0) == pytest.approx(0.0, abs=1e-15)


# ---- calibration -----------------------------------------------------------------------------------------------


def test_noise_scale_is_sensitivity_times_lattice_size_over_epsilon():
    """b = Δ·(k + 1)^d/ε (Aldà & Rubinstein 2017; R's scale)."""
    mech = dp.Bernstein(target=r_target, lattice_k=4, dims=2, sensitivity=0.3)
    assert mech.n_coefficients == 25
    assert mech.noise_scale(dp.Eps(2.0)) == pytest.approx(0.3 * 25 / 2.0)


@pytest.mark.parametrize("noise", ["safe", "exact", "float"])
def test_noise_is_drawn_through_the_laplace_mechanism(noise):
    """Same seed, same draws as dp.Laplace with Δ·(k + 1)^d on the lattice vector: Bernstein inherits its sampler."""
    mech = dp.Bernstein(target=kde_target, lattice_k=6, dims=1, sensitivity=0.05, noise=noise)
    X = np.linspace(0, 1, 20)
    released = mech.release_response(dp.Eps(0.7), X, rng=11).response
    values = dp.bernstein(kde_target(X), dims=1, k=6).coeffs
    laplace = dp.Laplace(target=lambda v: v, sensitivity=0.05 * 7, dims=7, noise=noise)
    np.testing.assert_array_equal(released.coeffs, laplace.release_response(dp.Eps(0.7), values, rng=11).response)


def _noise_sample(epsilon, sensitivity, seeds):
    target = lambda X: lambda y: np.cos(3 * y[:, 0]) * y[:, 1]  # noqa: E731
    mech = dp.Bernstein(target=target, lattice_k=49, dims=2, sensitivity=sensitivity, vectorized=True)
    clean = dp.bernstein(target(None), dims=2, k=49, vectorized=True).coeffs
    return np.concatenate([mech.release_response(dp.Eps(epsilon), None, rng=s).response.coeffs - clean for s in seeds])


def test_released_coefficients_carry_laplace_noise_of_the_stated_scale():
    """20 000 noise draws fit Lap(Δ·(k+1)^d/ε) (KS p > 1e-6), and a scale off by ×0.8 or ×1.25 is rejected."""
    b = 0.01 * 2500 / 2.0
    noise = _noise_sample(epsilon=2.0, sensitivity=0.01, seeds=range(1, 9))
    assert noise.size == 8 * 2500
    assert stats.kstest(noise, stats.laplace(scale=b).cdf).pvalue > 1e-6
    # The same test catches a mis-calibration of 20 % either way (e.g. a forgotten factor in the scale).
    assert stats.kstest(noise, stats.laplace(scale=0.8 * b).cdf).pvalue < 1e-6
    assert stats.kstest(noise, stats.laplace(scale=1.25 * b).cdf).pvalue < 1e-6


def test_bulk_samples_for_the_auditor_are_noisy_lattice_vectors():
    """_sample_many gives n noisy lattice vectors (n, (k+1)^d) with the release's Laplace scale (KS p > 1e-6)."""
    mech = dp.Bernstein(target=r_target, lattice_k=4, dims=2, sensitivity=0.02)
    value = mech._evaluate(mech.target(None))
    draws = mech._sample_many(value, dp.Eps(0.5), np.random.default_rng(0), 800)
    assert draws.shape == (800, 25)
    noise = (draws - value).ravel()
    assert stats.kstest(noise, stats.laplace(scale=mech.noise_scale(dp.Eps(0.5))).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.laplace(scale=0.8 * mech.noise_scale(dp.Eps(0.5))).cdf).pvalue < 1e-6


def test_zero_sensitivity_releases_the_exact_approximation():
    """Δ = 0 adds no noise: the release equals bernstein() of the target's function."""
    mech = dp.Bernstein(target=r_target, lattice_k=5, dims=2, sensitivity=0)
    released = mech.release_response(dp.Eps(1), None, rng=0).response
    assert released == dp.bernstein(r_target(None), dims=2, k=5)


def test_release_is_reproducible_with_a_seed_and_random_without():
    """The same seed gives the same function; rng=None (secure randomness) gives a different one."""
    mech = dp.Bernstein(target=kde_target, lattice_k=8, dims=1, sensitivity=0.01)
    X = np.random.default_rng(0).random(50)
    a = mech.release_response(dp.Eps(1), X, rng=5).response
    b = mech.release_response(dp.Eps(1), X, rng=5).response
    c = mech.release_response(dp.Eps(1), X).response
    assert a == b and a != c


def test_privacy_guarantee_reports_delta_and_sampled_gamma():
    """A Del is reported unchanged; a sampled sensitivity turns the guarantee into Gam(ε, δ, γ)."""
    mech = dp.Bernstein(target=kde_target, lattice_k=5, dims=1, sensitivity=0.01)
    assert mech.release_response(dp.Del(1, 1e-6), [0.5], rng=0).privacy_params == dp.Del(1, 1e-6)
    sampled = attrs.evolve(mech, gamma_sensitivity=0.1)
    assert sampled.release_response(dp.Eps(1), [0.5], rng=0).privacy_params == dp.Gam(1, 0, 0.1)


# ---- order, bounds, vectorisation ------------------------------------------------------------------------------


def test_order_does_not_change_the_noisy_lattice_values():
    """h only changes post-processing: with the same seed, releases at h = 1 and h = 3 share coeffs."""
    base = dp.Bernstein(target=kde_target, lattice_k=10, dims=1, sensitivity=0.02)
    X = np.random.default_rng(1).random(40)
    plain = base.release_response(dp.Eps(1), X, rng=9).response
    iterated = attrs.evolve(base, order=3).release_response(dp.Eps(1), X, rng=9).response
    np.testing.assert_array_equal(plain.coeffs, iterated.coeffs)
    assert (plain.order, iterated.order) == (1, 3)


def test_bounds_release_a_function_on_the_original_box():
    """With bounds=(−2, 3) the target's function is evaluated on the box lattice and the release takes original x."""
    seen = []

    def target(X):
        return lambda x: seen.append(x) or float(np.mean(X) * x)

    mech = dp.Bernstein(target=target, lattice_k=5, dims=1, sensitivity=0, bounds=(-2, 3))
    private = mech.release_response(dp.Eps(1), np.array([1.0, 2.0]), rng=0).response
    assert seen == [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]
    assert private(np.array([-2.0, 0.5, 3.0])) == pytest.approx([-3.0, 0.75, 4.5])
    with pytest.raises(ValueError, match="bounds"):
        private(3.5)


def test_vectorized_target_functions_give_the_same_release():
    """vectorized=True evaluates the lattice in one call; with the same seed the release is identical."""
    X = np.random.default_rng(2).random(30)
    per_point = dp.Bernstein(target=kde_target, lattice_k=12, dims=1, sensitivity=0.01)
    fast = attrs.evolve(per_point, vectorized=True)
    a = per_point.release_response(dp.Eps(1), X, rng=3).response
    b = fast.release_response(dp.Eps(1), X, rng=3).response
    np.testing.assert_allclose(a.coeffs, b.coeffs, rtol=0, atol=1e-15)


def test_released_function_is_frozen_and_picklable():
    """The response is a value object, not a closure: it pickles and evaluates identically after a round trip."""
    mech = dp.Bernstein(target=r_target, lattice_k=4, dims=2, sensitivity=0.1, order=2)
    private = mech.release_response(dp.Eps(1), None, rng=0).response
    again = pickle.loads(pickle.dumps(private))
    y = np.random.default_rng(0).random((10, 2))
    np.testing.assert_array_equal(again(y), private(y))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        private.coeffs = np.zeros(25)


def test_release_does_not_mutate_the_dataset():
    """The private data are left untouched."""
    X = np.random.default_rng(4).random(25)
    before = X.copy()
    dp.Bernstein(target=kde_target, lattice_k=6, dims=1, sensitivity=0.01).release_response(dp.Eps(1), X, rng=0)
    np.testing.assert_array_equal(X, before)


# ---- sensitivity sampler ----------------------------------------------------------------------------------------


def test_sensitivity_sampler_estimates_the_lattice_sup_norm():
    """For a KDE on n points the sampled Δ is positive and below the global bound 1/(n·bw·√(2π))."""
    n, bw = 50, 0.1
    mech = dp.Bernstein(target=kde_target, lattice_k=10, dims=1, vectorized=True)
    sampled = mech.sensitivity_sampler(lambda size, rng: rng.random(size), n=n, m=50, rng=0)
    assert 0 < sampled.sensitivity <= 1 / (n * bw * math.sqrt(2 * math.pi))
    assert sampled.gamma_sensitivity == pytest.approx(dp.plan_sampler(m=50).gamma)
    assert mech.sensitivity == math.inf  # the original is not modified
    again = mech.sensitivity_sampler(lambda size, rng: rng.random(size), n=n, m=50, rng=0)
    assert again.sensitivity == sampled.sensitivity


def pck_regression(D, bandwidth=0.1):
    """Priestley–Chao kernel regression with a Gaussian kernel (the R bernstein vignette's target)."""
    D = D[np.argsort(D[:, 0], kind="stable")]
    x, weights = D[1:, 0], np.diff(D[:, 0]) * D[1:, 1]
    return lambda y: float(np.sum(weights * np.exp(-0.5 * ((y - x) / bandwidth) ** 2)) / bandwidth)


def plausible_datasets(n, rng):
    """The vignette's oracle P(n) of 'plausible' datasets."""
    dx = rng.uniform(size=n)
    dy = np.zeros(n)
    if rng.uniform() < 0.95:
        dy = dy + dx
    if rng.uniform() < 0.5:
        dy = dy * np.sin(dx)
    if rng.uniform() < 0.5:
        dy = dy * np.cos(dx)
    return np.column_stack([dx, dy + rng.normal(0, 0.2, n)])


@pytest.mark.slow
def test_r_vignette_kernel_regression_release_runs_end_to_end():
    """K = 25, γ = 0.2 with m = 500 (so k = 439), ε = 5 on 250 points: a Gam(5, 0, 0.2) release whose lattice noise
    stays below b·ln(26/1e-6) (exceeded with probability < 1e-6)."""
    rng = np.random.default_rng(3033362)
    x = rng.uniform(size=250)
    D = np.column_stack([x, np.sin(10 * x) * x + rng.normal(0, 0.2, 250)])
    assert dp.plan_sampler(m=500, gamma=0.2).k == 439
    mech = dp.Bernstein(target=pck_regression, lattice_k=25, dims=1)
    mech = mech.sensitivity_sampler(plausible_datasets, n=250, gamma=0.2, m=500, rng=1)
    assert 0 < mech.sensitivity < 1 and mech.gamma_sensitivity == 0.2
    r = mech.release_response(dp.Eps(5), D, rng=2)
    assert r.privacy_params == dp.Gam(5, 0, 0.2)
    clean = dp.bernstein(pck_regression(D), dims=1, k=25)
    b = mech.noise_scale(dp.Eps(5))
    assert np.max(np.abs(r.response.coeffs - clean.coeffs)) < b * math.log(26 / 1e-6)
    assert r.response(np.linspace(0, 1, 50)).shape == (50,)


# ---- acceptance: private KDE (Aldà & Rubinstein 2017) --------------------------------------------------------------


@pytest.fixture(scope="module")
def kde_study():
    """n = 5000 from 0.4·N(0.3, 0.07²) + 0.6·N(0.7, 0.1²) clipped to [0, 1]; KDE bandwidth 0.1 on a 1001-point grid."""
    n, rng = 5000, np.random.default_rng(0)
    data = np.clip(np.where(rng.random(n) < 0.4, rng.normal(0.3, 0.07, n), rng.normal(0.7, 0.1, n)), 0, 1)
    grid = np.linspace(0, 1, 1001)
    return data, grid, kde_target(data)(grid), 1 / (n * 0.1 * math.sqrt(2 * math.pi))


def _half_l1(kde_study, k, order, epsilon, runs, seed):
    data, grid, exact, sensitivity = kde_study
    mech = dp.Bernstein(target=kde_target, lattice_k=k, dims=1, sensitivity=sensitivity, order=order, vectorized=True)
    rng = np.random.default_rng(seed)
    errors = [np.abs(mech.release_response(dp.Eps(epsilon), data, rng=rng).response(grid) - exact) for _ in range(runs)]
    return 0.5 * float(np.mean(errors))


@pytest.mark.slow
@pytest.mark.parametrize(("k", "order", "expected"), [(5, 1, 0.615), (10, 3, 0.280), (20, 3, 0.135), (40, 3, 0.043)])
def test_kde_approximation_error_matches_the_reference_table(kde_study, k, order, expected):
    """Noise-free sup error of the (iterated) Bernstein KDE is within 10 % of our earlier reference measurements."""
    data, grid, exact, _ = kde_study
    approx = dp.bernstein(kde_target(data), dims=1, k=k, order=order, vectorized=True)
    assert np.max(np.abs(approx(grid) - exact)) == pytest.approx(expected, rel=0.10)


@pytest.mark.slow
def test_kde_private_error_matches_the_reference_table(kde_study):
    """Mean ½·L1 error: ε = 1, k = 40, h = 3 gives 0.0116 (±10 %); ε = 0.1, k = 20, h = 3 gives 0.054 (±25 %)."""
    assert _half_l1(kde_study, 40, 3, 1.0, runs=20, seed=1) == pytest.approx(0.0116, rel=0.10)
    assert _half_l1(kde_study, 20, 3, 0.1, runs=20, seed=2) == pytest.approx(0.054, rel=0.25)


@pytest.mark.slow
def test_kde_error_is_u_shaped_in_k_and_the_best_k_grows_with_epsilon(kde_study):
    """Best k (h = 3) is at most 5 at ε = 0.01 and at least 40 at ε = 1; h = 3 beats h = 1 when bias dominates."""
    ks = [2, 5, 10, 20, 40, 80]
    error = {(k, eps): _half_l1(kde_study, k, 3, eps, runs=10, seed=k) for k in ks for eps in (0.01, 1.0)}
    best = {eps: min(ks, key=lambda k: error[k, eps]) for eps in (0.01, 1.0)}
    assert best[0.01] <= 5 and best[1.0] >= 40
    assert error[80, 0.01] > 3 * error[best[0.01], 0.01]  # the right arm of the U: noise grows with k
    assert _half_l1(kde_study, 20, 3, 1.0, runs=10, seed=3) < 0.7 * _half_l1(kde_study, 20, 1, 1.0, runs=10, seed=3)


# ---- conformance kit and auditor -------------------------------------------------------------------------------


def shifted_square(X):
    """Every lattice value moves by exactly |Δ mean| between neighbours: the worst case for the lattice's L1 norm."""
    mean = float(np.mean(X))
    return lambda y: mean + np.asarray(y, dtype=float) ** 2


def shifted_product(X):
    """Per point (not vectorised), on the box [−1, 1]²: the function's shift is mean(X) everywhere."""
    mean = float(np.mean(X))
    return lambda y: mean + y[0] * y[1]


_N = 20
_X = np.zeros(_N)
_X_NEIGHBOUR = _X.copy()
_X_NEIGHBOUR[0] = 1.0  # data in [0, 1]: the mean moves by the full sensitivity 1/n


def _case(**kwargs):
    options = {"target": shifted_square, "lattice_k": 3, "dims": 1, "sensitivity": 1 / _N, "vectorized": True}
    options.update(kwargs.pop("mechanism", {}))
    return MechCase(
        mechanism=dp.Bernstein(**options),
        privacy_params=dp.Eps(1.0),
        dataset=_X,
        neighbour=_X_NEIGHBOUR,
        oracle=lambda n, rng: rng.random(n),
        **kwargs,
    )


BERNSTEIN_CASES = [
    _case(),
    _case(
        mechanism={"target": shifted_product, "dims": 2, "lattice_k": 2, "order": 2, "bounds": (-1, 1)}
        | {"vectorized": False},
        id="Bernstein[d=2,h=2,box]",
    ),
    _case(mechanism={"noise": "exact"}, slow=True, audit_n=3_000),
    # The opt-in float sampler leaks through the floating-point structure of its outputs (Mironov 2012).
    _case(mechanism={"noise": "float"}, skip={"check_audit_passes"}),
]


@parametrize_with_checks(BERNSTEIN_CASES)
def test_bernstein_passes_the_conformance_kit(case, check):
    """Every shared mechanism invariant holds for Bernstein (plain, iterated on a box, exact and float noise)."""
    check(case)


@pytest.mark.slow
def test_auditor_refutes_a_bernstein_mechanism_calibrated_to_half_the_sensitivity():
    """The audit that passes the correct mechanism catches one whose noise uses Δ/2 (the demonstration of power)."""
    case = BERNSTEIN_CASES[0]
    broken = attrs.evolve(case.mechanism, sensitivity=case.mechanism.sensitivity / 2)
    assert not audit(broken, case.dataset, case.neighbour, dp.Eps(1.0), rng=1).passed


@pytest.mark.parametrize("dims", [2**70, 40])
def test_huge_lattices_are_refused_at_once(dims):
    """(k + 1)^dims is compared in log space: dims = 2**70 is refused immediately, not after an endless power."""
    with pytest.raises(ValueError, match="at most 1e\\+08"):
        dp.Bernstein(target=lambda X: lambda y: 0.0, lattice_k=3, dims=dims)
    with pytest.raises(ValueError, match="at most 1e\\+08"):
        dp.bernstein(lambda y: 0.0, dims, k=3)
