"""The one-value fast paths of the safe samplers draw exactly the law of the vectorised ones."""

import math

import numpy as np
import pytest
from scipy import stats

import diffpriv_py as dp
from diffpriv_py import noise as dpnoise
from diffpriv_py.noise import gaussian as noise_gaussian
from diffpriv_py.noise import geometric as noise_geometric
from diffpriv_py.testing._stats import chisquare_pvalue

P_FLOOR = 1e-7  # a correct sampler fails one of these tests with probability below 1e-7 per test


def _scalar_geometric(lam: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k, beta = noise_geometric._block_exponent(lam)
    return np.array([noise_geometric._one_signed_geometric(lam, k, beta, rng, 1.0, 0.0) for _ in range(n)])


def _scalar_gaussian(sigma: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([noise_gaussian._one_discrete_gaussian_block(sigma, rng, 1.0, 0.0) for _ in range(n)])


def _geometric_pmf(lam: float):
    q = math.exp(-lam)
    return lambda k: (1 - q) / (1 + q) * q ** np.abs(k)


def _gaussian_pmf(sigma: float):
    k = np.arange(-int(40 * sigma), int(40 * sigma) + 1)
    norm = np.exp(-(k**2) / (2 * sigma**2)).sum()
    return lambda x: np.exp(-(x**2) / (2 * sigma**2)) / norm


@pytest.mark.parametrize("lam", [0.2, 0.031])
def test_scalar_geometric_matches_its_pmf_integer_by_integer(lam):
    """The one-value Laplace path gives P(k) ∝ exp(−λ|k|), tested at a decay small enough to use blocks."""
    draws = _scalar_geometric(lam, 60_000, 21)
    assert chisquare_pvalue(draws.astype(np.int64), _geometric_pmf(lam)) > P_FLOOR


def test_scalar_geometric_check_catches_a_wrong_decay():
    """The same test rejects one-value draws whose decay is 10 % off."""
    draws = _scalar_geometric(0.033, 60_000, 22)
    assert chisquare_pvalue(draws.astype(np.int64), _geometric_pmf(0.03)) < P_FLOOR


def test_scalar_discrete_gaussian_matches_its_pmf_integer_by_integer():
    """The one-value Gaussian path gives P(k) ∝ exp(−k²/(2σ²)) (alias blocks, tail and acceptance)."""
    draws = _scalar_gaussian(37.3, 60_000, 23)
    assert chisquare_pvalue(draws.astype(np.int64), _gaussian_pmf(37.3)) > P_FLOOR


def test_scalar_discrete_gaussian_check_catches_a_wrong_sigma():
    """The same test rejects one-value draws whose σ is 5 % too large."""
    draws = _scalar_gaussian(52.5, 60_000, 24)
    assert chisquare_pvalue(draws.astype(np.int64), _gaussian_pmf(50.0)) < P_FLOOR


@pytest.mark.parametrize(
    ("mech", "params", "dist"),
    [
        (dp.Laplace(target=float, sensitivity=2.0), dp.Eps(0.5), stats.laplace(scale=4.0)),
        (dp.Gaussian(target=float, sensitivity=1.0), dp.Del(1.0, 1e-6), None),
    ],
)
def test_scalar_releases_follow_the_nominal_noise_and_lie_on_the_grid(mech, params, dist):
    """Scalar releases (the fast path) pass a KS test against the nominal noise, and every output is on the grid."""
    dist = dist or stats.norm(scale=mech.noise_scale(params))
    rng = np.random.default_rng(25)
    out = np.array([mech.release_response(params, 0.1234567, rng=rng).response for _ in range(20_000)])
    assert stats.kstest(out, dist.cdf).pvalue > P_FLOOR
    r = dpnoise.grid_step(mech.noise_scale(params))
    assert np.all(out / r == np.round(out / r))


def test_scalar_release_check_catches_half_the_noise():
    """The KS test rejects scalar releases whose noise scale is half the nominal one."""
    mech = dp.Laplace(target=float, sensitivity=1.0)
    rng = np.random.default_rng(26)
    out = np.array([mech.release_response(dp.Eps(1.0), 0.0, rng=rng).response for _ in range(20_000)])
    assert stats.kstest(out, stats.laplace(scale=2.0).cdf).pvalue < P_FLOOR


def test_scalar_and_vectorised_paths_round_the_value_alike():
    """A huge value (already on the grid) and a value between grid points are placed on the same grid both ways."""
    rng = np.random.default_rng(27)
    for x in [1e30, -3.0000000000001, 0.0]:
        one = dpnoise.grid_laplace(np.array([x]), 1.0, 1.0, 1, rng)
        many = dpnoise.grid_laplace(np.full(3, x), 1.0, 1.0, 1, rng)
        r = dpnoise.grid_step(1.0)
        assert one.shape == (1,)
        both = np.concatenate([one, many])
        assert np.all(both / r == np.round(both / r))
        assert abs(one[0] - x) < 100 and np.all(np.abs(many - x) < 100)


@pytest.mark.parametrize("rho", [16.01, 18.65, 25.0, 32.0])
def test_gaussian_alias_table_gives_every_block_its_weight_to_a_relative_two_to_the_minus_42(rho):
    """Slot bits and integer keep-thresholds reproduce P(G = g) ∝ exp(−g²/(2ρ²)) within the documented 2⁻⁴² bound."""
    from fractions import Fraction

    thresholds, alias, k, bits = noise_gaussian._gaussian_block_tables(rho)
    n_slots = 1 << bits
    assert thresholds.size == alias.size == n_slots >= k + 1
    implied = [Fraction(0)] * n_slots
    for s, (t, a) in enumerate(zip(thresholds.tolist(), alias.tolist(), strict=True)):
        keep = Fraction(t, 2**53)
        implied[s] += keep / n_slots
        implied[a] += (1 - keep) / n_slots
    weights = [math.exp(-(g * g) / (2 * rho * rho)) for g in range(math.ceil(40 * rho) + 1)]
    ideal = [Fraction(w) for w in weights[:k]] + [Fraction(math.fsum(weights[k:]))]
    total = sum(ideal)
    for g in range(k + 1):
        assert abs(implied[g] / (ideal[g] / total) - 1) <= Fraction(1, 2**42)
    assert all(p == 0 for p in implied[k + 1 :])


def test_block_sampler_refuses_a_sigma_whose_offsets_would_not_fit_a_double():
    """σ ≥ 2⁵⁷ would need within-block offsets beyond 2⁵² (not exact in float64): refused, not silently rounded."""
    with pytest.raises(ValueError, match="sigma"):
        noise_gaussian._discrete_gaussian_blocks(3, 2.0**58, np.random.default_rng(0))
