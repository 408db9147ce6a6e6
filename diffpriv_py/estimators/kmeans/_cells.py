"""The assignment and statistics kernels: the nearest centre of every record, and the counts and coordinate sums of
the centres' Voronoi cells, computed in blocks of rows on a column-major workspace.

Private cores: prior validation of data is assumed (finite float64 rows; centres of the same width).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import numpy as np

_CHUNK = 16_384
"""Most rows per block in the assignment step (see :func:`_block_rows`): the k×rows score matrix never has to fit in
memory at once."""


def _squared_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    sq = (X * X).sum(axis=1)[:, None] - 2.0 * (X @ C.T) + (C * C).sum(axis=1)[None, :]
    result: np.ndarray = np.maximum(sq, 0.0)
    return result


def _workspace(Z: np.ndarray) -> np.ndarray:
    """``Z`` with a column of ones, column-major, shape (n, d+1): the layout the assignment kernels read.

    Made once per release (or per free Lloyd run) and reused by every iteration (:class:`_Cells`). With the centres
    augmented by −‖c‖²/2 (:func:`_augment`), one product with its float32 copy gives the scores, and one product of
    the one-hot with a block gives the coordinate sums and the counts together. Column-major blocks make both
    products read the block as d+1 contiguous rows, which single-threaded OpenBLAS multiplies 2–2.5× faster than
    the row-major block.
    """
    existing = _existing_workspace(Z, Z.shape[1])
    if existing is not None:
        return existing  # Z came from KMeans.prepare, which writes the data into its workspace: no copy
    work = _empty_workspace(*Z.shape)
    work[:, : Z.shape[1]] = Z
    return work


def _existing_workspace(Z: np.ndarray, d: int) -> np.ndarray | None:
    """The workspace ``Z`` is, or whose data columns it is (from ``KMeans.prepare``); else None."""
    if _is_workspace(Z, d):
        return Z
    base = Z.base
    if isinstance(base, np.ndarray) and _is_workspace(base, d) and _is_data_of(Z, base):
        return base
    return None


def _empty_workspace(n: int, d: int) -> np.ndarray:
    work = np.empty((n, d + 1), order="F")
    work[:, d] = 1.0
    return work


def _is_data_of(Z: np.ndarray, work: np.ndarray) -> bool:
    # The first d columns of the workspace itself, not some other view of it.
    return bool(Z.shape[0] == work.shape[0] and Z.strides == work.strides and Z.ctypes.data == work.ctypes.data)


def _is_workspace(Z: np.ndarray, d: int) -> bool:
    """Whether ``Z`` is the :func:`_workspace` of d-column data (column-major, d+1 columns, the last all ones)."""
    return bool(Z.ndim == 2 and Z.shape[1] == d + 1 and Z.flags.f_contiguous and np.all(Z[:, d] == 1.0))


def _augment(C: np.ndarray) -> np.ndarray:
    """The centres with −‖c‖²/2 appended, in float32 (the scores' precision), so that the workspace's ones column
    subtracts it inside the product."""
    return np.concatenate([C, -0.5 * (C * C).sum(axis=1, keepdims=True)], axis=1, dtype=np.float32)


def _nearest(scores: np.ndarray) -> np.ndarray:
    """Index of the largest of the (k, rows) ``scores`` in every column (the first on ties).

    The running maximum runs over the k centres, each step vectorised over the rows (``putmask``, no index
    arrays): faster than an argmin along the short axis of an (rows, k) array.
    """
    best = scores[0].copy()
    labels = np.zeros(scores.shape[1], dtype=np.intp)
    for j in range(1, scores.shape[0]):
        np.putmask(labels, scores[j] > best, j)
        np.maximum(best, scores[j], out=best)
    return labels


def _assign(Z: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Nearest centre of every row by argmax_j z·c_j − ‖c_j‖²/2, in blocks of rows (the first centre on ties).

    Prepared data (from ``KMeans.prepare``) is assigned by the statistics kernel itself (:class:`_Cells`), so the
    labels are the cells its counts and sums use. Other data (``predict`` on the caller's rows, in the caller's
    units) is scored in float64 in place, ``C @ blockᵀ − ‖c‖²/2``, without copying it into a workspace.
    """
    k, d = C.shape
    if _existing_workspace(Z, d) is not None:
        return _Cells.of(Z, k).labels(C)
    half_norms = 0.5 * (C * C).sum(axis=1)[:, None]
    n = Z.shape[0]
    labels = np.empty(n, dtype=np.intp)
    rows = _block_rows(k, d)
    scores = np.empty((k, min(rows, n)))
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        block_scores = np.matmul(C, Z[start:stop].T, out=scores[:, : stop - start])
        block_scores -= half_norms
        labels[start:stop] = _nearest(block_scores)
    return labels


def _block_rows(k: int, d: int) -> int:
    """Rows per assignment block for k centres in d dimensions.

    ``_CHUNK`` rows while k + d + 1 ≤ 20, 2048 up to 100 and 1024 beyond: the fastest of 1024 … 16384 rows for
    :meth:`_Cells.statistics` at 10⁵ rows, single-threaded, at (d, k) = (10, 5), (2, 15), (10, 15), (10, 30),
    (50, 5), (2, 50) and (100, 10). Larger blocks cost fewer calls, but from k + d + 1 ≈ 26 OpenBLAS multiplies
    blocks of 4096 rows or more up to 1.8× slower per row.
    """
    width = k + d + 1
    return _CHUNK if width <= 20 else 2048 if width <= 100 else 1024


def _first_maximum(hot: np.ndarray, scores: np.ndarray) -> None:
    """Keep only the first maximum in the columns of the boolean one-hot ``hot`` that do not hold exactly one.

    An exact tie (two centres at the same score) would make a record count twice; :func:`_nearest` keeps the first.
    """
    bad = np.flatnonzero(np.count_nonzero(hot, axis=0) != 1)
    first = np.argmax(scores[:, bad], axis=0)  # first maximum (NaN cannot occur: finite rows and centres)
    hot[:, bad] = False
    hot[first, bad] = True


@attrs.frozen(eq=False)
class _Cells:
    """One in-memory dataset as every assignment pass over it reads it (made once per release or free Lloyd run).

    Attributes
    ----------
    work : ndarray of shape (n, d + 1)
        The :func:`_workspace`: float64, column-major, a ones column last. Counts and sums are products with it.
    low : ndarray of shape (n, d + 1)
        The same in float32, which the scores are computed from (half the memory traffic of float64).
    totals : ndarray of shape (d + 1,)
        The column sums of ``work`` (the last is n).
    scratch : tuple of ndarray
        Scores, maxima, one-hot, float one-hot and label products of one block (reused by every block: fresh
        pages of this size cost more in first-touch faults than the arithmetic).

    Notes
    -----
    **Privacy.** The assignment may be any function of one record and the public centres: under replace-one the
    changed record is then the only one that can change cells, so the count histogram moves by ≤ 2 in L1 and the
    sums by ≤ 2d. Scoring in float32 keeps that (entry (j, i) of a matrix product comes from centre j and record i
    alone; its rounding may depend on the BLAS kernel and the record's place in the block, and under replace-one
    no record changes place); it only moves records within about 10⁻⁶ of a Voronoi boundary to a neighbouring cell.
    **Exactness.** On the fixed-point grid of ``KMeans.prepare`` every product is 0, 1 or a grid value and every
    partial sum a grid multiple below 2⁵³ grid steps (see :func:`grid_bits`), so counts and sums are exact in any
    order; the last centre's are therefore ``totals`` minus the others', which saves 1/k of the product.
    """

    work: np.ndarray
    low: np.ndarray
    totals: np.ndarray
    scratch: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, Z: np.ndarray, k: int) -> _Cells:
        """The cells of ``Z`` (data or its workspace) for k centres."""
        work = _workspace(Z)
        return cls(work, work.astype(np.float32, order="F"), work.sum(axis=0), ()).for_centres(k)

    def for_centres(self, k: int) -> _Cells:
        """The same cells with the scratch for k centres (the data and its float32 copy are shared, not copied)."""
        n, d = self.work.shape[0], self.work.shape[1] - 1
        rows = min(_block_rows(k, d), n)
        scratch = (
            np.empty((k, rows), dtype=np.float32),
            np.empty(rows, dtype=np.float32),
            np.empty((k, rows), dtype=bool),
            np.empty((k, rows)),
            np.empty((k, rows), dtype=np.min_scalar_type(k - 1)),
        )
        return attrs.evolve(self, scratch=scratch)

    def _blocks(self, C: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
        """(start, stop, one-hot) for every block of rows: the (k, rows) boolean membership, one True per column."""
        k, d = C.shape
        augmented = _augment(C)
        scores_buf, best_buf, hot_buf = self.scratch[:3]
        n, rows = self.work.shape[0], _block_rows(k, d)
        for start in range(0, n, rows):
            stop = min(start + rows, n)
            scores = np.matmul(augmented, self.low[start:stop].T, out=scores_buf[:, : stop - start])
            best = np.maximum.reduce(scores, axis=0, out=best_buf[: stop - start])
            hot = np.equal(scores, best, out=hot_buf[:, : stop - start])
            if np.count_nonzero(hot) != stop - start:
                _first_maximum(hot, scores)
            yield start, stop, hot

    def _labels(self, hot: np.ndarray) -> np.ndarray:
        """The index of the one True in every column of the one-hot ``hot``: Σⱼ j·hot[j] in the smallest integers."""
        products = self.scratch[4][:, : hot.shape[1]]
        # On hot's bytes as uint8 (0 or 1): numpy's bool-to-integer cast would cost a third more.
        np.multiply(hot.view(np.uint8), np.arange(hot.shape[0], dtype=products.dtype)[:, None], out=products)
        labels: np.ndarray = np.add.reduce(products, axis=0, dtype=products.dtype)
        return labels.astype(np.intp)

    def labels(self, C: np.ndarray) -> np.ndarray:
        """The cell of every record."""
        return np.concatenate([self._labels(hot) for _, _, hot in self._blocks(C)])

    def statistics(self, C: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Counts (k,) and coordinate sums (k, d) of the cells of the centres ``C`` (weighted with ``weights``).

        Each block's sums are the product of its float one-hot with the block, or, when a cell has fewer than half
        as many coordinates as there are cells (k > 2(d + 1)), one weighted histogram of the block's labels per
        column (``np.bincount``), which reads d + 1 values per record instead of k.
        """
        k, d = C.shape
        totals = np.zeros((k, d + 1))
        if weights is None and k > 2 * (d + 1):
            for start, stop, hot in self._blocks(C):
                labels = self._labels(hot)
                totals[:, d] += np.bincount(labels, minlength=k)
                for j in range(d):
                    totals[:, j] += np.bincount(labels, weights=self.work[start:stop, j], minlength=k)
            return totals[:, d].copy(), totals[:, :d].copy()
        head = k if weights is not None else k - 1  # the rows the products compute; the last is the rest
        if head:
            member_buf = self.scratch[3]
            for start, stop, hot in self._blocks(C):
                member = member_buf[:head, : stop - start]
                np.copyto(member, hot[:head])
                if weights is not None:
                    member *= weights[start:stop]
                totals[:head] += member @ self.work[start:stop]
        if weights is None:
            totals[k - 1] = self.totals - np.add.reduce(totals[: k - 1], axis=0)
        return totals[:, d].copy(), totals[:, :d].copy()
