"""Group and person label columns as the group-by reads them: label types fixed by the column's dtype, missing labels
as groups, a factorisation per column (hashing the pandas column itself for extension dtypes), and the public checks
of a column's shape and length."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from .._blockwise import is_out_of_core
from .._datasets import as_array
from .._validation import refuse_masked


def _factorize(labels: np.ndarray | _Coded, *, sort: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(distinct labels, code of each row): with ``sort``, the labels sorted as by
    ``np.unique(..., return_inverse=True)``, else in order of first appearance.

    pandas' hash-based factorisation (one linear pass, several times faster than a sort on strings); with ``sort``
    only the distinct labels are sorted and the codes renumbered by one lookup in that small table, never the rows.
    """
    if isinstance(labels, _Coded):  # the distinct labels factorised (equal ones merged), the rows' codes mapped
        uniques, inverse = _factorize(labels.uniques, sort=sort)
        small = inverse.astype(np.int32) if uniques.shape[0] < 2**31 else inverse  # half the memory per row
        return uniques, small[labels.codes]
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is needed for the DataFrame result anyway
        uniques, codes = np.unique(labels, return_inverse=True)
        return uniques, codes.reshape(-1)
    if labels.dtype.kind == "U" and labels.dtype.itemsize and labels.shape[0]:
        codes = _factorize_fixed_width(labels)
        representative = np.empty(int(codes.max()) + 1, dtype=np.intp)
        representative[codes] = np.arange(codes.shape[0])  # any row of a code: they all hold the same string
        uniques = labels[representative]
    else:
        codes, uniques = pd.factorize(labels, sort=False, use_na_sentinel=False)  # a missing label is a group too
        codes, uniques = codes.astype(np.intp, copy=False), np.asarray(uniques)
    if sort and uniques.size > 1:
        order = np.argsort(uniques, kind="stable")  # NaN last, as np.unique
        if (order[1:] < order[:-1]).any():
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            uniques, codes = uniques[order], rank[codes]
    return uniques, codes


def _factorize_fixed_width(labels: np.ndarray) -> np.ndarray:
    """Codes (first appearance) of a fixed-width unicode column, without making a Python string per row.

    Each row is its characters (code points < 2²¹), read as integers: the codes so far and as many further
    characters as fit beside them in 63 bits are packed into one int64 key and factorised by hashing, until every
    character is consumed — a few integer hash passes instead of hashing Python strings."""
    import pandas as pd

    chars = labels.view(np.uint32).reshape(labels.shape[0], -1)  # a view: one column at a time is widened
    codes, n_codes, j = np.zeros(labels.shape[0], dtype=np.int64), 1, 0
    while j < chars.shape[1]:
        room = max(1, (63 - (n_codes - 1).bit_length()) // 21)
        key = codes
        for col in range(j, min(j + room, chars.shape[1])):
            key <<= 21
            key |= chars[:, col]
        j += room
        codes, uniques = pd.factorize(key, sort=False)
        n_codes = int(uniques.shape[0])
    return codes.astype(np.intp, copy=False)


def _materialise(column: Any) -> Any:
    """An out-of-core label column read into memory (labels are needed whole to bound contributions)."""
    return column.compute() if is_out_of_core(column) else column


def _lazy_column(value: Any, name: str, owner: str) -> Any:
    """Public checks of a dask column: one dimension and a known dtype (its length needs a pass over the data)."""
    if not is_out_of_core(value):
        return _column(value, name, owner)
    if getattr(value, "ndim", 1) != 1:
        raise ValueError(f"The '{name}' of {owner} must be a 1-D column; got a dask collection with ndim {value.ndim}.")
    return value


def _numeric_labels(dtype: Any) -> bool:
    """Whether a pandas extension dtype (nullable integers, floats, booleans, arrow numbers, categoricals of those)
    holds numeric labels."""
    if hasattr(dtype, "categories"):
        dtype = dtype.categories.dtype
    return getattr(dtype, "kind", "O") in "biuf"  # pandas' extension dtypes state their numpy kind too


def _label_kind(dtype: Any) -> str:
    """The numpy kind of the group labels a column of this (public) dtype is read as, see :func:`_group_labels`."""
    if isinstance(dtype, np.dtype):
        return "U" if dtype.kind == "O" else dtype.kind
    if "__UNKNOWN_CATEGORIES__" in getattr(dtype, "categories", ()):
        return "?"  # a dask categorical whose categories are known only after a pass: not checked before the charge
    return "f" if _numeric_labels(dtype) else "U"


@attrs.frozen(eq=False)
class _Coded:
    """A label column as codes into its distinct labels, factorised once (by hashing the pandas column itself), so
    the label rules are applied to the distinct labels only and no Python object is made per row.

    ``hashes`` (several grouping columns) are the bounding's label hashes of the distinct labels, when these are
    integer stand-ins for tuples of labels (see :mod:`._multikey`); otherwise the labels hash by value."""

    codes: np.ndarray
    uniques: np.ndarray
    hashes: np.ndarray | None = None

    @property
    def dtype(self) -> Any:
        return self.uniques.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    def append(self, labels: Any) -> _Coded:
        """These rows followed by rows holding ``labels`` (e.g. public keys riding along), as one coded column."""
        extra = key_labels(labels, self.uniques.dtype)
        codes = np.concatenate([self.codes, self.uniques.shape[0] + np.arange(extra.shape[0])])
        return _Coded(codes, np.concatenate([self.uniques, extra]))


def key_labels(keys: Any, dtype: np.dtype) -> np.ndarray:
    """Public key labels to ride along with a label column of numpy ``dtype``, never narrowed to it: strings keep
    their full width and numbers are promoted with the column's type (a key 2.5 stays 2.5 beside integer labels),
    so a key stands for exactly the rows holding it (and for none when no row does)."""
    arr = np.asarray(keys)
    if dtype.kind in "US":
        return arr.astype(str)
    return arr.astype(np.result_type(dtype, arr.dtype))


def _coded(value: Any, name: str, owner: str, n: int | None, convert: Callable[[Any], np.ndarray]) -> _Coded:
    """A pandas column (extension dtype) factorised by pandas (a missing label is one label), ``convert`` applied to
    its distinct labels."""
    import pandas as pd

    refuse_masked(value, name, owner=owner)
    _check_length(len(value), name, owner, n)
    codes, uniques = pd.factorize(value, use_na_sentinel=False)
    return _Coded(np.asarray(codes, dtype=np.intp), convert(uniques))


def _group_labels(value: Any, owner: str) -> np.ndarray | _Coded:
    """The ``by`` column as labels whose type is fixed by the column's dtype, never by its values.

    For a pandas extension dtype, ``to_numpy()`` picks its numpy dtype from the values: a nullable ``Int64`` column
    gives int64 without a missing value and float64 with one, a nullable boolean gives bool or object, a categorical
    its categories' type or float/object. One missing label would then change the released index's dtype, and
    with public ``keys`` could stop every row from matching its key. So numeric and boolean extension dtypes are
    always read as float64 (a missing label is the group NaN), and the others (strings, …) as strings (a missing
    label is the group ``"nan"`` or ``"<NA>"``); a categorical is read from its categories, numeric or not.
    (Integers beyond 2⁵³ are rounded by float64; merging labels is a per-row, public map, so still private.)
    Extension columns come back coded (:class:`_Coded`): the same labels, converted once per distinct label.
    """
    if isinstance(value, _Coded):
        return value
    dtype: Any = getattr(value, "dtype", None)
    if hasattr(dtype, "categories"):
        # The categories (as float64 or strings), then NaN or "nan" for a missing label (code −1): converting the
        # values instead would upcast integer categories to float only when a value is missing.
        if _numeric_labels(dtype):
            names = np.append(np.asarray(dtype.categories, dtype=np.float64), np.nan)
        else:
            names = np.asarray([str(c) for c in dtype.categories] + ["nan"])
        codes = np.asarray(getattr(value, "cat", value).codes, dtype=np.intp)  # a Series' or a Categorical's codes
        _check_length(codes.shape[0], "by", owner, None)
        return _Coded(np.where(codes < 0, names.shape[0] - 1, codes), names)
    if hasattr(value, "to_numpy") and dtype is not None and not isinstance(dtype, np.dtype):
        if _numeric_labels(dtype):
            return _coded(value, "by", owner, None, lambda u: u.to_numpy(dtype=np.float64, na_value=np.nan))
        return _coded(value, "by", owner, None, lambda u: u.to_numpy(dtype=object).astype(str))
    return _labels(value, "by", owner)


def _check_keys_type(keys: tuple[Any, ...], label_kind: str, owner: str) -> None:
    """Public keys must be comparable with the labels (numbers with numbers, strings with strings): a mismatch would
    match no row and silently release empty groups."""
    key_kind = np.asarray(keys).dtype.kind
    numbers = "biuf"
    if (label_kind in numbers and key_kind not in numbers) or (label_kind in "US" and key_kind != label_kind):
        kind = "numbers" if label_kind in numbers else "strings"
        raise TypeError(
            f"The 'keys' of {owner} must be of the type of the 'by' labels, which are {kind} (dtype kind "
            f"{label_kind!r}); got keys={list(keys)!r:.200} (kind {key_kind!r}), which would match no row. Pass keys "
            f"of the labels' type, or convert the 'by' column."
        )


def _labels(value: Any, name: str, owner: str, *, n: int | None = None) -> np.ndarray | _Coded:
    """A label column (groups, people) as a sortable array: object columns (strings, pandas categoricals with
    missing values) become strings, so a missing label is the group ``"nan"``. A pandas extension column comes back
    coded (:class:`_Coded`, the same labels)."""

    def sortable(values: Any) -> np.ndarray:
        arr: np.ndarray = np.asarray(values)
        return arr.astype(str) if arr.dtype.kind == "O" else arr

    dtype = getattr(value, "dtype", None)
    if hasattr(value, "to_numpy") and dtype is not None and not isinstance(dtype, np.dtype) and value.ndim == 1:
        return _coded(value, name, owner, n, lambda u: sortable(u.to_numpy()))
    return sortable(_column(value, name, owner, n=n))


def _column(value: Any, name: str, owner: str, *, n: int | None = None) -> np.ndarray:
    refuse_masked(value, name, owner=owner)
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):
        arr: np.ndarray = value.to_numpy()
    else:
        arr = as_array(value, name, owner=owner)
    if arr.ndim != 1:
        raise ValueError(f"The '{name}' of {owner} must be a 1-D column (one entry per row); got shape {arr.shape}.")
    _check_length(arr.shape[0], name, owner, n)
    return arr


def _check_length(length: int, name: str, owner: str, n: int | None) -> None:
    if n is None and length == 0:
        raise ValueError(f"{owner} needs at least one row; got an empty '{name}' column.")
    if n is not None and length != n:
        raise ValueError(
            f"The '{name}' of {owner} must have one entry per row of 'by' ({n}); got {length}. Pass columns of "
            "the same table."
        )
