"""Non-private k-means on already-private points, which costs no privacy (post-processing): weighted Lloyd with
k-means++ seeding and restarts, and the merging of noisy cells into k centres.
"""

from __future__ import annotations

import math

import numpy as np

from ._cells import _Cells, _squared_distances

_MAX_ITER_NOISY = 100
"""Most iterations of each (free) Lloyd run on already-private points: input perturbation's default, and every merge
of noisy cells."""

_N_INIT_CORESET = 10
"""k-means++ restarts of the (free) weighted Lloyd run on the private coreset."""


def _lloyd(
    Z: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    n_init: int,
    max_iter: int,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """Plain (optionally weighted) Lloyd with k-means++ seeding and restarts; only ever run on already-private data."""
    best, best_cost, best_iter = None, math.inf, 0
    n, cells = Z.shape[0], _Cells.of(Z, k)
    for _ in range(n_init):
        C = np.empty((k, Z.shape[1]))
        C[0] = Z[rng.integers(n) if weights is None else rng.choice(n, p=weights / weights.sum())]
        closest = ((Z - C[0]) ** 2).sum(axis=1)
        for j in range(1, k):
            mass = closest if weights is None else closest * weights
            total = mass.sum()
            idx = rng.choice(n, p=mass / total) if total > 0 else rng.integers(n)
            C[j] = Z[idx]
            closest = np.minimum(closest, ((Z - C[j]) ** 2).sum(axis=1))
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - the count is the result
            counts, sums = cells.statistics(C, weights)
            filled = counts > 0
            new = C.copy()
            new[filled] = sums[filled] / counts[filled, None]
            shift = np.abs(new - C).max()
            C = new
            if shift <= 1e-7:  # in units of the box [-1, 1]: far below the noise
                break
        nearest = _squared_distances(Z, C).min(axis=1)
        cost = nearest.sum() if weights is None else nearest @ weights
        if cost < best_cost:
            best, best_cost, best_iter = C, cost, it
    assert best is not None  # for type checkers: n_init ≥ 1 restarts, and the first always beats an infinite cost
    return best, best_iter


def _merge_cells(
    counts: np.ndarray, means: np.ndarray, k: int, survival: float, rng: np.random.Generator
) -> np.ndarray:
    """k centres from noisy cell counts and means: weighted k-means on the means (post-processing only).

    Cells whose noisy count is at most ``survival`` are likely empty and dropped, keeping at least the k largest.
    A kept cell weighs its noisy count, floored at ``min(1, survival)``: the floor keeps the weights positive (the
    k largest may be below the threshold) and shrinks with the noise, so an empty cell that passes the threshold by
    chance (about 2.5% of them at any ε) weighs about as much as its noise, not a whole record. With survival ≥ 1
    (every ε where the noise scale is at least 1/6 of a record) it is the old floor of one record.
    """
    kept = np.flatnonzero(counts > survival)
    if kept.size < k:
        kept = np.argsort(-counts, kind="stable")[:k]
    weights = np.maximum(counts[kept], min(1.0, survival))
    n_init = _N_INIT_CORESET if k > 1 else 1  # one cluster: every restart ends at the weighted mean
    return _lloyd(means[kept], k, rng, n_init=n_init, max_iter=_MAX_ITER_NOISY, weights=weights)[0]
