"""k-means clustering under differential privacy: coreset seeding, (improved) DPLloyd, input perturbation.

All three run on the data mapped into the unit box [-1, 1]^d by the public, per-feature ``bounds`` (records outside
are clipped), which is the normalisation Su et al. analyse. The released model is a small frozen
:class:`KMeansModel` whose centroids are mapped back to the original units.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

import attrs
import numpy as np

from ... import _noise
from ..._blockwise import Chunks, is_out_of_core, map_reduce, n_rows
from ..._datasets import as_array
from ..._validation import check_int
from ...exceptions import TargetOutputError
from ...mechanisms.base import DPMech, _gamma_sensitivity, _sensitivity
from ...mechanisms.laplace import Laplace
from ...privacy import Eps
from .._sensitivity_floor import not_below
from .._supervised import check_rows_to_predict

__all__ = ["CoresetPlan", "DPLloydPlan", "KMeans", "KMeansModel", "auto_method"]

RHO = 0.225
"""Su et al.'s constant ρ in the count/sum budget ratio (4dρ²)^{1/3} and the iteration rule."""

PLAIN_N_ITER = 5
"""Iterations of the original DPLloyd (Su et al.'s baseline setting)."""

SHRINKAGE = 3.0
"""τ of the shrinkage weight C̃²/(C̃² + τ²), in count-noise scales (post-processing; see ``KMeans(shrinkage=)``)."""

_CHUNK = 16_384
"""Most rows per block in the assignment step (see :func:`_block_rows`): the k×rows score matrix never has to fit in
memory at once."""

_NOISE_AHEAD = 2**18
"""Most noise values the DPLloyd steps draw ahead in one sampler call (2 MiB)."""

_N_INIT_NOISY = 3
"""k-means++ restarts of the (free, post-processing) Lloyd run on input-perturbed data."""

_MAX_ITER_NOISY = 100

AUTO_SIGNAL = 30.0
"""``method="auto"`` seeds from a private coreset when ε·n/(k·d) reaches this, else runs improved DPLloyd."""

SEED_FRACTION = 0.5
"""Share of ε the coreset seeding spends; the rest goes to the final Lloyd step(s)."""

N_CANDIDATES = 200
"""Minimum number of data-independent candidate centres whose Voronoi cells form the coreset (at least 4k)."""

CANDIDATE_SPREAD = 1.6
"""Candidates are uniform in [-s, s]^d with s = min(1, CANDIDATE_SPREAD/√d)."""

SURVIVAL = 3.0
"""Coreset cells whose noisy count is below this many count-noise scales are dropped (post-processing)."""

OVERSEED = 2
"""The coreset method's Lloyd step runs with OVERSEED·k centres, merged into k afterwards (post-processing)."""

_N_INIT_CORESET = 10
"""k-means++ restarts of the (free) weighted Lloyd run on the private coreset."""

METHODS = ("auto", "coreset", "dplloyd", "input_perturbation")


KMeansMethod = Literal["auto", "coreset", "dplloyd", "input_perturbation"]
"""The ``method`` options of :class:`KMeans` (and of the scikit-learn facade)."""


# ---- validation helpers ------------------------------------------------------------------------------------------


def _side(value: Any, which: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf" or arr.ndim > 1 or arr.size == 0:
        raise TypeError(
            f"The {which} bound in 'bounds' of KMeans must be a real number or a 1-D array of one real number per "
            f"feature. Got {value!r}. Pass e.g. bounds=(0.0, 1.0) or bounds=([0, 0], [10, 5])."
        )
    arr = np.atleast_1d(arr.astype(np.float64))
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The {which} bound in 'bounds' of KMeans must be finite. Got {value!r}. Pass the public range of each "
            "feature (e.g. from the data's documentation, never from the private data itself)."
        )
    return arr


def _bounds(value: Any) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if value is None:
        raise ValueError(
            "KMeans needs public, data-independent bounds: pass bounds=(lower, upper) with one number or one per "
            "feature (e.g. bounds=(0.0, 10.0)). They are never taken from the private data, since that would leak "
            "it; records outside the box are clipped to it."
        )
    if (
        isinstance(value, (str, bytes))
        or not hasattr(value, "__len__")
        or (isinstance(value, np.ndarray) and value.ndim == 0)  # has __len__, but len() raises
        or len(value) != 2
    ):
        raise TypeError(
            f"The 'bounds' parameter of KMeans must be a pair (lower, upper). Got {value!r}. "
            "Pass e.g. bounds=(0.0, 1.0) or bounds=([0, 0], [10, 5])."
        )
    lower, upper = (_side(v, w) for v, w in zip(value, ("lower", "upper"), strict=True))
    try:
        lower, upper = np.broadcast_arrays(lower, upper)
    except ValueError:
        raise ValueError(
            f"The lower and upper bounds of KMeans have different lengths ({lower.size} and {upper.size}). Pass one "
            "number each, or one per feature each."
        ) from None
    if not np.all(lower < upper):
        bad = np.flatnonzero(~(lower < upper))
        raise ValueError(
            f"Every lower bound in the 'bounds' of KMeans must be strictly below its upper bound; features "
            f"{bad.tolist()} are not (lower={lower[bad].tolist()}, upper={upper[bad].tolist()}). Swap or widen them."
        )
    return tuple(float(v) for v in lower), tuple(float(v) for v in upper)


def _method(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or value not in METHODS:
        raise ValueError(
            f"The 'method' parameter of KMeans must be one of {', '.join(map(repr, METHODS))}. Got {value!r}. "
            "Leave the default 'auto' unless you are reproducing a published method."
        )


MAX_K = 10_000
"""Largest number of clusters: the initialisation and the k×d noisy sums are sized by k, and a DP release of more
centres than this has no signal left in any of them."""

K_LIMIT = "each cluster's count and sums get their own noise, so more clusters leave no signal"

MAX_N_ITER = 10_000
"""Most DPLloyd iterations: each gets its own share of ε (and a pass over the data), so far fewer are useful."""


def _k(value: Any) -> int:
    return check_int(value, "k", maximum=MAX_K, why=K_LIMIT, owner="KMeans")


def _optional_n_iter(value: Any) -> int | None:
    if value is None:
        return None
    why = "each iteration gets its own share of epsilon, so more only add noise; n_iter=None picks the default"
    return check_int(value, "n_iter", maximum=MAX_N_ITER, why=why, owner="KMeans")


def _bool(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The '{attribute.name}' parameter of KMeans must be True or False. Got {value!r}.")


def _data_matrix(X: Any, owner: str) -> np.ndarray:
    if isinstance(X, tuple):
        raise TypeError(f"{owner} is unsupervised: pass the feature matrix X alone, not an (X, y) tuple.")
    arr = as_array(X, owner=owner)
    if arr.dtype.kind not in "biuf" or arr.ndim != 2:
        raise TypeError(
            f"{owner} needs a 2-D numeric array with one record per row. Got {type(X).__name__} with shape "
            f"{getattr(arr, 'shape', None)} and dtype {arr.dtype}. Reshape 1-D data with X.reshape(-1, 1)."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{owner} needs at least one record and one feature. Got shape {arr.shape}.")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The data passed to {owner} contains NaN or infinite values. Remove or impute them first (clipping "
            "cannot place a NaN in the box)."
        )
    return arr


def grid_bits(n: int, degree: int = 1) -> int:
    """Bits of the fixed-point grid that makes sums of ``n`` products of ``degree`` values in [-1, 1] exact.

    Values rounded toward zero onto multiples of 2^-b are integers times 2^-b; a sum of ``n`` products of ``degree``
    of them is an integer of magnitude at most n·2^(degree·b) times a power of two, which float64 holds exactly
    (whatever the order of summation, blocking or FMA) while it stays below 2^52.
    """
    used = max(1, math.ceil(math.log2(max(n, 2))))
    return max(1, min(30, (52 - used) // degree))


def _to_grid(Z: np.ndarray, bits: int) -> np.ndarray:
    # Round toward zero: never moves a value (or a row norm) outside the clipping region.
    scale = float(2**bits)
    return np.trunc(Z * scale) / scale


# ---- the released model ------------------------------------------------------------------------------------------


def _frozen_array(value: Any) -> np.ndarray:
    arr = np.array(value, dtype=np.float64)
    arr.setflags(write=False)
    return arr


@attrs.frozen(eq=False)
class KMeansModel:
    """A privately released k-means model: the centroids and how to use them.

    Attributes
    ----------
    centroids : ndarray of shape (k, d)
        Cluster centres in the original units (read-only). They lie in the public ``bounds`` box.
    n_iter : int
        Lloyd iterations the release ran (DPLloyd: noisy iterations, each charged; coreset: the noisy iterations
        after the seeding pass; input perturbation: iterations of the free Lloyd run on the noisy data).
    method : str
        ``"coreset"``, ``"dplloyd"``, ``"dplloyd-improved"`` or ``"input_perturbation"`` (what ran; ``"auto"`` is
        resolved).

    Notes
    -----
    Everything here is post-processing of a DP release, so using it costs no privacy. The labels or distances of
    the private training records are, however, *not* a DP release: they are per-record outputs of private data.
    """

    centroids: np.ndarray = attrs.field(converter=_frozen_array)
    n_iter: int
    method: str

    @property
    def k(self) -> int:
        """Number of clusters."""
        result: int = self.centroids.shape[0]
        return result

    def _check(self, X: Any) -> np.ndarray:
        return check_rows_to_predict(X, self.centroids.shape[1], model="k-means model")

    def transform(self, X: Any) -> np.ndarray:
        """Euclidean distance of each row of ``X`` to each centroid, shape (n, k)."""
        arr = self._check(X)
        sq = _squared_distances(arr, self.centroids)
        result: np.ndarray = np.sqrt(sq)
        return result

    def predict(self, X: Any) -> np.ndarray:
        """Index of the nearest centroid for each row of ``X``."""
        arr = self._check(X)
        return _assign(arr, self.centroids)

    def inertia(self, X: Any) -> float:
        """Sum over rows of ``X`` of the squared distance to the nearest centroid."""
        arr = self._check(X)
        return float(_squared_distances(arr, self.centroids).min(axis=1).sum())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The centroids as an array (so tools such as the auditor can treat the model as numbers)."""
        return np.array(self.centroids, dtype=dtype)

    def __repr__(self) -> str:
        return f"KMeansModel(k={self.k}, d={self.centroids.shape[1]}, method={self.method!r}, n_iter={self.n_iter})"


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


def _clip_unit(values: np.ndarray) -> np.ndarray:
    """``values`` clipped to [-1, 1] in place (two ufunc calls: ``np.clip``'s wrapper costs more on k·d values)."""
    np.maximum(values, -1.0, out=values)
    clipped: np.ndarray = np.minimum(values, 1.0, out=values)
    return clipped


def _cluster_statistics(
    Z: np.ndarray, C: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster counts and coordinate sums of ``Z`` assigned to centres ``C`` (exact on the fixed-point grid).

    ``Z`` is the (n, d) data or its :func:`_workspace`. With ``weights`` (only for already-private points, such as
    a coreset) the counts and sums are weighted. Repeated calls on the same data should reuse one :class:`_Cells`.
    """
    return _Cells.of(Z, C.shape[0]).statistics(C, weights)


@attrs.frozen(eq=False)
class _Normaliser:
    """The map of one block of raw records into [-1, 1]^d on the grid of the *whole* dataset (bits from the total n)."""

    mid: np.ndarray
    half: np.ndarray
    bits: int
    d: int

    def __call__(self, block: Any) -> np.ndarray:
        arr = _data_matrix(block, "KMeans")
        if arr.shape[1] != self.d:
            raise ValueError(f"Every block must have {self.d} columns, like the first one; got shape {arr.shape}.")
        return _to_grid(np.clip((arr - self.mid) / self.half, -1.0, 1.0), self.bits)


@attrs.frozen(eq=False)
class _BlockwiseData:
    """The target's output for out-of-core data: the raw blocks and their normalisation, never all in memory."""

    data: Any
    n: int
    normaliser: _Normaliser

    @property
    def shape(self) -> tuple[int, int]:
        return self.n, self.normaliser.d


def _block_statistics(normaliser: _Normaliser, centres: np.ndarray, block: Any) -> tuple[np.ndarray, np.ndarray]:
    """Counts (r, k) and sums (r, k, d) of one block for each of r releases' centres: exact on the grid, so summing
    them over blocks gives exactly the in-memory statistics."""
    cells = _Cells.of(normaliser(block), centres.shape[1])
    stats = [cells.statistics(c) for c in centres]
    return np.stack([c for c, _ in stats]), np.stack([s for _, s in stats])


def _n_columns(data: Any) -> int:
    if isinstance(data, Chunks):
        for block in data:
            return int(np.shape(block)[1]) if np.ndim(block) == 2 else 0
        raise ValueError("KMeans needs at least one record; the Chunks yielded no block.")
    return int(data.shape[1]) if len(data.shape) == 2 else 0


def _lloyd(
    Z: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    n_init: int,
    max_iter: int,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """Plain (optionally weighted) Lloyd with k-means++ seeding and restarts; only ever run on already-private data."""
    best, best_cost, best_iter = None, math.inf, 0
    n, cells = Z.shape[0], _Cells.of(Z, k)
    for _ in range(n_init):
        C = np.empty((k, Z.shape[1]))
        C[0] = Z[rng.integers(n) if weights is None else rng.choice(n, p=weights / weights.sum())]
        closest = ((Z - C[0]) ** 2).sum(axis=1)
        for j in range(1, k):
            mass = closest if weights is None else closest * weights
            total = mass.sum()
            idx = rng.choice(n, p=mass / total) if total > 0 else rng.integers(n)
            C[j] = Z[idx]
            closest = np.minimum(closest, ((Z - C[j]) ** 2).sum(axis=1))
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - the count is the result
            counts, sums = cells.statistics(C, weights)
            filled = counts > 0
            new = C.copy()
            new[filled] = sums[filled] / counts[filled, None]
            shift = np.abs(new - C).max()
            C = new
            if shift <= 1e-7:  # in units of the box [-1, 1]: far below the noise
                break
        nearest = _squared_distances(Z, C).min(axis=1)
        cost = nearest.sum() if weights is None else nearest @ weights
        if cost < best_cost:
            best, best_cost, best_iter = C, cost, it
    assert best is not None  # for type checkers: n_init ≥ 1 restarts, and the first always beats an infinite cost
    return best, best_iter


# ---- the budget plan ---------------------------------------------------------------------------------------------


@attrs.frozen
class DPLloydPlan:
    """How a DPLloyd release spends ε: the iteration count and the per-iteration count/sum split.

    Attributes
    ----------
    n_iter : int
        Number of noisy Lloyd iterations T.
    epsilon_count : float
        ε of the noisy cluster-count histogram in each iteration.
    epsilon_sums : float
        ε of the noisy cluster sums in each iteration, shared equally by the d coordinates.
    n_features : int
        d.

    Notes
    -----
    By sequential composition the release is ``total``-DP with ``total = n_iter·(epsilon_count + epsilon_sums)``;
    :meth:`KMeans.plan` makes that equal to the requested ε (to the last bit it rounds down, never up).
    """

    n_iter: int
    epsilon_count: float
    epsilon_sums: float
    n_features: int

    @property
    def epsilon_per_coordinate(self) -> float:
        """ε of each coordinate's sums in one iteration."""
        return self.epsilon_sums / self.n_features

    @property
    def spends(self) -> list[float]:
        """Every ε the release charges, in order (count, sums) per iteration."""
        return [self.epsilon_count, self.epsilon_sums] * self.n_iter

    @property
    def total(self) -> float:
        """The composed ε of the whole release (an exactly rounded sum of :attr:`spends`)."""
        return math.fsum(self.spends)


@attrs.frozen
class CoresetPlan:
    """How a coreset-seeded release spends ε: one noisy pass over candidate cells, then DPLloyd step(s).

    Attributes
    ----------
    n_candidates : int
        m, the number of data-independent candidate centres whose Voronoi cells are counted and summed.
    epsilon_seed_count : float
        ε of the noisy count histogram over the m cells.
    epsilon_seed_sums : float
        ε of the noisy m×d cell sums, shared equally by the d coordinates.
    lloyd : DPLloydPlan
        The noisy Lloyd iteration(s) that refine the k centres chosen from the coreset.

    Notes
    -----
    By sequential composition the release is ``total``-DP with ``total = epsilon_seed_count + epsilon_seed_sums +
    lloyd.total``; :meth:`KMeans.plan` makes that equal to the requested ε (rounding down by an ulp if at all).
    """

    n_candidates: int
    epsilon_seed_count: float
    epsilon_seed_sums: float
    lloyd: DPLloydPlan

    @property
    def n_iter(self) -> int:
        """Noisy Lloyd iterations after the seeding pass."""
        return self.lloyd.n_iter

    @property
    def spends(self) -> list[float]:
        """Every ε the release charges, in order: the seeding count and sums, then (count, sums) per iteration."""
        return [self.epsilon_seed_count, self.epsilon_seed_sums, *self.lloyd.spends]

    @property
    def total(self) -> float:
        """The composed ε of the whole release (an exactly rounded sum of :attr:`spends`)."""
        return math.fsum(self.spends)


def auto_method(epsilon: float, n: int, d: int, k: int) -> str:
    """The method ``KMeans(method="auto")`` runs: ``"coreset"`` if ε·n/(k·d) ≥ 30, else ``"dplloyd"``.

    A function of public quantities only (ε, and n, d, k, which replace-one neighbours share), so the choice
    reveals nothing about the data. ε·n/(k·d) is an average cluster's size over the Laplace scale d/ε of its
    coordinate sums; when it is small the seeding pass cannot afford half of ε and improved DPLloyd (all of ε on
    Lloyd steps) does better. The threshold is the measured crossover of the two methods (mean inertia over 10
    seeds): between ε·n/(k·d) = 25 and 37.5 on iris (d = 4, k = 3), 16.7 and 25 on a 2-D 15-cluster mixture, and
    20 and 30 on 10-D blobs with k = 5. No single value fits all three; 30 keeps iris on the better side and costs
    the 2-D mixture near ε·n/(k·d) = 25; see ``docs/kmeans.md``.
    """
    if not all(map(math.isfinite, (epsilon, n, d, k))) or min(epsilon, n, d, k) <= 0:
        raise ValueError(
            f"auto_method needs a positive finite ε and positive n, d, k. Got ε={epsilon!r}, n={n!r}, d={d!r}, "
            f"k={k!r}. Pass the release's ε and the data's public shape."
        )
    return "coreset" if epsilon * n / (k * d) >= AUTO_SIGNAL else "dplloyd"


def su_n_iter(epsilon: float, n: int, d: int, k: int) -> int:
    """Su et al.'s iteration count T = ⌊clip(ε/ε_m, 2, 7)⌋, ε_m = √(500·k³/n²·(d + (4dρ²)^{1/3})³).

    ``epsilon`` is the budget in Su et al.'s add/remove units (see :class:`KMeans` Notes).
    """
    ratio = (4.0 * d * RHO**2) ** (1.0 / 3.0)
    epsilon_m = math.sqrt(500.0 * k**3 / n**2 * (d + ratio) ** 3)
    return int(max(min(epsilon / epsilon_m, 7.0), 2.0))


def _split(epsilon: float, n_iter: int, ratio: float, d: int) -> DPLloydPlan:
    per_iteration = epsilon / n_iter
    eps_count = per_iteration * ratio / (d + ratio)
    eps_sums = per_iteration - eps_count
    plan = DPLloydPlan(n_iter=n_iter, epsilon_count=eps_count, epsilon_sums=eps_sums, n_features=d)
    while plan.total > epsilon:  # float rounding may overshoot by an ulp; never spend more than asked
        plan = attrs.evolve(plan, epsilon_sums=math.nextafter(plan.epsilon_sums, 0.0))
    return plan


def _coreset_plan(epsilon: float, n_iter: int, d: int, n_candidates: int) -> CoresetPlan:
    ratio = (4.0 * d * RHO**2) ** (1.0 / 3.0)
    seed = _split(epsilon * SEED_FRACTION, 1, ratio, d)
    lloyd = _split(epsilon - seed.total, n_iter, ratio, d)
    plan = CoresetPlan(n_candidates, seed.epsilon_count, seed.epsilon_sums, lloyd)
    while plan.total > epsilon:  # float rounding may overshoot by an ulp; never spend more than asked
        lloyd = attrs.evolve(lloyd, epsilon_sums=math.nextafter(lloyd.epsilon_sums, 0.0))
        plan = attrs.evolve(plan, lloyd=lloyd)
    return plan


# ---- the mechanism -----------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class _CellNoise:
    """Pre-drawn safe Laplace noise for one noisy Lloyd step: counts (r, m) and sums (r, m, d), each on its grid.

    :meth:`add` rounds the statistics to the grids and adds the noise, which has the law of perturbing them with
    the Laplace mechanism's safe sampler (``diffpriv_py._noise.grid_laplace_noise``).
    """

    counts: np.ndarray
    count_grid: float
    sums: np.ndarray
    sum_grid: float

    def add(self, counts: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Counts are integers (weights are never noised), hence already on any grid r ≤ 1 (a power of two).
        on_grid = counts if self.count_grid <= 1.0 else _noise._round_to_grid(counts, self.count_grid)
        noisy_counts: np.ndarray = on_grid + self.counts
        noisy_sums: np.ndarray = _noise._round_to_grid(sums, self.sum_grid) + self.sums
        return noisy_counts, noisy_sums


def _laplace(sensitivity: float) -> Laplace:
    """The library's Laplace mechanism at this L1 sensitivity: its floating-point-safe ``_perturb`` adds the noise.

    Input perturbation's noisy records go through the mechanism's single randomisation path rather than a
    ``release_response`` (the records are the target's output, not a separate release). DPLloyd's statistics depend
    on the current, private centres and get the same sampler's noise drawn ahead (:class:`_CellNoise`).
    """
    return Laplace(target=_no_target, sensitivity=sensitivity)


def _no_target(data: Any) -> Any:  # pragma: no cover - never evaluated
    raise TypeError("internal Laplace mechanism of KMeans: statistics are passed to _perturb directly")


def _prepare_target(self: KMeans) -> Any:
    return self.prepare


@attrs.frozen(kw_only=True)
class KMeans(DPMech):
    """Differentially private k-means as a mechanism: coreset seeding, (improved) DPLloyd, input perturbation.

    ``KMeans(k, bounds=...).release_response(Eps(ε), X, rng=...)`` returns a :class:`~diffpriv_py.Response` whose
    ``.response`` is a :class:`KMeansModel` (centroids with ``predict``).

    Parameters
    ----------
    k : int
        Number of clusters.
    method : {"auto", "coreset", "dplloyd", "input_perturbation"}, default "auto"
        ``"coreset"``: half of ε buys a private coreset (the noisy counts and means of the Voronoi cells of
        m ≥ 200 data-independent candidate centres), weighted k-means on it (free) chooses k starting centres,
        and the other half runs one noisy Lloyd step from them. ``"dplloyd"``: Lloyd's algorithm with a noisy count
        and noisy sums per cluster in each of a fixed number of iterations from data-independent centres (Blum,
        Dwork, McSherry & Nissim 2005). ``"input_perturbation"``: Laplace noise on every record, then ordinary
        k-means on the noisy data. ``"auto"`` runs ``"coreset"`` when ε·n/(k·d) ≥ 30 and ``"dplloyd"`` below
        (:func:`auto_method`; public quantities only), the measured crossover of the two.
    bounds : (lower, upper)
        Public, data-independent range of the features: two numbers, or two arrays with one number per feature.
        Required; records are clipped to the box. Never derived from the data.
    improved : bool, default True
        With ``method="dplloyd"``: use the improved DPLloyd of Su et al. (2016, 2017): sphere-packing
        initialisation, their iteration count T and their count/sum budget split. ``False`` gives the original
        DPLloyd: uniform random initialisation in the box, T = 5 and the budget split evenly over the count and
        the d coordinates; with ``method="auto"`` it selects that original DPLloyd. Ignored by the other methods.
    n_iter : int, optional
        DPLloyd: the number of noisy iterations T (overrides the rule above). Coreset: the noisy Lloyd iterations
        after the seeding pass, default 1. Input perturbation: the maximum number of (free) Lloyd iterations on the
        noisy data, default 100.
    shrinkage : bool, default True
        DPLloyd: move each centre c from its previous position towards the noisy mean S̃/C̃ (clipped to the box)
        only by the weight C̃²/(C̃² + τ²) (0 if C̃ ≤ 0), with τ three count-noise scales (τ = 3·2/ε_count): an
        inverse-variance compromise between a noisy mean whose error grows like 1/C̃ and the previous centre.
        Post-processing, so free; it cuts the NICV by 20–45 % on small data (iris, wine, breast cancer) and costs
        under 10 % on large data. ``False`` gives Su et al.'s estimator S̃/C̃ (a cluster whose noisy count is below
        1 keeps its previous centre).
    sensitivity : float, default 1
        Multiplier of every noise scale, in units of the analytic replace-one bounds below (the target, the
        normalised data, changes by at most 1 in the mechanism's norm). A smaller value (0 included) is refused: it
        would void the guarantee. For input perturbation
        :meth:`sensitivity_sampler` may set it, with a random-DP γ; DPLloyd refuses sampling.

    Notes
    -----
    **Privacy claim.** A release is ε-DP under the replace-one neighbouring relation (datasets of equal size n
    differing in one record), for the data clipped to ``bounds``. n is treated as public, as replace-one allows.

    **Normalisation.** Each feature is mapped affinely from [lower, upper] to [-1, 1] (then clipped), as in
    Su et al.; the centroids are mapped back. All sensitivities below are in these units, and the mechanism's
    ``target`` returns the normalised data; its ``sensitivity`` is 1 in units of the box's L1 diameter 2d
    (``sensitivity_norm`` measures the L1 change of the normalised data divided by 2d).

    **DPLloyd calibration.** Each of the T iterations assigns every record to its nearest current centre (the
    centres are public: data-independent at the start, private afterwards) and releases, with the library's
    :class:`~diffpriv_py.Laplace` mechanism,

    * the cluster-count histogram with Lap(2/ε_count) noise: under replace-one a record can leave one cluster and
      join another, so the L1 sensitivity is 2 (it is 1 under add/remove, where DPLloyd was analysed);
    * the k×d cluster sums with Lap(2d/ε_sums) noise: a record moved between clusters changes the sums by at
      most ‖x‖₁ + ‖x′‖₁ ≤ 2d, one kept in its cluster by ‖x − x′‖₁ ≤ 2d (the add/remove bound d, doubled).

    The new centre is computed from the noisy sums and counts only (see ``shrinkage``) and clipped to the box
    (post-processing, never a branch on an exact count). By sequential composition the release is
    T·(ε_count + ε_sums)-DP, and the plan (:meth:`plan`) makes this sum equal ε.

    Because the replace-one sensitivities are twice the add/remove ones, a release at ε adds the noise that
    Su et al.'s add/remove DPLloyd adds at ε/2; the reproduction in ``docs/kmeans.md`` shows both scales.

    * Improved (Su et al.): ε_count/ε_coordinate = (4dρ²)^{1/3} with ρ = 0.225, i.e.
      ε_count = ε/T·r/(d + r) with r = (4dρ²)^{1/3}; T = ⌊clip(ε/ε_m, 2, 7)⌋ with
      ε_m = √(500k³/n²·(d + r)³) (their rule, applied to the nominal ε). Initial centres by sphere packing:
      uniform in the shrunken box, accepted at distance ≥ 2a from the others, a halved after 100 rejections in
      a row.
    * Original: r = 1 (the count weighs as one coordinate), T = 5, initial centres uniform in the box.

    Deliberate divergence from diffprivlib 0.6.6: its ``KMeans`` unpacks the split in the wrong order (count
    and coordinate budgets swapped), which overspends for d ≥ 5 (2.28ε at d = 64); it also uses count
    sensitivity 1 under its replace-one convention and skips the noise for empty clusters. Here the spent
    budget is exactly ε (tested).

    **Coreset seeding** (``method="coreset"``). m = max(200, 4k) candidate centres are drawn uniformly in
    [-s, s]^d with s = min(1, 1.6/√d), independently of the data. (In high dimension the nearest of many points
    spread over the whole box is decided mostly by their norms, so a few central candidates would swallow all
    clusters; the shrunken box keeps the candidates' norms comparable.) One pass releases the count histogram and
    the m×d sums of their Voronoi cells, with Lap(2/ε₀,count) and Lap(2d/ε₀,sums): the replace-one sensitivities
    are 2 and 2d whatever m is, as a record leaves at most one cell and joins at most one other. Cells whose noisy
    count is below three count-noise scales are dropped (at least k are kept), and weighted k-means (k-means++,
    10 restarts) on the noisy cell means, weighted by the noisy counts, chooses the k starting centres: all
    post-processing. Then ``n_iter`` (default 1) DPLloyd iterations with Su et al.'s count/sum ratio refine them.
    The seeding pass gets ε/2 with Su et al.'s count/sum ratio, the Lloyd step(s) the rest; the plan
    (:class:`CoresetPlan`) makes the spends sum to exactly ε. This follows the private-coreset approach of Su et
    al.'s EUGkM (noisy cell counts, then non-private k-means on the cells) and of Chang, Ghazi, Kumar &
    Manurangsi (2021), with Voronoi cells of random centres in place of a grid or LSH buckets so that the cost
    does not grow with d, and noisy cell sums so that the coreset points sit at the data's means. One noisy Lloyd
    step from a good start beats several: each extra step divides the budget and adds noise.

    **Input perturbation.** Every normalised record gets i.i.d. Lap(2d/ε) noise per coordinate (its L1 diameter
    is 2d; each record is protected by its own noise). The noisy records are clipped back into the box and
    k-means with k-means++ seeding and 3 restarts runs on them (post-processing). ε-DP; useful only at large ε.

    **Floating point.** Casacuberta, Shoemate, Vadhan & Wagaman (CCS 2022) show that float sums can have a much
    larger sensitivity than the real-number analysis says. The normalised records are rounded toward zero onto a
    grid of 2^-b (b ≤ 30, chosen from n so that n·2^b < 2^52), so every count and sum is computed exactly in
    float64 whatever the summation order, and the analysis above holds for the computed values. The noise is
    drawn by the Laplace mechanism's floating-point-safe grid sampler (its defence against Mironov's 2012 attack),
    with every coordinate of one release's counts or sums in one row so that its rounding allowance covers them.

    References
    ----------
    Blum, Dwork, McSherry & Nissim (2005). Practical privacy: the SuLQ framework. PODS.
    Su, Cao, Li, Bertino & Jin (2016). Differentially private k-means clustering. CODASPY; and
    Su, Cao, Li, Bertino, Lyu & Jin (2017). Differentially private k-means clustering and a hybrid approach to
    private optimization. ACM TOPS 20(4).
    Casacuberta, Shoemate, Vadhan & Wagaman (2022). Widespread underestimation of sensitivity in differentially
    private libraries and how to fix it. CCS.
    Chang, Ghazi, Kumar & Manurangsi (2021). Locally private k-means in one round. ICML (the private-coreset
    approach behind Google's open-source differentially private clustering, which buckets records by LSH).

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (500, 2)), rng.normal(2, 0.3, (500, 2))])
    >>> mech = dp.estimators.KMeans(2, bounds=(-4, 4))
    >>> model = mech.release_response(dp.Eps(1.0), X, rng=1).response
    >>> np.round(np.sort(model.centroids[:, 0]))
    array([-2.,  2.])
    """

    k: int = attrs.field(kw_only=False, converter=_k)
    method: KMeansMethod = attrs.field(default="auto", validator=_method)
    bounds: tuple[tuple[float, ...], tuple[float, ...]] = attrs.field(default=None, converter=_bounds)
    improved: bool = attrs.field(default=True, validator=_bool)
    n_iter: int | None = attrs.field(default=None, converter=_optional_n_iter)
    shrinkage: bool = attrs.field(default=True, validator=_bool)
    target: Any = attrs.field(init=False, repr=False, eq=False, default=attrs.Factory(_prepare_target, takes_self=True))
    sensitivity: float = attrs.field(default=1.0, converter=_sensitivity, repr=False, validator=not_below(1.0))
    gamma_sensitivity: float | None = attrs.field(default=None, converter=_gamma_sensitivity, repr=False)
    sensitivity_is_derived: ClassVar[bool] = True

    # ---- public helpers ------------------------------------------------------------------------------------------

    def box(self, n_features: int) -> tuple[np.ndarray, np.ndarray]:
        """The (lower, upper) bounds broadcast to ``n_features`` features."""
        lower, upper = (np.asarray(side) for side in self.bounds)
        if lower.size not in (1, n_features):
            raise ValueError(
                f"KMeans has bounds for {lower.size} features but the data has {n_features}. Pass one bound per "
                "feature, or a single number for all."
            )
        return np.broadcast_to(lower, (n_features,)), np.broadcast_to(upper, (n_features,))

    def prepare(self, X: Any) -> np.ndarray | _BlockwiseData:
        """The mechanism's target: ``X`` mapped to [-1, 1]^d by the bounds, clipped, on the exact-sum grid.

        The input is never modified.
        """
        if is_out_of_core(X):  # dask or Chunks: a lazy view, normalised block by block in every pass
            n, d = n_rows(X), _n_columns(X)
            lower, upper = self.box(d)
            return _BlockwiseData(X, n, _Normaliser((lower + upper) / 2.0, (upper - lower) / 2.0, grid_bits(n), d))
        arr = _data_matrix(X, "KMeans")
        n, d = arr.shape
        lower, upper = self.box(d)
        mid, half = (lower + upper) / 2.0, (upper - lower) / 2.0
        # Written in place into the first d columns of the assignment kernels' workspace (column-major, a ones
        # column last), which every Lloyd iteration of the release then reads without a copy. The same operations
        # as _to_grid, value for value.
        Z = _empty_workspace(n, d)[:, :d]
        np.subtract(arr, mid, out=Z)
        np.divide(Z, half, out=Z)
        np.clip(Z, -1.0, 1.0, out=Z)
        scale = float(2 ** grid_bits(n))
        np.multiply(Z, scale, out=Z)
        np.trunc(Z, out=Z)
        np.divide(Z, scale, out=Z)
        return Z

    def resolved_method(self, epsilon: float, n_records: int, n_features: int) -> str:
        """The method a release at ``epsilon`` on n×d data runs: ``method``, or :func:`auto_method`'s choice."""
        if self.method != "auto":
            return self.method
        if not self.improved:  # a request for the original, published DPLloyd
            return "dplloyd"
        return auto_method(epsilon, n_records, n_features, self.k)

    def plan(self, privacy_params: Eps | float, n_records: int, n_features: int) -> DPLloydPlan | CoresetPlan:
        """The iteration count and count/sum budget split a DPLloyd or coreset release on n×d data uses.

        Parameters
        ----------
        privacy_params : Eps or float
            The release's privacy parameters (or its ε).
        n_records, n_features : int
            n and d (public under replace-one).

        Returns
        -------
        DPLloydPlan or CoresetPlan
            A :class:`CoresetPlan` if the release seeds from a coreset (see :meth:`resolved_method`). Its ``total``
            equals ε (rounded down if at all).
        """
        epsilon = privacy_params.epsilon if isinstance(privacy_params, Eps) else Eps(privacy_params).epsilon
        n = check_int(n_records, "n_records", minimum=1, owner="KMeans.plan")
        d = check_int(n_features, "n_features", minimum=1, owner="KMeans.plan")
        method = self.resolved_method(epsilon, n, d)
        if method == "coreset":
            return _coreset_plan(epsilon, self.n_iter or 1, d, max(N_CANDIDATES, 4 * self.k))
        if self.improved:
            n_iter = self.n_iter or su_n_iter(epsilon, n, d, self.k)
            ratio = (4.0 * d * RHO**2) ** (1.0 / 3.0)
        else:
            n_iter = self.n_iter or PLAIN_N_ITER
            ratio = 1.0
        return _split(epsilon, n_iter, ratio, d)

    def initial_centres(self, n_features: int, rng: Any = None) -> np.ndarray:
        """Data-independent initial centres in [-1, 1]^d (sphere packing if ``improved``, else uniform)."""
        from ..._rng import as_generator

        gen = as_generator(rng)
        d = check_int(n_features, "n_features", minimum=1, owner="KMeans.initial_centres")
        result: np.ndarray = self._initial_centres(d, gen, 1)[0]
        return result

    def _initial_centres(self, d: int, rng: np.random.Generator, n_releases: int) -> np.ndarray:
        if not self.improved:
            return rng.uniform(-1.0, 1.0, size=(n_releases, self.k, d))
        return _sphere_packing(self.k, d, rng, n_releases)

    def _check_samplable(self) -> None:
        """The sensitivity may be sampled for input perturbation only (see the error for DPLloyd)."""
        if self.method != "input_perturbation":
            raise TypeError(
                "KMeans(method='dplloyd') cannot use a sampled sensitivity: its cluster counts change by 2 whenever a "
                "record changes cluster, however close the records are, which sensitivity_norm does not measure. "
                "Use the analytic default (records clipped to the public bounds)."
            )

    # ---- DPMech hooks --------------------------------------------------------------------------------------------

    def _check_dataset(self, X: Any) -> Any:
        """Shape, type and size checks (public under replace-one), before any budget is charged."""
        if is_out_of_core(X):
            if self.method == "input_perturbation":
                raise ValueError(
                    "KMeans(method='input_perturbation') releases a noisy copy of every record and clusters it in "
                    "memory, so it cannot run on out-of-core data (dask, Chunks). Use method='dplloyd', which only "
                    "needs per-cluster counts and sums, computed block by block."
                )
            return X
        if isinstance(X, tuple):
            raise TypeError("KMeans is unsupervised: pass the feature matrix X alone, not an (X, y) tuple.")
        arr = as_array(X, owner="KMeans") if not isinstance(X, np.ndarray) else X
        if arr.dtype.kind not in "biuf" or arr.ndim != 2:
            raise TypeError(
                f"KMeans needs a 2-D real numeric array with one record per row. Got {type(X).__name__} with shape "
                f"{getattr(arr, 'shape', None)} and dtype {arr.dtype}. Reshape 1-D data with X.reshape(-1, 1)."
            )
        n, d = arr.shape
        if n == 0 or d == 0:
            raise ValueError(f"KMeans needs at least one record and one feature. Got shape {arr.shape}.")
        self.box(d)
        if self.k > n:
            raise ValueError(
                f"KMeans(k={self.k}) asks for more clusters than the {n} records can form; k must be at most the "
                f"number of records (public under replace-one neighbours). Pass k <= {n}."
            )
        return X

    def _check_release(self, privacy_params: Eps, data: Any) -> None:
        """Every noisy vector of the release must leave room for the safe sampler's float reserve at its ε.

        Which vectors there are depends only on ε, n, d and the settings (the plan), so a release that could not
        draw one is refused here, before the charge, instead of failing after it.
        """
        n, d = (n_rows(data), _n_columns(data)) if is_out_of_core(data) else np.shape(data)
        count, sums = 2.0 * self.sensitivity, 2.0 * d * self.sensitivity  # the L1 sensitivities of _cell_noise
        if self.method == "input_perturbation":
            rows = [(privacy_params.epsilon, n * d, sums)]  # one noisy copy of the n·d normalised values
        else:
            plan = self.plan(privacy_params, n, d)
            lloyd, k = (plan.lloyd, _n_seeds(self.k)) if isinstance(plan, CoresetPlan) else (plan, self.k)
            rows = [(lloyd.epsilon_count, k, count), (lloyd.epsilon_sums, k * d, sums)]
            if isinstance(plan, CoresetPlan):
                m = plan.n_candidates
                rows += [(plan.epsilon_seed_count, m, count), (plan.epsilon_seed_sums, m * d, sums)]
        for epsilon, dims, sensitivity in rows:
            try:
                _noise.laplace_epsilon_reserve(epsilon, dims)
            except ValueError as err:
                raise ValueError(
                    f"KMeans at ε={privacy_params.epsilon!r} on {n}×{d} data gives one of its noisy vectors "
                    f"({dims} values) only ε={epsilon!r}, too little for the safe Laplace sampler. Use a larger "
                    "epsilon, fewer iterations (n_iter=) or fewer features."
                ) from err
            try:
                _noise.grid_step(sensitivity / epsilon)
            except ValueError as err:
                raise ValueError(
                    f"KMeans at ε={privacy_params.epsilon!r} gives one of its noisy vectors ε={epsilon!r}, so large "
                    f"that its noise scale {sensitivity / epsilon!r} has no safe grid (the step would be subnormal). "
                    "Use a smaller epsilon (beyond a few hundred the noise is negligible anyway)."
                ) from err

    def _check_params(self, privacy_params: Eps) -> None:
        if self.sensitivity == 0:
            raise ValueError(
                "KMeans with sensitivity=0 would release without noise, yet still at random (the initial centres are "
                "random), so it is refused. Use the default sensitivity=1."
            )

    def _evaluate(self, output: Any) -> np.ndarray:
        if isinstance(output, _BlockwiseData):
            return output  # type: ignore[return-value]
        arr = np.asarray(output)
        if arr.ndim != 2 or arr.dtype.kind != "f" or not np.all(np.abs(arr) <= 1.0):
            raise TargetOutputError(
                "The target of KMeans must return the normalised data (a 2-D float array in [-1, 1]); it is built "
                "from bounds= and cannot be replaced."
            )
        return arr

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        if value1.shape != value2.shape:
            raise ValueError(
                f"KMeans compares datasets of equal size (replace-one neighbours); got shapes {value1.shape} and "
                f"{value2.shape}."
            )
        return float(np.abs(value1 - value2).sum() / (2.0 * value1.shape[1]))

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> KMeansModel:
        centres, n_iter = self._centres(value, privacy_params, rng, 1)
        method = self.resolved_method(privacy_params.epsilon, *value.shape)
        if method == "dplloyd":
            method = "dplloyd-improved" if self.improved else "dplloyd"
        return KMeansModel(centroids=centres[0], n_iter=n_iter, method=method)

    def _sample_many(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent releases as centroid arrays (``np.asarray(model)``), for the auditor.

        The same code path as a release (a release is the batch of one); the noise of all ``n`` is drawn at once.
        """
        return self._centres(value, privacy_params, rng, n)[0]

    def _centres(
        self, Z: np.ndarray, privacy_params: Eps, rng: np.random.Generator, n_releases: int
    ) -> tuple[np.ndarray, int]:
        """Centroids of ``n_releases`` independent releases, shape (n_releases, k, d), in the original units."""
        n, d = Z.shape
        plan = None if self.method == "input_perturbation" else self.plan(privacy_params, n, d)
        if plan is None:
            centres, n_iter = self._input_perturbation(Z, privacy_params.epsilon, rng, n_releases)
        elif isinstance(plan, CoresetPlan):
            centres, n_iter = self._coreset(Z, plan, rng, n_releases)
        else:
            centres, n_iter = self._dplloyd(Z, plan, rng, n_releases)
        lower, upper = self.box(d)
        mid, half = (lower + upper) / 2.0, (upper - lower) / 2.0
        return np.clip(mid + half * centres, lower, upper), n_iter

    # ---- the algorithms ------------------------------------------------------------------------------------------

    def _noisy_statistics(
        self, data: _Cells | _BlockwiseData, centres: np.ndarray, noise: _CellNoise
    ) -> tuple[np.ndarray, np.ndarray]:
        """Noisy counts (r, m) and sums (r, m, d) of the Voronoi cells of each release's m public ``centres``."""
        if isinstance(data, _BlockwiseData):  # one pass over the blocks for all releases' centres
            counts, sums = map_reduce(data.data, functools.partial(_block_statistics, data.normaliser, centres))
        elif len(centres) == 1:  # one release (the usual case): no stacking
            counts, sums = (part[None] for part in data.statistics(centres[0]))
        else:
            stats = [data.statistics(c) for c in centres]
            counts, sums = np.stack([c for c, _ in stats]), np.stack([s for _, s in stats])
        return noise.add(counts, sums)

    def _cell_noise(
        self,
        shape: tuple[int, int, int],
        epsilon_count: float,
        epsilon_sums: float,
        steps: int,
        rng: np.random.Generator,
    ) -> Iterator[_CellNoise]:
        """The noise of ``steps`` successive noisy cell statistics for centres of ``shape`` (r releases, m, d).

        Under replace-one a record leaves at most one cell and joins at most one other, whatever m is: the count
        histogram moves by at most 2 in L1 and the m×d sums by at most 2d, so Lap(2/ε_count) and Lap(2d/ε_sums),
        safe noise on each release's row (its rounding allowance covers every coordinate a record can move). The
        noise does not depend on the data, so it is drawn ahead, up to ``_NOISE_AHEAD`` values per call: a few
        sampler calls per release instead of two per iteration.
        """
        r, m, d = shape
        ahead = max(1, min(steps, _NOISE_AHEAD // (r * m * (d + 1))))
        for first in range(0, steps, ahead):
            block = min(ahead, steps - first)
            counts, count_grid = _noise.grid_laplace_noise((block, r, m), 2.0 * self.sensitivity, epsilon_count, m, rng)
            sums, sum_grid = _noise.grid_laplace_noise(
                (block, r, m * d), 2.0 * d * self.sensitivity, epsilon_sums, m * d, rng
            )
            for t in range(block):
                yield _CellNoise(counts[t], count_grid, sums[t].reshape(shape), sum_grid)

    def _dplloyd(
        self, Z: np.ndarray, plan: DPLloydPlan, rng: np.random.Generator, n_releases: int
    ) -> tuple[np.ndarray, int]:
        centres = self._initial_centres(Z.shape[1], rng, n_releases)
        return self._lloyd_steps(Z, centres, plan, rng)[0], plan.n_iter

    def _coreset(
        self, Z: np.ndarray, plan: CoresetPlan, rng: np.random.Generator, n_releases: int
    ) -> tuple[np.ndarray, int]:
        """Seed from a private coreset (noisy means and counts of m candidate cells), then run DPLloyd step(s)."""
        d = Z.shape[1]
        spread = min(1.0, CANDIDATE_SPREAD / math.sqrt(d))
        candidates = rng.uniform(-spread, spread, size=(n_releases, plan.n_candidates, d))
        # One workspace (and float32 copy) for the seeding pass and the Lloyd step(s).
        data = Z if isinstance(Z, _BlockwiseData) else _Cells.of(Z, plan.n_candidates)
        noise = next(self._cell_noise(candidates.shape, plan.epsilon_seed_count, plan.epsilon_seed_sums, 1, rng))
        counts, sums = self._noisy_statistics(data, candidates, noise)
        # Post-processing of the noisy cells: OVERSEED·k starting centres, so that a cell mean lying between two
        # clusters (one candidate nearest to both) does not keep them merged through the Lloyd step.
        n_seeds = _n_seeds(self.k)
        means = np.clip(sums / np.maximum(counts, 1.0)[..., None], -1.0, 1.0)
        survival = SURVIVAL * 2.0 * self.sensitivity / plan.epsilon_seed_count
        seeds = np.stack([_merge_cells(counts[i], means[i], n_seeds, survival, rng) for i in range(n_releases)])
        stepped, step_counts = self._lloyd_steps(data, seeds, plan.lloyd, rng)
        if n_seeds == self.k:
            return stepped, plan.n_iter
        # The step's n_seeds centres, weighted by their noisy counts, merged into k (post-processing).
        survival = SURVIVAL * 2.0 * self.sensitivity / plan.lloyd.epsilon_count
        centres = np.stack([_merge_cells(step_counts[i], stepped[i], self.k, survival, rng) for i in range(n_releases)])
        return centres, plan.n_iter

    def _lloyd_steps(
        self,
        Z: np.ndarray | _Cells | _BlockwiseData,
        centres: np.ndarray,
        plan: DPLloydPlan,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``plan.n_iter`` noisy Lloyd iterations from ``centres``: the new centres and the last noisy counts."""
        noisy_counts = np.zeros(centres.shape[:2])
        k = centres.shape[1]
        # The cells every iteration reads, made once.
        data = Z if isinstance(Z, _BlockwiseData) else Z.for_centres(k) if isinstance(Z, _Cells) else _Cells.of(Z, k)
        tau = SHRINKAGE * 2.0 * self.sensitivity / plan.epsilon_count
        for noise in self._cell_noise(centres.shape, plan.epsilon_count, plan.epsilon_sums, plan.n_iter, rng):
            noisy_counts, noisy_sums = self._noisy_statistics(data, centres, noise)
            # Post-processing of the noisy statistics (ufuncs on k·d values: a few µs per iteration).
            if self.shrinkage:
                positive = noisy_counts > 0
                ratio = _clip_unit(noisy_sums / np.where(positive, noisy_counts, 1.0)[..., None])
                squares = noisy_counts * noisy_counts
                weight = np.where(positive, squares / (squares + tau * tau), 0.0)
                centres = centres + weight[..., None] * (ratio - centres)
            else:
                kept = noisy_counts >= 1.0
                ratio = _clip_unit(noisy_sums / np.where(kept, noisy_counts, 1.0)[..., None])
                centres = np.where(kept[..., None], ratio, centres)
        return centres, noisy_counts

    def _input_perturbation(
        self, Z: np.ndarray, epsilon: float, rng: np.random.Generator, n_releases: int
    ) -> tuple[np.ndarray, int]:
        d = Z.shape[1]
        # Each record is one row of the stack: its L1 change is at most the box's diameter 2d.
        noisy = _laplace(2.0 * d * self.sensitivity)._perturb(
            np.broadcast_to(Z, (n_releases, *Z.shape)), Eps(epsilon), rng
        )
        # Clipping the noisy records back into the box (post-processing) roughly halves the NICV at moderate ε.
        np.clip(noisy, -1.0, 1.0, out=noisy)
        k = min(self.k, Z.shape[0])
        n_init = _N_INIT_NOISY if k > 1 else 1  # one cluster: every restart ends at the mean
        out, n_iter = np.empty((n_releases, self.k, d)), 0
        for i in range(n_releases):
            centres, n_iter = _lloyd(noisy[i], k, rng, n_init=n_init, max_iter=self.n_iter or _MAX_ITER_NOISY)
            if k < self.k:  # fewer records than clusters: pad with data-independent centres
                centres = np.concatenate([centres, rng.uniform(-1.0, 1.0, size=(self.k - k, d))])
            out[i] = np.clip(centres, -1.0, 1.0)
        return out, n_iter


def _n_seeds(k: int) -> int:
    """Centres of the coreset method's Lloyd step: OVERSEED·k, merged into k afterwards (one cluster needs one)."""
    return OVERSEED * k if k > 1 else 1


def _merge_cells(
    counts: np.ndarray, means: np.ndarray, k: int, survival: float, rng: np.random.Generator
) -> np.ndarray:
    """k centres from noisy cell counts and means: weighted k-means on the means (post-processing only).

    Cells whose noisy count is at most ``survival`` are likely empty and dropped, keeping at least the k largest.
    A kept cell weighs its noisy count, floored at ``min(1, survival)``: the floor keeps the weights positive (the
    k largest may be below the threshold) and shrinks with the noise, so an empty cell that passes the threshold by
    chance (about 2.5% of them at any ε) weighs about as much as its noise, not a whole record. With survival ≥ 1
    (every ε where the noise scale is at least 1/6 of a record) it is the old floor of one record.
    """
    kept = np.flatnonzero(counts > survival)
    if kept.size < k:
        kept = np.argsort(-counts, kind="stable")[:k]
    weights = np.maximum(counts[kept], min(1.0, survival))
    n_init = _N_INIT_CORESET if k > 1 else 1  # one cluster: every restart ends at the weighted mean
    return _lloyd(means[kept], k, rng, n_init=n_init, max_iter=_MAX_ITER_NOISY, weights=weights)[0]


def _sphere_packing(k: int, d: int, rng: np.random.Generator, n: int = 1) -> np.ndarray:
    """Su et al.'s initialisation in [-1, 1]^d for ``n`` independent releases, shape (n, k, d).

    Candidates are uniform in [-1 + a, 1 - a]^d and accepted at distance ≥ 2a from the centres accepted so far;
    after 100 rejections in a row all are discarded and a is halved (a starts at 1, half the side of the box).
    """
    return np.stack([_sphere_packing_one(k, d, rng) for _ in range(n)])


def _sphere_packing_one(k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    a = 1.0
    # A level where two centres cannot be 2a apart (2a > the shrunken box's diameter 2(1 − a)√d) fails with
    # certainty; skipping it changes only which random numbers are used, not the distribution of the result.
    while k > 1 and a * (1.0 + math.sqrt(d)) > math.sqrt(d):
        a /= 2.0
    block, used = rng.uniform(-1.0, 1.0, size=(256, d)), 0
    while True:
        centres = np.empty((k, d))
        found, misses = 0, 0
        while found < k and misses < 100:
            if used == block.shape[0]:
                block, used = rng.uniform(-1.0, 1.0, size=(256, d)), 0
            candidate = block[used] * (1.0 - a)
            used += 1
            if found == 0 or ((centres[:found] - candidate) ** 2).sum(axis=1).min() >= 4.0 * a * a:
                centres[found] = candidate
                found += 1
                misses = 0
            else:
                misses += 1
        if found == k:
            return centres
        a /= 2.0
