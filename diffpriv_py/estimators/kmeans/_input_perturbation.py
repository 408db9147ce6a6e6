"""Input perturbation: Laplace noise on every normalised record, then (free) k-means on the noisy records.

Private cores: prior validation of data is assumed (the data come from ``KMeans.prepare``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...mechanisms.laplace import Laplace
from ...privacy import Eps
from ._postprocessing import _MAX_ITER_NOISY, _lloyd

_N_INIT_NOISY = 3
"""k-means++ restarts of the (free, post-processing) Lloyd run on input-perturbed data."""


def _input_perturbation_centres(
    Z: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    n_releases: int,
    *,
    k: int,
    max_iter: int | None,
    sensitivity: float,
) -> tuple[np.ndarray, int]:
    """Centres of ``n_releases`` input-perturbation releases in the box [-1, 1]^d, shape (n_releases, k, d), and the
    iterations of the (free) Lloyd run on the noisy records (at most ``max_iter``, default 100)."""
    d = Z.shape[1]
    # Each record is one row of the stack: its L1 change is at most the box's diameter 2d.
    noisy = _laplace(2.0 * d * sensitivity)._perturb(np.broadcast_to(Z, (n_releases, *Z.shape)), Eps(epsilon), rng)
    # Clipping the noisy records back into the box (post-processing) roughly halves the NICV at moderate ε.
    np.clip(noisy, -1.0, 1.0, out=noisy)
    fitted = min(k, Z.shape[0])
    n_init = _N_INIT_NOISY if fitted > 1 else 1  # one cluster: every restart ends at the mean
    out, n_iter = np.empty((n_releases, k, d)), 0
    for i in range(n_releases):
        centres, n_iter = _lloyd(noisy[i], fitted, rng, n_init=n_init, max_iter=max_iter or _MAX_ITER_NOISY)
        if fitted < k:  # fewer records than clusters: pad with data-independent centres
            centres = np.concatenate([centres, rng.uniform(-1.0, 1.0, size=(k - fitted, d))])
        out[i] = np.clip(centres, -1.0, 1.0)
    return out, n_iter


def _laplace(sensitivity: float) -> Laplace:
    """The library's Laplace mechanism at this L1 sensitivity: its floating-point-safe ``_perturb`` adds the noise.

    Input perturbation's noisy records go through the mechanism's single randomisation path rather than a
    ``release_response`` (the records are the target's output, not a separate release). DPLloyd's statistics depend
    on the current, private centres and get the same sampler's noise drawn ahead (:class:`_CellNoise`).
    """
    return Laplace(target=_no_target, sensitivity=sensitivity)


def _no_target(data: Any) -> Any:  # pragma: no cover - never evaluated
    raise TypeError("internal Laplace mechanism of KMeans: statistics are passed to _perturb directly")
