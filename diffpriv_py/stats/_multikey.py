"""Several grouping columns as one: each row's tuple of labels becomes one integer label, and back to a MultiIndex.

The group-by release works on one label column. Grouping by several columns is a public, per-row relabelling before
it (a row's tuple of labels ↦ one integer) and a public relabelling of the released integers back to tuples after
it, so it changes nothing in the privacy argument: the groups are the tuples, exactly as if the tuples had been one
column. The integers follow the tuples' lexicographic order (each column's labels sorted as a one-column group-by
sorts them), so the released groups come out sorted as tuples, as pandas sorts a MultiIndex.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from .._contribution import label_hashes, mix64
from ._labels import (
    _check_keys_type,
    _Coded,
    _factorize,
    _group_labels,
    _label_kind,
    _lazy_column,
    _materialise,
    key_labels,
)

__all__ = ["CompositeLabels", "LazyColumns", "is_several_columns"]


def is_several_columns(by: Any) -> bool:
    """Whether ``by`` is a list of columns (each 1-D) rather than one column: a list whose every item is 1-D."""
    return isinstance(by, list) and len(by) > 0 and all(np.ndim(item) == 1 for item in by)


@attrs.frozen(eq=False)
class CompositeLabels:
    """The integer label of every row (``codes``), of every public key (``keys``) and the map back to tuples.

    ``levels[j][level_codes[j][c]]`` is column j's label of the integer label c.
    """

    codes: np.ndarray
    keys: tuple[int, ...] | None
    levels: tuple[np.ndarray, ...]
    level_codes: tuple[np.ndarray, ...]
    names: tuple[Any, ...]

    @classmethod
    def of(cls, columns: Sequence[Any], keys: Any, owner: str) -> CompositeLabels:
        """Combine the grouping ``columns`` (and the public ``keys``, tuples of their labels) into one label."""
        labels = [_group_labels(_materialise(c), owner) for c in columns]
        n = labels[0].shape[0]
        for j, column in enumerate(labels):
            if column.shape[0] != n:
                raise ValueError(
                    f"The grouping columns of {owner} must have one entry per row each; column {j} has "
                    f"{column.shape[0]} entries and column 0 has {n}. Pass columns of the same table."
                )
        key_levels = _key_levels(keys, len(labels), owner)
        if key_levels is not None:
            for column, level in zip(labels, key_levels, strict=True):
                _check_keys_type(tuple(level), _label_kind(column.dtype), owner)
        # The keys ride along as extra entries so that a key no row holds still gets its integer.
        stacked = (
            labels
            if key_levels is None
            else [
                column.append(level)
                if isinstance(column, _Coded)
                else np.concatenate([column, key_labels(level, column.dtype)])
                for column, level in zip(labels, key_levels, strict=True)
            ]
        )
        levels, codes = zip(*(_factorize(column, sort=True) for column in stacked), strict=True)
        combined = codes[0].astype(np.int64)
        level_codes: list[np.ndarray] = [np.arange(levels[0].shape[0])]
        for level, code in zip(levels[1:], codes[1:], strict=True):
            width = level.shape[0]  # ≤ n + len(keys), so the pair fits in int64 for any table that fits in memory
            pairs, combined = _factorize(combined * width + code, sort=True)
            level_codes = [lc[pairs // width] for lc in level_codes] + [pairs % width]
        names = tuple(getattr(c, "name", None) for c in columns)
        key_codes = None if key_levels is None else tuple(int(c) for c in combined[n:])
        return cls(combined[:n], key_codes, tuple(levels), tuple(level_codes), names)

    @property
    def coded(self) -> _Coded:
        """The rows' integer labels as a coded column that hashes each integer as its tuple of labels (the bounding
        hashes labels by value; the integers depend on which tuples the data hold, the tuples do not), so one
        column in a list keeps the one-column release's bits."""
        hashes = label_hashes(self.levels[0])[self.level_codes[0]]
        with np.errstate(over="ignore"):
            for level, lc in zip(self.levels[1:], self.level_codes[1:], strict=True):
                hashes = mix64(hashes * np.uint64(0x9E3779B97F4A7C15) + label_hashes(level)[lc])
        return _Coded(self.codes, np.arange(self.level_codes[0].shape[0]), hashes)

    def index(self, released: Any, names: Sequence[Any] | None = None) -> Any:
        """The pandas MultiIndex of the released integer labels; each level's dtype follows its column's dtype."""
        import pandas as pd

        codes = np.asarray(released, dtype=np.int64)
        arrays = []
        for level, lc in zip(self.levels, self.level_codes, strict=True):
            values = level[lc[codes]]
            # Strings as Python objects: a numpy string dtype would be as wide as the longest label, released or not.
            arrays.append(pd.Index(values.tolist(), dtype=object if level.dtype.kind in "US" else level.dtype))
        return pd.MultiIndex.from_arrays(arrays, names=list(names or self.names))


@attrs.frozen(eq=False)
class LazyColumns:
    """Several dask grouping columns combined where the data live: each partition of the table (shuffled by person)
    combines its own rows' tuples with :meth:`CompositeLabels.of`, and the release combines the partitions' distinct
    tuples (or the public keys) once more; no label column is read into one process.

    ``key_labels`` is the :class:`CompositeLabels` of the public keys alone (None without keys): its integers stand for
    the keys in the mechanism, in the keys' order.
    """

    columns: tuple[Any, ...]
    keys: tuple[tuple[Any, ...], ...] | None
    key_labels: CompositeLabels | None
    names: tuple[Any, ...]

    @classmethod
    def of(cls, columns: Sequence[Any], keys: Any, owner: str) -> LazyColumns:
        """The grouping ``columns`` (dask Series) and the public ``keys`` (tuples of their labels), checked from
        public metadata only: one dimension, and keys of each column's label type."""
        checked = tuple(_lazy_column(c, f"by[{j}]", owner) for j, c in enumerate(columns))
        key_levels = _key_levels(keys, len(checked), owner)
        key_labels = None
        if key_levels is not None:
            typed = []
            for column, level in zip(checked, key_levels, strict=True):
                _check_keys_type(tuple(level), _label_kind(column.dtype), owner)
                typed.append(_as_labels(level, column.dtype))
            key_labels = CompositeLabels.of(typed, keys, owner)
        rows = None if key_levels is None else tuple(zip(*key_levels, strict=True))
        return cls(checked, rows, key_labels, tuple(getattr(c, "name", None) for c in columns))


def combine_partition(part: Any, width: int, keys: tuple[tuple[Any, ...], ...] | None, owner: str) -> CompositeLabels:
    """The rows of one partition of a :class:`LazyColumns` table (columns ``by0``, ``by1``, …) combined, with the
    public keys (tuples)."""
    return CompositeLabels.of([part[f"by{j}"] for j in range(width)], keys, owner)


def _as_labels(level: list[Any], dtype: Any) -> np.ndarray:
    """Public key labels as :meth:`CompositeLabels.of` stacks them beside a column of this (pandas or numpy) dtype,
    whose labels are read as that numpy dtype, float64 or strings (see :func:`._labels._group_labels`)."""
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return key_labels(level, dtype)
    return key_labels(level, np.dtype(np.float64 if _label_kind(dtype) == "f" else str))


def tuples(labels: CompositeLabels, codes: np.ndarray) -> list[np.ndarray]:
    """Column j's label of each integer label in ``codes``, one array per column."""
    return [level[lc[codes]] for level, lc in zip(labels.levels, labels.level_codes, strict=True)]


def _key_levels(keys: Any, width: int, owner: str) -> list[list[Any]] | None:
    """The public keys (tuples of one label per grouping column, or a pandas MultiIndex) as one list per column."""
    if keys is None:
        return None
    if isinstance(keys, (str, bytes)) or not hasattr(keys, "__iter__"):
        raise TypeError(
            f"The 'keys' of {owner} with {width} grouping columns must be a sequence of tuples of {width} labels (or a "
            f"pandas MultiIndex); got {keys!r:.200}. Pass e.g. keys=[('Paris', 'young'), ('Lyon', 'old')]."
        )
    rows = [tuple(k) if isinstance(k, (tuple, list)) else k for k in keys]
    bad = [k for k in rows if not isinstance(k, tuple) or len(k) != width]
    if bad:
        raise ValueError(
            f"Each key of {owner} must be a tuple of {width} labels, one per grouping column; got {bad[0]!r:.200}. "
            f"Pass e.g. keys=[('Paris', 'young'), ('Lyon', 'old')]."
        )
    if not rows:
        raise ValueError(f"The 'keys' of {owner} must not be empty; pass keys=None to select groups privately.")
    if len(set(rows)) != len(rows):
        raise ValueError(f"The 'keys' of {owner} must be distinct tuples; got {keys!r:.200}.")
    return [[k[j] for k in rows] for j in range(width)]
