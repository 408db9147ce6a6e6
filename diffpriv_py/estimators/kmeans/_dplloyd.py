"""DPLloyd (Blum, Dwork, McSherry & Nissim 2005) and its improved form (Su et al. 2016, 2017): noisy Lloyd
iterations from data-independent initial centres (sphere packing or uniform in the box).

Private cores: prior validation of data is assumed (the data come from ``KMeans.prepare``, the plan from
``KMeans.plan``).
"""

from __future__ import annotations

import math

import numpy as np

from ._cells import _Cells
from ._noisy_cells import _cell_noise, _noisy_statistics
from ._normalised_data import _BlockwiseData
from ._plan import DPLloydPlan

SHRINKAGE = 3.0
"""τ of the shrinkage weight C̃²/(C̃² + τ²), in count-noise scales (post-processing; see ``KMeans(shrinkage=)``)."""


def _dplloyd_centres(
    Z: np.ndarray,
    plan: DPLloydPlan,
    rng: np.random.Generator,
    n_releases: int,
    *,
    k: int,
    improved: bool,
    sensitivity: float,
    shrinkage: bool,
) -> tuple[np.ndarray, int]:
    """Centres of ``n_releases`` DPLloyd releases in the box [-1, 1]^d, shape (n_releases, k, d), and ``n_iter``."""
    centres = _initial_centres(k, Z.shape[1], improved, rng, n_releases)
    return _lloyd_steps(Z, centres, plan, rng, sensitivity=sensitivity, shrinkage=shrinkage)[0], plan.n_iter


def _initial_centres(k: int, d: int, improved: bool, rng: np.random.Generator, n_releases: int) -> np.ndarray:
    """Data-independent initial centres, shape (n_releases, k, d): sphere packing if ``improved``, else uniform."""
    if not improved:
        return rng.uniform(-1.0, 1.0, size=(n_releases, k, d))
    return _sphere_packing(k, d, rng, n_releases)


def _lloyd_steps(
    Z: np.ndarray | _Cells | _BlockwiseData,
    centres: np.ndarray,
    plan: DPLloydPlan,
    rng: np.random.Generator,
    *,
    sensitivity: float,
    shrinkage: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """``plan.n_iter`` noisy Lloyd iterations from ``centres``: the new centres and the last noisy counts."""
    noisy_counts = np.zeros(centres.shape[:2])
    k = centres.shape[1]
    # The cells every iteration reads, made once.
    data = Z if isinstance(Z, _BlockwiseData) else Z.for_centres(k) if isinstance(Z, _Cells) else _Cells.of(Z, k)
    tau = SHRINKAGE * 2.0 * sensitivity / plan.epsilon_count
    steps = plan.n_iter
    for noise in _cell_noise(centres.shape, plan.epsilon_count, plan.epsilon_sums, steps, rng, sensitivity=sensitivity):
        noisy_counts, noisy_sums = _noisy_statistics(data, centres, noise)
        # Post-processing of the noisy statistics (ufuncs on k·d values: a few µs per iteration).
        if shrinkage:
            positive = noisy_counts > 0
            ratio = _clip_unit(noisy_sums / np.where(positive, noisy_counts, 1.0)[..., None])
            squares = noisy_counts * noisy_counts
            weight = np.where(positive, squares / (squares + tau * tau), 0.0)
            centres = centres + weight[..., None] * (ratio - centres)
        else:
            kept = noisy_counts >= 1.0
            ratio = _clip_unit(noisy_sums / np.where(kept, noisy_counts, 1.0)[..., None])
            centres = np.where(kept[..., None], ratio, centres)
    return centres, noisy_counts


def _clip_unit(values: np.ndarray) -> np.ndarray:
    """``values`` clipped to [-1, 1] in place (two ufunc calls: ``np.clip``'s wrapper costs more on k·d values)."""
    np.maximum(values, -1.0, out=values)
    clipped: np.ndarray = np.minimum(values, 1.0, out=values)
    return clipped


def _sphere_packing(k: int, d: int, rng: np.random.Generator, n: int = 1) -> np.ndarray:
    """Su et al.'s initialisation in [-1, 1]^d for ``n`` independent releases, shape (n, k, d).

    Candidates are uniform in [-1 + a, 1 - a]^d and accepted at distance ≥ 2a from the centres accepted so far;
    after 100 rejections in a row all are discarded and a is halved (a starts at 1, half the side of the box).
    """
    return np.stack([_sphere_packing_one(k, d, rng) for _ in range(n)])


def _sphere_packing_one(k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    a = 1.0
    # A level where two centres cannot be 2a apart (2a > the shrunken box's diameter 2(1 − a)√d) fails with
    # certainty; skipping it changes only which random numbers are used, not the distribution of the result.
    while k > 1 and a * (1.0 + math.sqrt(d)) > math.sqrt(d):
        a /= 2.0
    block, used = rng.uniform(-1.0, 1.0, size=(256, d)), 0
    while True:
        centres = np.empty((k, d))
        found, misses = 0, 0
        while found < k and misses < 100:
            if used == block.shape[0]:
                block, used = rng.uniform(-1.0, 1.0, size=(256, d)), 0
            candidate = block[used] * (1.0 - a)
            used += 1
            if found == 0 or ((centres[:found] - candidate) ** 2).sum(axis=1).min() >= 4.0 * a * a:
                centres[found] = candidate
                found += 1
                misses = 0
            else:
                misses += 1
        if found == k:
            return centres
        a /= 2.0
