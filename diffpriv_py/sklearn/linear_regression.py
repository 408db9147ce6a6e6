"""scikit-learn style private linear regression over :class:`diffpriv_py.estimators.LinearRegression`.

Each ``fit`` is one release: the whole (ε, δ) is spent per call (also for several outputs), and an ``accountant`` is
charged before any noise is drawn.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from sklearn.utils import check_array
from sklearn.utils.validation import validate_data

from .._validation import refuse_masked
from ..estimators.linear_regression import LinearModel
from ..estimators.linear_regression import LinearRegression as _LinearRegressionMech
from ..mechanisms.response import Response
from ._base import DPRegressor, _readable_conversion_errors

__all__ = ["LinearRegression"]


class LinearRegression(DPRegressor):
    """Differentially private least-squares regression, scikit-learn style (AdaSSP or the functional mechanism).

    Parameters
    ----------
    epsilon : float
        Privacy loss ε of one ``fit`` (no default: a privacy level is never chosen for you).
    delta : float, default 0.0
        δ of one ``fit``. ``method="adassp"`` (Gaussian noise) needs δ > 0, e.g. well below 1/n; the functional
        mechanism is pure ε-DP and takes δ = 0.
    data_norm : float
        Required public bound on the L2 norm of a row of X; larger rows are scaled down to it.
    label_bound : float or (float, float)
        Required public bound on y: B for [-B, B], or (low, high); labels are clipped to it. For a 2-D y (several
        outputs) the bound holds for every output, or pass one (low, high) pair per output.
    method : {"adassp", "functional"}, default "adassp"
    fit_intercept : bool, default True
        Fit an unpenalised intercept: Σx and Σy are released with XᵀX and Xᵀy and the system is centred afterwards.
    reg_lambda : "auto" or float, default "auto"
        Ridge strength in normalised units (see the mechanism); "auto" chooses it as the method prescribes.
    rng : None, int or numpy Generator, default None
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged with the guarantee of each ``fit`` before any noise is drawn.

    Attributes
    ----------
    model_ : LinearModel
        The released model.
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        One row per output when ``y`` is 2-D (scikit-learn's layout).
    intercept_ : float or ndarray of shape (n_targets,)
    reg_lambda_ : float
        The ridge strength used (normalised units).
    n_features_in_ : int
    privacy_params_ : Eps
        The guarantee of the last ``fit``.

    Notes
    -----
    (ε, δ)-DP (AdaSSP) or ε-DP (functional) under replace-one neighbours per ``fit``; see
    :class:`diffpriv_py.estimators.LinearRegression` for the calibration. A 2-D ``y`` of shape (n, t) fits the t
    outputs in one release of the same (ε, δ): the label statistics' sensitivity grows with t (by √t for AdaSSP,
    about t for the functional mechanism; proof in the estimator's Notes), so each output is noisier than alone.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (20_000, 2)); y = X @ [0.5, -0.3] + rng.normal(0, 0.1, 20_000)
    >>> reg = LinearRegression(epsilon=1.0, delta=1e-6, data_norm=1.5, label_bound=2.0, rng=0).fit(X, y)
    >>> np.round(reg.coef_, 1)
    array([ 0.5, -0.3])
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        data_norm: float | None = None,
        label_bound: Any = None,
        method: Literal["adassp", "functional"] = "adassp",
        fit_intercept: bool = True,
        reg_lambda: Any = "auto",
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.label_bound = label_bound
        self.method: Literal["adassp", "functional"] = method
        self.fit_intercept = fit_intercept
        self.reg_lambda = reg_lambda
        self.rng = rng
        self.accountant = accountant

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _validate_fit_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """A 1-D y as every regressor; a 2-D y (n, t) is kept 2-D (t outputs), with the same form-only checks."""
        if y is None or _ndim(y) < 2:
            return super()._validate_fit_data(X, y)
        owner = f"{type(self).__name__}.fit"
        refuse_masked((X, y), "X", owner=owner)
        with _readable_conversion_errors("X", owner):
            X = validate_data(self, X, reset=True, dtype=np.float64, ensure_all_finite=False)
        with _readable_conversion_errors("y", owner):
            y = check_array(y, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=0, input_name="y")
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"The 'y' argument of {owner} must hold one row of labels per row of X: X has {X.shape[0]} rows, y "
                f"has {y.shape[0]}. Found input variables with inconsistent numbers of samples."
            )
        return X, y

    def _mechanism(self) -> _LinearRegressionMech:
        # isinstance first: an array method would be compared element-wise; the mechanism refuses it by name.
        if (
            isinstance(self.method, str)
            and self.method == "adassp"
            and not (isinstance(self.delta, (int, float)) and self.delta > 0)
        ):
            raise ValueError(
                f"LinearRegression(method='adassp') adds Gaussian noise and needs delta > 0; got delta={self.delta!r}. "
                "Pass e.g. delta=1e-6 (well below 1/n), or method='functional' for pure ε-DP."
            )
        return _LinearRegressionMech(
            method=self.method,
            data_norm=self.data_norm,
            label_bound=self.label_bound,
            fit_intercept=self.fit_intercept,
            reg_lambda=self.reg_lambda,
        )

    def _store(self, response: Response) -> None:
        model: LinearModel = response.response
        self.model_ = model
        self.coef_ = np.array(model.coef)
        self.intercept_ = model.intercept if isinstance(model.intercept, float) else np.array(model.intercept)
        self.reg_lambda_ = model.reg_lambda

    def predict(self, X: Any) -> np.ndarray:
        """Predictions for the rows of ``X``: shape (n,), or (n, t) for a model fitted on a 2-D y."""
        X = self._validate_predict_data(X)
        return self.model_.predict(X)


def _ndim(y: Any) -> int:
    """The number of dimensions of y without converting it (an unreadable y counts as 1-D: the base check explains)."""
    ndim = getattr(y, "ndim", None)
    if isinstance(ndim, int):
        return ndim
    try:
        return int(np.asarray(y).ndim)
    except (TypeError, ValueError):
        return 1
