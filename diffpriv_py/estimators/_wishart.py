"""Two-sided Wishart noise: pure ε-DP for a sum of outer products xxᵀ of vectors in the unit ball.

The release is C + E with E = W₁ − W₂, W₁ and W₂ independent Wishart_d(d + 1, σ²I) matrices (Wᵢ = GᵢGᵢᵀ with Gᵢ
a d × (d + 1) matrix of independent N(0, σ²) entries). With d + 1 degrees of freedom the Wishart density on the
cone of positive semi-definite matrices is p(W) ∝ exp(−c·tr W), c = 1/(2σ²), with no determinant factor.

**Claim.** If C and C′ differ by a symmetric Δ, the densities of C + E and C′ + E at every point differ by a factor
of at most exp(c·‖Δ‖_*) (‖·‖_* the nuclear norm, the sum of |eigenvalues|). For a replaced row, Δ = xxᵀ − yyᵀ with
‖x‖, ‖y‖ ≤ 1 has ‖Δ‖_* ≤ ‖x‖² + ‖y‖² ≤ 2, so σ² = Δ/(2ε) with Δ = 2 gives ε-DP under replace-one.

**Proof.** The density of E at a point e is the integral of p(P)·p(Q) over the pairs (P, Q) with P − Q = e (a copy
of the symmetric matrices, parametrised by Q, with its Lebesgue measure). Write Δ = Δ₊ − Δ₋ with Δ₊, Δ₋ ⪰ 0, tr Δ₊ +
tr Δ₋ = ‖Δ‖_*. The translation (P, Q) ↦ (P + Δ₋, Q + Δ₊) keeps both matrices positive semi-definite, maps the pairs
of difference e one-to-one onto pairs of difference e − Δ, preserves that measure (it shifts Q), and lowers
p(P)·p(Q) by exactly exp(−c·‖Δ‖_*). Hence f(e − Δ) ≥ e^(−c‖Δ‖_*)·f(e), and the same argument with the roles of Δ₊
and Δ₋ swapped gives the other direction. ∎

(The one-sided version, C + W, is not differentially private: its support {C + W : W ⪰ 0} moves with the data, so a
neighbour can produce outputs that C cannot. The second Wishart removes that support.)

**Floating point.** The data are rounded to a power-of-two grid r = 2⁻⁴⁰·σ² (at most 2⁻⁴⁰ relative) and so is the
noise, so the released matrix lies on a grid that does not depend on the data. Rounding the data moves each entry
by at most r/2, which adds at most d^1.5·r to the nuclear norm of a neighbour's difference; σ² is calibrated to
Δ + d^1.5·r. The proof is for exact Gaussian draws; the Gaussians here are numpy's float64 draws, the same
assumption the Bingham sampler of PPCA makes (there is no discrete analogue of either).
"""

from __future__ import annotations

import numpy as np

from ..noise import grid_step

__all__ = ["check_wishart_epsilon", "wishart_calibration", "wishart_difference"]

MIN_SCALE = 2.0**-900
"""Smallest σ² used: a larger σ² only adds privacy, and this one keeps the grid 2⁻⁴⁰·σ² a normal float."""

MAX_SCALE = 2.0**900
"""Largest σ²: the noise stays below 2⁹⁰⁰·50·(d + 1), far from overflow, for any d that fits in memory."""


def check_wishart_epsilon(sensitivity: float, epsilon: float) -> None:
    """Refuse an ε so small that σ² = Δ/(2ε) would exceed :data:`MAX_SCALE` (public: checked before the charge)."""
    if not sensitivity / (2.0 * epsilon) <= MAX_SCALE:
        raise ValueError(
            f"PCA(method='wishart') cannot release at epsilon={epsilon!r}: the noise scale Δ/(2ε) would exceed "
            f"2^900, beyond which the noise overflows float64. Use epsilon >= {sensitivity * 2.0**-901:.3g}."
        )


def wishart_calibration(sensitivity: float, epsilon: float, d: int) -> tuple[float, float]:
    """The grid r and the scale σ² of two-sided Wishart noise for an ε-DP release of a d × d matrix.

    ``sensitivity`` bounds the nuclear norm of a neighbour's change (2 for rows in the unit ball). σ² is
    (Δ + d^1.5·r)/(2ε), the rounding of the data to the grid r included, floored at :data:`MIN_SCALE`.
    """
    check_wishart_epsilon(sensitivity, epsilon)
    r = grid_step(max(sensitivity / (2.0 * epsilon), MIN_SCALE))
    return r, max((sensitivity + d**1.5 * r) / (2.0 * epsilon), MIN_SCALE)


def wishart_difference(d: int, size: int, sigma2: float, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent draws of W₁ − W₂, W₁, W₂ ~ Wishart_d(d + 1, σ²I), as an array of shape (size, d, d).

    The product GGᵀ is computed by BLAS, whose blocking may round its two triangles differently: use one triangle.
    """
    g = rng.standard_normal((2, size, d, d + 1))
    w = np.matmul(g, g.swapaxes(-1, -2))
    noise: np.ndarray = w[0] - w[1]
    noise *= sigma2
    return noise
