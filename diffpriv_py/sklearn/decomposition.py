"""scikit-learn style PCA facade over :class:`diffpriv_py.estimators.PCA`."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from ..estimators.pca import PCA as PCAMech
from ..response import Response
from ._base import DPEstimator

__all__ = ["PCA"]


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, DPEstimator):
    """Differentially private PCA with the scikit-learn API (``fit``, ``transform``, ``fit_transform``).

    ``fit`` makes one private release with :class:`diffpriv_py.estimators.PCA`; ``transform`` is then free
    post-processing. Built on scikit-learn's estimator machinery: ``clone``, ``Pipeline``, ``set_output`` and
    ``get_feature_names_out`` work as for its own PCA.

    Parameters
    ----------
    n_components : int or None, default None
        Dimension k of the released subspace; ``None`` keeps every feature (k = d, as scikit-learn's default).
        Choices that read the data (a variance fraction, ``"mle"``) are not offered: they would leak it.
    epsilon : float
        Privacy loss of one ``fit``; a required keyword (no default: a privacy level is never chosen for you).
    delta : float, default 0.0
        δ of one ``fit``; must be > 0 for ``method="analyze_gauss"`` or ``"mod_sulq"``, and 0 (pure ε-DP) is the
        natural choice for ``"ppca"``.
    method : {"ppca", "analyze_gauss", "mod_sulq"}, default "ppca"
        See :class:`diffpriv_py.estimators.PCA`.
    data_norm : float
        Public bound on the rows' Euclidean norm; required (rows above it are clipped). Never taken from the data.
    n_sweeps : int, optional
        Passed to :class:`~diffpriv_py.estimators.PCA`, where only the opt-in Gibbs sampler uses it; the facade
        always releases with PPCA's default, proven sampler, so it has no effect here.
    rng : None, int or numpy Generator
        ``None`` (default) for secure randomness; an int seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged with (ε, δ) before each ``fit``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The released orthonormal directions, one per row (scikit-learn's layout).
    explained_variance_ : ndarray of shape (n_components,) or None
        Noisy uncentred second moments along the components for the Gaussian methods; ``None`` for ``"ppca"``.
    n_components_, n_features_in_ : int
    feature_names_in_ : ndarray of str
        Set when ``X`` has column names; ``transform`` then refuses columns in another order.
    model_ : PCAModel
        The released model.
    privacy_params_ : Eps or Del
        The guarantee of the release.

    Notes
    -----
    Privacy claim, neighbouring relation (replace-one) and calibration: see :class:`diffpriv_py.estimators.PCA`.
    The components are those of the *uncentred* second-moment matrix and ``transform`` does not subtract a mean;
    put a centring step with a public mean in front in a Pipeline if needed. ``y`` is ignored.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import PCA
    >>> X = np.random.default_rng(0).normal(size=(1000, 5))
    >>> Z = PCA(2, epsilon=1.0, data_norm=4.0, rng=0).fit_transform(X)
    >>> Z.shape
    (1000, 2)
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        method: Literal["ppca", "analyze_gauss", "mod_sulq"] = "ppca",
        data_norm: float | None = None,
        n_sweeps: int | None = None,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.method: Literal["ppca", "analyze_gauss", "mod_sulq"] = method
        self.data_norm = data_norm
        self.n_sweeps = n_sweeps
        self.rng = rng
        self.accountant = accountant

    def _mechanism(self, n_features: int | None = None) -> PCAMech:
        k = n_features if self.n_components is None and n_features is not None else self.n_components
        return PCAMech(1 if k is None else k, method=self.method, data_norm=self.data_norm, n_sweeps=self.n_sweeps)

    def _mechanism_for(self, X: np.ndarray, y: np.ndarray | None) -> PCAMech:
        return self._mechanism(X.shape[1])

    def _store(self, response: Response) -> None:
        model = response.response
        self.model_ = model
        self.components_ = np.asarray(model.components).T
        self.explained_variance_ = model.explained_variance
        self.n_components_ = model.n_components
        self._n_features_out = model.n_components

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> PCA:
        """Release the principal subspace of ``X`` privately (``y`` is ignored); returns ``self``."""
        return super().fit(X, None, **fit_params)

    def transform(self, X: Any) -> np.ndarray:
        """Project ``X`` onto the released components: ``X @ components_.T``."""
        X = self._validate_predict_data(X)
        result: np.ndarray = self.model_.transform(X)
        return result

    def inverse_transform(self, X: Any) -> np.ndarray:
        """Map projected coordinates back to the feature space."""
        self._check_fitted()
        result: np.ndarray = self.model_.inverse_transform(X)
        return result
