"""Gaussian-specific math: the analytic calibration, the classic formula's limits, the L2 norm."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffpriv_py as dp
from diffpriv_py.mechanisms.gaussian import analytic_gaussian_sigma, gaussian_delta


@pytest.mark.parametrize(
    ("epsilon", "delta", "ratio"),
    # Analytic σ / classic σ at Δ = 1, from Balle & Wang (2018), Table 1 and Theorem 8.
    [(0.1, 1e-5, 0.635), (1.0, 1e-5, 0.770), (5.0, 1e-5, 0.920), (10.0, 1e-5, 1.032), (20.0, 1e-5, 1.197)],
)
def test_analytic_sigma_matches_published_ratios(epsilon, delta, ratio):
    """The analytic σ relative to the classic σ matches the measured reference table."""
    classic = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert analytic_gaussian_sigma(epsilon, delta) / classic == pytest.approx(ratio, abs=6e-4)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-3, 50), st.floats(1e-12, 0.4), st.floats(1e-3, 1e3))
def test_analytic_sigma_meets_the_privacy_curve_tightly(epsilon, delta, sensitivity):
    """δ(σ) ≤ δ for the calibrated σ, and σ is minimal to 1e-10 relative (Balle & Wang 2018, Thm 8)."""
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert gaussian_delta(sigma, epsilon, sensitivity) <= delta
    assert gaussian_delta(sigma * (1 - 1e-10), epsilon, sensitivity) > delta * (1 - 1e-6)


def test_classic_formula_is_not_valid_at_large_epsilon():
    """At ε = 10 the classic σ gives a true δ 2.3× the claim; that is why it is refused."""
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / 10
    assert gaussian_delta(sigma, 10.0) / 1e-5 == pytest.approx(2.27, abs=0.01)
    mech = dp.Gaussian(target=np.mean, sensitivity=1, calibration="classic")
    with pytest.raises(ValueError, match="epsilon < 1"):
        mech.release_response(dp.Del(10, 1e-5), np.ones(3), rng=0)


def test_classic_formula_is_available_below_one():
    """calibration='classic' gives σ = Δ√(2 ln(1.25/δ))/ε for ε < 1, as R does."""
    mech = dp.Gaussian(target=np.mean, sensitivity=2.0, calibration="classic")
    assert mech.noise_scale(dp.Del(0.5, 1e-5)) == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)


def test_gaussian_needs_del_with_positive_delta():
    """Pure-ε parameters or δ = 0 are refused with a message pointing to Del or Laplace."""
    mech = dp.Gaussian(target=np.mean, sensitivity=1)
    with pytest.raises(TypeError, match="Del"):
        mech.release_response(dp.Eps(1), np.ones(3), rng=0)
    with pytest.raises(ValueError, match="delta > 0"):
        mech.release_response(dp.Del(1, 0.0), np.ones(3), rng=0)


def test_gam_parameters_are_accepted_as_del():
    """A Gam is a Del, so it can be used with the Gaussian mechanism."""
    out = dp.Gaussian(target=np.mean, sensitivity=1, dims=1).release_response(dp.Gam(1, 0.1, 0.2), np.ones(3), rng=0)
    assert isinstance(out.response, float)


def test_norm_is_l2():
    """R: the Gaussian norm of (1.5, −2) against its negation is 5."""
    mech = dp.Gaussian(target=lambda v: np.asarray(v, float), sensitivity=1)
    assert mech.sensitivity_norm([1.5, -2], [-1.5, 2]) == pytest.approx(5.0)


def test_unknown_calibration_is_refused():
    """Only 'analytic' and 'classic' exist."""
    with pytest.raises(ValueError, match="calibration"):
        dp.Gaussian(target=np.mean, sensitivity=1, calibration="magic")
