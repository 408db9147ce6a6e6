"""The fused exact row pass (``_fixed_point.clipped_grid_gram``) against the two-step reference it replaced.

The reference is the former kernel of PCA and LinearRegression: per block of 4096 rows,
``q = grid_rows(clip_rows_to_norm(block, bound), bits)`` and Σ qqᵀ. The fused pass must give the same integers bit for
bit (that is what keeps releases identical for a seed), on inputs chosen to break a shortcut: rows exactly on and
around the clipping sphere, huge and tiny magnitudes, subnormals, signed zeros, ragged last blocks, float32, integer
and non-contiguous input. It must not modify the input and its extra memory must not grow with n.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py._fixed_point import clip_rows_to_norm, clipped_grid_gram, grid_rows, record_bits
from diffpriv_py.estimators import PCA, LinearRegression
from diffpriv_py.estimators.pca import clipped_gram


def reference(X: np.ndarray, bound: float, bits: int, rows: int = 4096) -> np.ndarray:
    data = np.asarray(X).astype(np.float64)
    gram = np.zeros((data.shape[1], data.shape[1]))
    for start in range(0, data.shape[0], rows):
        q = grid_rows(clip_rows_to_norm(data[start : start + rows], bound), bits)
        gram += q.T @ q  # integer-valued, every partial sum ≤ n·4ᵇ ≤ 2⁵²: exact
    return gram


def assert_same(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def hostile(n: int, d: int, bound: float, seed: int) -> np.ndarray:
    """Rows on, just inside and just outside the sphere of radius ``bound``, huge, tiny, subnormal and ±0 rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.exp(rng.uniform(-3, 3, (n, 1)))
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    X[0::9] = unit[0::9] * bound  # on the sphere (up to one rounding)
    X[1::9] = unit[1::9] * np.nextafter(bound, np.inf)
    X[2::9] = unit[2::9] * np.nextafter(bound, 0.0)
    X[3::9] = unit[3::9] * bound * (1 - 2.0**-20)
    X[4::9] *= 1e300
    X[5::9] = unit[5::9] * 1e-300
    X[6::9] = rng.choice([-1.0, 1.0], X[6::9].shape) * 2.0 ** rng.integers(-1074, -1000, X[6::9].shape)
    X[7::9] = rng.choice([-0.0, 0.0], X[7::9].shape)
    X[8::18] = unit[8::18] * bound * 2.0 ** -(record_bits(n) + 2)  # below one grid step
    return X


@pytest.mark.parametrize("d", [1, 3, 20])
@pytest.mark.parametrize("bound", [1.0, 0.7, 1e-300, 1e300, 2.0**-400, 2.0**401])
def test_hostile_rows_give_the_reference_integers(d, bound):
    n = 4096 + 1234  # a ragged last block
    X = hostile(n, d, bound, seed=d)
    for bits in (record_bits(n), 7, 1):
        assert_same(clipped_grid_gram(X, bound, bits), reference(X, bound, bits))


def test_blocks_on_the_common_path_and_straddling_zero():
    """Blocks with no clipped row take the one-factor path; values of both signs around 0, near the limit."""
    rng = np.random.default_rng(1)
    n, d = 3 * 4096 + 5, 7
    X = rng.uniform(-1, 1, (n, d)) * 1e-3
    X[:4096] /= np.linalg.norm(X[:4096], axis=1, keepdims=True) / (1 - 2.0**-15)  # inside, just under the bound
    X[4096:8192:3] = rng.choice([-1.0, 1.0], (len(range(4096, 8192, 3)), d)) * 2.0**-1074
    for bound in (1.0, 1.0 + 2.0**-52, 0.999):
        for bits in (record_bits(n), 4):  # on a coarse grid rint pushes rows just inside the ball out of it
            assert_same(clipped_grid_gram(X, bound, bits), reference(X, bound, bits))
    inside = X[:4096] * (1 - 2.0**-30) / (1 - 2.0**-15)  # unclipped, a hair inside the sphere: the check must run
    nearest = np.rint(clip_rows_to_norm(inside, 1.0) * 16)
    assert (np.einsum("ij,ij->i", nearest, nearest) > 256).any()  # some rows do round out of the ball
    assert_same(clipped_grid_gram(inside, 1.0, 4), reference(inside, 1.0, 4))


def test_truncating_grid_of_small_n():
    """d·4ᵇ > 2⁵² (small n, wide rows): grid_rows truncates every row; the fused pass must too."""
    X = hostile(40, 64, 1.0, seed=3)
    bits = record_bits(2)
    assert 64 * 4.0**bits > 2.0**52
    assert_same(clipped_grid_gram(X, 1.0, bits), reference(X, 1.0, bits))


def test_dtypes_and_layouts_give_the_same_integers():
    X = hostile(5000, 6, 2.0, seed=4)
    bits = record_bits(10_000)
    whole = reference(X, 2.0, bits)
    assert_same(clipped_grid_gram(np.asfortranarray(X), 2.0, bits), whole)
    wide = np.zeros((5000, 12))
    wide[:, ::2] = X
    assert_same(clipped_grid_gram(wide[:, ::2], 2.0, bits), whole)  # strided columns
    flipped = X[::-1]
    assert_same(clipped_grid_gram(flipped, 2.0, bits), reference(flipped, 2.0, bits))
    X32 = np.clip(X, -1e38, 1e38).astype(np.float32)
    assert_same(clipped_grid_gram(X32, 2.0, bits), reference(X32, 2.0, bits))
    Xi = np.random.default_rng(5).integers(-(2**40), 2**40, (5000, 6))
    assert_same(clipped_grid_gram(Xi, 3.0, bits), reference(Xi, 3.0, bits))


def test_input_is_not_modified():
    X = hostile(4100, 5, 1.0, seed=6)
    X32 = np.clip(X, -1e38, 1e38).astype(np.float32)
    before, before32 = X.copy(), X32.copy()
    clipped_grid_gram(X, 1.0, 10)
    clipped_grid_gram(X32, 1.0, 10)
    PCA(2, data_norm=1.0).release_response(dp.Eps(1.0), X, rng=0)
    LinearRegression(data_norm=1.0, label_bound=1.0).release_response(dp.Del(1.0, 1e-6), (X, X[:, 0]), rng=0)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(X32, before32)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused_in_any_block(bad):
    X = np.random.default_rng(7).normal(size=(9000, 4))
    X[8999, 2] = bad  # in the ragged last block
    with pytest.raises(ValueError, match="NaN or infinite"):
        clipped_gram(X, 1.0)
    y = X[:, 0].copy()
    X[8999, 2] = 0.0
    y[5000] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        LinearRegression(data_norm=1.0, label_bound=1.0).statistics((X, y))


def test_regression_sums_equal_those_of_the_normalised_records():
    """A, b, s, u from the fused pass against ZᵀZ, Zᵀt, ΣZ, Σt of :meth:`LinearRegression.normalise`."""
    rng = np.random.default_rng(8)
    X = hostile(6000, 5, 2.0, seed=8)
    y = np.stack([rng.normal(size=6000) * 3, rng.uniform(-1e30, 1e30, 6000)], axis=1).astype(np.float32)
    y[::7, 0] = -0.0
    model = LinearRegression(data_norm=2.0, label_bound=[(-2.0, 3.0), (-1.0, 1.0)], fit_intercept=True)
    Z, t = model.normalise((X, y))
    A, b, s, u = model._block_sums((X, y), X.shape[0])
    assert_same(A, Z.T @ Z)
    assert_same(b, Z.T @ t)
    assert_same(s, Z.sum(axis=0))
    assert_same(u, t.sum(axis=0))


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_extra_memory_does_not_grow_with_n(dtype):
    """The former pass built an n×d finiteness mask (and a float64 copy of float32 data): its peak grew with n."""
    rng = np.random.default_rng(9)
    small = rng.normal(size=(20_000, 8)).astype(dtype)
    large = rng.normal(size=(400_000, 8)).astype(dtype)
    peaks = [_peak(lambda X=X: clipped_gram(X, 3.0)) for X in (small, large)]
    assert peaks[1] < 1_000_000  # 4096-row workspaces (262 kB for d = 8); the old n×d mask alone was 3.2 MB
    assert peaks[1] < 1.5 * peaks[0] + 65_536
