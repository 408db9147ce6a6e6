"""Exact moments on the sphere by quadrature, shared by the Bingham sampler and PCA test modules."""

from __future__ import annotations

import numpy as np


def sphere_second_moments(lam: np.ndarray) -> np.ndarray:
    """E[x_i²] under the density ∝ exp(Σ λ_i x_i²) on S², by Gauss–Legendre quadrature in cos θ and uniform φ."""
    u, w = np.polynomial.legendre.leggauss(200)
    phi = np.linspace(0, 2 * np.pi, 400, endpoint=False)
    cu, ph = np.meshgrid(u, phi, indexing="ij")
    s = np.sqrt(1 - cu**2)
    x = np.stack([s * np.cos(ph), s * np.sin(ph), cu])
    dens = np.exp(np.tensordot(lam, x**2, axes=1) - lam.max()) * w[:, None]
    return (x**2 * dens).sum(axis=(1, 2)) / dens.sum()
