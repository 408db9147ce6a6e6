"""The Gaussian mechanism: L2 sensitivity, analytic calibration by default (R: ``DPMechGaussian``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import attrs
import numpy as np

from .._validation import one_of
from ..events import Event, GaussianEvent
from ..noise import exact_grid_gaussian, gaussian_grid_calibration, grid_gaussian, grid_gaussian_scalar
from ..privacy import Del, Eps
from .base import NumericMech, grid_output_rounding

if TYPE_CHECKING:
    from scipy import stats

__all__ = ["Gaussian", "analytic_gaussian_sigma", "gaussian_delta"]


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The smallest δ for which N(0, σ²) noise gives (ε, δ)-DP at L2 sensitivity Δ (Balle & Wang 2018, Thm 8).

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), evaluated in log space so large ε does not overflow.
    """
    from scipy.special import log_ndtr  # lazy: scipy.special costs ~0.25 s at import

    mu = sensitivity / sigma
    log_a = float(log_ndtr(mu / 2 - epsilon / mu))
    log_b = float(log_ndtr(-mu / 2 - epsilon / mu)) + epsilon
    if log_b >= log_a:
        return 0.0
    return math.exp(log_a) * -math.expm1(log_b - log_a)


@functools.lru_cache(maxsize=1024)
def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ (to 1e-12 relative, rounded up) with ``gaussian_delta(σ, ε, Δ) <= δ``.

    Bisection on the monotone privacy curve at the given Δ itself (not at Δ = 1 and then scaled, which can land a
    rounding error on the wrong side); the upper end of the final bracket is returned, so the calibration errs on
    the private side.
    """
    lo, hi = 1e-3 * sensitivity, sensitivity
    while gaussian_delta(hi, epsilon, sensitivity) > delta:
        lo, hi = hi, hi * 2.0
    while gaussian_delta(lo, epsilon, sensitivity) <= delta:
        lo, hi = lo / 2.0, lo
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mid, epsilon, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def _classic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    # Dwork & Roth (2014), Theorem A.1; proven only for 0 < epsilon < 1.
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


@functools.lru_cache(maxsize=1024)
def _grid_calibration(
    calibration: str, sensitivity: float, epsilon: float, delta: float, dims: int
) -> tuple[float, float]:
    # The grid and σ depend only on public numbers; caching them keeps a scalar release within microseconds.
    sigma_for = _classic_sigma if calibration == "classic" else analytic_gaussian_sigma
    return gaussian_grid_calibration(sigma_for, sensitivity, epsilon, delta, dims)


@attrs.frozen(kw_only=True)
class Gaussian(NumericMech):
    """Release a numeric target with additive Gaussian noise (R: ``DPMechGaussian``).

    Parameters
    ----------
    target : callable
        Maps a dataset to a number or numeric array.
    sensitivity : float
        Global L2 sensitivity Δ of ``target`` under replace-one neighbours.
    dims : int, optional
        Number of values ``target`` returns (checked when given).
    calibration : {"analytic", "classic"}, default "analytic"
        ``"analytic"`` uses the exact calibration of Balle & Wang (2018): the smallest σ whose privacy curve meets
        (ε, δ); valid for every ε > 0. ``"classic"`` uses σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1),
        the formula R uses; it is only proven for ε < 1 and is refused otherwise.
    noise : {"safe", "exact", "float"}, default "safe"
        How the noise is drawn. ``"safe"``: the value is rounded to a power-of-two grid 2⁻⁴⁰ of σ and discrete
        Gaussian noise is added on that grid, vectorised; the output's floating-point structure no longer depends
        on the input. ``"exact"``: the same with the CKS20 sampler on Python integers and fractions (no floating
        point in the sampling; about 10⁴ values/s). ``"float"``: textbook ``numpy`` normal noise, **not** safe
        against floating-point attacks (Jin et al. 2022); only for comparisons and legacy results.

    Notes
    -----
    Adds i.i.d. N(0, σ²) to every coordinate. Needs :class:`~diffpriv_py.Del` parameters with δ > 0; the release
    is (ε, δ)-DP under replace-one neighbours.

    Safe and exact noise: with grid r (a power of two, r ≤ σ·2⁻⁴⁰), the rounded value m·r gets r·i with i a
    discrete Gaussian of parameter σ/r. That equals, up to a relative 2⁻⁸⁰, the continuous Gaussian mechanism on
    the integers m followed by rounding, so it has the Gaussian's (ε, δ) curve at L2 sensitivity Δ + √d·r. σ is
    calibrated for that sensitivity and for a reserved (ε − d·2⁻³⁷, δ·(1 − d·2⁻³⁶)) that pays for the float
    rounding of the safe sampler's probabilities, so the reported (ε, δ) is exactly the one requested and σ grows
    by a relative amount of order d·2⁻³⁷. ``noise_scale`` and ``noise_distribution`` give the nominal N(0, σ²).

    Deliberate divergence from R: R applies the classic σ for any ε, which under-protects for ε ≥ 1 (at ε = 10
    the true δ is 2.3× the claim); here the analytic σ is the default and the classic one is
    refused for ε ≥ 1.

    References
    ----------
    Balle, B. & Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy: analytical
    calibration and optimal denoising. ICML.
    """

    calibration: Literal["analytic", "classic"] = attrs.field(
        default="analytic", validator=one_of("analytic", "classic")
    )

    noise: Literal["safe", "exact", "float"] = attrs.field(default="safe", validator=one_of("safe", "exact", "float"))

    privacy_params_type = Del

    def _check_params(self, privacy_params: Eps) -> None:
        if not privacy_params.delta > 0:
            raise ValueError(
                f"Gaussian needs delta > 0; got {privacy_params!r}. Pass e.g. Del(epsilon=1.0, delta=1e-6), or use "
                "Laplace for pure epsilon-DP."
            )
        if self.calibration == "classic" and not privacy_params.epsilon < 1:
            raise ValueError(
                f"The classic Gaussian calibration is only valid for epsilon < 1 (Dwork & Roth 2014, Thm A.1); got "
                f"epsilon={privacy_params.epsilon}. Use calibration='analytic', which is exact for every epsilon."
            )

    def _sigma_for(self, epsilon: float, delta: float, sensitivity: float) -> float:
        if self.calibration == "classic":
            return _classic_sigma(epsilon, delta, sensitivity)
        return analytic_gaussian_sigma(epsilon, delta, sensitivity)

    def noise_scale(self, privacy_params: Eps) -> float:
        if self.sensitivity == 0:
            return 0.0
        return self._sigma_for(privacy_params.epsilon, privacy_params.delta, self.sensitivity)

    def noise_distribution(self, privacy_params: Eps) -> stats.rv_continuous:
        from scipy import stats  # lazy: scipy.stats costs ~0.5 s at import, and releases never need it

        return stats.norm(scale=self.noise_scale(privacy_params))

    def _noise(self, shape: tuple[int, ...], privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, self.noise_scale(privacy_params), size=shape)

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> Any:
        # One safe value: the scalar sampler directly, with the calibration _perturb uses for a stack of one (d = 1)
        # and the same draw from the same stream, without wrapping the value in arrays; µs count in small releases.
        if (
            value.ndim == 0
            and self.noise == "safe"
            and self.sensitivity > 0
            and type(self)._sigma_for is Gaussian._sigma_for
        ):
            eps, delta = privacy_params.epsilon, privacy_params.delta
            r, sigma = _grid_calibration(self.calibration, self.sensitivity, eps, delta, 1)
            noisy = grid_gaussian_scalar(value.item(), r, sigma, rng)
            if noisy is not None:
                return noisy
        return super()._release(value, privacy_params, rng)

    def _perturb(self, values: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        if self.sensitivity == 0:
            return np.array(values, dtype=np.float64)
        if self.noise == "float":
            result: np.ndarray = values + self._noise(values.shape, privacy_params, rng)
            return result
        dims = max(1, math.prod(values.shape[1:]))
        args = (self.sensitivity, privacy_params.epsilon, privacy_params.delta, dims)
        if type(self)._sigma_for is Gaussian._sigma_for:
            r, sigma = _grid_calibration(self.calibration, *args)
        else:  # a subclass with its own calibration
            r, sigma = gaussian_grid_calibration(self._sigma_for, *args)
        sample = exact_grid_gaussian if self.noise == "exact" else grid_gaussian
        return sample(np.asarray(values, dtype=np.float64), r, sigma, rng)

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        return float(np.linalg.norm((value1 - value2).ravel()))

    def privacy_events(self, privacy_params: Eps) -> tuple[Event, ...]:
        """A ``GaussianEvent`` with μ = Δ/σ for the σ the noise is calibrated to; none at Δ = 0 (no privacy loss).

        If σ is not a positive finite number, the claimed (ε, δ) is returned instead (:meth:`DPMech.privacy_events`).
        """
        if self.sensitivity == 0:
            return ()
        scale = float(self.noise_scale(privacy_params))
        if not (math.isfinite(scale) and scale > 0):
            return super().privacy_events(privacy_params)
        return (GaussianEvent(mu=self.sensitivity / scale),)

    def _noise_half_width(self, privacy_params: Eps, values: np.ndarray, alpha: float, dims: int) -> np.ndarray:
        """Gaussian with σ: P(|X| > σ·z_{1−α/2}) = α.

        Safe and exact noise are a discrete Gaussian on the grid r, equal up to a relative 2⁻⁸⁰ to a continuous
        N(0, σ²) rounded to the grid, so |r·i| ≤ σ·z_{1−α/2} + r/2; the value's grid rounding (≤ r/2) and the output's
        ulp are added on top. σ is the one actually sampled (calibrated to the rounded sensitivity and the float
        reserve). ``noise="float"`` adds one ulp of the output for the rounding of value + noise.
        """
        from scipy.special import ndtri  # lazy: scipy.special costs ~0.25 s at import

        if self.sensitivity == 0:
            return np.zeros(values.shape)
        z = float(-ndtri(alpha / 2))
        if self.noise == "float":
            spread: np.ndarray = self.noise_scale(privacy_params) * z + np.spacing(np.abs(values))
            return spread
        r, sigma = gaussian_grid_calibration(
            self._sigma_for, self.sensitivity, privacy_params.epsilon, privacy_params.delta, dims
        )
        result: np.ndarray = sigma * z + r / 2 + grid_output_rounding(values, r)
        return result

    def privacy_curve(self, claim: Eps) -> Callable[[float], float] | None:
        """The δ(ε′) curve of the Gaussian mechanism that just meets the claimed (ε, δ) (Balle & Wang 2018), which
        a Gaussian release claims as a whole; ``None`` when δ = 0."""
        if not claim.delta > 0:
            return None
        sigma = analytic_gaussian_sigma(claim.epsilon, claim.delta)
        return lambda eps: gaussian_delta(sigma, eps)
