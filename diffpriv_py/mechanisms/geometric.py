"""The discrete Laplace (two-sided geometric) mechanism for integer-valued targets such as counts and histograms."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Literal

import attrs
import numpy as np

from .._validation import one_of
from ..exceptions import TargetOutputError
from ..noise import exact_discrete_laplace_many, laplace_epsilon_reserve, one_two_sided_geometric, two_sided_geometric
from ..privacy import Eps
from .base import NumericMech

__all__ = ["DiscreteLaplace", "discrete_laplace_half_width"]

_NOT_INTEGER = (
    "Non-private target output is not integer-valued: DiscreteLaplace needs integer counts (below 2^53 in "
    "magnitude). Use Laplace for real-valued targets."
)


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


@attrs.frozen(kw_only=True)
class DiscreteLaplace(NumericMech):
    """Release an integer-valued target with two-sided geometric noise (the discrete Laplace mechanism).

    Parameters
    ----------
    target : callable
        Maps a dataset to an integer or an array of integers (counts, histogram bins).
    sensitivity : float
        Global L1 sensitivity Δ of ``target`` under replace-one neighbours (2 for a histogram, 1 for a count
        under add/remove, …).
    dims : int, optional
        Number of values ``target`` returns (checked when given).
    noise : {"safe", "exact"}, default "safe"
        ``"safe"`` draws the noise vectorised in numpy (about 10⁷ values/s); ``"exact"`` uses the CKS20 sampler on
        Python integers and fractions, with no floating point at all (about 3×10⁴ values/s).

    Notes
    -----
    Adds integer noise k with P(k) ∝ exp(−ε|k|/Δ) to every coordinate (Ghosh, Roughgarden & Sundararajan 2009;
    the two-sided geometric mechanism). It is ε-DP when Δ bounds the L1 sensitivity under replace-one neighbours.
    The output is integer-valued, so it has no floating-point structure to leak (Mironov 2012). The safe sampler
    computes its probabilities in float64 and is calibrated to a reduced ε_c = (ε − d·2⁻⁴⁰)/(1 + 2⁻⁴⁰) that pays
    for their rounding, so the reported guarantee is exactly ε (see :func:`diffpriv_py.noise.laplace_epsilon_reserve`).
    The exact sampler needs no such reserve. Non-integer target outputs (e.g. 2.5) are refused before any noise is
    drawn.

    A non-integer sensitivity (e.g. Δ = 1.5) is accepted on purpose (diffprivlib's ``Geometric`` refuses it): Δ is an
    *upper bound* on the L1 sensitivity, and the outputs of an integer-valued target differ by integers, so the true
    sensitivity is some integer Δ* ≤ Δ. The noise ∝ exp(−ε|k|/Δ) then makes neighbouring outputs' probabilities
    differ by at most exp(ε·Δ*/Δ) ≤ e^ε: the release is ε-DP, with more noise than ⌊Δ⌋ would need (pass the integer
    bound for the least noise). A bound that is not an integer arises naturally (a sensitivity computed by a formula
    or scaled by a weight), and it is valid as it stands.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> ages = np.array([23, 35, 41, 29, 62, 57])
    >>> mech = dp.DiscreteLaplace(target=lambda x: np.histogram(x, bins=3, range=(20, 80))[0], sensitivity=2)
    >>> r = mech.release_response(dp.Eps(1.0), ages, rng=0)
    >>> r.response.dtype
    dtype('int64')

    References
    ----------
    Ghosh, A., Roughgarden, T. & Sundararajan, M. (2009). Universally utility-maximizing privacy mechanisms. STOC.
    Canonne, C., Kamath, G. & Steinke, T. (2020). The discrete Gaussian for differential privacy. NeurIPS.
    """

    noise: Literal["safe", "exact"] = attrs.field(default="safe", validator=one_of("safe", "exact"))

    def noise_scale(self, privacy_params: Eps) -> float:
        """The scale Δ/ε of the geometric noise (its pmf is ∝ exp(−|k|/scale))."""
        return self.sensitivity / privacy_params.epsilon

    def noise_distribution(self, privacy_params: Eps) -> Any:
        """The per-coordinate noise as a frozen :data:`scipy.stats.dlaplace` (zero noise for zero sensitivity)."""
        from scipy import stats  # lazy: scipy.stats costs ~0.5 s at import, and releases never need it

        scale = self.noise_scale(privacy_params)
        if scale == 0:
            return stats.randint(0, 1)
        return stats.dlaplace(1.0 / scale)

    def _evaluate(self, output: Any) -> np.ndarray:
        values = super()._evaluate(output)
        if values.ndim == 0:  # one value: the same test in Python arithmetic (round is exact below 2^53)
            value = values.item()
            if not (abs(value) < 2.0**53 and value == round(value)):
                raise TargetOutputError(_NOT_INTEGER)
            return values.astype(np.int64)
        if not np.all(np.abs(values) < 2.0**53) or not np.all(values == np.round(values)):
            raise TargetOutputError(_NOT_INTEGER)
        return values.astype(np.int64)

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        return float(np.abs(value1 - value2).sum())

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> Any:
        # One value with safe noise: the scalar geometric sampler, which draws the same integer from the same
        # stream as _perturb does for a stack of one (see one_two_sided_geometric), in Python arithmetic.
        if value.ndim == 0 and self.noise == "safe" and self.sensitivity > 0:
            eps_c = laplace_epsilon_reserve(privacy_params.epsilon, 1)
            noise = one_two_sided_geometric(eps_c / self.sensitivity, rng)
            if noise is not None:
                return value.item() + noise
        return super()._release(value, privacy_params, rng)

    def _perturb(self, values: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(values, dtype=np.int64)
        if self.sensitivity == 0:
            result: np.ndarray = values.copy()
            return result
        dims = max(1, int(np.prod(values.shape[1:], dtype=np.int64)))
        if self.noise == "exact":
            scale = Fraction(self.sensitivity) / Fraction(privacy_params.epsilon)
            draws = exact_discrete_laplace_many(scale, values.size, rng)
            return values + np.asarray(draws, dtype=np.int64).reshape(values.shape)
        eps_c = laplace_epsilon_reserve(privacy_params.epsilon, dims)
        result = values + two_sided_geometric(values.shape, eps_c / self.sensitivity, rng)
        return result

    def _noise_half_width(self, privacy_params: Eps, values: np.ndarray, alpha: float, dims: int) -> np.ndarray:
        """The exact integer 1 − α quantile of the two-sided geometric law (:func:`discrete_laplace_half_width`), with
        the parameter the sampler uses (ε_c/Δ for safe noise, ε/Δ for exact noise)."""
        zeros = np.zeros(values.shape)
        if self.sensitivity == 0:
            return zeros
        eps = privacy_params.epsilon
        eps_t = eps if self.noise == "exact" else laplace_epsilon_reserve(eps, dims)
        result: np.ndarray = zeros + float(discrete_laplace_half_width(eps_t / self.sensitivity, alpha))
        return result
