"""Public checks of a supervised dataset ``(X, y)``, done before any budget is charged (shared by the classifiers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._datasets import as_array

__all__ = ["check_features", "check_rows_to_predict", "check_supervised", "check_supervised_form", "label_codes"]


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
    nothing. The label *values* (NaN, a label outside ``classes``) are private and checked by
    :func:`check_supervised`, after the charge.
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


def check_supervised(data: Any, classes: tuple[Any, ...] | None, *, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`check_supervised_form`, then the label values: finite, and within ``classes`` when given.

    The value checks read the private labels, so they run after the charge (a refusal here may depend on the data
    and costs the release's budget).
    """
    X, y = check_supervised_form(data, owner=owner)
    # NaN is the one value unequal to itself, in float and object arrays alike.
    if (y.dtype.kind == "f" and not np.all(np.isfinite(y))) or (y.dtype.kind == "O" and np.any(y != y)):
        raise ValueError(
            "Labels y contain NaN or infinite values; a NaN label would become a class of its own. Drop or relabel "
            "those records with a data-independent rule first."
        )
    if classes is not None:
        label_codes(y, np.asarray(classes))
    return X, y


def label_codes(y: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Index of each label of ``y`` in ``labels``; a label outside ``labels`` is refused."""
    try:
        order = np.argsort(labels, kind="stable")
        sorted_labels = labels[order]
        pos = np.clip(np.searchsorted(sorted_labels, y), 0, labels.size - 1)
        codes = order[pos]
        unknown = np.asarray(sorted_labels[pos] != y, dtype=bool)
    except TypeError:  # labels of mixed, unordered types (e.g. None among ints): look them up by hashing
        index = {label: i for i, label in enumerate(labels.tolist())}
        found = np.asarray(np.frompyfunc(lambda v: index.get(v, -1), 1, 1)(y)).astype(np.intp)
        codes, unknown = np.maximum(found, 0), found < 0
    if np.any(unknown):
        raise ValueError(
            f"y contains labels that are not in classes={labels.tolist()!r} (e.g. {y[unknown][:1].tolist()[0]!r}). "
            "List every possible label in classes=."
        )
    return codes
