"""Utility measures for a released PCA subspace: the captured energy q_F and the subspace overlap."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._supervised import check_features

__all__ = ["q_f", "subspace_overlap"]


def _components(components: Any, name: str) -> np.ndarray:
    raw = getattr(components, "components", components)
    if np.ndim(raw) == 1:
        raw = np.asarray(raw)[:, None]
    v = check_features(raw, what=name)
    if v.ndim != 2 or not np.all(np.isfinite(v)):
        raise ValueError(
            f"'{name}' must be a finite d×k matrix with orthonormal columns (or a PCAModel). Got shape {v.shape}."
        )
    if not np.allclose(v.T @ v, np.eye(v.shape[1]), atol=1e-8):
        raise ValueError(
            f"The columns of '{name}' must be orthonormal (a basis of the subspace). Orthonormalise them first, "
            "e.g. with numpy.linalg.qr."
        )
    return v


def q_f(components: Any, X: Any) -> float:
    """The energy captured by a subspace: q_F(V) = tr(VᵀAV) with A = XᵀX/n (Chaudhuri, Sarwate & Sinha 2012).

    Parameters
    ----------
    components : ndarray of shape (d, k) or PCAModel
        Orthonormal columns spanning the subspace (a released model's ``components``).
    X : array-like of shape (n, d)
        The data the energy is measured on, one record per row, already scaled as wanted (the paper uses rows
        with ‖x‖ ≤ 1, so q_F ≤ 1). This is an evaluation helper: it reads the data exactly, so its value is not
        private.

    Returns
    -------
    float
        The mean over rows of ‖Vᵀx‖²; its maximum over k-dimensional subspaces is the sum of the k largest
        eigenvalues of A (non-private PCA), and a uniformly random subspace scores (k/d)·tr(A) on average.

    Examples
    --------
    >>> import numpy as np
    >>> q_f(np.eye(3)[:, :1], np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    0.5
    """
    v = _components(components, "components")
    data = check_features(X, what="X")
    if data.shape[1] != v.shape[0]:
        raise ValueError(
            f"X must be a 2-D array with {v.shape[0]} columns (one record per row) to match the components. "
            f"Got shape {data.shape}."
        )
    return float(np.square(data @ v).sum() / data.shape[0])


def subspace_overlap(components: Any, reference: Any) -> float:
    """The overlap ‖VᵀU‖_F²/k ∈ [0, 1] of two k-dimensional subspaces (1: identical; k/d on average at random).

    Parameters
    ----------
    components, reference : ndarray of shape (d, k) or PCAModel
        Orthonormal bases of the two subspaces (e.g. a release and the non-private top-k eigenvectors).

    Returns
    -------
    float
        The mean squared cosine of the principal angles between the subspaces; invariant to the choice of bases.

    Examples
    --------
    >>> import numpy as np
    >>> subspace_overlap(np.eye(3)[:, :2], np.eye(3)[:, 1:])
    0.5
    """
    v = _components(components, "components")
    u = _components(reference, "reference")
    if v.shape != u.shape:
        raise ValueError(f"Both subspaces must have the same shape (d, k); got {v.shape} and {u.shape}.")
    return float(np.square(v.T @ u).sum() / v.shape[1])
