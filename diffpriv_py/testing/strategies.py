"""Hypothesis strategies for valid and invalid privacy parameters and small datasets.

Shipped so that users testing their own mechanisms draw from the same domains as our suite. hypothesis's own
``st.builds(Eps)`` ignores the numeric bounds of the validators, so explicit strategies are needed.
"""

from __future__ import annotations

import math

import numpy as np

from .._extras import require
from ..privacy import Del, Eps, Gam

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - exercised only without hypothesis (tests/test_extras.py, in a subprocess)
    require("hypothesis", feature="diffpriv_py.testing.strategies")  # raises, naming the extra
    raise

__all__ = [
    "deltas",
    "epsilons",
    "gammas",
    "invalid_epsilons",
    "invalid_probabilities",
    "numeric_datasets",
    "privacy_params",
]


def epsilons(min_value: float = 1e-3, max_value: float = 50.0) -> st.SearchStrategy[float]:
    """Valid ε: finite and strictly positive."""
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False)


def deltas(*, allow_zero: bool = True) -> st.SearchStrategy[float]:
    """Valid δ in [0, 1) (or (0, 1) without zero)."""
    positive = st.floats(min_value=1e-12, max_value=0.5, allow_nan=False)
    return st.one_of(st.just(0.0), positive) if allow_zero else positive


def gammas() -> st.SearchStrategy[float]:
    """Valid γ in [0, 1) (subnormal values are refused by the privacy parameters, so none are drawn)."""
    return st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_nan=False, allow_subnormal=False)


def privacy_params(kind: type[Eps] = Eps) -> st.SearchStrategy[Eps]:
    """Valid privacy parameters of class ``kind`` (Eps, Del or Gam)."""
    if kind is Gam:
        return st.builds(Gam, epsilons(), deltas(), gammas())
    if kind is Del:
        return st.builds(Del, epsilons(), deltas())
    return st.builds(Eps, epsilons())


def invalid_epsilons() -> st.SearchStrategy[object]:
    """Values every ε check must refuse: non-positive, NaN, infinite, bools, strings, arrays, None."""
    return st.one_of(
        st.floats(max_value=0.0),
        st.sampled_from([math.nan, math.inf, -math.inf, True, False, "1", None, [1.0], np.array([1.0, 2.0])]),
    )


def invalid_probabilities() -> st.SearchStrategy[object]:
    """Values every δ or γ check must refuse: outside [0, 1), NaN, infinite, bools, non-numbers."""
    return st.one_of(
        st.floats(max_value=0.0, exclude_max=True),
        st.floats(min_value=1.0),
        st.sampled_from([math.nan, math.inf, True, "0.1", None]),
    )


def numeric_datasets(
    max_records: int = 50, max_columns: int = 4, low: float = -10.0, high: float = 10.0
) -> st.SearchStrategy[np.ndarray]:
    """Small 2-D float datasets (one record per row) with finite values in [low, high]."""
    from hypothesis.extra.numpy import arrays

    shapes = st.tuples(st.integers(1, max_records), st.integers(1, max_columns))
    return shapes.flatmap(
        lambda shape: arrays(np.float64, shape, elements=st.floats(low, high, allow_nan=False, width=64))
    )
