"""scikit-learn style private linear classifiers over :mod:`diffpriv_py.estimators.linear_models`.

Each ``fit`` is one release of the CMS'11 mechanism (:class:`diffpriv_py.estimators.LogisticRegression` or
:class:`diffpriv_py.estimators.SVM`): the whole ε is spent per call, and an ``accountant`` is charged before any noise
is drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..estimators.linear_models import SVM as _SVMMech
from ..estimators.linear_models import LinearClassifierModel
from ..estimators.linear_models import LogisticRegression as _LogisticMech
from ..mechanisms.response import Response
from ._base import DPClassifier

__all__ = ["SVM", "LogisticRegression"]


class _LinearClassifier(DPClassifier):
    def _store(self, response: Response) -> None:
        model: LinearClassifierModel = response.response
        self.model_ = model
        self.coef_ = np.array(model.coef)
        self.intercept_ = np.array(model.intercept)
        self.classes_ = np.array(model.classes)
        self.reg_lambda_ = model.reg_lambda

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distances to the decision boundary: shape (n,) for two classes, else (n, n_classes)."""
        X = self._validate_predict_data(X)
        return self.model_.decision_function(X)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels."""
        X = self._validate_predict_data(X)
        return self.model_.predict(X)


_COMMON_PARAMETERS = """
    epsilon : float
        Privacy loss ε of one ``fit``; a required keyword (no default: a privacy level is never chosen for you).
    data_norm : float
        Required public bound on the L2 norm of a row of X; rows are clipped to it. Never taken from the data.
        Map each feature's public range to [−1, 1] (centred; data_norm is then √(number of features)), not [0, 1]:
        the intercept is regularised, so a boundary far from the origin costs accuracy, most at small n.
    reg_lambda : "auto", float, sequence of float or "private", default "auto"
        L2 regularisation Λ of the mean loss on rows normalised into the unit ball (scikit-learn's ``C`` is
        1/(nΛ)). ``"auto"`` picks Λ at each ``fit`` from public quantities only (n, the number of weights and of
        classes, ε): never below the value that leaves ε/2 for the noise (the rule is in the Notes of
        :class:`diffpriv_py.estimators.LogisticRegression`). A sequence, or ``"private"``, is chosen
        privately by CMS'11 Algorithm 3.
    perturbation : {"objective", "output"}, default "objective"
    fit_intercept : bool, default True
        The constant is appended inside the norm bound: rows become [√(1 − b²)·x/R, b].
    intercept_scaling : float in (0, 1), default 0.5 (LogisticRegression) or 0.25 (SVM)
        The appended constant b.
    radius_share : float in [0, 1), default 0.1 (LogisticRegression) or 0 (SVM)
        Share of ε spent on a private clipping radius that rescales the rows to fill the unit ball (see the Notes
        of :class:`diffpriv_py.estimators.LogisticRegression`); 0 clips to data_norm only.
    classes : sequence or "observed"
        Required: every possible label (the public label set; ``fit`` without it is refused before any charge), or
        ``"observed"`` to declare the set of labels present in ``y`` public (the assumption is recorded in
        ``assumptions_``). A record with a label outside ``classes`` contributes nothing to the model.
    rng : None, int or numpy Generator, default None
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged with the guarantee of each ``fit`` before any noise is drawn.
"""

_COMMON_ATTRIBUTES = """
    Attributes
    ----------
    model_ : LinearClassifierModel
        The released model.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Set when ``X`` has column names (a DataFrame); ``predict`` then refuses columns in another order.
    reg_lambda_ : float
        The Λ used (the privately selected one for a grid).
    privacy_params_ : Eps
        The guarantee of the last ``fit``.
    assumptions_ : tuple of str
        Public facts the last ``fit``'s guarantee relies on (``Response.assumptions``; empty unless
        ``classes="observed"``).
"""


class LogisticRegression(_LinearClassifier):
    __doc__ = (
        """Differentially private logistic regression, scikit-learn style (CMS'11 objective/output perturbation).

    Parameters
    ----------"""
        + _COMMON_PARAMETERS
        + _COMMON_ATTRIBUTES
        + """
    Notes
    -----
    ε-DP under replace-one neighbours per ``fit``; see :class:`diffpriv_py.estimators.LogisticRegression` for the
    calibration. Unlike scikit-learn the intercept is regularised (the privacy proof needs it), and labels with
    more than two classes are fitted one-vs-rest with ε split evenly.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = LogisticRegression(epsilon=1.0, data_norm=3.0, reg_lambda=0.01, classes=[0, 1], rng=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
"""
    )

    def __init__(
        self,
        *,
        epsilon: float,
        data_norm: float | None = None,
        reg_lambda: Any = "auto",
        perturbation: str = "objective",
        fit_intercept: bool = True,
        intercept_scaling: float = 0.5,
        radius_share: float = 0.1,
        classes: Any = None,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.reg_lambda = reg_lambda
        self.perturbation = perturbation
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.radius_share = radius_share
        self.classes = classes
        self.rng = rng
        self.accountant = accountant

    def _mechanism(self) -> _LogisticMech:
        return _LogisticMech(
            self.reg_lambda,
            perturbation=self.perturbation,
            data_norm=self.data_norm,
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling,
            radius_share=self.radius_share,
            classes=self.classes,
        )

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``."""
        X = self._validate_predict_data(X)
        return self.model_.predict_proba(X)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        result: np.ndarray = np.log(self.predict_proba(X))
        return result


class SVM(_LinearClassifier):
    __doc__ = (
        """Differentially private linear SVM with the Huber hinge, scikit-learn style (CMS'11).

    Parameters
    ----------"""
        + _COMMON_PARAMETERS
        + """    loss : {"huber"}, default "huber"
    huber_width : float, default 0.5
        The h of the Huber hinge.
"""
        + _COMMON_ATTRIBUTES
        + """
    Notes
    -----
    ε-DP under replace-one neighbours per ``fit``; see :class:`diffpriv_py.estimators.SVM` for the calibration.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import SVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = (X[:, 0] > 0).astype(int)
    >>> SVM(epsilon=1.0, data_norm=3.0, reg_lambda=0.01, classes=[0, 1], rng=0).fit(X, y).score(X, y) > 0.9
    True
"""
    )

    def __init__(
        self,
        *,
        epsilon: float,
        data_norm: float | None = None,
        reg_lambda: Any = "auto",
        perturbation: str = "objective",
        fit_intercept: bool = True,
        intercept_scaling: float = 0.25,
        radius_share: float = 0.0,
        classes: Any = None,
        loss: str = "huber",
        huber_width: float = 0.5,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.reg_lambda = reg_lambda
        self.perturbation = perturbation
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.radius_share = radius_share
        self.classes = classes
        self.loss = loss
        self.huber_width = huber_width
        self.rng = rng
        self.accountant = accountant

    def _mechanism(self) -> _SVMMech:
        return _SVMMech(
            self.reg_lambda,
            loss=self.loss,
            huber_width=self.huber_width,
            perturbation=self.perturbation,
            data_norm=self.data_norm,
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling,
            radius_share=self.radius_share,
            classes=self.classes,
        )
