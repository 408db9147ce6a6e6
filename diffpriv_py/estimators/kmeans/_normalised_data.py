"""The data as the k-means algorithms read it: records mapped into [-1, 1]^d by the public bounds, clipped, and
rounded onto the fixed-point grid on which every count and sum is exact; in memory or block by block (out-of-core).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from ..._blockwise import Chunks
from ..._datasets import as_array
from ._cells import _Cells


def _data_matrix(X: Any, owner: str) -> np.ndarray:
    if isinstance(X, tuple):
        raise TypeError(f"{owner} is unsupervised: pass the feature matrix X alone, not an (X, y) tuple.")
    arr = as_array(X, owner=owner)
    if arr.dtype.kind not in "biuf" or arr.ndim != 2:
        raise TypeError(
            f"{owner} needs a 2-D numeric array with one record per row. Got {type(X).__name__} with shape "
            f"{getattr(arr, 'shape', None)} and dtype {arr.dtype}. Reshape 1-D data with X.reshape(-1, 1)."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{owner} needs at least one record and one feature. Got shape {arr.shape}.")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The data passed to {owner} contains NaN or infinite values. Remove or impute them first (clipping "
            "cannot place a NaN in the box)."
        )
    return arr


def grid_bits(n: int, degree: int = 1) -> int:
    """Bits of the fixed-point grid that makes sums of ``n`` products of ``degree`` values in [-1, 1] exact.

    Values rounded toward zero onto multiples of 2^-b are integers times 2^-b; a sum of ``n`` products of ``degree``
    of them is an integer of magnitude at most n·2^(degree·b) times a power of two, which float64 holds exactly
    (whatever the order of summation, blocking or FMA) while it stays below 2^52.
    """
    used = max(1, math.ceil(math.log2(max(n, 2))))
    return max(1, min(30, (52 - used) // degree))


def _to_grid(Z: np.ndarray, bits: int) -> np.ndarray:
    # Round toward zero: never moves a value (or a row norm) outside the clipping region.
    scale = float(2**bits)
    return np.trunc(Z * scale) / scale


@attrs.frozen(eq=False)
class _Normaliser:
    """The map of one block of raw records into [-1, 1]^d on the grid of the *whole* dataset (bits from the total n)."""

    mid: np.ndarray
    half: np.ndarray
    bits: int
    d: int

    def __call__(self, block: Any) -> np.ndarray:
        arr = _data_matrix(block, "KMeans")
        if arr.shape[1] != self.d:
            raise ValueError(f"Every block must have {self.d} columns, like the first one; got shape {arr.shape}.")
        return _to_grid(np.clip((arr - self.mid) / self.half, -1.0, 1.0), self.bits)


@attrs.frozen(eq=False)
class _BlockwiseData:
    """The target's output for out-of-core data: the raw blocks and their normalisation, never all in memory."""

    data: Any
    n: int
    normaliser: _Normaliser

    @property
    def shape(self) -> tuple[int, int]:
        return self.n, self.normaliser.d


def _block_statistics(normaliser: _Normaliser, centres: np.ndarray, block: Any) -> tuple[np.ndarray, np.ndarray]:
    """Counts (r, k) and sums (r, k, d) of one block for each of r releases' centres: exact on the grid, so summing
    them over blocks gives exactly the in-memory statistics."""
    cells = _Cells.of(normaliser(block), centres.shape[1])
    stats = [cells.statistics(c) for c in centres]
    return np.stack([c for c, _ in stats]), np.stack([s for _, s in stats])


def _n_columns(data: Any) -> int:
    if isinstance(data, Chunks):
        for block in data:
            return int(np.shape(block)[1]) if np.ndim(block) == 2 else 0
        raise ValueError("KMeans needs at least one record; the Chunks yielded no block.")
    return int(data.shape[1]) if len(data.shape) == 2 else 0
