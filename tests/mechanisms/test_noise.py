"""Noise samplers: exact Bernoulli, vectorised geometric and discrete Gaussian, the grid, CKS20, DiscreteLaplace."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import diffpriv_py as dp
from diffpriv_py import noise as dpnoise
from diffpriv_py._rng import random_words
from diffpriv_py.exceptions import TargetOutputError
from diffpriv_py.noise import exact as noise_exact
from diffpriv_py.noise import gaussian as noise_gaussian
from diffpriv_py.testing._stats import chisquare_pvalue

P_FLOOR = 1e-7  # a correct sampler fails one of these tests with probability below 1e-7 per test


def test_bernoulli_keeps_probabilities_far_below_double_resolution():
    """Bernoulli(p) with p = 2^-60 · 0.75 still succeeds sometimes when p is scaled up to be observable."""
    rng = np.random.default_rng(1)
    p = np.full(400_000, 0.75 * 2.0**-3)
    assert abs(dpnoise.bernoulli(p, rng).mean() - 0.09375) < 5.5 * math.sqrt(0.09375 / 400_000)
    tiny = np.full(10, 2.0**-1074)
    assert not dpnoise.bernoulli(tiny, rng).any()
    assert dpnoise.bernoulli(np.ones(5), rng).all()
    assert not dpnoise.bernoulli(np.zeros(5), rng).any()


@pytest.mark.parametrize("lam", [2.0**-40, 0.01, 0.3, 0.9, 1.7, 3.0, 12.0])
def test_two_sided_geometric_matches_its_pmf(lam):
    """Draws follow P(k) ∝ exp(−λ|k|) for decays on every code path (blocks, thresholds, sequential)."""
    rng = np.random.default_rng(11)
    draws = dpnoise.two_sided_geometric(200_000, lam, rng)
    assert draws.dtype == np.int64
    q = math.exp(-lam)
    if lam < 1e-3:
        scale = 1 / lam
        assert stats.kstest(draws / scale, stats.laplace.cdf).pvalue > P_FLOOR
    else:
        assert chisquare_pvalue(draws, lambda k: (1 - q) / (1 + q) * q ** np.abs(k)) > P_FLOOR


def test_two_sided_geometric_check_catches_a_wrong_decay():
    """The pmf test has power: draws with λ·1.1 are rejected."""
    rng = np.random.default_rng(12)
    draws = dpnoise.two_sided_geometric(200_000, 0.33, rng)
    q = math.exp(-0.3)
    assert chisquare_pvalue(draws, lambda k: (1 - q) / (1 + q) * q ** np.abs(k)) < P_FLOOR


@pytest.mark.parametrize("sigma", [0.7, 4.0, 2.0**40])
def test_discrete_gaussian_matches_its_pmf(sigma):
    """Draws follow P(k) ∝ exp(−k²/(2σ²))."""
    rng = np.random.default_rng(13)
    draws = dpnoise.discrete_gaussian(100_000, sigma, rng)
    if sigma > 1e6:
        assert stats.kstest(draws / sigma, stats.norm.cdf).pvalue > P_FLOOR
        return
    k = np.arange(-int(40 * sigma) - 5, int(40 * sigma) + 6)
    norm = np.exp(-(k**2) / (2 * sigma**2)).sum()
    assert chisquare_pvalue(draws, lambda x: np.exp(-(x**2) / (2 * sigma**2)) / norm) > P_FLOOR


@pytest.mark.parametrize("sigma", [37.3, 50.0])
def test_block_discrete_gaussian_matches_its_pmf_integer_by_integer(sigma):
    """The fast block sampler (used for σ ≥ 2^20) gives P(k) ∝ exp(−k²/(2σ²)); run at small σ to test every integer."""
    draws = noise_gaussian._discrete_gaussian_blocks(300_000, sigma, np.random.default_rng(15))
    k = np.arange(-int(12 * sigma), int(12 * sigma) + 1)
    norm = np.exp(-(k**2) / (2 * sigma**2)).sum()
    assert chisquare_pvalue(draws.astype(np.int64), lambda x: np.exp(-(x**2) / (2 * sigma**2)) / norm) > P_FLOOR


def test_block_discrete_gaussian_check_catches_a_wrong_sigma():
    """The same test rejects draws whose σ is 5 % too large."""
    draws = noise_gaussian._discrete_gaussian_blocks(300_000, 52.5, np.random.default_rng(16))
    k = np.arange(-600, 601)
    norm = np.exp(-(k**2) / (2 * 50.0**2)).sum()
    assert chisquare_pvalue(draws.astype(np.int64), lambda x: np.exp(-(x**2) / (2 * 50.0**2)) / norm) < P_FLOOR


def test_gaussian_blocks_and_tail_follow_the_discretised_half_gaussian():
    """Block indices (alias table plus geometric-envelope tail) follow P(g) ∝ exp(−g²/(2ρ²)), tail included."""
    rho = 20.3
    rng = np.random.default_rng(17)
    g = noise_gaussian._draw_blocks(random_words(rng, 1_000_000), rho, 1.0, rng, None).astype(np.int64)
    support = np.arange(0, 400)
    norm = np.exp(-(support**2) / (2 * rho**2)).sum()
    assert chisquare_pvalue(g, lambda x: np.where(x >= 0, np.exp(-(x**2) / (2 * rho**2)) / norm, 0.0)) > P_FLOOR
    tail = noise_gaussian._gaussian_tail(200_000, rho, 61, np.random.default_rng(18)).astype(np.int64)
    tail_norm = np.exp(-(np.arange(61, 500) ** 2) / (2 * rho**2)).sum()
    assert tail.min() >= 61
    assert (
        chisquare_pvalue(tail, lambda x: np.where(x >= 61, np.exp(-(x**2) / (2 * rho**2)) / tail_norm, 0.0)) > P_FLOOR
    )


def _block_sampler_ks_pvalue(draw_sigma: float, test_sigma: float, seed: int) -> float:
    draws = noise_gaussian._discrete_gaussian_blocks(300_000, draw_sigma, np.random.default_rng(seed))
    return float(stats.kstest(draws / test_sigma, stats.norm.cdf).pvalue)


# σ_g of a safe release (offsets of 36 bits, 28 leading acceptance bits) and the largest block size (offsets of 51
# bits, 13 acceptance bits: ties, resolved by a further uniform, occur once in 8192 proposals).
@pytest.mark.parametrize("sigma", [1.3 * 2.0**40, 1.7 * 2.0**55])
def test_block_sampler_at_grid_and_largest_scales_is_normal_by_ks(sigma):
    """300 000 block-sampler draws at large σ pass a KS test against N(0, σ²) (p > 1e-7), ties path included."""
    assert _block_sampler_ks_pvalue(sigma, sigma, 31) > P_FLOOR


def test_block_sampler_resolves_acceptance_ties_with_a_further_uniform_at_the_largest_block_size(monkeypatch):
    """With 13 leading acceptance bits, ties (≈ 1 in 8192 proposals) occur and draw a further 53-bit uniform."""

    class CountingGenerator:
        def __init__(self, rng):
            self._rng, self.uniforms = rng, 0

        def __getattr__(self, name):
            return getattr(self._rng, name)

        def random(self, size=None):
            self.uniforms += 1 if size is None else int(np.prod(size))
            return self._rng.random(size)

    # The tail sampler draws uniforms too: give it its own generator so that only the ties are counted.
    tail = noise_gaussian._gaussian_tail
    tail_rng = np.random.default_rng(35)
    monkeypatch.setattr(noise_gaussian, "_gaussian_tail", lambda n, rho, k, rng: tail(n, rho, k, tail_rng))
    rng = CountingGenerator(np.random.default_rng(34))
    sigma = 1.7 * 2.0**55
    assert noise_gaussian._acceptance_bits(51) == 13
    draws = noise_gaussian._discrete_gaussian_blocks(200_000, sigma, rng)
    assert rng.uniforms >= 1  # ≈ 25 expected (P(none) ≈ e^-25)
    assert stats.kstest(draws / sigma, stats.norm.cdf).pvalue > P_FLOOR


def test_block_sampler_ks_check_catches_a_five_percent_wrong_sigma():
    """The same KS test rejects draws whose σ is 5 % too large (p < 1e-7)."""
    sigma = 1.3 * 2.0**40
    assert _block_sampler_ks_pvalue(1.05 * sigma, sigma, 32) < P_FLOOR


def test_block_sampler_ks_check_catches_a_swapped_alias_lookup(monkeypatch):
    """The KS test rejects a lookup whose keep and alias outcomes are swapped (p < 1e-7)."""
    right = noise_gaussian._gaussian_alias_lookup

    def swapped(rho, block):
        shifted, outcomes, k, bits = right(rho, block)
        return shifted, outcomes.reshape(-1, 2)[:, ::-1].ravel(), k, bits

    monkeypatch.setattr(noise_gaussian, "_gaussian_alias_lookup", swapped)
    sigma = 1.3 * 2.0**40
    assert _block_sampler_ks_pvalue(sigma, sigma, 33) < P_FLOOR


@pytest.mark.parametrize("rho", [16.01, 18.65, 25.0, 32.0 - 1e-9])
def test_alias_lookup_gives_every_block_exactly_the_alias_tables_probability(rho):
    """The one-word lookup (shifted thresholds, outcome pairs) implies, as exact fractions, the alias table's masses."""
    block = 2.0**36
    thresholds, alias, k, bits = noise_gaussian._gaussian_block_tables(rho)
    shifted, outcomes, k2, bits2 = noise_gaussian._gaussian_alias_lookup(rho, block)
    assert (k2, bits2) == (k, bits) and bits <= 10
    n_slots = 1 << bits
    from_table = [Fraction(0)] * n_slots
    from_lookup = [Fraction(0)] * n_slots
    for s in range(n_slots):
        keep = Fraction(int(thresholds[s]), 2**53)
        from_table[s] += keep / n_slots
        from_table[int(alias[s])] += (1 - keep) / n_slots
        # W uniform on 64 bits, slot bits 1..b fixed: P(W < shifted) = shifted / 2^64 (shifted is a multiple of 2^11).
        threshold = int(shifted[2 * s])
        assert threshold % 2**11 == 0 and int(shifted[2 * s + 1]) == 0
        keep_lookup = Fraction(threshold, 2**64)
        for outcome, mass in ((outcomes[2 * s + 1], keep_lookup), (outcomes[2 * s], 1 - keep_lookup)):
            g = Fraction(float(outcome)) / Fraction(block)
            assert g.denominator == 1
            from_lookup[int(g)] += mass / n_slots
    assert from_lookup == from_table


def test_grid_step_is_a_power_of_two_2_to_the_40_below_the_scale():
    """The grid is the power of two in (scale·2^-41, scale·2^-40]."""
    for scale in [1.0, 3.7, 1e-9, 1e12]:
        r = dpnoise.grid_step(scale)
        assert math.frexp(r)[0] == 0.5
        assert scale * 2.0**-41 < r <= scale * 2.0**-40
    with pytest.raises(ValueError, match="too small"):
        dpnoise.grid_step(1e-300)


def test_grid_laplace_outputs_lie_on_the_grid_whatever_the_input():
    """Outputs for inputs 0 and 1 are all multiples of the same grid step: the support does not depend on the input."""
    rng = np.random.default_rng(3)
    r = dpnoise.grid_step(1.0)
    for x in [0.0, 1.0, 0.1234567]:
        out = dpnoise.grid_laplace(np.full(50_000, x), 1.0, 1.0, 1, rng)
        assert np.all(out / r == np.round(out / r))


@pytest.mark.parametrize("size", [2, 7, 50, 3000, (1 << 18) + 5])
def test_grid_laplace_noise_drawn_ahead_gives_grid_laplace_bit_for_bit(size):
    """Rounding to the grid and adding the noise drawn ahead is the same float as ``grid_laplace`` from the same stream.

    ``grid_laplace`` on several values draws exactly this noise and adds the rounded values chunk by chunk, so the
    two are equal for any values (here on and off the grid, either side of 0, and huge), whatever the scale.
    """
    values = np.random.default_rng(size).normal(0, 10.0, size) * np.resize([1.0, -1e-9, 3e15, 0.0], size)
    for sensitivity, epsilon, dims in ((2.0, 0.3, 5), (60.0, 0.01, 50), (1.0, 40.0, 1)):
        noise, r = dpnoise.grid_laplace_noise((size,), sensitivity, epsilon, dims, np.random.default_rng(9))
        expected = dpnoise.grid_laplace(values, sensitivity, epsilon, dims, np.random.default_rng(9))
        np.testing.assert_array_equal(dpnoise.round_to_grid(values, r) + noise, expected)
        assert r == dpnoise.grid_step(sensitivity / epsilon)


@pytest.mark.slow
def test_grid_laplace_is_indistinguishable_from_continuous_laplace():
    """A KS test on 10^6 safe draws does not tell them from Lap(Δ/ε)."""
    rng = np.random.default_rng(4)
    out = dpnoise.grid_laplace(np.zeros(1_000_000), 2.0, 0.5, 1, rng)
    assert stats.kstest(out, stats.laplace(scale=4.0).cdf).pvalue > P_FLOOR


@pytest.mark.slow
def test_grid_gaussian_is_indistinguishable_from_continuous_gaussian():
    """A KS test on 10^6 safe Gaussian draws does not tell them from N(0, σ²), and the grid is 2^-40 of σ."""
    rng = np.random.default_rng(14)
    mech = dp.Gaussian(target=np.mean, sensitivity=1.0)
    params = dp.Del(1.0, 1e-6)
    out = mech._sample_many(np.array(0.0), params, rng, 1_000_000)
    sigma = mech.noise_scale(params)
    assert stats.kstest(out, stats.norm(scale=sigma).cdf).pvalue > P_FLOOR
    r = dpnoise.grid_step(sigma)
    assert np.all(out / r == np.round(out / r))


def test_laplace_epsilon_reserve_refuses_epsilon_too_small_for_the_float_error():
    """ε below the sampler's float error reserve is refused rather than silently over-claimed."""
    assert dpnoise.laplace_epsilon_reserve(1.0, 10) < 1.0
    with pytest.raises(ValueError, match="too small for safe noise"):
        dpnoise.laplace_epsilon_reserve(2.0**-35, 1)


@pytest.mark.slow
def test_exact_discrete_laplace_matches_its_pmf():
    """CKS20 discrete Laplace on Fractions follows P(k) ∝ exp(−|k|/scale)."""
    rng = np.random.default_rng(5)
    scale = Fraction(3, 2)
    draws = np.array([dpnoise.exact_discrete_laplace(scale, rng) for _ in range(5_000)])
    q = math.exp(-1 / 1.5)
    assert chisquare_pvalue(draws, lambda k: (1 - q) / (1 + q) * q ** np.abs(k)) > P_FLOOR


@pytest.mark.slow
def test_exact_discrete_gaussian_matches_its_pmf():
    """CKS20 discrete Gaussian on Fractions follows P(k) ∝ exp(−k²/(2σ²))."""
    rng = np.random.default_rng(6)
    draws = np.array([dpnoise.exact_discrete_gaussian(Fraction(9, 4), rng) for _ in range(4_000)])
    k = np.arange(-40, 41)
    norm = np.exp(-(k**2) / (2 * 2.25)).sum()
    assert chisquare_pvalue(draws, lambda x: np.exp(-(x**2) / 4.5) / norm) > P_FLOOR


def test_randbelow_handles_integers_beyond_64_bits():
    """Uniform integers below 2^100 + 1 are in range and use the high bits."""
    rng = np.random.default_rng(7)
    n = 2**100 + 1
    bits = noise_exact._Bits(rng)
    draws = [bits.below(n) for _ in range(200)]
    assert all(0 <= d < n for d in draws)
    assert max(draws) > 2**98


def test_discrete_laplace_releases_integers_with_the_declared_guarantee():
    """DiscreteLaplace returns int64 counts and reports exactly the requested Eps."""
    mech = dp.DiscreteLaplace(target=lambda x: np.bincount(x, minlength=4), sensitivity=2)
    r = mech.release_response(dp.Eps(0.5), np.array([0, 1, 1, 3]), rng=1)
    assert r.response.dtype == np.int64 and r.response.shape == (4,)
    assert r.privacy_params == dp.Eps(0.5)
    scalar = dp.DiscreteLaplace(target=len, sensitivity=1, noise="exact").release_response(dp.Eps(1.0), [1, 2], rng=2)
    assert isinstance(scalar.response, int)


def test_discrete_laplace_refuses_non_integer_targets():
    """A real-valued target is refused with a TargetOutputError pointing to Laplace."""
    mech = dp.DiscreteLaplace(target=np.mean, sensitivity=1)
    with pytest.raises(TargetOutputError, match="Use Laplace"):
        mech.release_response(dp.Eps(1.0), np.array([0.5, 1.0]), rng=1)


@pytest.mark.slow
def test_discrete_laplace_noise_follows_the_geometric_law():
    """Safe and exact DiscreteLaplace noise both match scipy's dlaplace(ε/Δ)."""
    value = np.zeros(1, dtype=np.int64)
    for noise, n in [("safe", 100_000), ("exact", 3_000)]:
        mech = dp.DiscreteLaplace(target=len, sensitivity=2, noise=noise)
        draws = mech._sample_many(value, dp.Eps(1.5), np.random.default_rng(8), n).ravel()
        assert chisquare_pvalue(draws, stats.dlaplace(0.75).pmf) > P_FLOOR


def test_rng_none_is_an_unpredictable_aes_counter_stream():
    """rng=None gives a Generator on AES-CTR keyed from the OS, whose draws differ on every call (no fixed seed)."""
    from randomgen import AESCounter

    from diffpriv_py._rng import as_generator

    a, b = as_generator(None), as_generator(None)
    assert isinstance(a.bit_generator, AESCounter)
    assert not np.array_equal(a.integers(0, 2**62, size=4), b.integers(0, 2**62, size=4))
    mech = dp.Laplace(target=np.mean, sensitivity=0.1)
    assert (
        mech.release_response(dp.Eps(1.0), np.zeros(5)).response
        != mech.release_response(dp.Eps(1.0), np.zeros(5)).response
    )


def test_seeds_mean_reproducible_test_mode_and_bad_rng_values_are_refused():
    """Ints and SeedSequences reproduce; bools, negative ints and strings are refused with a clear message."""
    from diffpriv_py._rng import as_generator

    assert as_generator(5).random() == as_generator(5).random()
    assert as_generator(np.random.SeedSequence(5)).random() == as_generator(np.random.SeedSequence(5)).random()
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    with pytest.raises(ValueError, match="non-negative"):
        as_generator(-1)
    for bad in (True, "42", 1.5):
        with pytest.raises(TypeError, match="rng"):
            as_generator(bad)
