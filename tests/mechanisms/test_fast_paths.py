"""The per-release fast paths (raw words, scalar samplers, small batches) give the general paths' very outputs."""

import math

import numpy as np
import pytest
from scipy import stats

import diffpriv_py as dp
from diffpriv_py import noise as dpnoise
from diffpriv_py._rng import double_source, random_words, word_source
from diffpriv_py.exceptions import TargetOutputError
from diffpriv_py.noise import gaussian as noise_gaussian
from diffpriv_py.noise import geometric as noise_geometric

P_FLOOR = 1e-6  # a correct sampler fails the goodness-of-fit test with probability below 1e-6

BIT_GENERATORS = [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64, np.random.MT19937]


def _twins(bit_generator: type) -> tuple[np.random.Generator, np.random.Generator]:
    return np.random.Generator(bit_generator(11)), np.random.Generator(bit_generator(11))


@pytest.mark.parametrize("bit_generator", BIT_GENERATORS)
def test_random_words_are_numpys_full_range_integers_for_every_bit_generator(bit_generator):
    """random_words and word_source give integers(0, 2**64, dtype=uint64), also where random_raw is 32-bit."""
    ours, numpys = _twins(bit_generator)
    assert random_words(ours, 40).tolist() == numpys.integers(0, 2**64, size=40, dtype=np.uint64).tolist()
    word = word_source(ours)
    assert [word() for _ in range(40)] == numpys.integers(0, 2**64, size=40, dtype=np.uint64).tolist()


@pytest.mark.parametrize("bit_generator", BIT_GENERATORS)
def test_double_source_words_carry_the_uniforms_of_random(bit_generator):
    """The top 53 bits of double_source's words are, draw for draw, the uniforms rng.random() gives."""
    ours, numpys = _twins(bit_generator)
    word = double_source(ours)
    assert [(word() >> 11) * 2.0**-53 for _ in range(200)] == [numpys.random() for _ in range(200)]


def _mt19937_gaussian_noise() -> tuple[np.ndarray, float]:
    mech = dp.Gaussian(target=lambda v: v, sensitivity=1.0)
    params = dp.Del(1.0, 1e-6)
    rng = np.random.Generator(np.random.MT19937(5))
    return mech.release_response(params, np.zeros(100_000), rng=rng).response, mech.noise_scale(params)


def test_safe_gaussian_with_an_mt19937_generator_has_the_calibrated_noise():
    """A user's Generator(MT19937) (32-bit raw words) still gets N(0, σ²) noise from the safe Gaussian sampler."""
    noise, sigma = _mt19937_gaussian_noise()
    assert stats.kstest(noise / sigma, "norm").pvalue > P_FLOOR


def test_mt19937_gaussian_check_catches_32_bit_words_read_as_64_bit(monkeypatch):
    """The same test rejects the sampler fed MT19937's raw 32-bit words directly (the old bug)."""
    monkeypatch.setattr(noise_gaussian, "random_words", lambda rng, size: rng.bit_generator.random_raw(size))
    noise, sigma = _mt19937_gaussian_noise()
    assert stats.kstest(noise / sigma, "norm").pvalue < P_FLOOR


@pytest.mark.parametrize("beta", [0.07, 0.3, 0.5, 1.0, 2.0])
def test_geometric_stages_by_binary_search_are_the_threshold_counts(beta):
    """_stages gives #{i : u < t_i} on both of its paths (binary search for few values, the loop for many)."""
    thresholds, ascending = noise_geometric._stage_tables(beta)
    rng = np.random.default_rng(3)
    for size in [1, 7, 100 * thresholds.size, 100 * thresholds.size + 1, 5000]:
        u = np.concatenate([rng.random(size), thresholds[: min(size, thresholds.size)]])  # ties too
        expected = (u[:, None] < thresholds[None, :]).sum(axis=1).astype(np.float64)
        assert np.array_equal(noise_geometric._stages(u, thresholds, ascending), expected)


def _block_parameters(sigma: float) -> tuple[float, float, int, float]:
    _, e = math.frexp(sigma / noise_gaussian._BLOCKS_PER_SIGMA)
    block = math.ldexp(1.0, e - 1)
    return sigma / block, block, e - 1, -0.5 / (sigma * sigma)


def _refilled(size: int, sigma: float, seed: int, unit: float, offset: np.ndarray) -> np.ndarray:
    """The general path: every position filled by _refill, as for the rejected positions of a large release."""
    rho, block, k, scale = _block_parameters(sigma)
    rng = np.random.default_rng(seed)
    tails = noise_gaussian._GaussianTailPool(rho, math.ceil(3 * rho), rng, int(0.003 * size) + 1)
    out = np.empty(size)
    noise_gaussian._refill(out, np.arange(size), rho, block, k, scale, rng, tails, unit, offset)
    return out


@pytest.mark.parametrize("size", [1, 2, 10, 33, 500, 2000])
def test_small_gaussian_batch_gives_the_refill_paths_output(size):
    """A release of fewer values than a chunk equals the general refill of all its positions, bit for bit."""
    sigma, unit = 3.0 * 2.0**40 + 0.5, 2.0**-38
    offset = np.linspace(-5.0, 5.0, size)
    for seed in range(20):
        fast = noise_gaussian._discrete_gaussian_blocks(
            size, sigma, np.random.default_rng(seed), unit=unit, offset=offset
        )
        assert fast.tobytes() == _refilled(size, sigma, seed, unit, offset).tobytes()


def test_small_gaussian_batch_with_too_few_accepted_proposals_continues_as_the_refill(monkeypatch):
    """When the first batch accepts fewer proposals than values, the rest are refilled as the general path does."""
    original = noise_gaussian._gaussian_block_proposals
    calls = []

    def stingy(m, *args):
        g, rejected = original(m, *args)
        calls.append(m)
        if len(calls) == 1:  # the first batch keeps only its first 3 proposals
            rejected = np.union1d(rejected, np.arange(3, m))
        return g, rejected

    monkeypatch.setattr(noise_gaussian, "_gaussian_block_proposals", stingy)
    sigma, unit, size = 2.0**30 + 0.25, 2.0**-20, 50
    offset = np.linspace(-1.0, 1.0, size)
    fast = noise_gaussian._discrete_gaussian_blocks(size, sigma, np.random.default_rng(8), unit=unit, offset=offset)
    assert len(calls) == 2
    calls.clear()
    assert fast.tobytes() == _refilled(size, sigma, 8, unit, offset).tobytes()


def test_scalar_laplace_caps_a_zero_acceptance_uniform(monkeypatch):
    """w = 0 (chance 2⁻⁵³) gives v = 0, a capped stage as in the vectorised sampler, not a math.log error."""
    lam = 2.0**-20
    k, beta = noise_geometric._block_exponent(lam)
    queue = [5 << (64 - k), (2**52) << 11]  # R = 5, then m = 2^52: w = m·2⁻⁵² − 1 = 0; then the generator's own
    real = noise_geometric.double_source
    monkeypatch.setattr(noise_geometric, "double_source", lambda rng: lambda: queue.pop(0) if queue else real(rng)())
    noise = noise_geometric._one_signed_geometric(lam, k, beta, np.random.default_rng(0), 1.0, 0.0)
    cap = max(1, int(4.0 / beta))
    assert noise >= cap * 2.0**k + 5 and (noise - 5) % 2.0**k == 0


@pytest.mark.parametrize("noise", ["safe", "exact", "float"])
def test_scalar_gaussian_release_equals_the_one_element_array_release(noise):
    """A scalar Gaussian release is the float the same value in an array of one element gets."""
    for seed in range(100):
        scalar = dp.Gaussian(target=lambda x: 0.37, sensitivity=0.3, noise=noise)
        vector = dp.Gaussian(target=lambda x: np.array([0.37]), sensitivity=0.3, noise=noise)
        a = scalar.release_response(dp.Del(0.8, 1e-6), None, rng=seed).response
        b = vector.release_response(dp.Del(0.8, 1e-6), None, rng=seed).response
        assert type(a) is float and a == b[0]


@pytest.mark.parametrize("value", [math.nan, math.inf, np.float64(-math.inf)])
def test_scalar_target_fast_path_still_refuses_a_non_finite_output(value):
    """A float target's NaN or infinity is refused by the scalar evaluation as by the array one."""
    with pytest.raises(TargetOutputError, match="NaN or infinite"):
        dp.Laplace(target=lambda x: value, sensitivity=1.0).release_response(dp.Eps(1.0), None, rng=0)


def test_scalar_target_fast_path_still_checks_dims():
    """A float target on a mechanism declared with dims=2 is refused with the dimension message."""
    with pytest.raises(TargetOutputError, match="unexpected dimension"):
        dp.Laplace(target=lambda x: 0.5, sensitivity=1.0, dims=2).release_response(dp.Eps(1.0), None, rng=0)


@pytest.mark.parametrize("size", [3, 5000])
def test_grid_rounding_keeps_values_beyond_the_grids_integer_range(size):
    """Values with |v| ≥ 2⁵²·r are already on the grid and kept, small and large arrays alike."""
    r = 2.0**-40
    values = np.full(size, 0.3)
    values[0], values[-1] = 1e300, -(2.0**13)
    rounded = dpnoise.round_to_grid(values, r)
    assert rounded[0] == 1e300 and rounded[-1] == -(2.0**13)
    assert rounded[1] == round(0.3 / r) * r


@pytest.mark.parametrize("rho", [16.0, 23.7, 31.9, 3.0, 0.6])
def test_few_gaussian_tails_replay_the_array_tail_sampler(rho):
    """A few tail draws in Python arithmetic are the array sampler's values, and leave the stream where it does
    (ρ = 3 and 0.6 reach the exact small-probability Bernoulli words and the Bernoulli-trial geometric)."""
    k = math.ceil(3 * rho)
    for n in [1, 2, 4, 32]:
        for seed in range(60):
            ours, arrays = np.random.default_rng(seed), np.random.default_rng(seed)
            assert (
                noise_gaussian._few_gaussian_tails(n, rho, k, ours)
                == noise_gaussian._gaussian_tail_arrays(n, rho, k, arrays).tolist()
            )
            assert ours.random() == arrays.random()
