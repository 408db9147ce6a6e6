"""scikit-learn style DP-SGD classifier over :class:`diffpriv_py.estimators.DPSGDClassifier`.

Each ``fit`` is one release: the whole (ε, δ) is spent per call (so each fold of ``cross_val_score`` spends it
again), and an ``accountant`` is charged with the exact subsampled-Gaussian composition before any noise is drawn.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np

from ..estimators.dpsgd import DPSGDClassifier as _DPSGDMech
from ..estimators.dpsgd import DPSGDModel
from ..mechanisms.response import Response
from ._base import DPClassifier

__all__ = ["DPSGDClassifier"]


class DPSGDClassifier(DPClassifier):
    """Differentially private multilayer perceptron (or softmax regression) trained by DP-SGD, scikit-learn style.

    Parameters
    ----------
    hidden_layer_sizes : sequence of int, default (64, 32)
        Hidden layer widths; ``()`` for multinomial logistic regression.
    epsilon : float
        Privacy loss ε of one ``fit`` (keyword, no default: a privacy level is never chosen for you).
    delta : float
        δ of one ``fit``, > 0 (keyword, no default; take it well below 1/n).
    batch_size : int, default 64
        Expected batch size L; the Poisson sampling rate is q = L/n with n the number of rows passed to ``fit``
        (n is public under replace-one neighbours).
    epochs : float, default 10
        Expected passes over the data (T = ⌈epochs/q⌉ steps).
    learning_rate : float, default 0.1
    momentum : float, default 0.9
    clip_norm : float, default 1.0
        Per-example gradient clipping norm C.
    noise_multiplier : float, optional
        σ; calibrated to (ε, δ) when omitted.
    activation : {"relu", "tanh"}, default "relu"
    classes : sequence or "observed"
        Required: every possible label (the public label set; ``fit`` without it is refused before any charge), or
        ``"observed"`` to declare the set of labels present in ``y`` public (the assumption is recorded in
        ``assumptions_``). A record with a label outside ``classes`` contributes nothing to the model.
    neighbouring : {"replace_one", "add_remove"}, default "replace_one"
        Which relation (ε, δ) is calibrated for; the recorded guarantee is always replace-one (see the mechanism).
    progress : bool, default False
        Show a progress bar during training.
    rng : None, int or numpy Generator, default None
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged before each ``fit``.

    Attributes
    ----------
    model_ : DPSGDModel
        The released network.
    classes_ : ndarray
    n_features_in_ : int
    noise_multiplier_ : float
        σ used.
    privacy_params_ : Del
        The replace-one guarantee of the last ``fit``.
    assumptions_ : tuple of str
        Public facts the last ``fit``'s guarantee relies on (``Response.assumptions``; empty unless
        ``classes="observed"``).

    Notes
    -----
    (ε, δ)-DP under replace-one neighbours per ``fit``; see :class:`diffpriv_py.estimators.DPSGDClassifier` for
    the algorithm, the relations and the accounting. Features should be on a public scale (e.g. divided by a known
    maximum); nothing is standardised with statistics of the private data.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 5)); y = (X[:, 0] > 0).astype(int)
    >>> clf = DPSGDClassifier((16,), epsilon=4.0, delta=1e-5, epochs=5, classes=[0, 1], rng=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    def __init__(
        self,
        hidden_layer_sizes: Any = (64, 32),
        *,
        epsilon: float,
        delta: float,
        batch_size: int = 64,
        epochs: float = 10.0,
        learning_rate: float = 0.1,
        momentum: float = 0.9,
        clip_norm: float = 1.0,
        noise_multiplier: float | None = None,
        activation: Literal["relu", "tanh"] = "relu",
        classes: Any = None,
        neighbouring: Literal["replace_one", "add_remove"] = "replace_one",
        progress: bool = False,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.epsilon = epsilon
        self.delta = delta
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.activation: Literal["relu", "tanh"] = activation
        self.classes = classes
        self.neighbouring: Literal["replace_one", "add_remove"] = neighbouring
        self.progress = progress
        self.rng = rng
        self.accountant = accountant

    def _mechanism(self, n_samples: int | None = None) -> _DPSGDMech:
        n = n_samples if n_samples is not None else max(1, self.batch_size if _is_int(self.batch_size) else 1)
        if not _is_int(self.batch_size):
            raise TypeError(f"batch_size must be an integer >= 1. Got {self.batch_size!r}.")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1. Got {self.batch_size}.")
        return _DPSGDMech(
            hidden_layer_sizes=self.hidden_layer_sizes,
            sampling_rate=min(self.batch_size, n) / n,
            epochs=self.epochs,
            learning_rate=self.learning_rate,
            momentum=self.momentum,
            clip_norm=self.clip_norm,
            noise_multiplier=self.noise_multiplier,
            activation=self.activation,
            classes=self.classes,
            neighbouring=self.neighbouring,
            accounting="pld",
            progress=self.progress,
        )

    def _mechanism_for(self, X: np.ndarray, y: np.ndarray | None) -> _DPSGDMech:
        # The expected batch is batch_size/n of the records (Poisson sampling); n is public under replace-one. As
        # scikit-learn's MLP does, a batch larger than the data is clipped to it, with a warning.
        n = X.shape[0]
        if _is_int(self.batch_size) and self.batch_size > n:
            warnings.warn(
                f"batch_size={self.batch_size} exceeds the {n} records; using {n} (every record in every step).",
                UserWarning,
                stacklevel=3,
            )
        return self._mechanism(n)

    def _store(self, response: Response) -> None:
        model: DPSGDModel = response.response
        self.model_ = model
        self.classes_ = np.array(model.classes)
        self.noise_multiplier_ = model.noise_multiplier

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels."""
        X = self._validate_predict_data(X)
        return self.model_.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``."""
        X = self._validate_predict_data(X)
        return self.model_.predict_proba(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores: shape (n,) for two classes (positive for ``classes_[1]``, scikit-learn's convention), else the
        logits, shape (n, n_classes)."""
        X = self._validate_predict_data(X)
        logits = self.model_.decision_function(X)
        return logits[:, 1] - logits[:, 0] if logits.shape[1] == 2 else logits


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
