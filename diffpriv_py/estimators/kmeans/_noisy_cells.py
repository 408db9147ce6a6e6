"""The private step shared by DPLloyd and coreset seeding: the noisy counts and sums of the Voronoi cells of public
centres, with the Laplace mechanism's floating-point-safe noise drawn ahead.

Private cores: prior validation of data is assumed (the data come from ``KMeans.prepare``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import attrs
import numpy as np

from ..._blockwise import map_reduce
from ...noise import grid_laplace_noise, round_to_grid
from ._cells import _Cells
from ._normalised_data import _block_statistics, _BlockwiseData

_NOISE_AHEAD = 2**18
"""Most noise values the DPLloyd steps draw ahead in one sampler call (2 MiB)."""


@attrs.frozen(eq=False)
class _CellNoise:
    """Pre-drawn safe Laplace noise for one noisy Lloyd step: counts (r, m) and sums (r, m, d), each on its grid.

    :meth:`add` rounds the statistics to the grids and adds the noise, which has the law of perturbing them with
    the Laplace mechanism's safe sampler (``diffpriv_py.noise.grid_laplace_noise``).
    """

    counts: np.ndarray
    count_grid: float
    sums: np.ndarray
    sum_grid: float

    def add(self, counts: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Counts are integers (weights are never noised), hence already on any grid r ≤ 1 (a power of two).
        on_grid = counts if self.count_grid <= 1.0 else round_to_grid(counts, self.count_grid)
        noisy_counts: np.ndarray = on_grid + self.counts
        noisy_sums: np.ndarray = round_to_grid(sums, self.sum_grid) + self.sums
        return noisy_counts, noisy_sums


def _noisy_statistics(
    data: _Cells | _BlockwiseData, centres: np.ndarray, noise: _CellNoise
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy counts (r, m) and sums (r, m, d) of the Voronoi cells of each release's m public ``centres``."""
    if isinstance(data, _BlockwiseData):  # one pass over the blocks for all releases' centres
        counts, sums = map_reduce(data.data, functools.partial(_block_statistics, data.normaliser, centres))
    elif len(centres) == 1:  # one release (the usual case): no stacking
        counts, sums = (part[None] for part in data.statistics(centres[0]))
    else:
        stats = [data.statistics(c) for c in centres]
        counts, sums = np.stack([c for c, _ in stats]), np.stack([s for _, s in stats])
    return noise.add(counts, sums)


def _cell_noise(
    shape: tuple[int, int, int],
    epsilon_count: float,
    epsilon_sums: float,
    steps: int,
    rng: np.random.Generator,
    *,
    sensitivity: float,
) -> Iterator[_CellNoise]:
    """The noise of ``steps`` successive noisy cell statistics for centres of ``shape`` (r releases, m, d).

    Under replace-one a record leaves at most one cell and joins at most one other, whatever m is: the count
    histogram moves by at most 2 in L1 and the m×d sums by at most 2d, so Lap(2/ε_count) and Lap(2d/ε_sums),
    safe noise on each release's row (its rounding allowance covers every coordinate a record can move). The
    noise does not depend on the data, so it is drawn ahead, up to ``_NOISE_AHEAD`` values per call: a few
    sampler calls per release instead of two per iteration.
    """
    r, m, d = shape
    ahead = max(1, min(steps, _NOISE_AHEAD // (r * m * (d + 1))))
    for first in range(0, steps, ahead):
        block = min(ahead, steps - first)
        counts, count_grid = grid_laplace_noise((block, r, m), 2.0 * sensitivity, epsilon_count, m, rng)
        sums, sum_grid = grid_laplace_noise((block, r, m * d), 2.0 * d * sensitivity, epsilon_sums, m * d, rng)
        for t in range(block):
            yield _CellNoise(counts[t], count_grid, sums[t].reshape(shape), sum_grid)
