"""Rényi differential privacy: the sampled Gaussian (DP-SGD), Laplace and Gaussian curves, and the conversion to (ε, δ).

Conventions follow Google's ``dp_accounting`` ``RdpAccountant`` (integer orders 2..256 for the sampled Gaussian,
the improved conversion), so numbers agree with it to the last printed digit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_in_range

__all__ = [
    "DEFAULT_ORDERS",
    "epsilon_from_rdp",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_sampled_gaussian",
]

DEFAULT_ORDERS: np.ndarray = np.arange(2, 257, dtype=np.float64)
"""Integer Rényi orders 2..256, enough for the usual DP-SGD settings (the orders dp_accounting's RdpAccountant uses)."""


def _orders(orders: Any) -> np.ndarray:
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ValueError(f"Rényi orders must be finite numbers > 1. Got {orders!r}.")
    return a


def rdp_sampled_gaussian(sampling_rate: float, noise_multiplier: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """Rényi DP of one step of the Poisson-sampled Gaussian mechanism (add/remove neighbours), per order.

    Parameters
    ----------
    sampling_rate : float
        q in [0, 1]: the probability that a record joins the sample.
    noise_multiplier : float
        σ > 0: noise standard deviation divided by the L2 sensitivity (the clipping norm).
    orders : array of int
        Integer Rényi orders α ≥ 2 (any order > 1 when q = 1).

    Returns
    -------
    ndarray
        ε(α) of one step; multiply by the number of steps to compose.

    Notes
    -----
    Mironov, Talwar & Zhang (2019), Sec. 3.3 / Abadi et al. (2016): for integer α,
    A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k exp((k²−k)/(2σ²)) and ε(α) = ln(A_α)/(α−1), evaluated with
    log-sum-exp and ``gammaln`` so large orders neither overflow nor lose precision. The analysis is for
    add/remove neighbours; see :mod:`diffpriv_py.accounting` for the replace-one relation.
    """
    q = check_in_range(sampling_rate, "sampling_rate", 0.0, 1.0, low_closed=True, high_closed=True)
    sigma = check_in_range(noise_multiplier, "noise_multiplier", 0.0, math.inf, low_closed=False, high_closed=False)
    a = _orders(orders)
    if q == 0:
        return np.zeros_like(a)
    if q == 1:
        return a / (2 * sigma**2)
    if not np.allclose(a, np.round(a)):
        raise ValueError(f"The sampled Gaussian's Rényi curve is implemented for integer orders; got {orders!r}.")
    ai = np.round(a).astype(np.int64)
    k = np.arange(int(ai.max()) + 1, dtype=np.float64)
    alpha = ai[:, None].astype(np.float64)
    from scipy.special import gammaln, logsumexp  # lazy: scipy.special costs ~0.25 s at import

    log_comb = gammaln(alpha + 1) - gammaln(k + 1) - gammaln(np.maximum(alpha - k, 0) + 1)
    terms = log_comb + k * math.log(q) + (alpha - k) * math.log1p(-q) + (k * k - k) / (2 * sigma**2)
    terms = np.where(k[None, :] <= alpha, terms, -np.inf)
    result: np.ndarray = logsumexp(terms, axis=1) / (ai - 1)
    return result


def rdp_laplace(epsilon: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """Rényi DP of the Laplace mechanism with ε = Δ/b (Mironov 2017, Prop. 6), per order."""
    eps = check_in_range(epsilon, "epsilon", 0.0, math.inf, low_closed=False, high_closed=False)
    from ._events import LaplaceEvent

    return LaplaceEvent(epsilon=eps)._rdp(_orders(orders))


def rdp_gaussian(mu: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """Rényi DP of the Gaussian mechanism with μ = Δ/σ: αμ²/2 (Mironov 2017, Prop. 7)."""
    m = check_in_range(mu, "mu", 0.0, math.inf, low_closed=False, high_closed=False)
    return _orders(orders) * m * m / 2


def epsilon_from_rdp(orders: Any, rdp: Any, delta: float, *, conversion: str = "improved") -> tuple[float, float]:
    """The smallest ε such that a mechanism with Rényi curve ``rdp`` is (ε, δ)-DP; returns (ε, best order).

    Parameters
    ----------
    orders, rdp : arrays
        Orders α > 1 and the (composed) Rényi divergences ε(α).
    delta : float
        δ in (0, 1).
    conversion : {"improved", "classic"}, default "improved"
        ``"improved"``: ε = min_α ε(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1) (Canonne, Kamath & Steinke 2020,
        Prop. 12; Asoodeh et al. 2020), as ``dp_accounting`` does, skipping α ≤ 1.01 where it is unstable.
        ``"classic"``: ε = min_α ε(α) + ln(1/δ)/(α − 1) (Mironov 2017, Prop. 3).

    Notes
    -----
    The result is rounded up to the next float so that rounding never favours the claim.
    """
    a = _orders(orders)
    r = np.asarray(rdp, dtype=np.float64)
    if r.shape != a.shape:
        raise ValueError(f"orders and rdp must have the same length; got {a.shape} and {r.shape}.")
    d = check_in_range(delta, "delta", 0.0, 1.0, low_closed=False, high_closed=False)
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError("Rényi divergences must be >= 0 and not NaN.")
    if conversion == "improved":
        with np.errstate(invalid="ignore"):
            eps = r + np.log1p(-1 / a) - (math.log(d) + np.log(a)) / (a - 1)
        eps = np.where(a > 1.01, eps, np.inf)
    elif conversion == "classic":
        eps = r - math.log(d) / (a - 1)
    else:
        raise ValueError(f"conversion must be 'improved' or 'classic'; got {conversion!r}.")
    eps = np.where(np.isnan(eps), np.inf, eps)
    i = int(np.argmin(eps))
    best = float(eps[i])
    if not math.isfinite(best):
        return math.inf, float(a[i])
    return math.nextafter(max(best, 0.0), math.inf), float(a[i])
