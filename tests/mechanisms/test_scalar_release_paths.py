"""One-value releases take scalar shortcuts that give the vectorised paths' very outputs and keep every check."""

import math

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py import noise as dpnoise
from diffpriv_py.exceptions import TargetOutputError
from diffpriv_py.testing._stats import chisquare_pvalue

P_FLOOR = 1e-7  # a correct sampler fails the goodness-of-fit test with probability below 1e-7


def _geometric_pmf(lam: float):
    q = math.exp(-lam)
    return lambda k: (1 - q) / (1 + q) * q ** np.abs(k)


def _one_value_geometric(lam: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([dpnoise.one_two_sided_geometric(lam, rng) for _ in range(n)], dtype=np.int64)


@pytest.mark.parametrize("lam", [0.2501, 0.3, 0.7, 1.0, 1.3, 1.999, 2.0])
def test_one_value_geometric_draws_the_vectorised_integer_from_the_same_stream(lam):
    """one_two_sided_geometric gives two_sided_geometric's integer and leaves the generator in the same state."""
    for seed in range(300):
        scalar_rng, vector_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        assert dpnoise.one_two_sided_geometric(lam, scalar_rng) == dpnoise.two_sided_geometric((1,), lam, vector_rng)[0]
        assert scalar_rng.random() == vector_rng.random()


@pytest.mark.parametrize("lam", [0.25, 0.1, 2.5, 40.0])
def test_one_value_geometric_declines_decays_outside_its_exact_range(lam):
    """Outside 1/4 < λ ≤ 2 the scalar sampler returns None, so the caller uses the vectorised one."""
    assert dpnoise.one_two_sided_geometric(lam, np.random.default_rng(0)) is None


def test_one_value_geometric_matches_its_pmf_integer_by_integer():
    """The one-value discrete Laplace path gives P(k) ∝ exp(−λ|k|)."""
    draws = _one_value_geometric(0.7, 60_000, 31)
    assert chisquare_pvalue(draws, _geometric_pmf(0.7)) > P_FLOOR


def test_one_value_geometric_check_catches_a_wrong_decay():
    """The same test rejects one-value draws whose decay is 10 % off."""
    draws = _one_value_geometric(0.77, 60_000, 32)
    assert chisquare_pvalue(draws, _geometric_pmf(0.7)) < P_FLOOR


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(1.0, 1.0), (0.5, 1.0), (1.9, 1.0), (0.05, 1.0), (9.0, 2.0)])
def test_scalar_discrete_laplace_release_equals_the_one_element_array_release(epsilon, sensitivity):
    """A scalar count releases the same integer (a Python int) as the same count in an array of one element."""
    for seed in range(100):
        scalar = dp.DiscreteLaplace(target=lambda x: 7, sensitivity=sensitivity)
        vector = dp.DiscreteLaplace(target=lambda x: np.array([7]), sensitivity=sensitivity)
        a = scalar.release_response(dp.Eps(epsilon), None, rng=seed).response
        b = vector.release_response(dp.Eps(epsilon), None, rng=seed).response
        assert type(a) is int and a == b[0]


@pytest.mark.parametrize("noise", ["safe", "exact", "float"])
def test_scalar_laplace_release_equals_the_one_element_array_release(noise):
    """A scalar Laplace release is the float the same value in an array of one element gets."""
    for seed in range(100):
        scalar = dp.Laplace(target=lambda x: 0.37, sensitivity=0.3, noise=noise)
        vector = dp.Laplace(target=lambda x: np.array([0.37]), sensitivity=0.3, noise=noise)
        a = scalar.release_response(dp.Eps(0.8), None, rng=seed).response
        b = vector.release_response(dp.Eps(0.8), None, rng=seed).response
        assert type(a) is float and a == b[0]


@pytest.mark.parametrize("value", [1.5, 2.0**53, np.float64(-0.25)])
def test_scalar_discrete_laplace_still_refuses_a_non_integer_output(value):
    """The scalar integrality test refuses what the array test refuses (fractions, magnitudes ≥ 2^53)."""
    with pytest.raises(TargetOutputError, match="not integer-valued"):
        dp.DiscreteLaplace(target=lambda x: value, sensitivity=1.0).release_response(dp.Eps(1.0), None, rng=0)


def test_discrete_laplace_takes_a_non_integer_sensitivity_as_the_upper_bound_it_is():
    """Δ = 1.5 on a count (true sensitivity 1): the noise ∝ exp(−ε|k|/1.5), so neighbouring outputs' log-probabilities
    differ by at most ε/1.5 ≤ ε (ε-DP, more noise than Δ = 1). Non-integer *values* are refused (test above)."""
    for noise in ("safe", "exact"):
        mech = dp.DiscreteLaplace(target=lambda x: int(np.sum(x)), sensitivity=1.5, noise=noise)
        dist = mech.noise_distribution(dp.Eps(1.0))
        k = np.arange(-50, 51)
        worst = np.max(np.abs(dist.logpmf(k) - dist.logpmf(k - 1)))  # counts 0 and 1: outputs m − 0 and m − 1
        assert worst == pytest.approx(1.0 / 1.5) and worst <= 1.0
        assert type(mech.release_response(dp.Eps(1.0), [0, 1, 1], rng=0).response) is int


def test_laplace_refuses_a_too_small_epsilon_before_the_charge_every_time():
    """The cached safe-noise checks still refuse, before any charge, on every attempt (failures are not cached)."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    mech = dp.Laplace(target=lambda x: 0.0, sensitivity=1.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="too small for safe noise"):
            mech.release_response(dp.Eps(1e-12), None, rng=0, accountant=acc)
    assert len(acc.ledger) == 0
