"""Running a study: the ε grid, the splits, one (split, ε) cell per worker, the metrics and the constant baseline."""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import attrs
import numpy as np

from diffpriv_py.datasets import Dataset
from diffpriv_py.validation import check_in_range, check_int, check_real

from .models import ModelContext, ModelSpec, resolve_models
from .privatisation import PRIVATISATIONS, _minmax, _perturb, _privacy, _public_scale, _utility_note
from .result import EvaluationResult

PYPRYVACY_EPSILONS: tuple[float, ...] = (0.01, 0.5, 0.75, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0, 14.0, 19.0, math.inf)
"""The ε grid of the PyPryvacy study; ∞ means no noise (the non-private baseline)."""

DEFAULT_EPSILONS: tuple[float, ...] = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, math.inf)
"""The default ε grid: from where every model is noise to where privacy costs little; ∞ = the non-private line."""


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
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
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
    specs = resolve_models(models, privatisation, dataset.task)
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


def _entropy(rng: int | np.random.Generator | np.random.SeedSequence | None) -> int | None:
    if rng is None:
        return None
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    return check_int(rng, "rng", minimum=0, owner="evaluate")
