"""DP-SGD's fast training loop: noise drawn ahead in blocks is fresh for every step, and the fast clipping path equals
the overflow-safe one wherever it is used."""

import itertools
import math

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.estimators import DPSGDClassifier
from diffpriv_py.estimators.dpsgd import (
    FAST_SQUARES,
    SafeNoise,
    _safe_clipped_sum,
    clipped_gradient_sum,
    step_randomness,
)

NOISE = SafeNoise(noise_multiplier=1.0, grid=2.0**-40, step_sensitivity=1.0, noise_std=1.0)


def _steps(dims, n, steps, *, seed, block_steps):
    """All steps' noise rows and samples, with a block size of ``block_steps`` steps (so several blocks)."""
    block_bytes = 8 * (dims + n) * block_steps
    draws = list(step_randomness(NOISE, steps, dims, n, 0.25, np.random.default_rng(seed), block_bytes=block_bytes))
    return np.array([row for row, _ in draws]), [batch for _, batch in draws]


def _fresh_and_calibrated(rows, std):
    """Every step's noise has sample std within 1 % of ``std``, and no two steps' noise are correlated.

    With d = 200 000 values per step the sample std has relative standard error 1/√(2d) = 0.16 % (the band is 6.3
    standard errors) and a correlation of independent vectors has standard error 1/√d (the bound is 6 of them): with
    at most 15 pairs and 6 steps, a false alarm has probability below 1e-8.
    """
    d = rows.shape[1]
    stds_ok = all(abs(float(np.std(row)) / std - 1) < 0.01 for row in rows)
    corr = np.corrcoef(rows)
    off_diagonal = np.abs(corr[~np.eye(len(rows), dtype=bool)])
    return stds_ok and float(off_diagonal.max()) < 6 / math.sqrt(d)


def test_noise_drawn_in_blocks_is_fresh_for_every_step_and_has_the_stated_std():
    """Six steps drawn two per block: each step's noise has std noise_std and is uncorrelated with every other's.

    The check is shown to catch the bugs it guards against: a step that reuses the previous step's noise (correlation
    1), a block whose rows repeat, and noise at half the scale.
    """
    rows, _ = _steps(200_000, 10, 6, seed=1, block_steps=2)
    assert _fresh_and_calibrated(rows, 1.0)
    reused = rows.copy()
    reused[3] = reused[2]  # the first step of a block reuses the last one of the previous block
    assert not _fresh_and_calibrated(reused, 1.0)
    repeated = np.repeat(rows[::2], 2, axis=0)  # one noise vector per block, sliced twice
    assert not _fresh_and_calibrated(repeated, 1.0)
    assert not _fresh_and_calibrated(rows / 2, 1.0)


def test_every_step_gets_its_own_poisson_sample():
    """Samples differ between steps and their sizes average qn (here 200 steps of n = 400 at q = 1/4).

    The mean of 200 sample sizes has standard error √(nq(1−q)/200) = 0.61; the band ±4 is 6.5 of them. Reusing a
    block's first sample for all its steps would make the steps' samples identical, which is checked directly.
    """
    _, batches = _steps(3, 400, 200, seed=2, block_steps=7)
    sizes = np.array([b.size for b in batches])
    assert abs(sizes.mean() - 100) < 4
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(batches))
    assert all(np.all(np.diff(b) > 0) for b in batches)


def test_a_seed_fixes_the_documented_stream_order():
    """For a seed, each block takes its k·dims noise values first and then its k·n sample uniforms, step by step."""
    dims, n, q, block = 5, 8, 0.5, 3
    got = list(step_randomness(NOISE, 7, dims, n, q, np.random.default_rng(4), block_bytes=8 * (dims + n) * block))
    rng = np.random.default_rng(4)
    expected = []
    for k in (3, 3, 1):
        values = NOISE.draw(k * dims, rng).reshape(k, dims)
        joins = rng.random((k, n)) < q
        expected += [(values[t], np.flatnonzero(joins[t])) for t in range(k)]
    assert len(got) == len(expected) == 7
    for (row, batch), (row_e, batch_e) in zip(got, expected, strict=True):
        np.testing.assert_array_equal(row, row_e)
        np.testing.assert_array_equal(batch, batch_e)


def test_pre_drawn_noise_added_to_a_sum_lies_on_the_grid_with_perturbs_law():
    """add(values, draw(...)) is a grid multiple, like perturb(values): the std of 200 000 draws is within 1 %."""
    values = np.random.default_rng(5).normal(size=200_000) * np.pi
    noise = SafeNoise(noise_multiplier=1.3, grid=2.0**-40, step_sensitivity=1.0, noise_std=1.3)
    out = noise.add(values, noise.draw(values.size, np.random.default_rng(6)))
    ratio = out / noise.grid
    np.testing.assert_array_equal(ratio, np.rint(ratio))
    assert abs(float(np.std(out - values)) / 1.3 - 1) < 0.01


def _net(sizes, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=(a, b)) * scale for a, b in itertools.pairwise(sizes)]
    biases = [rng.normal(size=b) * 0.1 for b in sizes[1:]]
    return weights, biases


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("magnitude", [1.0, 1e20, 1e50, 1e154, 1e300])
def test_the_fast_clipping_path_equals_the_safe_path(activation, magnitude):
    """Norms and clipped sums equal the all-safe reference's, on the fast path (sums of squares ≤ 2⁴⁰⁰) and beyond."""
    weights, biases = _net((6, 9, 5, 3), seed=8)
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 6)) * magnitude
    codes = rng.integers(0, 3, size=40)
    grad_w, grad_b, norms = clipped_gradient_sum(X, codes, weights, biases, activation, 0.8)
    safe_w, safe_b, safe_norms = _safe_clipped_sum(X, codes, weights, biases, activation, 0.8)
    np.testing.assert_allclose(norms, safe_norms, rtol=1e-12)
    for fast, safe in zip((*grad_w, *grad_b), (*safe_w, *safe_b), strict=True):
        np.testing.assert_allclose(fast, safe, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("huge", [math.sqrt(FAST_SQUARES), 1e154, 1e300])
def test_an_examples_norm_does_not_depend_on_a_huge_example_in_the_same_sample(huge):
    """The path is chosen per example: adding a record beyond the fast path's range (clipped or contributing 0)
    leaves every other example's computed norm bit for bit unchanged, and its own is the safe path's.

    A per-sample switch would give the others the safe path's norms, which differ in the last bits for this data
    (checked below): their contributions would then depend on the other records in the sample.
    """
    weights, biases = _net((4, 6, 3), seed=10)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 4)) * 3
    codes = rng.integers(0, 3, size=30)
    _, _, alone = clipped_gradient_sum(X, codes, weights, biases, "relu", 1.0)
    big = np.vstack([X, np.full((1, 4), huge)])
    for label in range(3):
        _, _, together = clipped_gradient_sum(big, np.append(codes, label), weights, biases, "relu", 1.0)
        np.testing.assert_array_equal(together[:-1], alone)
        _, _, reference = _safe_clipped_sum(big, np.append(codes, label), weights, biases, "relu", 1.0)
        assert together[-1] == reference[-1]
    assert not np.array_equal(reference[:-1], alone)  # the bug this test would catch is visible on this data


def test_a_huge_record_is_clipped_to_the_ball():
    """A record with ‖x‖² = 4·2⁴⁰⁰ (beyond the fast path) gets its true, finite norm and a contribution of norm ≤ C."""
    weights, biases = _net((4, 6, 3), seed=10)
    x = np.full((1, 4), math.sqrt(FAST_SQUARES))
    grad_w, grad_b, norms = clipped_gradient_sum(x, np.array([1]), weights, biases, "relu", 1.0)
    assert np.all(np.isfinite(norms)) and norms[0] > 1e30  # its true norm, clipped like any other
    total = math.sqrt(sum(float(np.sum(a**2)) for a in (*grad_w, *grad_b)))
    assert total <= 1 + 1e-9


def test_too_many_layers_are_refused():
    """The float-error bound assumes fewer than 2²⁰ layers; more are refused at construction."""
    with pytest.raises(ValueError, match="fewer than 1048576 layers"):
        DPSGDClassifier(hidden_layer_sizes=(1,) * 2**20)


def test_a_release_uses_fresh_noise_every_step_when_training_spans_several_blocks(monkeypatch):
    """Noise-only weights (zero features, no momentum) after T steps drawn three per block have variance
    2/d + T(σCη/(qn))²: within 15 % (2000 weights, 5 standard errors); reusing one noise vector per block would
    give (3² + 3² + 3² + 1)/10 = 2.8 times the noise variance."""
    import diffpriv_py.estimators.dpsgd as dpsgd

    d, k, n, sigma = 200, 10, 10, 3.0
    monkeypatch.setattr(dpsgd, "BLOCK_BYTES", 8 * ((d + 1) * k + n) * 3)
    mech = DPSGDClassifier(
        hidden_layer_sizes=(),
        sampling_rate=0.5,
        epochs=5,  # 10 steps: blocks of 3, 3, 3, 1
        learning_rate=1.0,
        momentum=0.0,
        noise_multiplier=sigma,
        classes=list(range(k)),
    )
    model = mech.release_response(dp.Del(50.0, 1e-5), (np.zeros((n, d)), np.arange(n) % k), rng=11).response
    expected = 2 / d + mech.steps * (sigma / (0.5 * n)) ** 2
    assert 0.85 < float(np.var(model.weights[0])) / expected < 1.15


def test_steps_with_an_empty_sample_still_add_their_noise(monkeypatch):
    """With n = 2 and q = 0.01 every step's sample is empty (checked); the biases, 0 at initialisation, are nonzero
    after training, as they would not be if empty steps were skipped."""
    import diffpriv_py.estimators.dpsgd as dpsgd

    sizes = []
    original = dpsgd.step_randomness

    def spy(*args, **kwargs):
        for row, batch in original(*args, **kwargs):
            sizes.append(batch.size)
            yield row, batch

    monkeypatch.setattr(dpsgd, "step_randomness", spy)
    mech = DPSGDClassifier(
        hidden_layer_sizes=(), sampling_rate=0.01, epochs=0.05, momentum=0.0, noise_multiplier=2.0, classes=[0, 1]
    )
    model = mech.release_response(dp.Del(50.0, 1e-5), (np.zeros((2, 3)), np.array([0, 1])), rng=0).response
    assert sizes == [0] * 5
    assert np.all(model.biases[0] != 0) and np.all(np.isfinite(model.biases[0]))
