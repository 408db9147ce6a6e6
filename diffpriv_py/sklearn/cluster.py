"""scikit-learn style private k-means over :class:`diffpriv_py.estimators.KMeans`.

Each ``fit`` is one release: the whole ε is spent per call (so each fold of ``cross_val_score`` spends it again), and
an ``accountant`` is charged before any noise is drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from .._validation import check_int
from ..estimators.kmeans import K_LIMIT, MAX_K, KMeansMethod, KMeansModel
from ..estimators.kmeans import KMeans as _KMeansMech
from ..mechanisms.response import Response
from ._base import DPEstimator

__all__ = ["KMeans"]


class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, DPEstimator):
    """Differentially private k-means, scikit-learn style (coreset seeding, DPLloyd or input perturbation).

    Parameters
    ----------
    n_clusters : int, default 8
        Number of clusters k.
    epsilon : float
        Privacy loss ε of one ``fit`` (keyword, no default: a privacy level is never chosen for you).
    bounds : (lower, upper)
        Required public range of the features: two numbers, or two arrays with one number per feature. Records are
        clipped to the box; the bounds are never taken from the data.
    method : {"auto", "coreset", "dplloyd", "input_perturbation"}, default "auto"
        ``"auto"`` picks ``"coreset"`` (private coreset seeding, then a noisy Lloyd step) or ``"dplloyd"`` from the
        public ε, n, d and k only; see :class:`diffpriv_py.estimators.KMeans`.
    improved : bool, default True
        Su et al.'s improved DPLloyd (sphere-packing initialisation, their iteration count and budget split).
        ``False`` asks for the original DPLloyd (also under ``"auto"``).
    n_iter : int, optional
        Noisy Lloyd iterations (DPLloyd default: Su et al.'s rule, or 5 when ``improved=False``; coreset: 1).
    shrinkage : bool, default True
        Shrink each noisy centre towards the previous one (free post-processing; see the mechanism).
    rng : None, int or numpy Generator, default None
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged with the guarantee of each ``fit`` before any noise is drawn.

    Attributes
    ----------
    model_ : KMeansModel
        The released model.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    n_iter_ : int
        Iterations run (noisy ones for DPLloyd).
    n_features_in_ : int
    privacy_params_ : Eps
        The guarantee of the last ``fit``.

    Notes
    -----
    ε-DP under replace-one neighbours per ``fit``; see :class:`diffpriv_py.estimators.KMeans` for the calibration
    (DPLloyd's add/remove sensitivities doubled for replace-one, a budget split that sums to exactly ε).
    Unlike scikit-learn there is no ``labels_`` or ``inertia_``: both are per-record functions of the private
    training data, not DP releases. :meth:`fit_predict` returns the labels to the caller, owner holds the data.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import KMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (500, 2)), rng.normal(2, 0.3, (500, 2))])
    >>> km = KMeans(2, epsilon=1.0, bounds=(-4, 4), rng=0).fit(X)
    >>> np.round(np.sort(km.cluster_centers_[:, 0]))
    array([-2.,  2.])
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        epsilon: float,
        bounds: Any = None,
        method: KMeansMethod = "auto",
        improved: bool = True,
        n_iter: int | None = None,
        shrinkage: bool = True,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.method: KMeansMethod = method
        self.improved = improved
        self.n_iter = n_iter
        self.shrinkage = shrinkage
        self.rng = rng
        self.accountant = accountant

    def _mechanism(self) -> _KMeansMech:
        check_int(self.n_clusters, "n_clusters", maximum=MAX_K, why=K_LIMIT, owner="KMeans")  # the mechanism's k
        return _KMeansMech(
            self.n_clusters,
            method=self.method,
            bounds=self.bounds,
            improved=self.improved,
            n_iter=self.n_iter,
            shrinkage=self.shrinkage,
        )

    def _store(self, response: Response) -> None:
        model: KMeansModel = response.response
        self.model_ = model
        self.cluster_centers_ = np.array(model.centroids)
        self.n_iter_ = model.n_iter
        self._n_features_out = model.k

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> KMeans:
        """Release the private centroids from ``X`` (one use of ``epsilon``); ``y`` is ignored. Returns ``self``."""
        return super().fit(X, None, **fit_params)

    def predict(self, X: Any) -> np.ndarray:
        """Index of the nearest private centroid for each row of ``X``."""
        X = self._validate_predict_data(X)
        return self.model_.predict(X)

    def fit_predict(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """``fit(X)`` then ``predict(X)``: the labels are for the caller, not a DP release."""
        return self.fit(X, **fit_params).predict(X)

    def transform(self, X: Any) -> np.ndarray:
        """Distances of each row of ``X`` to the private centroids, shape (n, n_clusters)."""
        X = self._validate_predict_data(X)
        return self.model_.transform(X)

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Minus the inertia of ``X`` with respect to the private centroids (higher is better, like scikit-learn)."""
        if sample_weight is not None:
            raise ValueError("KMeans.score does not support sample_weight.")
        X = self._validate_predict_data(X)
        return -self.model_.inertia(X)
