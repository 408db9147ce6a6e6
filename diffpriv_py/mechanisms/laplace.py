"""The Laplace mechanism: L1 sensitivity, i.i.d. Laplace noise of scale Δ/ε (R: ``DPMechLaplace``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import attrs
import numpy as np

from .._validation import one_of
from ..events import Event, LaplaceEvent
from ..noise import (
    exact_grid_laplace,
    grid_laplace,
    grid_laplace_scalar,
    grid_step,
    laplace_epsilon_reserve,
    laplace_grid,
)
from ..privacy import Eps
from .base import NumericMech, grid_output_rounding

if TYPE_CHECKING:
    from scipy import stats

__all__ = ["Laplace"]


@attrs.frozen(kw_only=True)
class Laplace(NumericMech):
    """Release a numeric target with additive Laplace noise (R: ``DPMechLaplace``).

    Parameters
    ----------
    target : callable
        Maps a dataset to a number or numeric array.
    sensitivity : float
        Global L1 sensitivity Δ of ``target`` under replace-one neighbours.
    dims : int, optional
        Number of values ``target`` returns (checked when given).
    noise : {"safe", "exact", "float"}, default "safe"
        How the noise is drawn. ``"safe"``: the value is rounded to a power-of-two grid 2⁻⁴⁰ of the noise scale
        and discrete Laplace noise is added on that grid, vectorised (within a small factor of numpy's own
        Laplace); the output's floating-point structure no longer depends on the input. ``"exact"``: the same
        on Python integers and fractions with the CKS20 sampler, no floating point in the sampling (about 3×10⁴
        values/s). ``"float"``: textbook ``numpy`` Laplace noise, **not** safe: a single output tells input 0
        from input 1 about a quarter of the time (Mironov 2012); only for comparisons and legacy results.

    Notes
    -----
    Adds i.i.d. Lap(b) noise to every coordinate with b = Δ/ε. This is ε-DP when Δ bounds the L1 sensitivity
    under replace-one neighbours (Dwork, McSherry, Nissim & Smith 2006). Accepts any privacy parameters (``Eps``,
    ``Del``, ``Gam``); δ, if given, is reported unchanged.

    The safe and exact modes follow Google's secure noise generation (2020): with grid r (a power of two,
    r ≤ b·2⁻⁴⁰) the rounded value m·r gets integer noise i with P(i) ∝ exp(−|i|·r·ε/(Δ + d·r)); the d·r pays for
    rounding d coordinates, so the release is ε-DP in full and the noise scale grows by a factor 1 + d·2⁻⁴⁰/ε.
    The safe sampler computes its probabilities in float64 and is calibrated to a slightly smaller
    ε_c = (ε − d·2⁻⁴⁰)/(1 + 2⁻⁴⁰) that pays for their rounding; the reported ε is exactly the one requested.
    ``noise_scale`` and ``noise_distribution`` give the nominal Lap(Δ/ε), from which the safe noise is
    indistinguishable in distribution.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> x = np.linspace(0, 1, 100)
    >>> mech = dp.Laplace(target=np.mean, sensitivity=1 / 100, dims=1)
    >>> r = mech.release_response(dp.Eps(1.0), x, rng=42)
    >>> round(r.response, 3)
    0.493
    """

    noise: Literal["safe", "exact", "float"] = attrs.field(default="safe", validator=one_of("safe", "exact", "float"))

    def noise_scale(self, privacy_params: Eps) -> float:
        return self.sensitivity / privacy_params.epsilon

    def _check_params(self, privacy_params: Eps) -> None:
        # The safe samplers' limits depend only on public values (ε, Δ, dims): refuse before the charge, not after.
        # _laplace_grid runs exactly grid_step(Δ/ε) and laplace_epsilon_reserve(ε, dims) and caches their success
        # (a failure raises and is not cached), so a repeated release pays one dictionary look-up for both checks.
        if self.noise != "float" and self.sensitivity > 0:
            laplace_grid(self.sensitivity, privacy_params.epsilon, self.dims or 1)

    def noise_distribution(self, privacy_params: Eps) -> stats.rv_continuous:
        from scipy import stats  # lazy: scipy.stats costs ~0.5 s at import, and releases never need it

        return stats.laplace(scale=self.noise_scale(privacy_params))

    def _noise(self, shape: tuple[int, ...], privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        return rng.laplace(0.0, self.noise_scale(privacy_params), size=shape)

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> Any:
        # One safe value: the scalar sampler directly (the same draw _perturb makes for a stack of one, from the
        # same stream), without wrapping the value in arrays; µs count in small releases.
        if value.ndim == 0 and self.noise == "safe" and self.sensitivity > 0:
            # The scalar path's draw from a cached plan (None: there is none)
            noisy = grid_laplace_scalar(value.item(), self.sensitivity, privacy_params.epsilon, rng)
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
        sample = exact_grid_laplace if self.noise == "exact" else grid_laplace
        return sample(np.asarray(values, dtype=np.float64), self.sensitivity, privacy_params.epsilon, dims, rng)

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        return float(np.abs(value1 - value2).sum())

    def privacy_events(self, privacy_params: Eps) -> tuple[Event, ...]:
        """A ``LaplaceEvent`` with ε = Δ/b for the scale b the noise is drawn at; none at Δ = 0 (no privacy loss).

        The noise must give at least what the release claims; if its ε exceeds the claim (or the scale is not a
        positive finite number), the claimed (ε, δ) is returned instead, as :meth:`DPMech.privacy_events` does.
        """
        if self.sensitivity == 0:
            return ()
        scale = float(self.noise_scale(privacy_params))
        if math.isfinite(scale) and scale > 0:
            epsilon = self.sensitivity / scale
            # The noise must give at least what the release claims; if not, trust nothing but the claim.
            if epsilon <= self.privacy_guarantee(privacy_params).epsilon * (1 + 1e-9):
                return (LaplaceEvent(epsilon=epsilon),)
        return super().privacy_events(privacy_params)

    def _noise_half_width(self, privacy_params: Eps, values: np.ndarray, alpha: float, dims: int) -> np.ndarray:
        """Laplace with scale b: P(|X| > b·ln(1/α)) = α.

        Safe and exact noise add r·i with i two-sided geometric of parameter λ = r·ε_c/(Δ + d·r) on the grid r;
        P(|i| ≥ k) = 2e^{−λk}/(1 + e^{−λ}) ≤ e^{−λ(k − ½)}, so |r·i| ≤ b′·ln(1/α) + r/2 with probability ≥ 1 − α,
        where b′ = (Δ + d·r)/ε_c ≤ b·(1 + 2⁻³⁹) is the effective scale. The grid rounding of the value (≤ r/2) and of
        the output (≤ ½ ulp) are added on top. ``noise="float"`` adds one ulp of the output for the rounding of
        value + noise. The safe samplers' float decisions change each probability by a relative error below 2⁻⁴⁰,
        which changes the coverage by far less than any α of interest.
        """
        if self.sensitivity == 0:
            return np.zeros(values.shape)
        eps = privacy_params.epsilon
        if self.noise == "float":
            # value + noise is rounded once: at most half an ulp of the output on top of the noise.
            spread: np.ndarray = self.noise_scale(privacy_params) * math.log(1.0 / alpha) + np.spacing(np.abs(values))
            return spread
        r = grid_step(self.sensitivity / eps)
        eps_t = eps if self.noise == "exact" else laplace_epsilon_reserve(eps, dims)
        scale = (self.sensitivity + dims * r) / eps_t
        result: np.ndarray = scale * math.log(1.0 / alpha) + r / 2 + grid_output_rounding(values, r)
        return result
