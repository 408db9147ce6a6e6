"""Error bars for releases: the half-width the added noise stays within with probability 1 − α.

Everything here is a function of public quantities only (the mechanism's calibration, the privacy parameters, the
level α and the released value), so computing an error bar is post-processing: it costs no privacy budget.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtri

from ._validation import check_in_range, refuse_subnormal
from .mechanisms.base import DPMech
from .mechanisms.gaussian import Gaussian
from .mechanisms.geometric import DiscreteLaplace
from .mechanisms.laplace import Laplace
from .noise import gaussian_grid_calibration, grid_step, laplace_epsilon_reserve
from .privacy import Eps

__all__ = ["check_alpha", "discrete_laplace_half_width", "half_width"]


def check_alpha(alpha: Any, *, owner: str = "the error bar") -> float:
    """Validate a miss probability α ∈ (0, 1) (a normal double: ln(1/α) of a subnormal α overflows)."""
    level = check_in_range(
        alpha,
        "alpha",
        0.0,
        1.0,
        low_closed=False,
        high_closed=False,
        owner=owner,
        fix="Pass the probability that the error exceeds the bar, e.g. alpha=0.05 for 95% error bars.",
    )
    return refuse_subnormal(level, "alpha", owner=owner)


def discrete_laplace_half_width(t: float, alpha: float) -> int:
    """The smallest integer h ≥ 0 with P(|K| > h) ≤ α for K two-sided geometric, P(K = k) ∝ exp(−t|k|).

    P(|K| > h) = 2·e^{−t(h+1)}/(1 + e^{−t}); the closed-form guess is corrected by exact checks in both directions.
    """

    def tail(h: int) -> float:  # P(|K| > h), evaluated in log space
        return math.exp(math.log(2.0) - t * (h + 1) - math.log1p(math.exp(-t)))

    # ln 2 − ln α rather than ln(2/α): a tiny α (e.g. a union-bound share α/k) must not overflow 2/α.
    h = max(0, math.ceil((math.log(2.0) - math.log(alpha) - math.log1p(math.exp(-t))) / t - 1.0))
    while tail(h) > alpha:
        h += 1
    while h > 0 and tail(h - 1) <= alpha:
        h -= 1
    return h


def _output_rounding(noised: np.ndarray, r: float) -> np.ndarray:
    # Safe noise rounds the value to the grid r (error ≤ r/2) and forms (m + i)·r in floating point: exact below
    # 2^53·r, otherwise correctly rounded (error ≤ half an ulp of the output).
    result: np.ndarray = r / 2 + np.spacing(np.abs(noised))
    return result


def half_width(mechanism: DPMech, privacy_params: Eps, noised: Any, alpha: float, *, simultaneous: bool = False) -> Any:
    """Half-width h with P(|released − exact target| ≤ h) ≥ 1 − α, per coordinate of a numeric release.

    Parameters
    ----------
    mechanism : DPMech
        The mechanism that released ``noised``.
    privacy_params : Eps
        The privacy parameters of the release (the noise is calibrated from their ε and δ).
    noised : float or ndarray
        The released vector, as the mechanism returned it (its magnitude enters the floating-point allowance).
    alpha : float
        Miss probability in (0, 1).
    simultaneous : bool, default False
        ``False``: each coordinate is covered with probability ≥ 1 − α. ``True``: all coordinates at once
        (Bonferroni: each at level α/d).

    Returns
    -------
    float or ndarray
        The half-width, with the shape of ``noised``.

    Notes
    -----
    * Laplace with scale b: P(|X| > b·ln(1/α)) = α. Safe and exact noise add r·i with i two-sided geometric of
      parameter λ = r·ε_c/(Δ + d·r) on the grid r; P(|i| ≥ k) = 2e^{−λk}/(1 + e^{−λ}) ≤ e^{−λ(k − ½)}, so
      |r·i| ≤ b′·ln(1/α) + r/2 with probability ≥ 1 − α, where b′ = (Δ + d·r)/ε_c ≤ b·(1 + 2⁻³⁹) is the effective
      scale. The grid rounding of the value (≤ r/2) and of the output (≤ ½ ulp) are added on top.
    * Gaussian with σ: P(|X| > σ·z_{1−α/2}) = α. Safe and exact noise are a discrete Gaussian on the grid, equal up
      to a relative 2⁻⁸⁰ to a continuous N(0, σ²) rounded to the grid, so |r·i| ≤ σ·z_{1−α/2} + r/2; the value's
      grid rounding and the output's ulp are added as for Laplace. σ is the one actually sampled (calibrated to the
      rounded sensitivity and the float reserve).
    * DiscreteLaplace: the exact integer quantile of the two-sided geometric law (see
      :func:`discrete_laplace_half_width`), with the parameter the sampler uses (ε_c/Δ for safe noise).
    * A mechanism may supply its own bound with a method ``_accuracy(privacy_params, noised, alpha)`` (the
      exponential-mechanism quantiles give one in rank units).

    The safe samplers' float decisions change each probability by a relative error below 2⁻⁴⁰, which changes the
    coverage by far less than any α of interest. ``noise="float"`` adds one ulp of the output for the rounding of
    value + noise. The bound is about the noise around the target *as computed* (in floating point, on the clipped
    data if the target clips): any rounding or bias inside the target is the caller's, and so are clipping to
    public bounds and the sensitivity. (The ``dp.stats`` functions add their own target's allowance on top.)
    """
    alpha = check_alpha(alpha)
    values = np.asarray(noised, dtype=np.float64) if not isinstance(noised, (list, tuple)) else np.asarray(noised)
    if simultaneous and values.size > 1:
        alpha = alpha / values.size
    custom = getattr(mechanism, "_accuracy", None)
    if custom is not None:
        return custom(privacy_params, noised, alpha)
    if values.dtype.kind not in "iuf" or not isinstance(mechanism, (Laplace, Gaussian, DiscreteLaplace)):
        raise NotImplementedError(
            f"Error bars are available for the Laplace, Gaussian and DiscreteLaplace mechanisms and the dp.stats "
            f"functions built on them (and quantiles, in rank units); {type(mechanism).__name__} releases have no "
            "closed-form error bar here. Estimate the error empirically, e.g. by releasing on public data of the "
            "same size with several seeds."
        )
    dims = max(1, values.size)
    width = _noise_half_width(mechanism, privacy_params, values, alpha, dims)
    return width.item() if np.ndim(noised) == 0 else width


def _noise_half_width(mech: DPMech, params: Eps, values: np.ndarray, alpha: float, dims: int) -> np.ndarray:
    zeros = np.zeros(values.shape)
    if mech.sensitivity == 0:
        return zeros
    eps = params.epsilon
    if isinstance(mech, DiscreteLaplace):
        eps_t = eps if mech.noise == "exact" else laplace_epsilon_reserve(eps, dims)
        return zeros + float(discrete_laplace_half_width(eps_t / mech.sensitivity, alpha))
    if isinstance(mech, Laplace):
        if mech.noise == "float":
            # value + noise is rounded once: at most half an ulp of the output on top of the noise.
            spread: np.ndarray = mech.noise_scale(params) * math.log(1.0 / alpha) + np.spacing(np.abs(values))
            return spread
        r = grid_step(mech.sensitivity / eps)
        eps_t = eps if mech.noise == "exact" else laplace_epsilon_reserve(eps, dims)
        scale = (mech.sensitivity + dims * r) / eps_t
        return scale * math.log(1.0 / alpha) + r / 2 + _output_rounding(values, r)
    assert isinstance(mech, Gaussian)
    z = float(-ndtri(alpha / 2))
    if mech.noise == "float":
        result: np.ndarray = mech.noise_scale(params) * z + np.spacing(np.abs(values))
        return result
    r, sigma = gaussian_grid_calibration(mech._sigma_for, mech.sensitivity, eps, params.delta, dims)
    return sigma * z + r / 2 + _output_rounding(values, r)
