"""scikit-learn style PCA facade over :class:`diffpriv_py.estimators.PCA`."""

from __future__ import annotations

import numbers
import types
from collections.abc import Callable
from typing import Any, Literal

import attrs
import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .._validation import check_int
from ..estimators.pca import PCA as PCAMech
from ..estimators.pca import PCAModel
from ..mechanisms.response import Response
from ._base import DPEstimator

__all__ = ["PCA"]


def _has_eigenvalues(estimator: PCA) -> None:
    """The probabilistic PCA model needs eigenvalues, which a ``"ppca"`` release lacks (decided by the parameter)."""
    if estimator.method == "ppca":
        raise AttributeError(
            "PCA(method='ppca') has no get_covariance, get_precision, score or score_samples: PPCA releases a "
            "subspace only, without the eigenvalues (variances) the probabilistic PCA model needs, and releasing "
            "them would cost extra budget. Use method='wishart' (pure epsilon, the default) or 'analyze_gauss', "
            "whose release includes the noisy eigenvalues and their total; transform and inverse_transform work "
            "for every method."
        )


class _NeedsEigenvalues:
    """A method that exists only when the release has eigenvalues: on a ``"ppca"`` PCA, ``hasattr`` is False and
    accessing it raises AttributeError saying why and which method to use (scikit-learn's ``available_if`` would
    hide that message behind a generic one)."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Callable[..., Any]:
        if instance is None:
            return self.method
        _has_eigenvalues(instance)
        return types.MethodType(self.method, instance)


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, DPEstimator):
    """Differentially private PCA with the scikit-learn API (``fit``, ``transform``, ``fit_transform``, ``score``).

    ``fit`` makes one private release with :class:`diffpriv_py.estimators.PCA`; ``transform``,
    ``inverse_transform``, ``get_covariance``, ``get_precision``, ``score_samples`` and ``score`` are then free
    post-processing of that release (they never read the training data again). Built on scikit-learn's estimator
    machinery: ``clone``, ``Pipeline``, ``set_output`` and ``get_feature_names_out`` work as for its own PCA.

    Parameters
    ----------
    n_components : int, float, "mle" or None, default None
        Dimension k of the released subspace; ``None`` keeps every feature (k = d, as scikit-learn's default). A
        float in (0, 1) keeps the fewest components whose share of the variance exceeds it, and ``"mle"`` picks k by
        Minka's MLE (both as scikit-learn), with k chosen privately: the release is made for the public maximum
        k = d and k is read off its noisy eigenvalues (post-processing; see Notes). Only for the noisy-matrix
        methods (``"ppca"`` releases no eigenvalues to choose from).
    epsilon : float
        Privacy loss of one ``fit``; a required keyword (no default: a privacy level is never chosen for you).
    delta : float, default 0.0
        δ of one ``fit``; must be > 0 for ``method="analyze_gauss"`` or ``"mod_sulq"``, and 0 (pure ε-DP) is the
        natural choice for ``"wishart"`` and ``"ppca"``.
    method : {"wishart", "ppca", "analyze_gauss", "mod_sulq"}, default "wishart"
        See :class:`diffpriv_py.estimators.PCA`.
    data_norm : float
        Public bound on the rows' Euclidean norm; required (rows above it are clipped). Never taken from the data.
    sampler : {"auto", "gibbs"}, default "auto"
        PPCA's sampler, passed to :class:`~diffpriv_py.estimators.PCA`: ``"auto"`` draws exactly (the guarantee
        is proven); ``"gibbs"`` is an unproven opt-in that releases a finite Gibbs chain's state and warns
        (``model_.exact`` is then False); with another method ``"gibbs"`` is refused at ``fit``.
    n_sweeps : int, optional
        Sweeps of the ``"gibbs"`` sampler (passed to :class:`~diffpriv_py.estimators.PCA`); unused otherwise.
    rng : None, int or numpy Generator
        ``None`` (default) for secure randomness; an int seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged with (ε, δ) before each ``fit``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The released orthonormal directions, one per row (scikit-learn's layout); for ``"ppca"`` in the order the
        sampler drew them (see :class:`~diffpriv_py.estimators.PCAModel`).
    explained_variance_ : ndarray of shape (n_components,) or None
        Noisy uncentred second moments along the components (the top noisy eigenvalues, in data units) for the
        noisy-matrix methods (``"wishart"``, ``"analyze_gauss"``, ``"mod_sulq"``). ``None`` for ``"ppca"``: the
        exponential mechanism samples the components (rows in the sampler's draw order, not sorted by variance) and
        releases no eigenvalues; estimating them would need a second release with its own share of the budget.
    explained_variance_ratio_ : ndarray of shape (n_components,) or None
        ``explained_variance_`` over the noisy total variance (the trace of the noisy matrix); ``None`` for
        ``"ppca"``.
    noise_variance_ : float or None
        σ² of the probabilistic PCA model: the mean of the d − k discarded noisy eigenvalues, floored at 0 (0 when
        k = d); ``None`` for ``"ppca"``.
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

    A data-dependent ``n_components`` (a variance fraction or ``"mle"``) never reads the data outside the release:
    the noisy-matrix methods release the whole noisy second-moment matrix at a cost that does not depend on k, so
    ``fit`` releases its d eigenpairs (k = d, the public maximum) and keeps the first k, with k computed from the
    released noisy eigenvalues and trace and the public n alone. The number of components is then a function of the
    DP release (post-processing), so the guarantee is the release's, unchanged. ``n_components_`` is that k, and
    ``model_`` the truncated model. scikit-learn reads k off the exact spectrum, which would leak it.

    ``get_covariance``, ``get_precision``, ``score_samples`` and ``score`` are those of scikit-learn's PCA: the
    probabilistic PCA model of Tipping & Bishop (1999), N(0, W·diag(λ − σ²)₊·Wᵀ + σ²I) with W the released
    components, λ ``explained_variance_`` and σ² ``noise_variance_`` (mean 0, as the components are uncentred;
    scikit-learn uses the centred covariance, here the uncentred XᵀX/(n − 1) of the clipped rows, with
    scikit-learn's n − 1 divisor, so on centred data they approach scikit-learn's as ε grows). They are
    post-processing, so they cost no privacy. They exist for the noisy-matrix methods only: with ``method="ppca"``
    they raise AttributeError (``hasattr`` is False) saying to use ``"wishart"``.

    References
    ----------
    Tipping, M. E. & Bishop, C. M. (1999). Probabilistic principal component analysis. JRSS B 61(3).

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
        n_components: int | float | str | None = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        method: Literal["wishart", "ppca", "analyze_gauss", "mod_sulq"] = "wishart",
        data_norm: float | None = None,
        sampler: Literal["auto", "gibbs"] = "auto",
        n_sweeps: int | None = None,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.method: Literal["wishart", "ppca", "analyze_gauss", "mod_sulq"] = method
        self.data_norm = data_norm
        self.sampler: Literal["auto", "gibbs"] = sampler
        self.n_sweeps = n_sweeps
        self.rng = rng
        self.accountant = accountant

    def _selects_k(self) -> bool:
        """Whether k is chosen from the release (a variance fraction or "mle"), checked before any charge."""
        value = self.n_components
        if isinstance(value, str) and value == "mle":
            selects = True
        elif isinstance(value, numbers.Real) and not isinstance(value, (numbers.Integral, np.bool_)):
            if not 0.0 < float(value) < 1.0:
                raise ValueError(
                    "A float 'n_components' of PCA is the share of the variance to keep and must lie in (0, 1), as "
                    f"in scikit-learn. Got {value!r}. Pass e.g. n_components=0.9, or an integer number of components."
                )
            selects = True
        else:
            return False
        if self.method == "ppca":
            raise ValueError(
                f"PCA(n_components={value!r}) chooses k from the released eigenvalues, but method='ppca' releases a "
                "subspace only (no eigenvalues), and choosing k from the data's own spectrum would leak it. Use "
                "method='wishart' (pure epsilon, the default) or 'analyze_gauss', or pass an integer n_components."
            )
        return selects

    def _mechanism(self, n_features: int | None = None) -> PCAMech:
        if self._selects_k():  # the public maximum k = d; k itself is chosen from the release in _store
            return PCAMech(
                1 if n_features is None else n_features,
                method=self.method,
                data_norm=self.data_norm,
                sampler=self.sampler,
                n_sweeps=self.n_sweeps,
            )
        if self.n_components is not None:  # checked under scikit-learn's name (the mechanism calls it k)
            n = check_int(self.n_components, "n_components", minimum=1, owner="PCA")
            if n_features is not None and n > n_features:
                raise ValueError(
                    f"The 'n_components' parameter of PCA must be at most the number of features ({n_features}): a "
                    f"{n}-dimensional subspace of {n_features}-dimensional data does not exist. Got {n}."
                )
        k = n_features if self.n_components is None and n_features is not None else self.n_components
        return PCAMech(
            1 if k is None else k,
            method=self.method,
            data_norm=self.data_norm,
            sampler=self.sampler,
            n_sweeps=self.n_sweeps,
        )

    def _mechanism_for(self, X: np.ndarray, y: np.ndarray | None) -> PCAMech:
        if isinstance(self.n_components, str) and self.n_components == "mle" and X.shape[0] < X.shape[1]:
            raise ValueError(
                "PCA(n_components='mle') needs at least as many rows as features, as in scikit-learn (Minka's MLE of "
                f"the dimension). Got {X.shape[0]} rows and {X.shape[1]} features. Pass an integer n_components."
            )
        self._n_samples = X.shape[0]  # public (replace-one neighbours): Minka's MLE reads it
        return self._mechanism(X.shape[1])

    def _chosen_k(self, model: PCAModel) -> int:
        """k from the released noisy eigenvalues (all d of them) and trace: post-processing of the release."""
        if isinstance(self.n_components, str):  # "mle": Minka (2000), as scikit-learn computes it
            from sklearn.decomposition._pca import _infer_dimension

            return max(1, int(_infer_dimension(np.asarray(model.explained_variance), self._n_samples)))
        share = float(self.n_components or 0)  # a float in (0, 1), checked by _selects_k
        cumulative = np.cumsum(np.asarray(model.explained_variance_ratio))
        return min(int(np.searchsorted(cumulative, share, side="right")) + 1, model.n_features)

    def _store(self, response: Response) -> None:
        model = response.response
        if self._selects_k():
            k = self._chosen_k(model)
            model = attrs.evolve(
                model, components=model.components[:, :k], explained_variance=np.asarray(model.explained_variance)[:k]
            )
        self.model_ = model
        self.components_ = np.asarray(model.components).T
        self.explained_variance_ = model.explained_variance
        self.explained_variance_ratio_ = model.explained_variance_ratio
        self.noise_variance_ = model.noise_variance
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

    @_NeedsEigenvalues
    def get_covariance(self) -> np.ndarray:
        """The covariance (n_features × n_features) of the released probabilistic PCA model (post-processing)."""
        self._check_fitted()
        result: np.ndarray = self.model_.get_covariance()
        return result

    @_NeedsEigenvalues
    def get_precision(self) -> np.ndarray:
        """The inverse of :meth:`get_covariance`, by the matrix inversion lemma as scikit-learn (post-processing)."""
        self._check_fitted()
        result: np.ndarray = self.model_.get_precision()
        return result

    @_NeedsEigenvalues
    def score_samples(self, X: Any) -> np.ndarray:
        """Log-likelihood of each row of ``X`` under the released probabilistic PCA model (as scikit-learn's PCA)."""
        X = self._validate_predict_data(X)
        result: np.ndarray = self.model_.score_samples(X)
        return result

    @_NeedsEigenvalues
    def score(self, X: Any, y: Any = None) -> float:
        """Average log-likelihood of the rows of ``X`` under the released model (``y`` is ignored)."""
        return float(np.mean(self.score_samples(X)))
