"""The one exact per-group sum of the group-by's values."""

from __future__ import annotations

import numpy as np

from .._fixed_point import BLOCK

FLUSH = 1 << 10
"""Block sums added in int64 before moving to Python ints (1024 sums of magnitude ≤ 2⁵² stay below 2⁶²)."""


def _group_sums(codes: np.ndarray, weights: np.ndarray | None, n_groups: int) -> np.ndarray:
    """Exact Σ weights per group as Python ints (the number of rows without weights): the ONE place per-group sums
    are computed.

    ``weights`` are integer-valued float64 grid indices with |w| ≤ 2⁵² / BLOCK (bits from
    :func:`~diffpriv_py._fixed_point.sum_bits` or ``square_bits``), so every per-block, per-group float partial sum
    of at most BLOCK values is an integer below 2⁵², exact in any order; block totals are added exactly (in int64
    for up to FLUSH blocks at a time, then as Python ints). The result depends only on the multiset of (group,
    weight) pairs: in-memory and blockwise evaluations agree bit for bit.
    """
    total = np.zeros(n_groups, dtype=np.int64).astype(object)
    partial = np.zeros(n_groups, dtype=np.int64)  # at most FLUSH blocks of |sum| ≤ 2⁵²: below 2⁶², exact in int64
    for i, start in enumerate(range(0, codes.shape[0], BLOCK), start=1):
        w = None if weights is None else weights[start : start + BLOCK]
        partial += np.bincount(codes[start : start + BLOCK], weights=w, minlength=n_groups).astype(np.int64)
        if i % FLUSH == 0:
            total, partial = total + partial.astype(object), np.zeros(n_groups, dtype=np.int64)
    result: np.ndarray = total + partial.astype(object)
    return result
