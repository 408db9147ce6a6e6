"""Data-dependent output support: which floats an interpolation between data points can output, and public bounds.

A mechanism whose output is ``a + U·(b − a)`` for consecutive data points a < b (and U a multiple of 2⁻⁵³, as
numpy's ``random()`` draws) can output only the floats on the lattice a + k·2⁻⁵³·(b − a). Where that lattice is
sparser than the floats (|y| well below b − a, e.g. an interval straddling 0) the set of possible outputs depends on
the data: a neighbour that moves a or b by 1e-9 shifts the lattice, and an output seen on D is impossible on D′.
The auditor turns this into events ("y is on D's lattice, at sparsity ≥ 2^j"), which have no power against a
mechanism whose output set does not depend on the data and so cost nothing but a Bonferroni share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["interpolation_lattice_level", "lattice_points", "public_bounds"]

_U_STEP = 2.0**-53
_BOUND_NAMES = (("lower", "upper"), ("lo", "hi"), ("low", "high"))


def _finite_vector(value: Any) -> np.ndarray | None:
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=np.float64)).ravel()
    except (TypeError, ValueError):
        return None
    return arr if arr.size and np.all(np.isfinite(arr)) else None


def public_bounds(mechanism: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The public data bounds a mechanism (or its target) declares: ``lower``/``upper``, ``bounds`` or ``data_norm``.

    Returns ``(lower, upper)`` as 1-D float arrays (one value, or one per column), or None if none is declared.
    """
    for owner in (mechanism, getattr(mechanism, "target", None)):
        if owner is None:
            continue
        for lo_name, hi_name in _BOUND_NAMES:
            lo, hi = _finite_vector(getattr(owner, lo_name, None)), _finite_vector(getattr(owner, hi_name, None))
            if lo is not None and hi is not None and lo.shape == hi.shape:
                return lo, hi
        bounds = getattr(owner, "bounds", None)
        if isinstance(bounds, tuple | list) and len(bounds) == 2:
            lo, hi = _finite_vector(bounds[0]), _finite_vector(bounds[1])
            if lo is not None and hi is not None:
                return lo, hi
        norm = _finite_vector(getattr(owner, "data_norm", None))
        if norm is not None and norm.size == 1:
            return -norm, norm
    return None


def lattice_points(mechanism: Any, data: Any) -> np.ndarray | None:
    """The sorted distinct values of 1-D numeric data plus the mechanism's public scalar bounds, or None."""
    if not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype.kind not in "iuf":
        return None
    points = data.astype(np.float64)
    bounds = public_bounds(mechanism)
    if bounds is not None and bounds[0].size == 1:
        points = np.concatenate([points, bounds[0], bounds[1]])
    points = np.unique(points[np.isfinite(points)])
    return points if points.size >= 2 else None


def interpolation_lattice_level(y: np.ndarray, points: np.ndarray) -> np.ndarray:
    """For each output y: −1 if y is not ``fl(a + fl(u·(b − a)))`` for the data interval [a, b] holding it and a
    multiple u of 2⁻⁵³ in [0, 1); otherwise the sparsity j ≥ 0 of that lattice near y (only one float in 2^j is on
    it). Vectorised; ``points`` sorted and distinct."""
    y = np.asarray(y, dtype=np.float64)
    out = np.full(y.shape, -1.0)
    idx = np.searchsorted(points, y, side="right")
    inside = np.isfinite(y) & (idx > 0) & (idx < points.size)
    a = points[np.clip(idx - 1, 0, points.size - 1)]
    b = points[np.clip(idx, 0, points.size - 1)]
    width = b - a
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        k = np.rint((y - a) / width / _U_STEP)
        hit = np.zeros(y.shape, dtype=bool)
        for dk in (-2.0, -1.0, 0.0, 1.0, 2.0):
            u = (k + dk) * _U_STEP
            hit |= (u >= 0) & (u < 1) & (a + u * width == y)
        # The lattice shows only where its step is coarser than the floats of both y and the offset t = y − a.
        level = np.log2(width * _U_STEP / np.maximum(np.spacing(np.abs(y)), np.spacing(np.abs(y - a))))
    level = np.floor(np.clip(np.nan_to_num(level, nan=0.0, posinf=60.0, neginf=0.0), 0.0, 60.0))
    return np.where(inside & hit, level, out)
