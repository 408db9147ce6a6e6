"""Sufficient statistics computed block by block, so data larger than memory (dask, chunk iterables) work.

Every estimator whose cost is a sum over records (XᵀX, Xᵀy, sums, counts, per-cluster sums) computes that sum with
:func:`map_reduce`; the noise is added once, to the total, exactly as for in-memory data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ._validation import check_int

__all__ = ["BLOCK_ROWS", "Chunks", "declared_rows", "first_block", "is_out_of_core", "map_reduce", "n_rows"]

BLOCK_ROWS = 1 << 16
"""Rows per block for in-memory arrays: bounds temporary copies (clipping) without slowing BLAS down."""


class Chunks:
    """A dataset given as a re-iterable sequence of row blocks (numpy arrays or ``(X, y)`` tuples of arrays).

    Parameters
    ----------
    source : iterable, or callable returning an iterable
        The blocks. Estimators that pass over the data several times (k-means) need a *re-iterable* source: a list,
        or a function that returns a fresh generator each time it is called (e.g. reading a file chunk by chunk).
    n_records : int, optional
        The number of records, declared (e.g. from the file's metadata) so it is known without a pass over the
        blocks. Every pass checks it and raises ``ValueError`` at the first block that contradicts it. A mechanism
        whose sensitivity was sampled for n records (``sampled_n``) needs it: it refuses data whose size is not
        declared.

    Notes
    -----
    A container, not a mechanism: it makes no privacy claim of its own. The estimators and ``dp.stats`` functions
    that accept it compute the same sufficient statistics block by block and add the noise once, so the privacy
    guarantee (and, for a given seed, the release) is that of the in-memory call on the concatenated blocks.
    Every pass must yield the same records; the number of records is public under replace-one neighbours: declared
    with ``n_records``, or else counted in a first pass where a statistic needs it.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> def blocks():  # a fresh generator per pass, e.g. reading a file chunk by chunk
    ...     for i in range(5):
    ...         yield np.random.default_rng(i).uniform(0, 1, size=(1000, 3))
    >>> means = dp.stats.mean(dp.Chunks(blocks), dp.Eps(1.0), bounds=(0, 1), axis=0, rng=0)
    >>> means.shape
    (3,)
    """

    def __init__(self, source: Iterable[Any] | Callable[[], Iterable[Any]], *, n_records: int | None = None) -> None:
        if not (callable(source) or isinstance(source, Iterable)):
            raise TypeError(f"Chunks needs an iterable of blocks or a function returning one. Got {source!r}.")
        if isinstance(source, Iterator):
            raise TypeError(
                "Chunks needs a re-iterable source: a list of blocks, or a function returning a fresh generator "
                "(a bare generator can only be read once)."
            )
        self._source = source
        self._n_records = None if n_records is None else check_int(n_records, "n_records", minimum=1, owner="Chunks")

    @property
    def n_records(self) -> int | None:
        """The declared number of records (``None``: not declared)."""
        return self._n_records

    def __iter__(self) -> Iterator[Any]:
        blocks = iter(self._source() if callable(self._source) else self._source)
        return blocks if self._n_records is None else self._checked(blocks, self._n_records)

    @staticmethod
    def _checked(blocks: Iterator[Any], declared: int) -> Iterator[Any]:
        seen = 0
        for block in blocks:
            seen += len(block[0] if isinstance(block, tuple) else block)
            if seen > declared:
                break
            yield block
        if seen != declared:
            raise ValueError(
                f"The Chunks declared n_records={declared} but its blocks hold {'more' if seen > declared else seen}; "
                "every pass must yield exactly the declared records. Fix n_records or the source."
            )


def _is_dask(data: Any) -> bool:
    return type(data).__module__.split(".")[0] in ("dask", "dask_expr")


def is_out_of_core(data: Any) -> bool:
    """Whether ``data`` is :class:`Chunks` (whose blocks may be ``(X, y)`` tuples) or a dask collection (or a tuple
    of them, for supervised data)."""
    first = data[0] if isinstance(data, tuple) and data else data
    return isinstance(data, Chunks) or _is_dask(first)


def _dask_array(part: Any) -> Any:
    if hasattr(part, "to_dask_array"):  # dask DataFrame / Series
        return part.to_dask_array(lengths=True)
    return part


def _aligned(data: tuple[Any, ...]) -> list[Any]:
    """The parts of a supervised dataset as dask arrays with the row chunks of the first (X): blocks must pair up
    record by record. In-memory parts (e.g. y as numpy) are split the same way."""
    import dask.array as da

    first = _dask_array(data[0])
    rows = first.chunks[0]
    parts = []
    for part in data:
        arr = _dask_array(part) if _is_dask(part) else da.from_array(np.asarray(part), chunks=-1)  # pyright: ignore[reportArgumentType]  # dask types chunks as str; -1 is documented
        if arr.shape[0] != first.shape[0]:
            raise ValueError(
                f"The parts of the supervised dataset have different numbers of records: {first.shape[0]} and "
                f"{arr.shape[0]}. Pass X and y with one entry per record."
            )
        parts.append(arr if arr.chunks[0] == rows else arr.rechunk({0: rows}))
    return parts


def _dask_blocks(part: Any) -> list[Any]:
    part = _dask_array(part)
    if part.ndim == 2 and part.numblocks[1] != 1:
        part = part.rechunk({1: -1})
    return list(part.to_delayed().ravel())


def _blocks(data: Any) -> Iterator[Any]:
    """Yield in-memory blocks (arrays, or tuples of arrays for supervised data) of an in-memory array."""
    if isinstance(data, tuple):
        n = len(data[0])
        for start in range(0, max(n, 1), BLOCK_ROWS):
            yield tuple(np.asarray(part[start : start + BLOCK_ROWS]) for part in data)
        return
    array = np.asarray(data)
    for start in range(0, max(len(array), 1), BLOCK_ROWS):
        yield array[start : start + BLOCK_ROWS]


def map_reduce(data: Any, block_fn: Callable[[Any], Any], combine: Callable[[list[Any]], Any] | None = None) -> Any:
    """Sum ``block_fn(block)`` over the row blocks of ``data``; results may be arrays or tuples of arrays.

    With ``combine``, the list of per-block results (in row order) is passed to it instead of being summed, for
    statistics that are not plain sums (e.g. Chan's update of variances).

    ``data`` is a numpy array (processed in blocks of :data:`BLOCK_ROWS` rows), an ``(X, y)`` tuple, a dask array
    or DataFrame (each block is computed on the cluster; only the small per-block results travel), or
    :class:`Chunks`. The total is exactly what ``block_fn`` would give on the whole data for sums of per-record
    terms.
    """
    first = data[0] if isinstance(data, tuple) and data else data
    if isinstance(data, Chunks):
        results = (block_fn(block) for block in data)
    elif _is_dask(first):
        from dask.base import compute
        from dask.delayed import delayed

        if isinstance(data, tuple):
            columns = [_dask_blocks(part) for part in _aligned(data)]
            tasks = [delayed(block_fn)(tuple(blocks)) for blocks in zip(*columns, strict=True)]
        else:
            tasks = [delayed(block_fn)(block) for block in _dask_blocks(data)]
        results = iter(compute(*tasks))
    else:
        results = (block_fn(block) for block in _blocks(data))
    if combine is not None:
        collected = list(results)
        if not collected:
            raise ValueError("The dataset has no blocks: pass at least one record.")
        return combine(collected)
    total = None
    for result in results:
        total = result if total is None else _add(total, result)
    if total is None:
        raise ValueError("The dataset has no blocks: pass at least one record.")
    return total


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def n_rows(data: Any) -> int:
    """Number of records, computed blockwise for out-of-core data (read from the shape where it is known, as for a
    dask array with known chunks, or from a ``Chunks``' declared ``n_records``, without computing any block)."""
    rows = declared_rows(data) if isinstance(data, Chunks) or not isinstance(data, tuple) else None
    if rows is not None:
        return rows
    return int(map_reduce(data, lambda block: len(block[0] if isinstance(block, tuple) else block)))


def declared_rows(data: Any) -> int | None:
    """The number of records of ``data`` if public metadata gives it without reading any record, else ``None``.

    Known: numpy arrays and other objects whose ``shape[0]`` is an integer (a dask array with known chunks), lists,
    pandas objects, ``Chunks`` with ``n_records``, and ``(X, y)`` tuples of these (whose parts must agree). Unknown:
    generators and other iterators, a dask array with unknown chunk sizes, a dask DataFrame or Series (its length is
    a computation), ``Chunks`` without ``n_records``.
    """
    if isinstance(data, Chunks):
        return data.n_records
    if isinstance(data, tuple):
        sizes = [declared_rows(part) for part in data]
        if not sizes or None in sizes:
            return None
        if len(set(sizes)) != 1:
            raise ValueError(
                f"A supervised dataset (X, y) must have the same number of records in each part. Got sizes {sizes}."
            )
        return sizes[0]
    if isinstance(data, list) or (hasattr(data, "iloc") and not _is_dask(data)):
        return len(data)
    shape = getattr(data, "shape", None)
    if isinstance(shape, tuple) and shape and isinstance(shape[0], (int, np.integer)):
        return int(shape[0])
    return None


def first_block(data: Any) -> Any:
    """The first row block of out-of-core data, in memory (to read its number of columns and dtype)."""
    first: Any = data[0] if isinstance(data, tuple) and data else data
    if isinstance(data, Chunks):
        for block in data:
            return block
        raise ValueError("The Chunks yielded no block: pass at least one record.")
    if isinstance(data, tuple):
        return tuple(first_block(part) for part in data)
    if hasattr(first, "partitions"):  # dask DataFrame / Series
        return first.partitions[0].compute()
    return first.blocks[0].compute()
