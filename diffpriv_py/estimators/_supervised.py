"""Public checks of a supervised dataset ``(X, y)``, done before any budget is charged (shared by the classifiers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._datasets import as_array
from .._validation import as_rectangular

__all__ = [
    "OBSERVED",
    "check_classes",
    "check_features",
    "check_rows_to_predict",
    "check_supervised_form",
    "label_codes",
    "public_labels",
]


def check_features(X: Any, *, n_features: int | None = None, what: str = "X") -> np.ndarray:
    """``X`` as a float64 2-D array with a row per record: complex, non-numeric and misshapen input is refused.

    Values are not inspected here (NaN and infinities are the caller's business: a private dataset's values are
    checked after the charge, a prediction's before it is answered).
    """
    raw = as_array(X, what)
    if np.iscomplexobj(raw):
        raise TypeError(
            f"{what} must hold real numbers; it has complex dtype {raw.dtype}. Casting would silently drop the "
            "imaginary parts: pass the real features you mean (e.g. np.real(X) or np.abs(X))."
        )
    if raw.dtype.kind not in "biuf":
        try:
            raw = raw.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"The '{what}' argument must be a numeric 2-D array (one row per record); it holds values that do "
                f"not read as floats (dtype {raw.dtype}: text, categories or objects). Encode them as numbers first."
            ) from err
    X = np.asarray(raw, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{what} must be a non-empty 2-D array (one row per record). Got shape {X.shape}.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{what} must have {n_features} features (columns), like the training data. Got shape {X.shape}."
        )
    result: np.ndarray = X
    return result


def check_rows_to_predict(X: Any, n_features: int, *, model: str) -> np.ndarray:
    """Rows a released model is asked about: :func:`check_features`, and finite (a NaN row has no answer).

    Post-processing of a release on data the caller holds, so the values may be checked freely.
    """
    rows = check_features(X, n_features=n_features)
    if not np.all(np.isfinite(rows)):
        raise ValueError(
            f"X contains NaN or infinite values, for which the {model} has no answer (NaN would silently become a "
            "class, cluster or number). Impute or drop those rows first."
        )
    return rows


def check_supervised_form(data: Any, *, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """The public checks of ``(X, y)``: types, shapes and equal lengths; return (X, y). Runs before the charge.

    Under replace-one neighbours the number of records and the form of the data are public, so refusing them costs
    nothing. The label *values* are private: a label outside the declared classes contributes nothing (see
    :func:`label_codes`), and the label set itself is public only as declared (:func:`public_labels`).
    """
    if not (isinstance(data, tuple) and len(data) == 2):
        raise TypeError(
            f"{owner} takes the dataset as the tuple (X, y): X of shape (n_samples, n_features), y of shape "
            f"(n_samples,). Got {type(data).__name__}."
        )
    X = check_features(data[0])
    y = np.asarray(data[1])
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must be a 1-D array with one label per row of X ({X.shape[0]} rows). Got shape {y.shape}. Pass "
            "labels and features of the same records."
        )
    if np.iscomplexobj(y):
        raise TypeError(f"Labels y must be real numbers or strings; got complex dtype {y.dtype}.")
    return X, y


OBSERVED = "observed"
"""The ``classes=`` value that declares the set of labels present in ``y`` public (recorded in the Response)."""

OBSERVED_ASSUMPTION = (
    "classes='observed': the set of labels present in y is public (it sets the model's shape, its classes and the "
    "per-class budget split)"
)
"""The assumption a release with ``classes="observed"`` records in :attr:`~diffpriv_py.Response.assumptions`."""

Classes = tuple[Any, ...] | str | None
"""A classifier's ``classes`` setting: the declared labels, ``"observed"``, or ``None`` (refused at release)."""


def check_classes(value: Any) -> Classes:
    """The ``classes=`` constructor argument: ``None``, ``"observed"``, or at least two distinct, non-NaN labels."""
    if value is None:
        return None
    if isinstance(value, str):
        if value != OBSERVED:
            raise ValueError(
                f"classes must be a sequence of every possible label (e.g. classes=[0, 1, 2]) or the string "
                f"{OBSERVED!r} (the labels present in y, declared public). Got the string {value!r}."
            )
        return OBSERVED
    labels = tuple(as_rectangular(value, "classes").ravel().tolist())
    if len(labels) < 2 or len(set(labels)) != len(labels) or any(label != label for label in labels):
        raise ValueError(
            f"classes must list at least two distinct labels, none of them NaN (every label a record may have). "
            f"Got {value!r}."
        )
    return labels


def public_labels(y: np.ndarray, classes: Classes, *, owner: str) -> np.ndarray:
    """The public label set of a release: the declared ``classes``, or the labels of ``y`` for ``"observed"``.

    Runs before the charge (and again inside the target). ``None`` is refused here with the fix: reading the labels
    from the private ``y`` would let one record change the model's shape, its classes and the budget split. With
    ``"observed"`` the user has declared the set of labels present in ``y`` public, so it may be read and validated
    (at least two labels, no NaN) before the charge.
    """
    if classes is None:
        raise ValueError(
            f"{owner} needs the public set of labels: pass classes=[...] with every possible label, or "
            f"classes={OBSERVED!r} to declare the set of labels present in y public (the Response records that "
            "assumption). The labels are not read from the private y silently: one record could change the model's "
            "shape, its classes and the per-class budget split."
        )
    if classes != OBSERVED:
        return np.asarray(classes)
    # NaN is the one value unequal to itself, in float and object arrays alike.
    if (y.dtype.kind == "f" and not np.all(np.isfinite(y))) or (y.dtype.kind == "O" and np.any(y != y)):
        raise ValueError(
            f"With classes={OBSERVED!r} the labels present in y are the public label set, and y contains NaN or "
            "infinite values, which would become classes of their own. Drop or relabel those records with a "
            "data-independent rule, or pass classes=[...] with every possible label (other values then contribute "
            "nothing)."
        )
    try:
        labels: np.ndarray = np.unique(y)
    except TypeError as err:  # labels of mixed, unordered types
        kinds = sorted({type(label).__name__ for label in y.ravel().tolist()})
        raise TypeError(
            f"The labels 'y' of {owner} mix types that cannot be ordered ({', '.join(kinds)}), so the labels present "
            "in y have no public order for classes='observed'. Pass classes=[...] with every possible label, or "
            "labels of one type."
        ) from err
    if labels.size < 2:
        raise ValueError(
            f"{owner} needs at least two classes, but the labels present in y (declared public by "
            f"classes={OBSERVED!r}) are {labels.tolist()!r}. Pass classes=[...] with every possible label."
        )
    return labels


def label_codes(y: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Index of each label of ``y`` in ``labels``, and -1 for a label outside them (NaN included).

    Never raises on a label value: which labels occur is private, so an unknown label must not make a release fail
    after the charge. The estimators give such a record a contribution of zero (see their Notes).
    """
    try:
        order = np.argsort(labels, kind="stable")
        sorted_labels = labels[order]
        pos = np.clip(np.searchsorted(sorted_labels, y), 0, labels.size - 1)
        codes = order[pos]
        unknown = np.asarray(sorted_labels[pos] != y, dtype=bool)
    except TypeError:  # labels of mixed, unordered types (e.g. None among ints): look them up by hashing
        index = {label: i for i, label in enumerate(labels.tolist())}
        found = np.asarray(np.frompyfunc(lambda v: _lookup(index, v), 1, 1)(y)).astype(np.intp)
        codes, unknown = np.maximum(found, 0), found < 0
    result: np.ndarray = np.where(unknown, -1, codes).astype(np.intp)
    return result


def _lookup(index: dict[Any, int], value: Any) -> int:
    try:
        return index.get(value, -1)
    except TypeError:  # an unhashable label is in no declared class
        return -1
