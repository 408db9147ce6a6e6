"""Differentially private descriptive statistics of bounded data: ``dp.stats.mean(x, dp.Eps(1), bounds=(0, 1))``.

Every statistic clips the data to public bounds (required, never derived from the data), is released through
one of the library's mechanisms (Laplace or Gaussian noise, integer-valued noise for counts, the exponential
mechanism for quantiles) under replace-one neighbours, and returns the private value, or the whole
:class:`~diffpriv_py.Response` with ``full_response=True``.
"""

from ._groupby import GroupBy, groupby
from ._histogram import HistogramTarget, histogram
from ._moments import count, covariance, mean, std, sum, var
from ._quantile import Quantile, candidate_grid, default_n_candidates, median, quantile
from ._targets import ClippedStatistic, CovarianceTarget

__all__ = [
    "ClippedStatistic",
    "CovarianceTarget",
    "GroupBy",
    "HistogramTarget",
    "Quantile",
    "candidate_grid",
    "count",
    "covariance",
    "default_n_candidates",
    "groupby",
    "histogram",
    "mean",
    "median",
    "quantile",
    "std",
    "sum",
    "var",
]
