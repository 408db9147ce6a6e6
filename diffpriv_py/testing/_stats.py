"""Exact binomial confidence bounds and goodness-of-fit helpers for the conformance kit and the auditor."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special, stats

__all__ = ["chisquare_pvalue", "clopper_pearson_lower", "clopper_pearson_upper"]


def clopper_pearson_lower(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) Clopper–Pearson lower bound on p from k successes in n trials (0 when k = 0)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lo = special.betaincinv(k, n - k + 1, alpha)
    return np.where(k <= 0, 0.0, lo)


def clopper_pearson_upper(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) Clopper–Pearson upper bound on p from k successes in n trials (1 when k = n)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        hi = special.betaincinv(k + 1, n - k, 1.0 - alpha)
    return np.where(k >= n, 1.0, hi)


def chisquare_pvalue(
    draws: np.ndarray, pmf: Callable[[np.ndarray], np.ndarray], *, min_expected: float = 20.0
) -> float:
    """Pearson χ² p-value of integer draws against ``pmf`` (cells with expected count < 20 pooled into one)."""
    draws = np.rint(np.asarray(draws, dtype=np.float64)).astype(np.int64)
    values, counts = np.unique(draws, return_counts=True)
    lo, hi = int(values.min()), int(values.max())
    spread = max(abs(lo), abs(hi), 1)
    support = np.arange(-spread - 1, spread + 2)
    expected = pmf(support) * draws.size
    keep = expected >= min_expected
    observed = np.zeros(support.size)
    observed[values - support[0]] = counts
    obs, exp = observed[keep], expected[keep]
    rest_obs, rest_exp = draws.size - obs.sum(), draws.size - exp.sum()
    if rest_exp > 0:
        obs, exp = np.append(obs, rest_obs), np.append(exp, rest_exp)
    if obs.size < 2:
        return 1.0
    stat = float(((obs - exp) ** 2 / exp).sum())
    return float(stats.chi2.sf(stat, obs.size - 1))
