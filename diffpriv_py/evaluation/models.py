"""What a study trains: the model registry (input-perturbation models and the library's DP estimators)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from diffpriv_py.extras import EXTRAS, install_hint, require


@attrs.frozen
class ModelContext:
    """What a model factory knows when it builds a model for one (split, ε) cell of a study.

    Attributes
    ----------
    task : {"classification", "regression"}
    epsilon : float
        The privacy loss of the cell; ``inf`` means the non-private baseline.
    delta : float
        δ for (ε, δ) estimators.
    n_features : int
        Number of features after preprocessing (public: it is the schema).
    seed : int
        Seed for the model's own randomness (noise of a DP estimator, trees of a forest).
    classes : tuple or None
        Every class label of the dataset (public schema), for classifiers.
    data_norm : float or None
        A public bound on every scaled record's L2 norm (:attr:`Dataset.norm`); ``None``: √n_features, which holds
        for any features in [0, 1].
    """

    task: str
    epsilon: float
    delta: float
    n_features: int
    seed: int
    classes: tuple[Any, ...] | None = None
    data_norm: float | None = None

    @property
    def norm(self) -> float:
        """The public row-norm bound DP estimators are given: :attr:`data_norm`, else √n_features."""
        return self.data_norm if self.data_norm is not None else math.sqrt(self.n_features)


@attrs.frozen
class ModelSpec:
    """A model an evaluation can train.

    Attributes
    ----------
    name : str
        Short name used on the command line and in the results.
    label : str
        Name shown in plots.
    tasks : tuple of str
        The tasks it handles ("classification", "regression").
    build : callable
        ``build(context: ModelContext) -> estimator`` with scikit-learn's ``fit``/``predict``. Input-perturbation
        models ignore ``context.epsilon``; DP estimators release at it (``inf``: their non-private counterpart).
    requires : tuple of str
        ``"module"`` or ``"module:attribute"`` entries that must import for the model to be available.
    private : bool
        Whether training it is itself a DP release of the training split (True for models trained on privatised
        data or released by a DP estimator; False when a step reads the clean training data, e.g. the
        non-private SVM after DP PCA).
    """

    name: str
    label: str
    tasks: tuple[str, ...]
    build: Callable[[ModelContext], Any]
    requires: tuple[str, ...] = ("sklearn",)
    private: bool = True

    def available(self) -> bool:
        """Whether everything this model needs can be imported."""
        import importlib

        for need in self.requires:
            module, _, attribute = need.partition(":")
            try:
                loaded = importlib.import_module(module)
            except ImportError:
                return False
            if attribute and not hasattr(loaded, attribute):
                return False
        return True


def _knn(context: ModelContext) -> Any:
    from sklearn import neighbors

    return neighbors.KNeighborsClassifier() if context.task == "classification" else neighbors.KNeighborsRegressor()


def _svm(context: ModelContext) -> Any:
    from sklearn import svm

    return svm.SVC() if context.task == "classification" else svm.SVR()


def _forest(context: ModelContext) -> Any:
    from sklearn import ensemble

    kind = ensemble.RandomForestClassifier if context.task == "classification" else ensemble.RandomForestRegressor
    return kind(random_state=context.seed)


def _linear(context: ModelContext) -> Any:
    # As in the study, only the linear models get a standard scaler.
    from sklearn import linear_model, pipeline, preprocessing

    model = (
        linear_model.LogisticRegression(max_iter=1000)
        if context.task == "classification"
        else linear_model.LinearRegression()
    )
    return pipeline.make_pipeline(preprocessing.StandardScaler(), model)


INPUT_MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("knn", "k-nearest neighbours", ("classification", "regression"), _knn),
        ModelSpec("svm", "support vector machine", ("classification", "regression"), _svm),
        ModelSpec("rf", "random forest", ("classification", "regression"), _forest),
        ModelSpec("linear", "logistic / linear regression", ("classification", "regression"), _linear),
    )
}
"""scikit-learn models trained on input-perturbed data (the PyPryvacy study's four)."""


def _settings(model: Any, names: Sequence[str]) -> dict[str, Any]:
    """The named hyper-parameters of a fitted model (fitted ``name_`` values first), for the study's report."""
    found = {}
    for name in names:
        value = getattr(model, f"{name}_", getattr(model, name, None))
        if value is not None:
            found[name] = value
    return found


class _PrivateOrBaseline:
    """A DP estimator facade at finite ε, its non-private scikit-learn counterpart at ε = ∞ (same features).

    With ``scale_target`` (regression) the labels are mapped into [−1, 1] with the training split's range before
    fitting and predictions are mapped back, so a ``label_bound`` of 1 holds (non-private preprocessing, like the
    features' min-max scaling). After ``fit``, ``params_`` holds the hyper-parameters used (``shown`` names).
    """

    def __init__(
        self,
        private: Callable[[], Any],
        baseline: Callable[[int], Any],
        epsilon: float,
        *,
        scale_target: bool = False,
        shown: Sequence[str] = (),
    ) -> None:
        self._private, self._baseline, self._epsilon = private, baseline, epsilon
        self._scale_target = scale_target
        self._shown = tuple(shown)

    def fit(self, X: np.ndarray, y: np.ndarray) -> _PrivateOrBaseline:
        self.model_ = self._private() if self._epsilon < math.inf else self._baseline(len(y))
        self._centre, self._half = 0.0, 1.0
        if self._scale_target:
            low, high = float(np.min(y)), float(np.max(y))
            self._centre, self._half = (low + high) / 2.0, max((high - low) / 2.0, 1e-12)
        self.model_.fit(X, (y - self._centre) / self._half if self._scale_target else y)
        self.params_ = _settings(self.model_, self._shown) if self._epsilon < math.inf else {"model": "non-private"}
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        predicted = self.model_.predict(X)
        return np.asarray(predicted) * self._half + self._centre if self._scale_target else predicted


def _logistic(context: ModelContext) -> Any:
    """The non-private logistic baseline: liblinear for two classes (lbfgs is 20x slower on Adult), else lbfgs."""
    from sklearn import linear_model

    if context.classes is not None and len(context.classes) == 2:
        return linear_model.LogisticRegression(solver="liblinear")
    return linear_model.LogisticRegression(max_iter=2000)


def _dp_linear_classifier(kind: str) -> Callable[[ModelContext], Any]:
    def build(context: ModelContext) -> Any:
        from sklearn import svm

        from diffpriv_py import sklearn as dp_sklearn

        facade = getattr(dp_sklearn, kind)

        def private() -> Any:
            # The public norm bound of the scaled rows (never read from them); Λ by the facade's public "auto" rule
            # (n, p, ε only): a fixed small Λ at a loose norm was what made these models predict the majority class.
            return facade(
                epsilon=context.epsilon,
                data_norm=context.norm,
                reg_lambda="auto",
                classes=context.classes,
                rng=context.seed,
            )

        def baseline(n: int) -> Any:
            if kind == "LogisticRegression":
                return _logistic(context)
            return svm.LinearSVC(dual=False)

        return _PrivateOrBaseline(private, baseline, context.epsilon, shown=("data_norm", "reg_lambda"))

    return build


def _dp_linear_regression(context: ModelContext) -> Any:
    from sklearn import linear_model

    from diffpriv_py.sklearn import LinearRegression

    def private() -> Any:
        return LinearRegression(
            epsilon=context.epsilon,
            delta=context.delta,
            data_norm=context.norm,
            label_bound=1.0,
            rng=context.seed,
        )

    return _PrivateOrBaseline(
        private,
        lambda n: linear_model.LinearRegression(),
        context.epsilon,
        scale_target=True,
        shown=("data_norm", "label_bound"),
    )


DPSGD_EPOCHS = 5
"""Epochs of the DP-SGD models in a study."""


def _dp_sgd(context: ModelContext) -> Any:

    from diffpriv_py.sklearn import DPSGDClassifier

    def private() -> Any:
        return DPSGDClassifier(
            (),
            epsilon=context.epsilon,
            delta=context.delta,
            epochs=DPSGD_EPOCHS,
            classes=context.classes,
            rng=context.seed,
        )

    return _PrivateOrBaseline(
        private,
        lambda n: _logistic(context),
        context.epsilon,
        shown=("epochs", "batch_size", "learning_rate", "clip_norm", "noise_multiplier"),
    )


PCA_COMPONENTS = 10
"""Dimensions kept by the DP PCA + SVM pipeline (the dp-stats poster's top-10 components), at most d."""


class _PCAThenSVM:
    """DP PCA (Analyze Gauss) of the training rows, then a non-private linear SVM on the projections (the poster)."""

    def __init__(self, context: ModelContext) -> None:
        self._context = context

    def fit(self, X: np.ndarray, y: np.ndarray) -> _PCAThenSVM:
        from sklearn import pipeline, preprocessing, svm

        from diffpriv_py import Del
        from diffpriv_py.estimators import PCA

        k = min(PCA_COMPONENTS, X.shape[1])
        # Rows are divided by their own norm (a per-record step, no privacy cost), so data_norm=1 as the poster assumes.
        unit = X / np.maximum(np.linalg.norm(X, axis=1), 1e-12)[:, None]
        if self._context.epsilon == math.inf:
            self.components_ = np.linalg.eigh(unit.T @ unit)[1][:, ::-1][:, :k]
        else:
            mech = PCA(k, method="analyze_gauss", data_norm=1.0)
            release = mech.release_response(
                Del(self._context.epsilon, self._context.delta), unit, rng=self._context.seed
            )
            self.components_ = np.asarray(release.response.components)
        self.svm_ = pipeline.make_pipeline(preprocessing.StandardScaler(), svm.LinearSVC())
        self.svm_.fit(self._project(X), y)
        finite = self._context.epsilon < math.inf
        self.params_ = {"components": k, "data_norm": 1.0} if finite else {"model": "non-private"}
        return self

    def _project(self, X: np.ndarray) -> np.ndarray:
        result: np.ndarray = (X / np.maximum(np.linalg.norm(X, axis=1), 1e-12)[:, None]) @ self.components_
        return result

    def predict(self, X: np.ndarray) -> np.ndarray:
        result: np.ndarray = self.svm_.predict(self._project(X))
        return result


ESTIMATOR_MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "dp-logreg",
            "DP logistic regression (objective perturbation)",
            ("classification",),
            _dp_linear_classifier("LogisticRegression"),
            ("sklearn", "diffpriv_py.sklearn:LogisticRegression"),
        ),
        ModelSpec(
            "dp-svm",
            "DP linear SVM, Huber loss (objective perturbation)",
            ("classification",),
            _dp_linear_classifier("SVM"),
            ("sklearn", "diffpriv_py.sklearn:SVM"),
        ),
        ModelSpec(
            "dp-sgd",
            "DP-SGD logistic model",
            ("classification",),
            _dp_sgd,
            ("sklearn", "diffpriv_py.sklearn:DPSGDClassifier"),
        ),
        ModelSpec(
            "dp-pca-svm",
            "DP PCA (Analyze Gauss, 10 dims) + non-private SVM",
            ("classification",),
            _PCAThenSVM,
            ("sklearn", "diffpriv_py.estimators:PCA"),
            private=False,
        ),
        ModelSpec(
            "dp-linreg",
            "DP linear regression (AdaSSP)",
            ("regression",),
            _dp_linear_regression,
            ("sklearn", "diffpriv_py.sklearn:LinearRegression"),
        ),
    )
}
"""This library's DP estimators (through their scikit-learn facades), trained on the min-max scaled training split
with the privacy applied inside; at ε = ∞ each is replaced by its non-private scikit-learn counterpart."""

_ALIASES = {
    "knearest": "knn",
    "kneighbors": "knn",
    "svc": "svm",
    "svr": "svm",
    "random_forest": "rf",
    "randomforest": "rf",
    "forest": "rf",
    "logistic": "linear",
    "logreg": "linear",
    "linreg": "linear",
    "linear_regression": "linear",
    "logistic_regression": "linear",
}


def models_for(privatisation: str, task: str) -> dict[str, ModelSpec]:
    """The models available for a privatisation and task (DP estimators only once their modules exist)."""
    registry = ESTIMATOR_MODELS if privatisation == "estimators" else INPUT_MODELS
    return {name: spec for name, spec in registry.items() if task in spec.tasks}


def resolve_models(names: Sequence[str] | None, privatisation: str, task: str) -> list[ModelSpec]:
    """The models a study will train, checked before it starts: unknown names and missing extras fail here.

    Parameters
    ----------
    names : sequence of str or None
        Model names or their aliases (``None``: every available model for the privatisation and task).
    privatisation : {"estimators", "laplace", "gaussian"}
        How the training data are protected (:data:`PRIVATISATIONS`).
    task : {"classification", "regression"}
        What the dataset's target is.

    Returns
    -------
    list of ModelSpec

    Raises
    ------
    ValueError
        An unknown name, or no model available at all.
    ImportError
        A named model needs an optional dependency that is not installed (the message names the extra).
    """
    choices = models_for(privatisation, task)
    if names is None:
        specs = [spec for spec in choices.values() if spec.available()]
        if not specs:
            raise ValueError(
                f"No {task} models are available for privatisation {privatisation!r}"
                + (f" (they need scikit-learn: {install_hint('sklearn')})." if choices else " yet.")
            )
        return specs
    specs = []
    for raw in names:
        name = _ALIASES.get(raw.strip().lower().replace("-", "_"), raw.strip().lower())
        if name not in choices:
            listed = ", ".join(choices) or "none yet"
            raise ValueError(
                f"Unknown model {raw!r} for {task} with privatisation {privatisation!r}; choose from {listed}."
            )
        if not choices[name].available():
            for need in choices[name].requires:  # an optional dependency names its extra
                module = need.partition(":")[0]
                if module.partition(".")[0] in EXTRAS:
                    require(module, feature=f"The model {name!r}")
            raise ImportError(f"The model {name!r} needs {', '.join(choices[name].requires)}.")
        specs.append(choices[name])
    return specs
