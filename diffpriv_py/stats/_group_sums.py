"""The one exact per-group sum of the group-by's values."""

from __future__ import annotations

import numpy as np

from .._fixed_point import BLOCK


def _group_sums(codes: np.ndarray, weights: np.ndarray | None, n_groups: int) -> np.ndarray:
    """Exact Σ weights per group as Python ints (the number of rows without weights): the ONE place per-group sums
    are computed.

    ``weights`` are integer-valued float64 grid indices with |w| ≤ 2⁵² / BLOCK (bits from
    :func:`~diffpriv_py._fixed_point.sum_bits` or ``square_bits``), so every per-block, per-group float partial sum
    of at most BLOCK values is an integer below 2⁵², exact in any order; block totals are added as Python ints. The
    result depends only on the multiset of (group, weight) pairs: in-memory and blockwise evaluations agree bit for
    bit.
    """
    total = np.zeros(n_groups, dtype=np.int64).astype(object)
    for start in range(0, codes.shape[0], BLOCK):
        w = None if weights is None else weights[start : start + BLOCK]
        part = np.bincount(codes[start : start + BLOCK], weights=w, minlength=n_groups)
        total = total + part.astype(np.int64).astype(object)
    return total
