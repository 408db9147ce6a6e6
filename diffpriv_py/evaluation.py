"""Utility-vs-ε studies: how much predictive accuracy a privatisation costs, with repeats and mean ± sd.

This is the engine of ``diffpriv-py evaluate``. By default it sweeps this library's DP estimators (objective
perturbation, DP-SGD) over ε, in the style of the dp-stats poster's error-vs-privacy plots, next to their
non-private counterparts (ε = ∞) and the constant majority-class baseline. It also reproduces the method of the
PyPryvacy study (Spiess 2023, §3): split the data 80/20, privatise the training split by *input perturbation*
(i.i.d. Laplace or Gaussian noise on every training value), train scikit-learn's kNN, SVM, random forest and
logistic/linear regression on it, and score them on the untouched test split. Two of that study's threats to
validity are addressed: every point is repeated (new split, new noise) and reported as mean ± sd, and k-fold
cross-validation is available.

Examples
--------
>>> from diffpriv_py import datasets, evaluation
>>> iris = datasets.load_dataset("iris")
>>> result = evaluation.evaluate(iris, privatisation="laplace", epsilons=[1, float("inf")], repeats=2, rng=0)
>>> [row["model"] for row in result.summary() if row["metric"] == "accuracy"][:2]
['knn', 'knn']
"""

from __future__ import annotations

import csv
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

import attrs
import numpy as np

from ._extras import EXTRAS, install_hint, require
from ._rng import RNGLike
from ._validation import check_in_range, check_int, check_real
from .datasets import Dataset

__all__ = [
    "DEFAULT_EPSILONS",
    "ESTIMATOR_MODELS",
    "INPUT_MODELS",
    "PRIVATISATIONS",
    "PYPRYVACY_EPSILONS",
    "EvaluationResult",
    "ModelContext",
    "ModelSpec",
    "evaluate",
]

PYPRYVACY_EPSILONS: tuple[float, ...] = (0.01, 0.5, 0.75, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0, 14.0, 19.0, math.inf)
"""The ε grid of the PyPryvacy study; ∞ means no noise (the non-private baseline)."""

DEFAULT_EPSILONS: tuple[float, ...] = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, math.inf)
"""The default ε grid: from where every model is noise to where privacy costs little; ∞ = the non-private line."""

PRIVATISATIONS = ("laplace", "gaussian", "estimators")
"""How the training data are protected: input perturbation with Laplace or Gaussian noise, or DP estimators."""

METRICS = {"classification": ("accuracy", "f1"), "regression": ("rmse", "r2")}


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

        from . import sklearn as dp_sklearn

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

    from .sklearn import LinearRegression

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

    from .sklearn import DPSGDClassifier

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

        from . import Del
        from .estimators import PCA

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


def _resolve_models(names: Sequence[str] | None, privatisation: str, task: str) -> list[ModelSpec]:
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


# ---- privatisation --------------------------------------------------------------------------------------------------


def _perturb(
    X: np.ndarray, privatisation: str, epsilon: float, delta: float, sensitivity: float, rng: np.random.Generator
) -> np.ndarray:
    """Input perturbation: release the whole training matrix through the library's Laplace or Gaussian mechanism."""
    if epsilon == math.inf:
        return X
    from . import Del, Eps, Gaussian, Laplace

    def identity(data: np.ndarray) -> np.ndarray:
        return data

    if privatisation == "laplace":
        release = Laplace(target=identity, sensitivity=sensitivity).release_response(Eps(epsilon), X, rng=rng)
    else:
        release = Gaussian(target=identity, sensitivity=sensitivity).release_response(Del(epsilon, delta), X, rng=rng)
    return np.asarray(release.response)


def _public_scale(X: np.ndarray, bounds: Any) -> np.ndarray:
    """Clip to public bounds and rescale to [0, 1]: reads nothing from the data."""
    low, high = (np.asarray(b, dtype=np.float64) for b in bounds)
    result: np.ndarray = (np.clip(X, low, high) - low) / (high - low)
    return result


def _privacy(
    specs: Sequence[ModelSpec], privatisation: str, scale: str, sensitivity: float, d: int, task: str
) -> tuple[tuple[bool, ...], str]:
    """Which models' releases are DP per record under replace-one neighbours, and why (or why not).

    A reason that holds for the whole study (scaling read from the data, a per-value sensitivity, labels rescaled
    from the data) marks every model; a model that reads the clean data itself (``ModelSpec.private`` False) marks
    only its own row.
    """
    nobody = tuple(False for _ in specs)
    if scale != "public":
        how = "with ranges read from the data" if scale == "minmax" else "not at all"
        return nobody, (
            f"the features are scaled {how}, not into public bounds, so the noise level is not a privacy guarantee "
            "(use a dataset with public bounds and scale='public')"
        )
    if privatisation == "estimators":
        if task == "regression":
            return nobody, "the labels are rescaled with the training split's range, which is read from the data"
        note = (
            "each private model is an ε-DP (or (ε, δ)-DP) release per record (replace-one), features in public bounds"
        )
    else:
        per_record = d if privatisation == "laplace" else math.sqrt(d)
        if sensitivity < per_record * (1 - 1e-12):
            norm = "L1" if privatisation == "laplace" else "L2"
            return nobody, (
                f"sensitivity={sensitivity:g} covers one value, not a whole record: a record of {d} features in "
                f"[0, 1] moves by up to {per_record:g} in {norm} (leave sensitivity unset for the per-record value)"
            )
        note = "every record of the training split is protected at ε (replace-one), features in public bounds"
    flags = tuple(spec.private for spec in specs)
    leaky = [spec.name for spec in specs if not spec.private]
    if leaky:
        note += f"; but {', '.join(leaky)} read the clean training data outside the DP release (only those rows)"
    return flags, note


def _utility_note(privatisation: str, sensitivity: float) -> str:
    """Why input perturbation's models fall to the majority class at every useful ε (empty for estimators)."""
    if privatisation == "estimators":
        return ""
    return (
        f"input perturbation noises every value of every training record: at a per-record sensitivity of "
        f"{sensitivity:.3g}, each feature in [0, 1] gets noise of scale at least {sensitivity:.3g}/ε ({sensitivity:.3g}"
        " at ε = 1), so the models learn from noise and mostly predict the majority class. That is the honest price "
        "of privatising the inputs; the DP estimators (privatisation='estimators', the default) add noise once, to "
        "the model, and keep their utility"
    )


def _minmax(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    low, high = train.min(axis=0), train.max(axis=0)
    width = np.where(high > low, high - low, 1.0)
    return [np.clip((part - low) / width, 0.0, 1.0) for part in (train, *others)]


# ---- metrics --------------------------------------------------------------------------------------------------------


def _score(task: str, y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> dict[str, float]:
    from sklearn import metrics

    if task == "classification":
        average = "binary" if n_classes == 2 else "weighted"
        return {
            "accuracy": float(metrics.accuracy_score(y_true, y_pred)),
            "f1": float(metrics.f1_score(y_true, y_pred, average=average, zero_division=0)),
        }
    return {
        "rmse": float(np.sqrt(np.mean((np.asarray(y_true) - np.asarray(y_pred)) ** 2))),
        "r2": float(metrics.r2_score(y_true, y_pred)),
    }


# ---- splits ---------------------------------------------------------------------------------------------------------


def _splits(
    y: np.ndarray, task: str, repeats: int, cv: int | None, test_size: float, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    from sklearn import model_selection as ms

    counts = np.unique(y, return_counts=True)[1] if task == "classification" else None
    stratify = counts is not None and counts.min() >= (cv or 2)
    if cv is not None:
        kind = ms.RepeatedStratifiedKFold if stratify else ms.RepeatedKFold
        splitter = kind(n_splits=cv, n_repeats=repeats, random_state=seed)
    else:
        kind = ms.StratifiedShuffleSplit if stratify else ms.ShuffleSplit
        splitter = kind(n_splits=repeats, test_size=test_size, random_state=seed)
    yield from splitter.split(np.zeros((len(y), 1)), y)


# ---- results --------------------------------------------------------------------------------------------------------


def _epsilon_label(epsilon: float) -> str:
    return "inf" if epsilon == math.inf else f"{epsilon:g}"


@attrs.frozen(eq=False)
class EvaluationResult:
    """The scores of one utility-vs-ε study.

    Attributes
    ----------
    records : list of dict
        One row per (split, ε, model, metric): keys ``dataset``, ``privatisation``, ``model``, ``private`` (whether
        that model's ε is a guarantee), ``epsilon``, ``split``, ``metric``, ``value`` and ``params`` (the
        hyper-parameters it used, ``"name=value; ..."``). The constant baseline (:attr:`baseline`) has rows too.
    dataset, privatisation, task : str
        What was studied.
    epsilons : tuple of float
        The ε grid (``inf`` = no privacy).
    models : tuple of str
        Model names in order (the constant baseline is not one of them).
    labels : dict
        Model name -> readable label.
    settings : dict
        The other settings (δ, sensitivity, repeats, cv, test size, seed, scaling, records used).
    private : bool
        Whether every model of the study is an ε-DP (or (ε, δ)-DP) release of its training split, per record
        under replace-one neighbours. When no model is, the ε of a row is only the level of the noise: files and
        plots then call it ``noise_epsilon`` and never label it as a privacy guarantee.
    privacy_note : str
        One sentence: why the study is private, or why it is not.
    model_private : dict
        Model name -> whether that model's ε is a guarantee. A model that reads the clean data marks its own row
        only; a reason that holds for the whole study (e.g. scaling read from the data) marks every row.
    utility_note : str
        Why the models' utility is what it is when that needs saying (input perturbation), else empty.
    baseline : str
        The constant baseline's model name in :attr:`records`: ``"majority"`` or ``"mean"``.
    """

    records: list[dict[str, Any]]
    dataset: str
    privatisation: str
    task: str
    epsilons: tuple[float, ...]
    models: tuple[str, ...]
    labels: dict[str, str]
    settings: dict[str, Any]
    private: bool = False
    privacy_note: str = ""
    model_private: dict[str, bool] = attrs.field(factory=dict)
    utility_note: str = ""
    baseline: str = "majority"

    @property
    def epsilon_label(self) -> str:
        """``"epsilon"`` when some model's ε is a guarantee, ``"noise_epsilon"`` when ε is only the noise level."""
        return "epsilon" if self.private or any(self.model_private.values()) else "noise_epsilon"

    def hyperparameters(self) -> dict[str, dict[float, str]]:
        """Model name -> ε -> the hyper-parameters it used in the first split (``"name=value; ..."``)."""
        first = min((r["split"] for r in self.records), default=0)
        chosen: dict[str, dict[float, str]] = {}
        for row in self.records:
            if row["split"] == first and row["model"] in self.models:
                chosen.setdefault(row["model"], {})[row["epsilon"]] = row.get("params", "")
        return chosen

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics recorded (accuracy and F1, or RMSE and R²)."""
        return METRICS[self.task]

    def summary(self) -> list[dict[str, Any]]:
        """Mean, standard deviation (ddof=1; 0 for a single run) and count per (model, ε, metric)."""
        groups: dict[tuple[str, float, str], list[float]] = {}
        for row in self.records:
            groups.setdefault((row["model"], row["epsilon"], row["metric"]), []).append(row["value"])
        rows = []
        for model in (*self.models, self.baseline):
            for epsilon in self.epsilons:
                for metric in self.metrics:
                    values = np.asarray(groups.get((model, epsilon, metric), []), dtype=float)
                    if values.size == 0:
                        continue
                    rows.append(
                        {
                            "dataset": self.dataset,
                            "privatisation": self.privatisation,
                            "model": model,
                            "private": self.model_private.get(model, False),
                            "epsilon": epsilon,
                            "metric": metric,
                            "mean": float(values.mean()),
                            "sd": float(values.std(ddof=1)) if values.size > 1 else 0.0,
                            "n": int(values.size),
                        }
                    )
        return rows

    def to_csv(self, path: str | os.PathLike[str], *, summary: bool = False) -> str:
        """Write the raw records (or the summary) as CSV; ε = ∞ is written ``inf``. Returns the path.

        The ε column is called ``epsilon`` only when the study is private (:attr:`private`), else ``noise_epsilon``.
        """
        rows = self.summary() if summary else self.records
        path = os.fspath(path)
        column = self.epsilon_label
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=[column if k == "epsilon" else k for k in rows[0]])
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {(column if k == "epsilon" else k): v for k, v in row.items()}
                    | {column: _epsilon_label(row["epsilon"])}
                )
        return path

    def plot(self, metric: str, path: str | os.PathLike[str] | None = None) -> Any:
        """Plot ``metric`` (mean ± sd) against ε, one line per model, as in the PyPryvacy figures.

        ε is on a categorical axis (equally spaced, ∞ last) because the grid mixes 0.01 and ∞. Two horizontal lines
        frame the curves: the constant baseline (majority class or mean, dashed) and, when ∞ is on the grid, the
        best non-private model (dotted). A model whose ε is not a guarantee says so in the legend. Returns the
        matplotlib Figure; with ``path`` it is also saved as PNG (dpi 100) and closed.
        """
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {', '.join(self.metrics)} for this {self.task} study.")
        matplotlib = require("matplotlib", feature="EvaluationResult.plot")
        if path is not None and not os.environ.get("MPLBACKEND"):
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        table = {(r["model"], r["epsilon"]): r for r in self.summary() if r["metric"] == metric}
        positions = np.arange(len(self.epsilons))
        fig, ax = plt.subplots(figsize=(7.0, 4.2))
        offsets = (np.arange(len(self.models)) - (len(self.models) - 1) / 2) * 0.06  # keep error bars apart
        for offset, model in zip(offsets, self.models, strict=True):
            means = np.array([table[(model, e)]["mean"] if (model, e) in table else np.nan for e in self.epsilons])
            sds = np.array([table[(model, e)]["sd"] if (model, e) in table else np.nan for e in self.epsilons])
            label = self.labels[model] + ("" if self.model_private.get(model, False) else " (not private)")
            ax.errorbar(positions + offset, means, yerr=sds, marker="o", markersize=4, capsize=3, label=label)
        constant = [table[(self.baseline, e)]["mean"] for e in self.epsilons if (self.baseline, e) in table]
        if constant:
            name = "majority class" if self.baseline == "majority" else "mean of the training labels"
            ax.axhline(float(np.mean(constant)), color="grey", linestyle="--", linewidth=1, label=f"{name} (constant)")
        best = [table[(m, math.inf)]["mean"] for m in self.models if (m, math.inf) in table]
        if best:
            top = max(best) if metric in ("accuracy", "f1", "r2") else min(best)
            ax.axhline(top, color="black", linestyle=":", linewidth=1, label="best non-private model (ε = ∞)")
        ax.set_xticks(positions, ["∞" if e == math.inf else f"{e:g}" for e in self.epsilons])
        names = {"accuracy": "Accuracy", "f1": "F1 score", "rmse": "RMSE", "r2": "R²"}
        if self.epsilon_label == "epsilon":
            ax.set_xlabel("ε per record (privacy loss; ∞ = no noise)")
        else:
            ax.set_xlabel("noise level ε′ (NOT a privacy guarantee; ∞ = no noise)")
        ax.set_ylabel(f"{names[metric]} on the test split")
        how = {
            "laplace": "Laplace input perturbation",
            "gaussian": f"Gaussian input perturbation (δ={self.settings['delta']:g})",
            "estimators": "DP estimators",
        }[self.privatisation]
        runs = self.records and len({r["split"] for r in self.records})
        what = "ε" if self.epsilon_label == "epsilon" else "noise level (not private)"
        ax.set_title(f"{names[metric]} vs {what} — {self.dataset}, {how} (mean ± sd of {runs} runs)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        if path is not None:
            fig.savefig(os.fspath(path), dpi=100)
            plt.close(fig)
        return fig


# ---- the study ------------------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class _Cell:
    """One (split, ε) cell of a study: the indices of its split and the seed of its noise and models."""

    split: int
    epsilon: float
    train: np.ndarray
    test: np.ndarray
    seed: np.random.SeedSequence


@attrs.frozen(eq=False)
class _Study:
    """Everything a worker needs to run cells (picklable, so joblib can ship it to processes)."""

    X: np.ndarray
    y: np.ndarray
    task: str
    name: str
    privatisation: str
    specs: tuple[ModelSpec, ...]
    delta: float
    sensitivity: float
    scale: str
    classes: tuple[Any, ...] | None
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    data_norm: float | None = None
    private: tuple[bool, ...] = ()

    def _record(self, cell: _Cell, model: str, private: bool, params: str, metric: str, value: float) -> dict[str, Any]:
        return {
            "dataset": self.name,
            "privatisation": self.privatisation,
            "model": model,
            "private": private,
            "epsilon": cell.epsilon,
            "split": cell.split,
            "metric": metric,
            "value": value,
            "params": params,
        }

    def run(self, cell: _Cell) -> list[dict[str, Any]]:
        """Privatise the cell's training split, train every model, score it on the test split."""
        X_train, X_test = self.X[cell.train], self.X[cell.test]
        if self.scale == "minmax":
            X_train, X_test = _minmax(X_train, X_test)
        elif self.scale == "public":
            X_train, X_test = (_public_scale(part, self.bounds) for part in (X_train, X_test))
        rng = np.random.default_rng(cell.seed)
        features = (
            X_train
            if self.privatisation == "estimators"
            else _perturb(X_train, self.privatisation, cell.epsilon, self.delta, self.sensitivity, rng)
        )
        n_classes = len(self.classes) if self.classes is not None else 0
        y_train, y_test = self.y[cell.train], self.y[cell.test]
        records = []
        for spec, private in zip(self.specs, self.private, strict=True):
            context = ModelContext(
                task=self.task,
                epsilon=cell.epsilon,
                delta=self.delta,
                n_features=self.X.shape[1],
                seed=int(rng.integers(2**31)),
                classes=self.classes,
                data_norm=self.data_norm,
            )
            model = spec.build(context)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence chatter on noisy data is expected
                model.fit(features, y_train)
                predicted = model.predict(X_test)
            params = "; ".join(f"{k}={_fmt(v)}" for k, v in getattr(model, "params_", {}).items())
            for metric, value in _score(self.task, y_test, predicted, n_classes).items():
                records.append(self._record(cell, spec.name, private, params, metric, value))
        # The constant line every model must beat: the training split's majority class (its mean for regression).
        if self.task == "classification":
            labels, counts = np.unique(y_train, return_counts=True)
            constant = np.full(len(y_test), labels[np.argmax(counts)])
        else:
            constant = np.full(len(y_test), float(np.mean(y_train)))
        for metric, value in _score(self.task, y_test, constant, n_classes).items():
            records.append(self._record(cell, baseline_name(self.task), False, "", metric, value))
        return records


def baseline_name(task: str) -> str:
    """The name of a study's constant baseline: ``"majority"`` (classification) or ``"mean"`` (regression)."""
    return "majority" if task == "classification" else "mean"


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _check_epsilons(epsilons: Sequence[float]) -> tuple[float, ...]:
    values = []
    for value in epsilons:
        if check_real(value, "epsilon", owner="evaluate") == math.inf:
            values.append(math.inf)
            continue
        values.append(
            check_in_range(value, "epsilon", 0.0, math.inf, low_closed=False, high_closed=False, owner="evaluate")
        )
    if not values:
        raise ValueError("evaluate needs at least one epsilon.")
    return tuple(sorted(set(values)))


def evaluate(
    dataset: Dataset,
    *,
    privatisation: Literal["laplace", "gaussian", "estimators"] = "estimators",
    models: Sequence[str] | None = None,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    delta: float = 1e-5,
    sensitivity: float | None = None,
    repeats: int = 3,
    cv: int | None = None,
    test_size: float = 0.2,
    scale: Literal["public", "minmax", "none"] | None = None,
    max_records: int | None = None,
    rng: RNGLike = None,
    progress: bool = False,
    n_jobs: int | None = None,
) -> EvaluationResult:
    """Score models trained privately for each ε, with repeats, next to the non-private and constant baselines.

    Parameters
    ----------
    dataset : Dataset
        From :mod:`diffpriv_py.datasets` (a bundled set or :func:`~diffpriv_py.datasets.load_csv`).
    privatisation : {"estimators", "laplace", "gaussian"}, default "estimators"
        ``"estimators"``: this library's DP estimators train on the clean split with privacy built in (noise added
        once, to the model), given the dataset's public row-norm bound (:attr:`Dataset.norm`) and a public
        regularisation rule. ``"laplace"`` / ``"gaussian"``: input perturbation as in the PyPryvacy study: every
        value of the training split gets i.i.d. noise calibrated to ``sensitivity`` (Laplace: scale Δ/ε; Gaussian:
        the analytic σ for (ε, δ)), then scikit-learn models train on it. Per record that noise is of scale d/ε on
        features in [0, 1], so its models fall to the majority class at every useful ε
        (:attr:`EvaluationResult.utility_note`).
    models : sequence of str, optional
        Input perturbation: ``knn``, ``svm``, ``rf``, ``linear`` (logistic or linear regression). Estimators: the
        names in :data:`ESTIMATOR_MODELS`. Default: all available for the task.
    epsilons : sequence of float, default :data:`DEFAULT_EPSILONS`
        Positive; ``inf`` means no privacy (the baseline). :data:`PYPRYVACY_EPSILONS` is the study's grid.
    delta : float, default 1e-5
        δ for the Gaussian mechanism and (ε, δ) estimators. The PyPryvacy appendix used 0.05.
    sensitivity : float, optional
        Sensitivity of input perturbation. Default: a whole record's, d (Laplace, L1) or √d (Gaussian, L2) for
        features scaled into [0, 1], so that ε is per record; 1 without scaling. The PyPryvacy study used 1 per
        value, which protects one value, not a record: such a run is reported as not private.
    repeats : int, default 3
        Independent repetitions (new split, new noise), or repetitions of the k-fold CV.
    cv : int, optional
        Use ``cv``-fold cross-validation instead of a random holdout split.
    test_size : float, default 0.2
        Holdout fraction (ignored with ``cv``).
    scale : {"public", "minmax", "none"}, optional
        ``"public"`` clips each feature to the dataset's public bounds (:attr:`Dataset.bounds`) and rescales it to
        [0, 1]: nothing is read from the data, so the study's ε is a real guarantee. ``"minmax"`` rescales with the
        training split's range (read from the data: the run is then *not* private, and says so). ``"none"``
        leaves the features as they are (not private either, unless every feature's range is at most 1).
        Default: ``"public"`` when the dataset has public bounds, else ``"minmax"``.
    max_records : int, optional
        Use a random subset of this many records (large datasets with the SVM are slow).
    rng : None, int, SeedSequence or Generator, optional
        Seeds the splits, the noise and the random forests.
    progress : bool, default False
        Show a tqdm progress bar on stderr (also when stderr is a pipe or a file).
    n_jobs : int, optional
        Run the (split, ε) cells in this many joblib workers (``None`` or 1: in-process; -1: all cores). The
        records are the same for every ``n_jobs``.

    Returns
    -------
    EvaluationResult

    Notes
    -----
    The result says whether the study is private (:attr:`EvaluationResult.private`) and why: only when the
    features are scaled into public bounds and every model is a DP release of its training split (per record,
    replace-one) is ε a guarantee. Otherwise ε is only the noise level, and the files and plots call it
    ``noise_epsilon``, never ε. Input perturbation does not noise the labels (as in the study), so with it only
    the features are protected. Median filling of missing values in CSVs reads the data. This is a utility study,
    not a release tool.

    References
    ----------
    Spiess, C. (2023). Implementation and evaluation of ε-differential privacy algorithms (PyPryvacy), §3.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"evaluate needs a diffpriv_py.datasets.Dataset; got {type(dataset).__name__}.")
    if privatisation not in PRIVATISATIONS:
        raise ValueError(f"privatisation must be one of {', '.join(PRIVATISATIONS)}; got {privatisation!r}.")
    if scale is None:
        scale = "public" if dataset.bounds is not None else "minmax"
    if scale not in ("public", "minmax", "none"):
        raise ValueError(f"scale must be 'public', 'minmax' or 'none'; got {scale!r}.")
    if scale == "public" and dataset.bounds is None:
        raise ValueError(
            f"scale='public' needs public feature bounds, and the dataset {dataset.name!r} has none (Dataset.bounds). "
            "Use a dataset with public bounds (adult, digits) or scale='minmax' (then the study is not private)."
        )
    grid = _check_epsilons(epsilons)
    delta = check_in_range(delta, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="evaluate")
    d = dataset.data.shape[1]
    if sensitivity is None:
        sensitivity = 1.0 if scale == "none" else (float(d) if privatisation == "laplace" else math.sqrt(d))
    sensitivity = check_in_range(
        sensitivity, "sensitivity", 0.0, math.inf, low_closed=False, high_closed=False, owner="evaluate"
    )
    repeats = check_int(repeats, "repeats", minimum=1, owner="evaluate")
    if cv is not None:
        cv = check_int(cv, "cv", minimum=2, owner="evaluate")
    test_size = check_in_range(test_size, "test_size", 0.0, 1.0, low_closed=False, high_closed=False, owner="evaluate")
    specs = _resolve_models(models, privatisation, dataset.task)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1):
        raise ValueError(f"n_jobs must be None, -1 (all cores) or a positive integer; got {n_jobs!r}.")

    seed_seq = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(_entropy(rng))
    data_seed, split_seed, noise_seed = seed_seq.spawn(3)
    X, y = dataset.data, dataset.target
    if max_records is not None:
        max_records = check_int(max_records, "max_records", minimum=10, owner="evaluate")
        if max_records < len(y):
            keep = np.sort(np.random.default_rng(data_seed).choice(len(y), size=max_records, replace=False))
            X, y = X[keep], y[keep]
    # The label set is the dataset's schema (target codes index target_names), not the labels a split happens to hold.
    classes: tuple[Any, ...] | None = None
    if dataset.task == "classification":
        names = dataset.target_names
        classes = tuple(range(len(names))) if names is not None else tuple(np.unique(dataset.target).tolist())
    split_list = list(_splits(y, dataset.task, repeats, cv, test_size, int(split_seed.generate_state(1, np.uint32)[0])))
    noise_seeds = noise_seed.spawn(len(split_list) * len(grid))

    cells = [
        _Cell(split=s, epsilon=epsilon, train=train, test=test, seed=noise_seeds[s * len(grid) + e])
        for s, (train, test) in enumerate(split_list)
        for e, epsilon in enumerate(grid)
    ]
    flags, note = _privacy(specs, privatisation, scale, sensitivity, d, dataset.task)
    job = _Study(
        X=X,
        y=y,
        task=dataset.task,
        name=dataset.name,
        privatisation=privatisation,
        specs=tuple(specs),
        delta=delta,
        sensitivity=sensitivity,
        scale=scale,
        classes=classes,
        bounds=dataset.bounds,
        data_norm=dataset.norm if scale == "public" else None,
        private=flags,
    )
    if n_jobs in (None, 1):
        outputs: Any = (job.run(cell) for cell in cells)
    else:
        from joblib import Parallel, delayed

        outputs = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(job.run)(cell) for cell in cells)
    records: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm import tqdm

        # Always stderr, terminal or not, so a piped stdout stays the table and a long run still shows it is alive.
        bar = tqdm(total=len(cells) * len(specs), desc=f"evaluate {dataset.name}", unit="fit", file=sys.stderr)
    try:
        for cell_records in outputs:
            records.extend(cell_records)
            if bar is not None:
                bar.update(len(specs))
    finally:
        if bar is not None:
            bar.close()
    # Workers finish in any order; sort so the records do not depend on n_jobs.
    order = {(cell.split, cell.epsilon): i for i, cell in enumerate(cells)}
    records.sort(key=lambda r: order[(r["split"], r["epsilon"])])
    return EvaluationResult(
        records=records,
        dataset=dataset.name,
        privatisation=privatisation,
        task=dataset.task,
        epsilons=grid,
        models=tuple(spec.name for spec in specs),
        labels={spec.name: spec.label for spec in specs},
        settings={
            "delta": delta,
            "sensitivity": sensitivity,
            "repeats": repeats,
            "cv": cv,
            "test_size": test_size,
            "scale": scale,
            "records": len(y),
            "data_norm": dataset.norm if scale == "public" and dataset.norm is not None else math.sqrt(d),
            "seed": seed_seq.entropy,
        },
        private=all(flags),
        privacy_note=note,
        model_private=dict(zip((spec.name for spec in specs), flags, strict=True)),
        utility_note=_utility_note(privatisation, sensitivity),
        baseline=baseline_name(dataset.task),
    )


def _entropy(rng: RNGLike) -> int | None:
    if rng is None:
        return None
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    return check_int(rng, "rng", minimum=0, owner="evaluate")
