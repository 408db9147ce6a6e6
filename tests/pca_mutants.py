"""Broken PCA variants shared by the PCA tests and the auditor's tests (each must be refuted)."""

from __future__ import annotations

import attrs
import numpy as np

from diffpriv_py.estimators import PCA
from diffpriv_py.estimators._wishart import wishart_calibration


@attrs.frozen(kw_only=True)
class OneSidedWishart(PCA):
    """The one-sided "Wishart mechanism" C + W₁ (no W₂): its support {C + W : W ⪰ 0} moves with the data."""

    def _noisy_second_moment(self, value, privacy_params, rng, n):
        d = value.gram.shape[0]
        sigma2 = wishart_calibration(self.sensitivity, privacy_params.epsilon, d)[1]
        g = rng.standard_normal((n, d, d + 1))
        return value.gram + sigma2 * (g @ g.swapaxes(-1, -2)), self.data_norm**2 / value.n


def e1_e2_pair(d: int = 3, n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Replace-one neighbours that realise the worst case: the last row e₁ becomes e₂ (orthogonal unit rows)."""
    X = np.zeros((n, d))
    X[:, 0] = 1.0
    X2 = X.copy()
    X2[-1] = np.eye(d)[1]
    return X, X2
