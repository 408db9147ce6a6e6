"""Coreset seeding: one noisy pass over the Voronoi cells of data-independent candidate centres, weighted k-means on
the noisy cells (free) for the starting centres, then DPLloyd step(s) from them.

Private cores: prior validation of data is assumed (the data come from ``KMeans.prepare``, the plan from
``KMeans.plan``).
"""

from __future__ import annotations

import math

import numpy as np

from ._cells import _Cells
from ._dplloyd import _lloyd_steps
from ._noisy_cells import _cell_noise, _noisy_statistics
from ._normalised_data import _BlockwiseData
from ._plan import CoresetPlan
from ._postprocessing import _merge_cells

CANDIDATE_SPREAD = 1.6
"""Candidates are uniform in [-s, s]^d with s = min(1, CANDIDATE_SPREAD/√d)."""

SURVIVAL = 3.0
"""Coreset cells whose noisy count is below this many count-noise scales are dropped (post-processing)."""

OVERSEED = 2
"""The coreset method's Lloyd step runs with OVERSEED·k centres, merged into k afterwards (post-processing)."""


def _n_seeds(k: int) -> int:
    """Centres of the coreset method's Lloyd step: OVERSEED·k, merged into k afterwards (one cluster needs one)."""
    return OVERSEED * k if k > 1 else 1


def _coreset_centres(
    Z: np.ndarray,
    plan: CoresetPlan,
    rng: np.random.Generator,
    n_releases: int,
    *,
    k: int,
    sensitivity: float,
    shrinkage: bool,
) -> tuple[np.ndarray, int]:
    """Seed from a private coreset (noisy means and counts of m candidate cells), then run DPLloyd step(s)."""
    d = Z.shape[1]
    spread = min(1.0, CANDIDATE_SPREAD / math.sqrt(d))
    candidates = rng.uniform(-spread, spread, size=(n_releases, plan.n_candidates, d))
    # One workspace (and float32 copy) for the seeding pass and the Lloyd step(s).
    data = Z if isinstance(Z, _BlockwiseData) else _Cells.of(Z, plan.n_candidates)
    noise = next(
        _cell_noise(candidates.shape, plan.epsilon_seed_count, plan.epsilon_seed_sums, 1, rng, sensitivity=sensitivity)
    )
    counts, sums = _noisy_statistics(data, candidates, noise)
    # Post-processing of the noisy cells: OVERSEED·k starting centres, so that a cell mean lying between two
    # clusters (one candidate nearest to both) does not keep them merged through the Lloyd step.
    n_seeds = _n_seeds(k)
    means = np.clip(sums / np.maximum(counts, 1.0)[..., None], -1.0, 1.0)
    survival = SURVIVAL * 2.0 * sensitivity / plan.epsilon_seed_count
    seeds = np.stack([_merge_cells(counts[i], means[i], n_seeds, survival, rng) for i in range(n_releases)])
    stepped, step_counts = _lloyd_steps(data, seeds, plan.lloyd, rng, sensitivity=sensitivity, shrinkage=shrinkage)
    if n_seeds == k:
        return stepped, plan.n_iter
    # The step's n_seeds centres, weighted by their noisy counts, merged into k (post-processing).
    survival = SURVIVAL * 2.0 * sensitivity / plan.lloyd.epsilon_count
    centres = np.stack([_merge_cells(step_counts[i], stepped[i], k, survival, rng) for i in range(n_releases)])
    return centres, plan.n_iter
