"""Row norms that do not overflow: a finite row's norm is finite whenever it is representable."""

from __future__ import annotations

import numpy as np

__all__ = ["row_norms"]


def row_norms(A: np.ndarray) -> np.ndarray:
    """‖aᵢ‖₂ of every row, computed on the row scaled by a power of two near its largest |entry|.

    ``np.linalg.norm(A, axis=1)`` squares the entries first, so a row with entries near 1e154 gets the norm inf
    (and 0·inf = NaN downstream). Scaling by 2^-e with 2^(e-1) ≤ max|aᵢ| < 2^e is exact, the scaled squares sum
    to at most the row length, and the result is scaled back exactly; it is inf only when the true norm exceeds
    the largest double, and NaN only for a row holding NaN or inf. Relative error ≤ (d + 2)·2⁻⁵³ (the sum of d
    squares, the square root, the rescaling), as for the naive formula.
    """
    A = np.asarray(A, dtype=np.float64)
    peak = np.max(np.abs(A), axis=1) if A.shape[1] else np.zeros(A.shape[0])
    _, exponent = np.frexp(np.where(np.isfinite(peak), peak, 1.0))
    scaled = np.ldexp(A, -exponent[:, None])
    with np.errstate(over="ignore"):  # inf is the honest answer for a norm beyond the largest double
        norms = np.ldexp(np.sqrt(np.einsum("ij,ij->i", scaled, scaled)), exponent)
    # A row holding inf has norm inf; one holding NaN, NaN (never a finite value pretending to be a norm).
    return np.where(np.isfinite(peak), norms, peak)


def clip_rows(X: np.ndarray, bound: float, scale: float = 1.0) -> np.ndarray:
    """``scale · x · min(1, bound/‖x‖₂)`` for every row, without overflow: a new array, every row of norm ≤ scale·bound.

    Rows inside the ball are multiplied by ``scale`` alone; rows outside by ``scale·bound/‖x‖``. A finite row whose
    norm exceeds the largest double is projected through its power-of-two-scaled copy, so its direction is kept
    (not flattened to 0 or turned into NaN by inf/inf). Rows holding NaN or inf are the caller's to refuse.
    """
    X = np.asarray(X, dtype=np.float64)
    norms = row_norms(X)
    factor = (bound * scale) / np.maximum(norms, bound)
    out = X * factor[:, None]
    huge = np.flatnonzero(np.isinf(norms) & np.all(np.isfinite(X), axis=1))
    if huge.size:
        rows = X[huge]
        _, exponent = np.frexp(np.max(np.abs(rows), axis=1))
        scaled = np.ldexp(rows, -exponent[:, None])
        out[huge] = scaled * ((bound * scale) / row_norms(scaled))[:, None]
    result: np.ndarray = out
    return result
