"""The auditor: no false alarm on correct mechanisms, and every deliberately broken variant is caught (power)."""

import math

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py import noise as dpnoise
from diffpriv_py.testing import AuditReport, audit, check_sensitivity, trailing_exponent

ALPHA = 1e-6


def _mean_pair(n=100):
    X = np.full(n, 0.25)
    X[0] = 0.0
    X2 = X.copy()
    X2[0] = 1.0
    return X, X2


def _letters_pair():
    X = ["a"] * 6 + ["b"] * 5 + ["c"] * 3 + ["d"]
    return X, ["b", *X[1:]]


def _letter_scores(X):
    return lambda r: float(X.count(r))


class _HalfScaleLaplace(dp.Laplace):
    """Broken: safe Laplace noise at half the scale (calibrated for Δ/2)."""

    def _perturb(self, values, privacy_params, rng):
        dims = max(1, int(np.prod(values.shape[1:])))
        return dpnoise.grid_laplace(np.asarray(values, float), self.sensitivity / 2, privacy_params.epsilon, dims, rng)


class _NoFactorTwoExponential(dp.Exponential):
    """Broken: the exponential mechanism with ε/Δ instead of ε/(2Δ) on non-monotone scores."""

    def _scale(self, privacy_params):
        return privacy_params.epsilon / self.sensitivity


class _ClassicAnyEpsilonGaussian(dp.Gaussian):
    """Broken: R's classic σ = Δ√(2 ln(1.25/δ))/ε applied at every ε (under-protects for ε ≥ 1)."""

    def _check_params(self, privacy_params):
        return None


class _HalfSigmaGaussian(dp.Gaussian):
    """Broken: safe Gaussian noise with σ/2."""

    def _perturb(self, values, privacy_params, rng):
        dims = max(1, int(np.prod(values.shape[1:])))
        r, sigma = dpnoise.gaussian_grid_calibration(
            self._sigma_for, self.sensitivity, privacy_params.epsilon, privacy_params.delta, dims
        )
        return dpnoise.grid_gaussian(np.asarray(values, float), r, sigma / 2, rng)


def test_audit_report_has_the_contract_fields_and_is_reproducible():
    """audit() returns a report with the bounds, verdict, event, counts, n and seed; a seed reproduces it."""
    X, X2 = _mean_pair()
    mech = dp.Laplace(target=np.mean, sensitivity=0.01)
    a = audit(mech, X, X2, dp.Eps(1.0), n=20_000, rng=3)
    b = audit(mech, X, X2, dp.Eps(1.0), n=20_000, rng=3)
    assert isinstance(a, AuditReport) and a == b
    assert a.passed and 0 <= a.epsilon_lower_bound <= 1.0 and a.delta_lower_bound == 0
    assert a.n == 20_000 and a.seed == 3 and a.alpha == ALPHA and len(a.counts) == 2
    assert "passed" in str(a)
    unseeded = audit(mech, X, X2, dp.Eps(1.0), n=2_000)
    assert isinstance(unseeded.seed, int)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_correct_mechanisms_pass_at_alpha_one_in_a_million(seed):
    """Safe Laplace, Gaussian, DiscreteLaplace and both selection methods are not refuted (several seeds)."""
    X, X2 = _mean_pair()
    L, L2 = _letters_pair()
    assert audit(dp.Laplace(target=np.mean, sensitivity=0.01), X, X2, dp.Eps(0.5), rng=seed).passed
    assert audit(dp.Gaussian(target=np.mean, sensitivity=0.01), X, X2, dp.Del(1.0, 1e-5), rng=seed).passed
    for method in ("exponential", "permute_and_flip"):
        em = dp.Exponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1, method=method)
        assert audit(em, L, L2, dp.Eps(1.0), rng=seed).passed


def test_half_laplace_scale_is_caught():
    """Laplace noise at half its scale (true ε = 2 for a claim of 1) is refuted."""
    X, X2 = _mean_pair()
    report = audit(_HalfScaleLaplace(target=np.mean, sensitivity=0.01), X, X2, dp.Eps(1.0), rng=1)
    assert not report.passed and report.epsilon_lower_bound > 1.0


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_sensitivity_declared_2_5_times_too_small_is_caught(kind):
    """A declared sensitivity 2.5× below the true change is caught with the default sample size."""
    X, X2 = _mean_pair()
    if kind == "laplace":
        mech, params = dp.Laplace(target=np.mean, sensitivity=0.004), dp.Eps(1.0)
    else:
        mech, params = dp.Gaussian(target=np.mean, sensitivity=0.004), dp.Del(1.0, 1e-5)
    assert not audit(mech, X, X2, params, rng=2).passed


def _rise_and_fall(X):
    # Non-monotone worst case: candidate 0 gains Δ while all 9 others lose Δ.
    return lambda r: float(X[0]) if r == 0 else -float(X[0])


@pytest.mark.slow
def test_exponential_mechanism_without_the_factor_two_is_caught():
    """Dropping the 2 in exp(ε·s/(2Δ)) on a non-monotone neighbouring pair is refuted (true ε 1.51 vs 1)."""
    mech = _NoFactorTwoExponential(target=_rise_and_fall, response_set=list(range(10)), sensitivity=1)
    report = audit(mech, [0.0], [1.0], dp.Eps(1.0), rng=3)
    assert not report.passed and report.epsilon_lower_bound > 1.0
    correct = dp.Exponential(target=_rise_and_fall, response_set=list(range(10)), sensitivity=1)
    assert audit(correct, [0.0], [1.0], dp.Eps(1.0), rng=3).passed


@pytest.mark.slow
def test_classic_gaussian_at_epsilon_ten_is_caught():
    """R's classic σ at ε = 10 (true δ 2.3× the claim) violates the claimed privacy curve."""
    X, X2 = _mean_pair()
    mech = _ClassicAnyEpsilonGaussian(target=np.mean, sensitivity=0.01, calibration="classic")
    report = audit(mech, X, X2, dp.Del(10.0, 1e-5), n=600_000, rng=4)
    assert not report.passed and report.curve_violation


def test_half_sigma_gaussian_is_caught():
    """A Gaussian with σ/2 is refuted through its privacy curve."""
    X, X2 = _mean_pair()
    report = audit(_HalfSigmaGaussian(target=np.mean, sensitivity=0.01), X, X2, dp.Del(1.0, 1e-5), rng=5)
    assert not report.passed


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_float_noise_is_caught_by_float_structure_events(kind):
    """Textbook float Laplace (and float Gaussian) on inputs 0 vs 1 is refuted by a 'not a multiple of 2^j' event."""
    if kind == "laplace":
        mech, params = dp.Laplace(target=lambda x: float(x[0]), sensitivity=1.0, noise="float"), dp.Eps(1.0)
    else:
        mech, params = dp.Gaussian(target=lambda x: float(x[0]), sensitivity=1.0, noise="float"), dp.Del(1.0, 1e-5)
    report = audit(mech, np.array([0.0]), np.array([1.0]), params, rng=6)
    assert not report.passed and "float-structure" in report.event
    assert report.epsilon_lower_bound > 5


def test_nanmean_style_sensitivity_bug_is_caught():
    """Sensitivity from the array length including NaNs (diffprivlib's nanmean) is refuted by audit and grey-box."""
    X = np.array([0.0] + [np.nan] * 99)
    X2 = np.array([1.0] + [np.nan] * 99)
    mech = dp.Laplace(target=np.nanmean, sensitivity=1.0 / X.size)
    assert not audit(mech, X, X2, dp.Eps(1.0), rng=7).passed
    with pytest.raises(AssertionError, match="too small"):
        check_sensitivity(mech, X, X2)


def test_r_linear_exponential_mechanism_is_caught():
    """R diffpriv's selection ∝ score (no exp) gives a zero-probability candidate and is refuted."""

    class _LinearSelection(dp.Exponential):
        def _sample_many(self, value, privacy_params, rng, n):
            return rng.choice(value.size, size=n, p=value / value.sum())

    mech = _LinearSelection(target=lambda X: lambda r: float(X.count(r)), response_set=["a", "b"], sensitivity=1)
    report = audit(mech, ["a", "a"], ["a", "b"], dp.Eps(1.0), n=20_000, rng=8)
    assert not report.passed and report.epsilon_lower_bound > 5


@pytest.mark.slow
def test_default_laplace_defeats_the_float_structure_attack():
    """Done criterion: default Laplace, scale 1, inputs 0 vs 1, 10^6 draws each: no event separates the supports."""
    mech = dp.Laplace(target=lambda x: float(x[0]), sensitivity=1.0)
    rng = np.random.default_rng(9)
    a = mech._sample_many(np.array(0.0), dp.Eps(1.0), rng, 1_000_000)
    b = mech._sample_many(np.array(1.0), dp.Eps(1.0), rng, 1_000_000)
    r = dpnoise.grid_step(1.0)
    assert np.all(trailing_exponent(a) >= math.log2(r)) and np.all(trailing_exponent(b) >= math.log2(r))
    fine_a = (np.abs(a) < 0.5) & (trailing_exponent(a) < -53)
    fine_b = (np.abs(b) < 0.5) & (trailing_exponent(b) < -53)
    assert fine_a.sum() == 0 and fine_b.sum() == 0
    report = audit(mech, np.array([0.0]), np.array([1.0]), dp.Eps(1.0), n=1_000_000, rng=9)
    assert report.passed, report


def test_check_sensitivity_passes_correct_declarations_and_refuses_unequal_sizes():
    """The grey-box check returns the observed change when it is within Δ and refuses non-neighbours."""
    X, X2 = _mean_pair()
    assert check_sensitivity(dp.Laplace(target=np.mean, sensitivity=0.01), X, X2) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="same number of records"):
        check_sensitivity(dp.Laplace(target=np.mean, sensitivity=0.01), X, X2[:-1])


def test_audit_refuses_bad_arguments():
    """alpha outside (0, 1), tiny n and wrong privacy parameters are refused."""
    X, X2 = _mean_pair()
    mech = dp.Laplace(target=np.mean, sensitivity=0.01)
    with pytest.raises(ValueError, match="alpha"):
        audit(mech, X, X2, dp.Eps(1.0), alpha=0.0)
    with pytest.raises(ValueError, match="at least 40"):
        audit(mech, X, X2, dp.Eps(1.0), n=10)
    with pytest.raises(TypeError):
        audit(dp.Gaussian(target=np.mean, sensitivity=0.01), X, X2, dp.Eps(1.0))


def test_trailing_exponent_reads_the_float_structure():
    """trailing_exponent gives the largest j with y a multiple of 2^j."""
    y = np.array([1.0, 0.75, 3.0 * 2.0**-60, 0.0, -(2.0**10)])
    assert list(trailing_exponent(y)) == [0, -2, -60, np.inf, 10]
