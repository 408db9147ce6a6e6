"""Record-level operations on the dataset types the library accepts: arrays (rows), lists, (X, y) tuples, pandas."""

from __future__ import annotations

from typing import Any

import numpy as np


def n_records(data: Any) -> int:
    """Number of records in ``data``; raises TypeError for an unsupported type."""
    if isinstance(data, tuple):
        sizes = {n_records(part) for part in data}
        if len(sizes) != 1:
            raise ValueError(
                f"A supervised dataset (X, y) must have the same number of records in each part. Got sizes {sizes}."
            )
        return sizes.pop()
    if isinstance(data, np.ndarray):
        if data.ndim == 0:
            raise TypeError("A dataset must hold records; got a 0-d array. Pass a 1-D or 2-D array (rows are records).")
        result: int = data.shape[0]
        return result
    if isinstance(data, list) or hasattr(data, "iloc"):
        return len(data)
    raise TypeError(
        "Datasets must be numpy arrays (one record per row), lists of records, pandas objects or (X, y) tuples. "
        f"Got {type(data).__name__}."
    )


def append_record(base: Any, record: Any) -> Any:
    """``base`` with the one-record dataset ``record`` appended last (R's ``.generic_append``); ``base`` may be None.

    Neither input is modified. Used by the sensitivity sampler to build replace-one neighbours from a shared base
    of n − 1 records plus one fresh record each.
    """
    if base is None:
        return record
    if isinstance(base, tuple):
        if not isinstance(record, tuple) or len(record) != len(base):
            raise TypeError(
                f"The oracle returned a supervised dataset of {len(base)} parts but a record of type "
                f"{type(record).__name__}; it must return the same (X, y) form for every n."
            )
        return tuple(append_record(part, rec) for part, rec in zip(base, record, strict=True))
    if isinstance(base, np.ndarray):
        return np.concatenate([base, np.asarray(record)])
    if isinstance(base, list):
        return base + list(record)
    if hasattr(base, "iloc"):
        import pandas as pd

        return pd.concat([base, record], ignore_index=True)
    raise TypeError(
        "Datasets must be numpy arrays (one record per row), lists of records, pandas objects or (X, y) tuples. "
        f"Got {type(base).__name__}."
    )


def as_array(data: Any, name: str = "X", *, owner: str = "") -> np.ndarray:
    """``np.asarray(data)``, with a ragged input (records of different lengths) refused by name, not by numpy."""
    try:
        return np.asarray(data)
    except ValueError as exc:
        if "inhomogeneous" not in str(exc) and "sequence" not in str(exc):
            raise
        where = f" of {owner}" if owner else ""
        raise ValueError(
            f"The '{name}' argument{where} must be a rectangular array (one record per row, every record of the same "
            f"length); got a ragged {type(data).__name__}. Pad or fix the records; a supervised estimator takes the "
            "tuple (X, y), a statistic one array."
        ) from None
