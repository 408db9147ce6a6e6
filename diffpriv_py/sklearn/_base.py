"""The scikit-learn facade, built on scikit-learn itself: ``BaseEstimator`` for the parameter protocol, its mixins
for scores and tags, ``validate_data`` for the input checks, ``check_is_fitted`` and its ``NotFittedError``.

``fit`` runs the library's release order: everything scikit-learn can check from the *form* of the data (types,
shape, sparse or complex input, the number of features and their names, the public label set) is checked before the
accountant is charged; only what depends on the values (NaN or infinite entries) is found after the charge, by the
mechanism, and such an error says that the budget was spent.
"""

from __future__ import annotations

import abc
import contextlib
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._validation import refuse_masked
from ..accounting import Accountant, DetachedAccountant
from ..mechanisms.base import DPMech
from ..mechanisms.response import Response
from ..privacy import Del, Eps

__all__ = ["DPClassifier", "DPEstimator", "DPRegressor", "NotFittedError"]

_SAMPLE_WEIGHT = (
    "{name} does not support sample_weight: a record's weight would scale its contribution to the released model "
    "beyond the bound the privacy guarantee is calibrated to. Fit on unweighted records (or replicate records "
    "with a public, bounded count before fitting and account for it in epsilon)."
)


class DPEstimator(BaseEstimator, abc.ABC):
    """Base of the scikit-learn facades over a DP estimator mechanism.

    A subclass lists its parameters in ``__init__`` (which only stores them), builds the mechanism in
    ``_mechanism()``, and stores the released model in ``_store(response)``. ``fit`` validates the input with
    scikit-learn, charges the optional ``accountant``, releases once and records the guarantee in
    ``privacy_params_``.

    Parameters
    ----------
    epsilon : float
        Privacy loss of one ``fit`` (a required keyword: a privacy level is never chosen for you).
    delta : float
        δ of one ``fit`` (0 for pure-ε methods; required > 0 by Gaussian-noise methods).
    rng : None, int or numpy Generator
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged before each release.

    Notes
    -----
    Tags: every facade is non-deterministic (each ``fit`` draws fresh noise); classifiers and regressors
    (:class:`DPClassifier`, :class:`DPRegressor`) also declare ``poor_score``: at a meaningful ε the noise can
    keep a model below the accuracy scikit-learn's generic checks expect of a non-private one on their tiny
    datasets.
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags

    def __getstate__(self) -> dict[str, Any]:
        """The pickled state, with a :class:`~diffpriv_py.accounting.DetachedAccountant` for the accountant.

        An accountant never leaves its process (a copy would spend the budget again). A facade sent to a worker
        process (``GridSearchCV(n_jobs=2)``, ``cross_val_score(n_jobs=2)``) or saved to a file is pickled without
        it: the copy predicts and transforms as the original, but its ``fit`` refuses, before anything is charged,
        with :class:`~diffpriv_py.exceptions.AccountantProcessError` saying why and what to do (``n_jobs=1``, the
        threading backend, or ``set_params(accountant=acc)``). Raised in the worker's own code, joblib and
        scikit-learn report it to the caller, where a refusal to pickle would surface as joblib's "Could not pickle
        the task to send it to the workers".
        """
        state: dict[str, Any] = dict(super().__getstate__())  # a copy: the original keeps its accountant
        accountant = state.get("accountant")
        if isinstance(accountant, Accountant):
            state["accountant"] = DetachedAccountant(type(self).__name__, repr(accountant.budget))
        return state

    # ---- release -------------------------------------------------------------------------------------------

    def _privacy_params(self) -> Eps:
        delta = getattr(self, "delta", 0.0)
        # Only a real zero (or None) means pure ε; anything else (an array, a string, a bool) goes to Del, which
        # refuses it by name ("not delta" would make numpy raise its own error for an array).
        if delta is None or (
            isinstance(delta, numbers.Real) and not isinstance(delta, (bool, np.bool_)) and delta == 0
        ):
            return Eps(self.epsilon)
        return Del(self.epsilon, delta)

    @abc.abstractmethod
    def _mechanism(self) -> DPMech:
        """Build the (frozen) estimator mechanism from the current parameters."""

    @abc.abstractmethod
    def _store(self, response: Response) -> None:
        """Store the released model as fitted attributes ending in ``_``."""

    def _validate_fit_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """The public checks of ``fit``: form, not values (finiteness is checked by the mechanism after the charge)."""
        tags = self.__sklearn_tags__()
        owner = f"{type(self).__name__}.fit"
        refuse_masked((X,) if y is None else (X, y), "X", owner=owner)
        with _readable_conversion_errors("X", owner):
            X = validate_data(self, X, reset=True, dtype=np.float64, ensure_all_finite=False)
        if not tags.target_tags.required:
            return X, None
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None. Call fit(X, y)."
            )
        with _readable_conversion_errors("y", owner):
            y = column_or_1d(y, warn=True)
        if np.iscomplexobj(y):
            raise ValueError("Complex data not supported: the labels y must be real.")
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"The 'y' argument of {owner} must hold one label per row of X: X has {X.shape[0]} rows, y has "
                f"{y.shape[0]} labels. Found input variables with inconsistent numbers of samples."
            )
        if tags.classifier_tags is None and y.dtype.kind not in "biuf":
            with _readable_conversion_errors("y", owner):
                y = y.astype(np.float64)
        return X, y

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> DPEstimator:
        """Release the model privately from ``X`` (and ``y``); returns ``self``.

        ``sample_weight`` is refused with the reason: a weight would scale a record's contribution past the bound the
        noise is calibrated to. (It is taken through ``**fit_params`` so that scikit-learn does not treat the facade
        as supporting weights.)
        """
        _refuse_fit_params(self, fit_params)
        X, y = self._validate_fit_data(X, y)
        mechanism = self._mechanism_for(X, y)
        response = mechanism.release_response(
            self._privacy_params(),
            X if y is None else (X, y),
            rng=getattr(self, "rng", None),
            accountant=getattr(self, "accountant", None),
        )
        self.privacy_params_ = response.privacy_params
        self.assumptions_ = response.assumptions
        self._store(response)
        return self

    def _mechanism_for(self, X: np.ndarray, y: np.ndarray | None) -> DPMech:
        """The mechanism for this fit; a facade whose settings depend on the (public) size of the data overrides it."""
        return self._mechanism()

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")

    def _validate_predict_data(self, X: Any) -> np.ndarray:
        """Rows to predict on: fitted, same features (by name when fitted on a DataFrame), finite, real."""
        self._check_fitted()
        result: np.ndarray = validate_data(self, X, reset=False, dtype=np.float64)
        return result


_CONVERSION_FAILURES = ("could not convert", "float() argument", "setting an array element", "inhomogeneous")


@contextlib.contextmanager
def _readable_conversion_errors(name: str, owner: str) -> Iterator[None]:
    """Turn numpy's conversion failures (text, objects, ragged rows) into an error naming the argument and the fix."""
    try:
        yield
    except (TypeError, ValueError) as err:
        if not any(text in str(err) for text in _CONVERSION_FAILURES):
            raise
        raise TypeError(
            f"The '{name}' argument of {owner} must be numeric with one row per record: a rectangular array whose "
            "every entry reads as float64 (each argument must be a string or a real number that parses as one; text, "
            "objects and rows of different lengths do not). Encode text or categories as numbers first."
        ) from err


def _refuse_fit_params(estimator: Any, fit_params: dict[str, Any]) -> None:
    if "sample_weight" in fit_params and fit_params["sample_weight"] is not None:
        raise ValueError(_SAMPLE_WEIGHT.format(name=type(estimator).__name__))
    unknown = sorted(set(fit_params) - {"sample_weight"})
    if unknown:
        raise TypeError(f"{type(estimator).__name__}.fit got unexpected keyword arguments {unknown}.")


class DPClassifier(ClassifierMixin, DPEstimator):
    """A facade whose release is a classifier: labels checked as classification targets, ``poor_score`` tag."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags

    def _validate_fit_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray | None]:
        X, y = super()._validate_fit_data(X, y)
        classes = getattr(self, "classes", None)
        if not (isinstance(classes, str) and classes == "observed"):
            # The public label set is declared (or missing, which the mechanism refuses before the charge with the
            # fix): which of y's values lie in it is private, and a record outside it contributes nothing.
            return X, y
        # classes="observed" declares the labels found in y the public label set, so their kind and number are
        # public too (scikit-learn's refusal of continuous labels, and of a single class, come before the charge).
        try:
            check_classification_targets(y)
            n_classes = np.unique(y).size
        except TypeError as err:  # labels of mixed, unordered types (numbers and strings, None among ints)
            kinds = sorted({type(label).__name__ for label in np.asarray(y, dtype=object).ravel().tolist()})
            raise TypeError(
                f"The labels 'y' of {type(self).__name__} mix types that cannot be ordered ({', '.join(kinds)}), so "
                "the labels present in y have no public order for classes='observed'. Pass classes=[...] with every "
                "possible label, or labels of one type."
            ) from err
        if n_classes < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least two classes, but y has one class only. Pass classes= with "
                "every possible label (the public label set), or labels of two classes or more."
            )
        return X, y


class DPRegressor(RegressorMixin, DPEstimator):
    """A facade whose release is a regressor (``poor_score`` tag, R² score)."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
