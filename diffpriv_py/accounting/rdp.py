"""Rényi differential privacy: the sampled Gaussian (DP-SGD), Laplace and Gaussian curves, and the conversion to (ε, δ).

Conventions follow Google's ``dp_accounting`` ``RdpAccountant`` (integer orders 2..256 for the sampled Gaussian,
the improved conversion), so numbers agree with it to the last printed digit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_in_range
from ..events import DEFAULT_ORDERS, LaplaceEvent, check_orders, rdp_sampled_gaussian

__all__ = [
    "DEFAULT_ORDERS",
    "epsilon_from_rdp",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_sampled_gaussian",
]


def rdp_laplace(epsilon: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """Rényi DP of the Laplace mechanism with ε = Δ/b (Mironov 2017, Prop. 6), per order."""
    eps = check_in_range(epsilon, "epsilon", 0.0, math.inf, low_closed=False, high_closed=False)
    return LaplaceEvent(epsilon=eps)._rdp(check_orders(orders))


def rdp_gaussian(mu: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """Rényi DP of the Gaussian mechanism with μ = Δ/σ: αμ²/2 (Mironov 2017, Prop. 7)."""
    m = check_in_range(mu, "mu", 0.0, math.inf, low_closed=False, high_closed=False)
    return check_orders(orders) * m * m / 2


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
    a = check_orders(orders)
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
