"""Datasets that work offline: the bundled UCI Adult data, scikit-learn's bundled sets, user CSVs, and names.

Everything here is public or user-supplied data for tutorials, benchmarks and the ``diffpriv-py evaluate`` command;
nothing is downloaded. UCI Adult ships inside the package (CC BY 4.0, see :func:`load_adult`); the scikit-learn sets
need the optional ``sklearn`` extra and are imported lazily.

Examples
--------
>>> from diffpriv_py import datasets
>>> adult = datasets.load_adult()
>>> adult.data.shape, adult.task
((32561, 105), 'classification')
>>> sorted(datasets.DATASETS)
['adult', 'breast_cancer', 'diabetes', 'digits', 'iris', 'wine']
"""

from __future__ import annotations

import csv
import functools
import lzma
import math
import os
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Literal

import attrs
import numpy as np

from ._extras import require
from ._rng import RNGLike, as_generator
from ._validation import check_int

__all__ = [
    "ADULT_BOUNDS",
    "ADULT_CATEGORIES",
    "ADULT_COLUMNS",
    "COMPUTER_SCIENTISTS",
    "DATASETS",
    "Dataset",
    "first_names",
    "last_names",
    "letter_counts",
    "load_adult",
    "load_csv",
    "load_dataset",
    "random_names",
]

ADULT_CITATION = (
    "Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository. https://doi.org/10.24432/C5XW20 "
    "(CC BY 4.0)."
)

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
"""The 15 columns of the Adult files, in file order (the last is the label)."""

# The category lists are the public schema from the dataset's own description (adult.names), so the encoding is
# fixed in advance and identical for train and test: it never depends on which values occur in the data.
ADULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
    ),
    "education": (
        "Bachelors",
        "Some-college",
        "11th",
        "HS-grad",
        "Prof-school",
        "Assoc-acdm",
        "Assoc-voc",
        "9th",
        "7th-8th",
        "12th",
        "Masters",
        "1st-4th",
        "10th",
        "Doctorate",
        "5th-6th",
        "Preschool",
    ),
    "marital-status": (
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ),
    "occupation": (
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
    ),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": (
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
    ),
}
"""The categories of each categorical Adult column, as listed in the dataset's description file."""

ADULT_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (0.0, 100.0),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 100000.0),
    "capital-loss": (0.0, 5000.0),
    "hours-per-week": (0.0, 100.0),
}
"""Public bounds of Adult's numeric columns, from the schema and domain knowledge (not from the data).

Education-num codes the 16 education levels; age and weekly hours are at most 100; the census top-codes capital
gains at 99,999; 5,000 bounds the capital losses. Used by ``load_adult(bounded=True)``.
"""

COMPUTER_SCIENTISTS: tuple[str, ...] = (
    "Michael Jordan",
    "Andrew Ng",
    "Andrew Zisserman",
    "Christopher Manning",
    "Jitendra Malik",
    "Geoffrey Hinton",
    "Scott Shenker",
    "Bernhard Scholkopf",
    "Jon Kleinberg",
    "Judea Pearl",
)
"""The ten names of the R ``diffpriv`` vignette's "most frequent letter" example (Rubinstein & Aldà)."""


@attrs.frozen(eq=False)
class Dataset:
    """A supervised dataset: features with one record per row, and the target.

    Attributes
    ----------
    data : numpy.ndarray
        Features, shape ``(n_records, n_features)``, float64.
    target : numpy.ndarray
        Labels (classification: integer codes into ``target_names``) or values (regression), shape ``(n_records,)``.
    feature_names : tuple of str
        One name per column of ``data``.
    target_names : tuple of str or None
        Class names for classification, ``None`` for regression.
    task : {"classification", "regression"}
        What the target is.
    name : str
        Short name (the key in :data:`DATASETS`, or the CSV file name).
    description : str
        One paragraph: source, size, licence.
    bounds : (ndarray, ndarray) or None
        Public per-feature (lower, upper) bounds from the schema or domain knowledge, never from the data (e.g.
        digits' pixel counts lie in [0, 16]); ``None`` when no such bounds are known. A private study clips and
        rescales with these; see :func:`diffpriv_py.evaluation.evaluate`.
    norm : float or None
        A public bound on the L2 norm of every record once its features are clipped and rescaled into ``bounds``
        (each feature then in [0, 1]), from the schema only. ``None`` means the generic √d. For Adult it is
        √13: five numeric columns in [0, 1] and eight one-hot groups with at most one 1 each (√d would be √104).
        DP estimators scale their noise with this bound, so a tight public one buys accuracy for free.
    """

    data: np.ndarray
    target: np.ndarray
    feature_names: tuple[str, ...]
    target_names: tuple[str, ...] | None
    task: Literal["classification", "regression"]
    name: str
    description: str = ""
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    norm: float | None = None

    @property
    def n_records(self) -> int:
        """Number of records (rows)."""
        return int(self.data.shape[0])

    @property
    def n_features(self) -> int:
        """Number of features (columns of ``data``)."""
        return int(self.data.shape[1])

    def as_tuple(self) -> tuple[np.ndarray, np.ndarray]:
        """The library's supervised-dataset form ``(X, y)``."""
        return self.data, self.target

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, task={self.task!r}, n_records={self.n_records}, n_features={self.n_features})"
        )


# ---- UCI Adult ---------------------------------------------------------------------------------------------------


def _data_file(name: str) -> Any:
    return resources.files("diffpriv_py").joinpath("data").joinpath(name)


@functools.cache
def _adult_codes(subset: str) -> tuple[np.ndarray, ...]:
    """Parse one shipped Adult file into 15 numeric columns (cached; callers copy what they return).

    Numeric columns become float64; categorical ones the index into :data:`ADULT_CATEGORIES` (``-1`` for a missing
    ``?``); the label 1 for ``>50K`` and 0 otherwise.
    """
    with _data_file(f"adult.{subset}.xz").open("rb") as handle:
        text = lzma.decompress(handle.read()).decode("ascii").replace(", ", ",")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("|")]
    # One split of the whole file into an object array is several times faster than parsing row by row.
    fields = np.array(",".join(lines).split(","), dtype=object)
    if fields.size != len(lines) * len(ADULT_COLUMNS):  # pragma: no cover - guards a corrupted install
        raise ValueError(f"The bundled adult.{subset}.xz is corrupted; reinstall diffpriv-py.")
    table = fields.reshape(len(lines), len(ADULT_COLUMNS))
    columns = []
    for j, name in enumerate(ADULT_COLUMNS):
        col = table[:, j]
        if name == "income":
            columns.append(np.isin(col, [">50K", ">50K."]).astype(np.int64))
        elif name in ADULT_CATEGORIES:
            values, inverse = np.unique(col, return_inverse=True)
            index = {cat: i for i, cat in enumerate(ADULT_CATEGORIES[name])}
            columns.append(np.array([index.get(v, -1) for v in values], dtype=np.int64)[inverse])
        else:
            columns.append(col.astype(np.float64))
    return tuple(columns)


def _adult_columns(subset: str) -> list[np.ndarray]:
    if subset not in ("train", "test", "all"):
        raise ValueError(f"load_adult(subset=...) must be 'train', 'test' or 'all'. Got {subset!r}.")
    if subset == "all":
        train, test = _adult_codes("data"), _adult_codes("test")
        return [np.concatenate([a, b]) for a, b in zip(train, test, strict=True)]
    return [col.copy() for col in _adult_codes("data" if subset == "train" else "test")]


def load_adult(
    *,
    subset: Literal["train", "test", "all"] = "train",
    encoding: Literal["onehot", "ordinal"] = "onehot",
    bounded: bool = False,
    as_frame: bool = False,
    return_X_y: bool = False,
) -> Any:
    """Load the UCI Adult (census income) data shipped with the package: predict income > $50K.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default "train"
        ``"train"`` is the original ``adult.data`` (32,561 records), ``"test"`` the original ``adult.test``
        (16,281 records), ``"all"`` both, train first (48,842 records).
    encoding : {"onehot", "ordinal"}, default "onehot"
        How the 8 categorical columns become numbers. ``"onehot"``: one 0/1 column per category listed in the
        dataset's description (6 numeric + 99 indicator columns = 105 features); a missing value (``?``) gives
        all zeros in its group. ``"ordinal"``: the category's index in that list, ``-1`` when missing (14
        features).
    bounded : bool, default False
        Make every feature lie in [0, 1] using only public bounds, for DP estimators: drop ``fnlwgt`` (a survey
        weight, not an attribute of the person), clip the other numeric columns to :data:`ADULT_BOUNDS` and rescale
        them to [0, 1]. With one-hot encoding every row then has L2 norm at most √13 (5 numeric values and 8
        one-hot groups), a public ``data_norm``.
    as_frame : bool, default False
        Return the raw records as a :class:`pandas.DataFrame` (15 columns, categoricals as pandas categories,
        missing values as NaN, the label as the string column ``income``). Needs pandas.
    return_X_y : bool, default False
        Return the tuple ``(X, y)`` instead of a :class:`Dataset`.

    Returns
    -------
    Dataset or tuple or pandas.DataFrame
        ``target`` is 1 for income ``>50K`` and 0 for ``<=50K`` (about 24% positive).

    Notes
    -----
    Source: Becker & Kohavi (1996), UCI Machine Learning Repository, https://doi.org/10.24432/C5XW20, licensed
    CC BY 4.0; the two original files are shipped unchanged (recompressed with xz, see
    ``diffpriv_py/data/ADULT_LICENSE``). Used by the PyPryvacy study and by Chaudhuri, Monteleoni & Sarwate
    (2011). The features are unbounded public-schema columns: DP estimators need public bounds or norms
    (``data_norm=``, ``bounds=``), which must come from the schema or domain knowledge, never from these data.
    """
    if encoding not in ("onehot", "ordinal"):
        raise ValueError(f"load_adult(encoding=...) must be 'onehot' or 'ordinal'. Got {encoding!r}.")
    if bounded and encoding != "onehot":
        raise ValueError("load_adult(bounded=True) needs encoding='onehot' (ordinal codes are not in [0, 1]).")
    columns = _adult_columns(subset)
    by_name = dict(zip(ADULT_COLUMNS, columns, strict=True))
    if as_frame:
        pd = require("pandas", feature="load_adult(as_frame=True)")
        return pd.DataFrame(
            {
                name: (
                    pd.Categorical.from_codes(col, categories=list(ADULT_CATEGORIES[name]))
                    if name in ADULT_CATEGORIES
                    else np.where(col == 1, ">50K", "<=50K")
                    if name == "income"
                    else col.astype(np.int64)
                )
                for name, col in by_name.items()
            }
        )
    target = by_name["income"]
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for name in ADULT_COLUMNS[:-1]:
        col = by_name[name]
        if name not in ADULT_CATEGORIES:
            if bounded and name == "fnlwgt":
                continue
            if bounded:
                low, high = ADULT_BOUNDS[name]
                col = (np.clip(col, low, high) - low) / (high - low)
            blocks.append(col[:, None])
            names.append(name)
        elif encoding == "onehot":
            categories = ADULT_CATEGORIES[name]
            blocks.append((col[:, None] == np.arange(len(categories))[None, :]).astype(np.float64))
            names.extend(f"{name}={cat}" for cat in categories)
        else:
            blocks.append(col.astype(np.float64)[:, None])
            names.append(name)
    data = np.hstack(blocks)
    if return_X_y:
        return data, target
    return Dataset(
        data=data,
        target=target,
        feature_names=tuple(names),
        target_names=("<=50K", ">50K"),
        task="classification",
        name="adult",
        description=f"UCI Adult census income ({subset}, {data.shape[0]} records). {ADULT_CITATION}",
        bounds=(np.zeros(data.shape[1]), np.ones(data.shape[1])) if bounded else None,
        # The 13 columns left (less fnlwgt and the target) each add at most 1 to the squared norm: a numeric one lies
        # in [0, 1] and a one-hot group holds at most one 1. The schema bounds the norm, not the data.
        norm=math.sqrt(len(ADULT_COLUMNS) - 2) if bounded else None,
    )


# ---- scikit-learn's bundled datasets -----------------------------------------------------------------------------


def _sklearn_loader(
    function: str,
    task: Literal["classification", "regression"],
    about: str,
    bounds: tuple[float, float] | None = None,
) -> Callable[[], Dataset]:
    def load() -> Dataset:
        sk_datasets = require("sklearn.datasets", feature=f"The dataset {function[5:]!r}")
        bunch = getattr(sk_datasets, function)()
        names = getattr(bunch, "target_names", None)
        d = bunch.data.shape[1]
        return Dataset(
            data=np.asarray(bunch.data, dtype=np.float64),
            target=np.asarray(bunch.target),
            feature_names=tuple(str(f) for f in getattr(bunch, "feature_names", range(bunch.data.shape[1]))),
            target_names=None if task == "regression" or names is None else tuple(str(t) for t in names),
            task=task,
            name=function[5:],
            description=about,
            bounds=None if bounds is None else (np.full(d, float(bounds[0])), np.full(d, float(bounds[1]))),
        )

    load.__name__ = f"load_{function[5:]}"
    load.__doc__ = f"{about} Needs scikit-learn."
    return load


def _load_adult_bounded() -> Dataset:
    """UCI Adult as :func:`load_adult` with ``bounded=True``: every feature in [0, 1] by public bounds."""
    result: Dataset = load_adult(bounded=True)
    return result


DATASETS: dict[str, Callable[[], Dataset]] = {
    "adult": _load_adult_bounded,
    "breast_cancer": _sklearn_loader(
        "load_breast_cancer",
        "classification",
        "Wisconsin diagnostic breast cancer: 569 records, 30 features, 2 classes.",
    ),
    "diabetes": _sklearn_loader(
        "load_diabetes", "regression", "Diabetes progression: 442 records, 10 standardised features, regression."
    ),
    "digits": _sklearn_loader(
        "load_digits",
        "classification",
        "Optical handwritten digits: 1,797 8x8 images (64 features, pixel counts 0-16), 10 classes.",
        bounds=(0.0, 16.0),
    ),
    "iris": _sklearn_loader("load_iris", "classification", "Fisher's iris: 150 records, 4 features, 3 classes."),
    "wine": _sklearn_loader("load_wine", "classification", "Wine recognition: 178 records, 13 features, 3 classes."),
}
"""Bundled datasets by name: ``adult`` ships with diffpriv_py (here in its public-bounds form, every feature in
[0, 1]); the others come with scikit-learn (no download). ``adult`` and ``digits`` carry public feature bounds."""


def load_dataset(name: str) -> Dataset:
    """Load a bundled dataset by name (see :data:`DATASETS`).

    Parameters
    ----------
    name : str
        One of ``adult``, ``breast_cancer``, ``diabetes``, ``digits``, ``iris``, ``wine``.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If the name is unknown.
    ImportError
        If the dataset comes from scikit-learn and it is not installed.
    """
    if not isinstance(name, str) or name.lower().replace("-", "_") not in DATASETS:
        raise ValueError(
            f"Unknown dataset {name!r}. Choose one of {', '.join(sorted(DATASETS))}, or load your own CSV "
            "file (load_csv(path, target=...); on the command line --csv PATH --target COLUMN)."
        )
    return DATASETS[name.lower().replace("-", "_")]()


# ---- user CSV files ----------------------------------------------------------------------------------------------

_MAX_CLASSES = 20


def _infer_task(target: np.ndarray) -> Literal["classification", "regression"]:
    if target.dtype.kind in "OUSb":
        return "classification"
    values = np.unique(target)
    if np.all(np.mod(values, 1) == 0) and values.size <= _MAX_CLASSES:
        return "classification"
    return "regression"


def load_csv(
    path: str | os.PathLike[str],
    target: str,
    *,
    task: Literal["classification", "regression"] | None = None,
) -> Dataset:
    """Load a user's CSV file (with a header row) as a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
        The CSV file; its first row names the columns.
    target : str
        The name of the column to predict.
    task : {"classification", "regression"}, optional
        What the target is. By default a non-numeric target, or an integer one with at most 20 distinct values, is
        a classification target; anything else is regression.

    Returns
    -------
    Dataset

    Notes
    -----
    Preprocessing, as in the PyPryvacy study: records with a missing target are dropped, missing numeric values
    are filled with the column median, and non-numeric columns are one-hot encoded (with pandas; without pandas
    every feature must be numeric). This preprocessing looks at the data and is not private: it is meant for
    utility studies, not releases.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No such CSV file: {path!r}. Check the path.")
    if task not in (None, "classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression'. Got {task!r}.")
    try:
        import pandas as pd
    except ImportError:
        header, table = _read_numeric_csv(path)
    else:
        try:
            frame = pd.read_csv(path, skipinitialspace=True, na_values=["?"])
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise ValueError(f"Malformed CSV file {path!r}: {str(err).strip().splitlines()[0]}") from None
        header, table = list(map(str, frame.columns)), frame
    if target not in header:
        raise ValueError(f"The CSV file {path!r} has no column {target!r}; its columns are: {', '.join(header)}.")
    if len(header) < 2:
        raise ValueError(f"The CSV file {path!r} needs at least one feature column besides the target {target!r}.")
    if isinstance(table, np.ndarray):
        col = header.index(target)
        y_raw = table[:, col]
        keep = ~np.isnan(y_raw)
        X = np.delete(table[keep], col, axis=1)
        y_raw = y_raw[keep]
        feature_names = [h for h in header if h != target]
    else:
        table = table[table[target].notna()]
        y_raw = table[target].to_numpy()
        features = table.drop(columns=[target])
        numeric = features.select_dtypes(include="number")
        features = features.fillna(numeric.median())
        features = pd.get_dummies(features, dtype=np.float64)  # pyright: ignore[reportPossiblyUnboundVariable]  # pandas branch
        feature_names = list(map(str, features.columns))
        X = features.to_numpy(dtype=np.float64)
    if X.shape[0] == 0:
        raise ValueError(f"The CSV file {path!r} has no records with a value in the target column {target!r}.")
    if np.isnan(X).any():
        X = np.where(np.isnan(X), np.nanmedian(X, axis=0), X)
        X = np.nan_to_num(X)  # an all-missing column has no median
    task = task or _infer_task(y_raw)
    if task == "classification":
        classes, y = np.unique(y_raw.astype(str) if y_raw.dtype.kind == "O" else y_raw, return_inverse=True)
        target_names: tuple[str, ...] | None = tuple(str(c) for c in classes)
        if len(classes) < 2:
            raise ValueError(f"The target column {target!r} has a single class; classification needs at least two.")
    else:
        try:
            y = y_raw.astype(np.float64)
        except ValueError:
            raise ValueError(
                f"The target column {target!r} is not numeric, so it cannot be a regression target."
            ) from None
        target_names = None
    return Dataset(
        data=X,
        target=y,
        feature_names=tuple(feature_names),
        target_names=target_names,
        task=task,
        name=os.path.splitext(os.path.basename(path))[0],
        description=f"User CSV file {path} (target column {target!r}).",
    )


def _read_numeric_csv(path: str) -> tuple[list[str], np.ndarray]:
    """Read an all-numeric CSV without pandas; empty cells and '?' become NaN."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle, skipinitialspace=True))
    except UnicodeDecodeError as err:
        raise ValueError(f"Malformed CSV file {path!r}: not UTF-8 text ({err.reason}).") from None
    rows = [row for row in rows if row]
    if len(rows) < 2:
        raise ValueError(f"Malformed CSV file {path!r}: it needs a header row and at least one record.")
    header = [h.strip() for h in rows[0]]
    bad = next((i for i, row in enumerate(rows[1:], start=2) if len(row) != len(header)), None)
    if bad is not None:
        raise ValueError(
            f"Malformed CSV file {path!r}: line {bad} has {len(rows[bad - 1])} fields, expected {len(header)}."
        )
    try:
        table = np.array([[math.nan if v.strip() in ("", "?") else float(v) for v in row] for row in rows[1:]])
    except ValueError as err:
        raise ValueError(
            f"CSV file {path!r} has a non-numeric value ({err}); install pandas to one-hot encode text columns."
        ) from None
    return header, table


# ---- names: the public population of the R vignette's letter example -------------------------------------------


@functools.cache
def _names(kind: str) -> tuple[str, ...]:
    text = _data_file(f"{kind}_names.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def first_names() -> tuple[str, ...]:
    """Common US first names shipped with the package, most frequent first (public-domain SSA lists)."""
    return _names("first")


def last_names() -> tuple[str, ...]:
    """Common US surnames shipped with the package, most frequent first (public-domain 2010 Census table)."""
    return _names("last")


def _zipf(size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1)
    result: np.ndarray = weights / weights.sum()
    return result


def random_names(n: int, rng: RNGLike = None) -> list[str]:
    """Draw ``n`` random "First Last" names from the shipped name lists (an oracle for the sensitivity sampler).

    Parameters
    ----------
    n : int
        Number of names.
    rng : None, int, SeedSequence or Generator, optional
        Randomness source (a seed for reproducibility).

    Returns
    -------
    list of str

    Notes
    -----
    First and last names are drawn independently, each with probability proportional to 1/rank (a Zipf law on the
    public frequency order), standing in for R's ``randomNames`` package in the ``diffpriv`` vignette. It has the
    signature ``oracle(n, rng)`` that :meth:`~diffpriv_py.DPMech.sensitivity_sampler` expects.

    Examples
    --------
    >>> random_names(2, rng=0)
    ['Kelly Phillips', 'John Thompson']
    """
    n = check_int(n, "n", minimum=0, owner="random_names")
    gen = as_generator(rng)
    first, last = first_names(), last_names()
    i = gen.choice(len(first), size=n, p=_zipf(len(first)))
    j = gen.choice(len(last), size=n, p=_zipf(len(last)))
    return [f"{first[a]} {last[b]}" for a, b in zip(i.tolist(), j.tolist(), strict=True)]


def letter_counts(names: Sequence[str]) -> np.ndarray:
    """Count each letter a–z (case-insensitive) over all ``names``: the score of the vignette's letter example."""
    text = "".join(names).lower().encode("ascii", "ignore")
    codes = np.frombuffer(text, dtype=np.uint8).astype(np.int64) - ord("a")
    return np.bincount(codes[(codes >= 0) & (codes < 26)], minlength=26).astype(np.float64)
