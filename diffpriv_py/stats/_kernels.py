"""Counting kernels of the DP statistics (sums and moments live in :mod:`diffpriv_py._fixed_point`, exact on a grid)."""

from __future__ import annotations

import numpy as np


def non_missing(data: np.ndarray, axis: int | None) -> np.ndarray:
    """Number of non-NaN values (True values for boolean data) per statistic."""
    if data.dtype.kind == "b":
        present = data
    elif data.dtype.kind == "f":
        present = ~np.isnan(data)
    else:
        present = np.ones(data.shape, dtype=bool)
    if data.ndim == 1 or axis is None:
        return np.asarray(float(np.count_nonzero(present)))
    result: np.ndarray = np.count_nonzero(present, axis=axis).astype(np.float64)
    return result
