"""Differentially private PCA as one mechanism: two-sided Wishart noise (the default), PPCA (exponential mechanism),
Analyze Gauss and MOD-SuLQ.

All four methods start from the same non-private sufficient statistic, the Gram matrix C = Σᵢ x̃ᵢx̃ᵢᵀ of the rows
clipped to the public ``data_norm`` and scaled into the unit ball, and differ only in how C is randomised.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Literal

import attrs
import numpy as np
from scipy import linalg

from .._blockwise import is_out_of_core, map_reduce, n_rows
from .._datasets import as_array
from .._fixed_point import clipped_grid_gram, record_bits
from .._rng import RNGLike, as_generator
from .._validation import check_in_range, check_int, one_of
from ..exceptions import DiffprivWarning, TargetOutputError
from ..mechanisms.base import as_gamma_sensitivity, as_sensitivity
from ..mechanisms.composed import ComposedMech
from ..mechanisms.gaussian import analytic_gaussian_sigma
from ..noise import gaussian_grid_calibration, grid_gaussian, grid_step, round_to_grid
from ..privacy import Del, Eps
from ._bingham import (
    default_sweeps,
    gibbs_matrix_bingham,
    sample_matrix_bingham,
    sample_sequential_subspace,
    sequential_steps,
)
from ._sensitivity_floor import not_below
from ._supervised import check_rows_to_predict
from ._wishart import check_wishart_epsilon, wishart_calibration, wishart_difference

__all__ = ["PCA", "ClippedGram", "PCAModel", "SecondMoment", "clipped_gram", "mod_sulq_noise_scale"]

METHODS = ("wishart", "ppca", "analyze_gauss", "mod_sulq")
SAMPLERS = ("auto", "gibbs")

_SENSITIVITY = {"wishart": 2.0, "ppca": 1.0, "analyze_gauss": math.sqrt(2.0), "mod_sulq": math.sqrt(2.0)}
"""Replace-one sensitivities of the normalised target, derived in the Notes of :class:`PCA`."""

_PURE = ("wishart", "ppca")
"""The pure ε-DP methods (the others add Gaussian noise and need δ > 0)."""

_MAX_CONCENTRATION = 1e100
"""Cap on a·n, the largest possible scale of PPCA's Bingham parameter a·C (‖C‖ ≤ n). Lowering a only adds privacy,
and at this scale the draw equals the top eigenvectors to about 50 digits; the cap keeps every product of the
sampler far from overflow, so any finite ε releases in bounded time."""

# ---- the target: the clipped second-moment matrix -------------------------------------------------------------


@attrs.frozen(eq=False)
class SecondMoment:
    """The non-private target of :class:`PCA`: the Gram matrix of the clipped, scaled rows and their number.

    Attributes
    ----------
    gram : ndarray of shape (d, d)
        C = Σᵢ x̃ᵢx̃ᵢᵀ with x̃ = x / max(‖x‖₂, data_norm), so every ‖x̃‖₂ ≤ 1 and CSS's A is C/n.
    n : int
        Number of records (public under the replace-one relation).
    """

    gram: np.ndarray
    n: int


def _data_matrix(X: Any) -> np.ndarray:
    if isinstance(X, tuple):
        raise TypeError("PCA is unsupervised: pass the data matrix X alone (one record per row), not an (X, y) tuple.")
    data = as_array(X, owner="PCA")
    if data.dtype.kind not in "biuf":
        raise TypeError(f"PCA needs numeric data; got an array of dtype {data.dtype}. Encode the features as numbers.")
    if data.ndim != 2 or data.shape[0] == 0 or data.shape[1] == 0:
        raise ValueError(
            f"PCA needs a non-empty 2-D array X of shape (n_records, n_features). Got shape {data.shape}; reshape "
            "a single feature with X.reshape(-1, 1)."
        )
    return data  # any real dtype: the row pass converts block by block and refuses NaN and ±inf (_NONFINITE)


_NONFINITE = (
    "X contains NaN or infinite values. A private release cannot repair them silently; impute or drop them with a "
    "data-independent rule first."
)


def clipped_gram(X: Any, data_norm: float) -> np.ndarray:
    """Σᵢ x̃ᵢx̃ᵢᵀ with x̃ = x / max(‖x‖₂, data_norm): rows clipped to the public norm and scaled into the unit ball.

    Each x̃ is rounded onto multiples of 2⁻ᵇ (b from the public n, :func:`record_bits`; to nearest, or toward zero where
    an exact check finds the nearest point outside the ball), so its exact norm stays ≤ 1 and the Gram matrix is a sum
    of integers below 2⁵² — exact in float64 whatever the BLAS order, the blocking or the chunking (in-memory, dask and
    Chunks give the same bits). Rows are clipped, rounded and multiplied in one fused pass over blocks of 4096 (one
    symmetric rank-k update, BLAS ``syrk``, each; see :func:`~diffpriv_py._fixed_point.clipped_grid_gram`); the extra
    memory is O(4096·d) whatever n and the dtype of ``X`` (float32 or integer data are converted block by block). ``X``
    is not modified.
    """
    data = _data_matrix(X)
    return _clipped_gram(data, data_norm, data.shape[0])


def _clipped_gram(data: np.ndarray, data_norm: float, n_total: int) -> np.ndarray:
    # n_total is the number of records of the whole dataset (it sets the grid), also when data is one block of it.
    # One fused, exact pass (clipped_grid_gram's Notes prove it gives the integers of the two-step reference).
    bits = record_bits(n_total, degree=2)
    result: np.ndarray = np.ldexp(clipped_grid_gram(data, data_norm, bits, nonfinite=_NONFINITE), -2 * bits)
    return result


@attrs.frozen
class ClippedGram:
    """The target of :class:`PCA`: ``X ↦ SecondMoment(clipped_gram(X, data_norm), n)``."""

    data_norm: float

    def __call__(self, X: Any) -> SecondMoment:
        if is_out_of_core(X):  # dask or Chunks: n first (it sets the grid), then the same exact sum block by block
            n = n_rows(X)
            gram, _ = map_reduce(X, functools.partial(self._block, n_total=n))
            return SecondMoment(gram=gram, n=n)
        data = _data_matrix(X)
        return SecondMoment(gram=_clipped_gram(data, self.data_norm, data.shape[0]), n=data.shape[0])

    def _block(self, block: Any, n_total: int) -> tuple[np.ndarray, int]:
        data = _data_matrix(block)
        return _clipped_gram(data, self.data_norm, n_total), data.shape[0]


# ---- the released model -----------------------------------------------------------------------------------------


_MODEL_VARIANCE_FLOOR = 1e-6
"""Smallest variance of a released probabilistic PCA model, relative to its largest (keeps it proper under noise)."""


def _read_only(value: Any) -> np.ndarray:
    out = np.array(value, dtype=np.float64)
    out.setflags(write=False)
    return out


def _read_only_or_none(value: Any) -> np.ndarray | None:
    return None if value is None else _read_only(value)


@attrs.frozen(eq=False)
class PCAModel:
    """A privately released k-dimensional principal subspace (the ``.response`` of :class:`PCA`).

    Attributes
    ----------
    components : ndarray of shape (n_features, k)
        Orthonormal columns spanning the released subspace (read-only). For the noisy-matrix methods
        (``"wishart"``, ``"analyze_gauss"``, ``"mod_sulq"``) they are ordered by decreasing noisy eigenvalue. For
        ``"ppca"`` the columns are the sampler's own, in its order, not sorted by captured variance: for
        k ≤ d − k column i is θᵢ, the i-th of the sequential draws; for k > d − k an orthonormal basis of the
        complement of the drawn normals, computed from them in a fixed way; for k = d a Haar-random orthogonal
        matrix; with ``sampler="gibbs"`` the chain's final state. The columns and their order are part of the
        release, and the privacy proof covers them (it bounds the density of the ordered draws, of which the matrix
        is a deterministic function). The sign of each column is fixed so that its largest entry in absolute value
        is positive.
    explained_variance : ndarray of shape (k,) or None
        For the noisy-matrix methods: the k largest eigenvalues of the noisy second-moment matrix, in the units of the
        data (estimates of the eigenvalues of the uncentred XᵀX/(n − 1) after clipping: scikit-learn's n − 1
        divisor, so that on centred data the model matches scikit-learn's PCA as ε grows), free post-processing of
        the release (n is public). ``None`` for ``"ppca"``, which releases no eigenvalues.
    total_variance : float or None
        For the noisy-matrix methods: the trace of the same noisy matrix in the same units (the sum of *all* its
        eigenvalues), free post-processing; ``None`` for ``"ppca"``. It gives :attr:`explained_variance_ratio`
        and :attr:`noise_variance`.
    method : str
        The method that produced the release.
    exact : bool
        ``True`` when every random step was an exact draw, so the guarantee in ``Response.privacy_params`` is
        proven for what was sampled; ``False`` only for the opt-in PPCA Gibbs sampler (``sampler="gibbs"``), whose
        finite chain has no proven guarantee (see the Notes of :class:`PCA`).
    """

    components: np.ndarray = attrs.field(converter=_read_only)
    explained_variance: np.ndarray | None = attrs.field(default=None, converter=_read_only_or_none)
    method: str = "ppca"
    exact: bool = True
    total_variance: float | None = None

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.asarray(model)`` is the d×k ``components`` matrix."""
        return np.array(self.components, dtype=dtype)

    @property
    def n_components(self) -> int:
        """k, the dimension of the released subspace."""
        result: int = self.components.shape[1]
        return result

    @property
    def n_features(self) -> int:
        """d, the dimension of the data."""
        result: int = self.components.shape[0]
        return result

    # ---- the probabilistic PCA model (Tipping & Bishop 1999) of the release: post-processing only -------------

    @property
    def explained_variance_ratio(self) -> np.ndarray | None:
        """Share of the noisy total variance along each component (noisy-matrix methods; ``None`` for ``"ppca"``).

        ``explained_variance / total_variance``, the noisy trace floored at the sum of the kept (positive)
        eigenvalues so that the shares stay in [0, 1]. Post-processing of the release.
        """
        if self.explained_variance is None or self.total_variance is None:
            return None
        kept = np.maximum(self.explained_variance, 0.0)
        total = max(self.total_variance, float(kept.sum()))
        result: np.ndarray = kept / total if total > 0 else np.zeros_like(kept)
        return result

    @property
    def _variance_floor(self) -> float:
        # The noise can push the discarded eigenvalues' mean (or, for k = d, an eigenvalue) to 0 or below, which
        # would make the model improper; its variances are floored at a tiny fraction of the largest one instead.
        top = 0.0 if self.explained_variance is None else float(self.explained_variance.max(initial=0.0))
        return _MODEL_VARIANCE_FLOOR * top

    @property
    def noise_variance(self) -> float | None:
        """σ² of the probabilistic PCA model: the mean of the d − k discarded noisy eigenvalues.

        As scikit-learn's ``noise_variance_`` (0 when k = d), floored at 10⁻⁶ times the largest released
        variance so that the model stays proper when the noise makes that mean ≤ 0; ``None`` for ``"ppca"``.
        Post-processing.
        """
        if self.explained_variance is None:
            return None
        rest = self.n_features - self.n_components
        if rest == 0:
            return 0.0
        if self.total_variance is None:
            return None
        return max((self.total_variance - float(self.explained_variance.sum())) / rest, self._variance_floor)

    def _model_variances(self, method: str) -> tuple[np.ndarray, float]:
        variances, noise = self.explained_variance, self.noise_variance
        if variances is not None and noise is not None and not self._variance_floor > 0:
            raise ValueError(
                f"{method}: every released variance is <= 0 ({np.round(variances, 6).tolist()}): the noise swamped "
                "the data's spread, so there is no probabilistic PCA model. Release with a larger epsilon."
            )
        if variances is None or noise is None:
            raise ValueError(
                f"{method} needs the variances of the probabilistic PCA model, but a {self.method!r} release has no "
                "eigenvalues: PPCA samples a subspace only (releasing its variances would cost extra budget). Use "
                "method='wishart' (pure epsilon) or 'analyze_gauss', whose release includes the noisy eigenvalues and "
                "their total, or use transform and inverse_transform, which need the subspace only."
            )
        return variances, noise

    def get_covariance(self) -> np.ndarray:
        """The model covariance W·diag(λ − σ²)₊·Wᵀ + σ²·I (d×d) of Tipping & Bishop's PPCA, as scikit-learn.

        W are the released ``components``, λ the ``explained_variance`` and σ² the :attr:`noise_variance`; the
        mean is 0 (the components are those of the uncentred second moment). Post-processing of the release.
        Raises ValueError for a ``"ppca"`` release, which has no eigenvalues.
        """
        variances, noise = self._model_variances("get_covariance")
        spread = np.maximum(variances - noise, 0.0) if noise > 0 else np.maximum(variances, self._variance_floor)
        result: np.ndarray = (self.components * spread) @ self.components.T + noise * np.eye(self.n_features)
        return result

    def get_precision(self) -> np.ndarray:
        """The inverse of :meth:`get_covariance` (d×d), by the matrix inversion lemma when σ² > 0 (as scikit-learn).

        For k = d (σ² = 0) the variances are floored at 10⁻⁶ times the largest, so the model is always proper.
        """
        variances, noise = self._model_variances("get_precision")
        if noise > 0:
            # (σ²I + W D Wᵀ)⁻¹ = (I − W diag(D/(D + σ²)) Wᵀ)/σ² for orthonormal W.
            spread = np.maximum(variances - noise, 0.0)
            shrink = spread / (spread + noise)
            result: np.ndarray = (np.eye(self.n_features) - (self.components * shrink) @ self.components.T) / noise
            return result
        # k = d: W is square and orthogonal, so the covariance W·diag(λ)·Wᵀ inverts eigenvalue by eigenvalue.
        floored = np.maximum(variances, self._variance_floor)
        inverse: np.ndarray = (self.components / floored) @ self.components.T
        return inverse

    def score_samples(self, X: Any) -> np.ndarray:
        """Log-likelihood of each row of ``X`` under the model N(0, :meth:`get_covariance`), as scikit-learn.

        −½(xᵀPx + d·ln 2π − ln det P) with P = :meth:`get_precision`. Reads only ``X`` and the release: no privacy
        cost for the training data (scoring *other* private data is a computation on those data, not a release).
        """
        data = check_rows_to_predict(X, self.n_features, model="PCA model")
        precision = self.get_precision()
        sign, logdet = np.linalg.slogdet(precision)
        if sign <= 0:  # pragma: no cover - get_precision returns a positive definite matrix
            raise ValueError("The model precision is not positive definite.")
        quadratic = np.einsum("ij,ij->i", data @ precision, data)
        result: np.ndarray = -0.5 * (quadratic + self.n_features * math.log(2.0 * math.pi) - logdet)
        return result

    def score(self, X: Any) -> float:
        """The average log-likelihood of the rows of ``X`` (the mean of :meth:`score_samples`), as scikit-learn."""
        return float(np.mean(self.score_samples(X)))

    def transform(self, X: Any) -> np.ndarray:
        """Coordinates of the rows of ``X`` in the released subspace: ``X @ components`` (no centring)."""
        result: np.ndarray = check_rows_to_predict(X, self.n_features, model="PCA model") @ self.components
        return result

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """Map subspace coordinates back to the feature space: ``Z @ components.T``."""
        coords = np.asarray(Z, dtype=np.float64)
        if coords.ndim != 2 or coords.shape[1] != self.n_components:
            raise ValueError(f"Z must be a 2-D array with {self.n_components} columns. Got shape {coords.shape}.")
        result: np.ndarray = coords @ self.components.T
        return result


def _divisor(n: int) -> int:
    """scikit-learn's variance divisor n − 1 (1 for a single record); n is public, so rescaling is post-processing."""
    return max(n - 1, 1)


# ---- the mechanism ----------------------------------------------------------------------------------------------


def _k(value: Any) -> int:
    return check_int(value, "k", minimum=1, owner="PCA")


def _data_norm(value: Any) -> float:
    if value is None:
        raise ValueError(
            "PCA needs a public bound on the row norms: pass data_norm= (e.g. data_norm=1.0 for rows scaled into "
            "the unit ball). It must come from domain knowledge, never from the private data: rows with a larger "
            "norm are clipped to it."
        )
    return check_in_range(
        value,
        "data_norm",
        0.0,
        math.inf,
        low_closed=False,
        high_closed=False,
        owner="PCA",
        fix="Pass a public, data-independent bound on the rows' Euclidean norm.",
    )


def _n_sweeps(value: Any) -> int | None:
    return None if value is None else check_int(value, "n_sweeps", minimum=1, owner="PCA")


def _check_sampler(method: str, sampler: str) -> None:
    if sampler != "auto" and method != "ppca":
        raise ValueError(
            f"PCA(sampler={sampler!r}) chooses PPCA's sampler, but method={method!r} samples no Bingham "
            "distribution. Pass method='ppca' with it, or leave sampler='auto'."
        )


def _mod_sulq_t(d: int, delta: float) -> float:
    log_arg = (d * d + d) / (2.0 * math.sqrt(2.0 * math.pi) * delta)
    t = math.sqrt(2.0 * math.log(log_arg)) if log_arg > 1.0 else 0.0
    if t < 2.0:
        raise ValueError(
            f"MOD-SuLQ's calibration needs (d² + d)/(2√(2π)δ) ≥ e² (its union bound over the noise entries); got "
            f"d={d}, delta={delta}. Use a smaller delta or method='analyze_gauss'."
        )
    return t


def mod_sulq_noise_scale(n: int, d: int, epsilon: float, delta: float) -> float:
    """MOD-SuLQ's noise standard deviation β on A = C/n (Chaudhuri, Sarwate & Sinha 2012, Algorithm 1).

    β = (d + 1)/(nε) · √(2 ln((d² + d)/(2√(2π)δ))) + 1/(√ε·n).

    Notes
    -----
    The formula is t·S₁/ε + √(S₂/(2ε)) with t = √(2 ln((d² + d)/(2√(2π)δ))), S₁ = (d + 1)/n the replace-one bound
    on Σ_{i≤j}|ΔA_ij| and S₂ = 2/n² the bound on Σ_{i≤j}ΔA_ij²: the log-likelihood ratio of the noisy matrix is
    at most (max|N_ij|)·S₁/β² + S₂/(2β²) ≤ ε whenever max|N_ij| ≤ tβ, which fails with probability
    Σ P(|N_ij| > tβ) ≤ 2δ/t. Raises ValueError when t < 2, where that union bound would exceed δ.
    """
    t = _mod_sulq_t(d, delta)
    return (d + 1) / (n * epsilon) * t + 1.0 / (math.sqrt(epsilon) * n)


def _mod_sulq_grid(n: int, d: int, epsilon: float, delta: float) -> tuple[float, float]:
    """Grid step and β for MOD-SuLQ with the library's safe (grid) Gaussian noise on the d(d + 1)/2 entries.

    Rounding to the grid r moves each entry by at most r/2, so the bounds become S₁ + d(d + 1)r/2 and
    (√S₂ + √(d(d + 1)/2)·r)²; ε and δ keep the safe sampler's float-error reserve (see :mod:`diffpriv_py.noise`).
    The target C/n is computed in floating point from the exact C (rows in the unit ball, so |C_ij|/n ≤ 1): the
    division's rounding moves each entry by at most 2⁻⁵³, i.e. neighbours' computed entries by 2⁻⁵² more than the
    exact ones, which is added to r in both bounds. These changes are of relative order 2⁻³⁷, so β is the paper's β
    to about 11 significant digits.
    """
    dims = d * (d + 1) // 2
    r = grid_step(mod_sulq_noise_scale(n, d, epsilon, delta))
    eps_c = epsilon - dims * 2.0**-37
    delta_c = delta * (1.0 - dims * 2.0**-36)
    if not (eps_c > epsilon * (1.0 - 2.0**-10) and delta_c > 0 and epsilon < 500):
        raise ValueError(
            f"Privacy parameters (epsilon={epsilon!r}, delta={delta!r}) leave no room for the safe sampler's float "
            f"error reserve on {dims} values; use a larger epsilon (below 500)."
        )
    slack = r + 2.0**-52  # grid rounding, and the rounding of C/n (see above)
    s1 = (d + 1) / n + dims * slack
    s2 = (math.sqrt(2.0) / n + math.sqrt(dims) * slack) ** 2
    return r, _mod_sulq_t(d, delta_c) * s1 / eps_c + math.sqrt(s2 / (2.0 * eps_c))


def _upper(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(d)


def _symmetric(upper: np.ndarray, d: int) -> np.ndarray:
    """Symmetric matrices (…, d, d) from their upper triangles (…, d(d + 1)/2), diagonal included."""
    rows, cols = _upper(d)
    out = np.zeros((*upper.shape[:-1], d, d))
    out[..., rows, cols] = upper
    out[..., cols, rows] = upper
    return out


def _canonical_signs(v: np.ndarray) -> np.ndarray:
    """Flip each column so its largest entry in absolute value is positive (works on stacks (…, d, k))."""
    pivot = np.abs(v).argmax(axis=-2)
    signs = np.sign(np.take_along_axis(v, pivot[..., None, :], axis=-2))
    signs[signs == 0] = 1.0
    result: np.ndarray = v * signs
    return result


def _top_eigenpairs(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    if matrix.ndim == 2:
        values, vectors = linalg.eigh(matrix, check_finite=False)
    else:
        values, vectors = np.linalg.eigh(matrix)
    return values[..., ::-1][..., :k], vectors[..., ::-1][..., :k]


@attrs.frozen(kw_only=True)
class PCA(ComposedMech):
    """Release a k-dimensional principal subspace of the rows of X with differential privacy.

    ``PCA(k, method=..., data_norm=...).release_response(privacy_params, X, rng=...)`` returns a
    :class:`~diffpriv_py.Response` whose ``.response`` is a :class:`PCAModel` (d×k orthonormal ``components``
    with ``transform``).

    Parameters
    ----------
    k : int
        Dimension of the released subspace, 1 ≤ k ≤ d (the number of features). The only positional parameter.
    method : {"wishart", "ppca", "analyze_gauss", "mod_sulq"}, default "wishart"
        ``"wishart"``: the top-k eigenvectors of C plus two-sided Wishart noise (the difference of two independent
        Wishart_d(d + 1, σ²I) matrices, σ² = Δ/(2ε)), pure ε-DP with a short proof (Notes), exact draws, no
        rejection loop; it also releases the noisy eigenvalues. ``"ppca"``: the exponential mechanism of Chaudhuri,
        Sarwate & Sinha (2012), pure ε-DP. Both pure methods need :class:`~diffpriv_py.Eps`.
        ``"analyze_gauss"``: Dwork, Talwar, Thakurta & Zhang (2014) with the analytic Gaussian calibration,
        (ε, δ)-DP. ``"mod_sulq"``: MOD-SuLQ of Chaudhuri et al. (2012) with the paper's noise level β, (ε, δ)-DP.
        The last two need :class:`~diffpriv_py.Del` with δ > 0.
    data_norm : float
        Public bound R on the Euclidean norm of a row; required. Rows with ‖x‖ > R are clipped to norm R, and all
        rows are divided by R. It must come from domain knowledge (e.g. pixel ranges), never from the data.
    sampler : {"auto", "gibbs"}, default "auto"
        PPCA only (``"gibbs"`` with another method is refused). ``"auto"``: m = min(k, d − k) successive *exact*
        vector-Bingham draws (Kent–Ganeiber–Mardia rejection sampler), each on the second moment deflated by the
        earlier draws, with the proven ε-DP guarantee of the Notes; for k = 1, k = d − 1 and k = d this is
        exactly CSS's matrix Bingham. ``"gibbs"``: opt-in and **unproven**: the state of Hoff's Gibbs chain for
        CSS's matrix Bingham at the full ε (better utility for 2 ≤ k ≤ d − 2, but no proven guarantee for a
        finite chain); every release warns (:class:`~diffpriv_py.exceptions.DiffprivWarning`) and reports
        ``PCAModel.exact = False``.
    n_sweeps : int, optional
        Sweeps of the opt-in Gibbs sampler from a uniformly random start (each sweep redraws all k columns); the
        default ``max(50, 10·k)`` is fixed in advance and independent of the data. Ignored by ``"auto"``.
    sensitivity : float, optional
        Derived exactly (see Notes): 2 for ``"wishart"`` (nuclear norm of a neighbour's change of C), 1 for
        ``"ppca"`` (the score), √2 for the Gaussian methods (upper triangle of the normalised Gram matrix). It can
        only be raised (more noise), never lowered; leave it unset.

    Attributes
    ----------
    target : ClippedGram
        ``X ↦ SecondMoment(C, n)`` with C = Σ x̃x̃ᵀ of the clipped rows scaled by 1/R (unit ball).

    Notes
    -----
    **Neighbouring relation.** Replace-one (datasets of equal, public size n differing in one row), as everywhere
    in the library. After clipping, a row contributes x̃x̃ᵀ with ‖x̃‖ ≤ 1.

    **Two-sided Wishart** (the default). The release is the top-k eigenvectors (and eigenvalues) of Ĉ = C + W₁ − W₂,
    W₁, W₂ independent Wishart_d(d + 1, σ²I) (Wᵢ = GᵢGᵢᵀ, Gᵢ a d × (d + 1) matrix of N(0, σ²) entries), whose
    density on the positive semi-definite cone is ∝ exp(−tr W/(2σ²)). *Claim: with σ² = Δ/(2ε), Δ = 2, the release
    is ε-DP under replace-one.* *Proof:* the density of E = W₁ − W₂ at e integrates p(P)p(Q) over the pairs with P −
    Q = e (parametrised by Q, with Lebesgue measure). A neighbour changes C by Δ_C = xxᵀ − yyᵀ = Δ₊ − Δ₋ (positive
    and negative parts, tr Δ₊ + tr Δ₋ = ‖Δ_C‖_* ≤ ‖x‖² + ‖y‖² ≤ 2). The translation (P, Q) ↦ (P + Δ₋, Q + Δ₊) keeps
    both positive semi-definite, maps them one-to-one onto the pairs of difference e − Δ_C (a shift of Q), and
    lowers p(P)p(Q) by exactly exp(−‖Δ_C‖_*/(2σ²)) ≥ e^−ε; with the roles swapped this bounds the density ratio both
    ways. The eigenvectors are post-processing. ∎ The noise has no data-dependent support (the one-sided C + W,
    proposed as the "Wishart mechanism", is not DP for that reason: its support {C + W : W ⪰ 0} moves with C), and
    its spectral norm is about 3.2·d·σ² against a signal that grows with n, so on the benchmark tasks it captures
    more variance than PPCA at the same ε except where no method does much better than a random subspace
    (``docs/pca.md`` gives the numbers). The data and the noise are rounded to the grid r = 2⁻⁴⁰σ² (the data's
    rounding is paid for: σ² uses Δ + d^1.5·r); the proof assumes exact Gaussian draws, as the Bingham sampler does.

    **PPCA** (CSS'12 Algorithm 2) is the exponential mechanism whose score is the captured energy
    tr(VᵀCV) = Σᵢ‖Vᵀx̃ᵢ‖² of a d×k orthonormal V. It changes by at most 1 when one row is replaced (each term lies
    in [0, ‖x̃‖²] ⊂ [0, 1]), so Δ = 1; ``sensitivity_norm`` measures sup_V |tr(Vᵀ(C − C′)V)|, the largest |sum of k
    eigenvalues of one sign| of C − C′. CSS sample the matrix Bingham ∝ exp((ε/2)·tr(VᵀCV)), which is ε-DP for an
    exact draw (CSS'12 Theorem 2), but no practical exact sampler is known for 2 ≤ k ≤ d − 2.

    *The default release (``sampler="auto"``) is proven for what it samples.* With m = min(k, d − k) and
    a = ε/((m + 1)Δ), it draws θ₁ … θ_m one after the other, θᵢ from the vector Bingham ∝ exp(a·θᵀCθ) on the unit
    sphere of the orthogonal complement of θ₁ … θᵢ₋₁ (the "iterative eigenvector sampling" of Amin, Dick, Kulesza,
    Muñoz Medina & Vassilvitskii 2019), each draw *exact* (KGM rejection sampler), and releases the d×k matrix [θ₁ …
    θ_k], columns in the order drawn; for k > d − k it draws m = d − k normal directions from exp(−a·θᵀCθ) and releases
    an orthonormal basis of their complement computed from the ordered draws. *Claim: ε-DP under replace-one.* Proof:
    relative to the data-independent product of uniform measures on the successive spheres, the sequence has density Πᵢ
    exp(±a·θᵢᵀCθᵢ)/Zᵢ(C; θ<ᵢ). For neighbours C, C′ the exponents differ by a·Σᵢ±((θᵢᵀx)² − (θᵢᵀy)²) = ±a·(‖Θᵀx‖² −
    ‖Θᵀy‖²) ∈ [−a, a], because Θ = [θ₁ … θ_m] has orthonormal columns and ‖x‖, ‖y‖ ≤ 1; each normaliser Zᵢ changes by a
    factor in [e^−a, e^a], because its exponent changes by at most a at every point of the sphere. The density ratio is
    at most e^((m+1)a) = e^ε for the *ordered* sequence, and the released matrix (its column order included, the signs
    then canonicalised) is a deterministic function of it: post-processing. The release is not only the subspace
    span(θ₁ … θ_k). (Basic composition of m ε/m-DP steps would give a = ε/(2m): sharing the numerator bound across the
    steps gives each step 2m/(m + 1) times more concentration.) For m = 1 (k = 1, k = d − 1) this is CSS's exact matrix
    Bingham at ε; for k = d the span is ℝ^d and nothing depends on the data. Compared with CSS's matrix Bingham at the
    same ε each step is less concentrated, so for 2 ≤ k ≤ d − 2 the utility is lower (``docs/pca.md`` gives numbers);
    that is the price of a proven guarantee.

    *The opt-in Gibbs path (``sampler="gibbs"``)* releases the state of Hoff's (2009) Gibbs chain for CSS's matrix
    Bingham at the full ε after ``n_sweeps`` sweeps from a uniformly random start, every column conditional drawn
    exactly. If after T sweeps the law of the state is within total variation τ_T of the matrix Bingham, the
    release is (ε, (1 + e^ε)·τ_T)-DP, and no usable bound on τ_T is known. ``Response.privacy_params`` and the
    accountant record the ε of the exact mechanism, which is therefore *not proven*: each release warns and
    reports ``PCAModel.exact = False``. :meth:`gibbs_trace` diagnoses the burn-in on public or synthetic data.

    Both paths: the parameter's scale a·n is capped at 10¹⁰⁰ (only more privacy; at that scale the draw is the
    top eigenvectors to about 50 digits), every rejection loop is bounded, and the running time depends on the
    data through the rejection counts (a timing side channel, as for any rejection sampler).

    **Analyze Gauss** (DTTZ'14) releases Ĉ = C + E, E symmetric with i.i.d. N(0, σ²) upper triangle (diagonal
    included), and the top-k eigenvectors of Ĉ (post-processing). DTTZ analyse add/remove neighbours, where the
    upper-triangle ℓ₂ sensitivity is ‖x̃x̃ᵀ‖_F ≤ 1. Under replace-one it is exactly √2:
    ‖ut(xxᵀ − yyᵀ)‖₂² ≤ ‖xxᵀ − yyᵀ‖_F² = ‖x‖⁴ + ‖y‖⁴ − 2(xᵀy)² ≤ 2, attained by orthogonal unit basis vectors
    x = e₁, y = e₂ (a purely diagonal difference). So σ is the analytic Gaussian calibration (Balle & Wang 2018)
    for Δ₂ = √2, exact for every ε > 0; the generic conversion (Δ = 2, or 2ε) would add 41 % more noise. The
    noise is the library's safe Gaussian (values on a 2⁻⁴⁰σ grid, discrete Gaussian noise, calibrated so the
    stated (ε, δ) holds in full; see :class:`~diffpriv_py.Gaussian`).

    **MOD-SuLQ** (CSS'12 Algorithm 1, replace-one as in the paper) releases the top-k eigenvectors of
    C/n + N with N symmetric, i.i.d. N(0, β²) upper triangle and the paper's
    β = (d + 1)/(nε)·√(2 ln((d² + d)/(2√(2π)δ))) + 1/(√ε·n) (:func:`mod_sulq_noise_scale`), (ε, δ)-DP by CSS'12
    Theorem 1, with the same safe grid noise (β grows by a relative 2⁻³⁷ to pay for the rounding). Its noise grows
    like d/(nε) where Analyze Gauss's grows like 1/(nε); it is provided as the paper's baseline.

    The matrix is uncentred (CSS's second-moment matrix): centre the data with a public or separately privatised
    mean first if centred components are wanted.

    References
    ----------
    Chaudhuri, K., Sarwate, A. D. & Sinha, K. (2012). Near-optimal differentially private principal components.
    NeurIPS. Dwork, C., Talwar, K., Thakurta, A. & Zhang, L. (2014). Analyze Gauss: optimal bounds for
    privacy-preserving principal component analysis. STOC. Hoff, P. D. (2009). Simulation of the matrix
    Bingham–von Mises–Fisher distribution. JCGS 18(2). Kent, J. T., Ganeiber, A. M. & Mardia, K. V. (2018).
    A new unified approach for the simulation of a wide class of directional distributions. JCGS 27(2).
    Amin, K., Dick, T., Kulesza, A., Muñoz Medina, A. & Vassilvitskii, S. (2019). Differentially private
    covariance estimation. NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> import diffpriv_py as dp
    >>> from diffpriv_py.estimators import PCA
    >>> X = np.random.default_rng(0).normal(size=(500, 4)) * [3.0, 1.0, 0.3, 0.1]
    >>> release = PCA(2, data_norm=5.0).release_response(dp.Eps(1.0), X, rng=1)  # two-sided Wishart noise
    >>> release.response.components.shape, release.response.explained_variance.shape
    ((4, 2), (2,))
    >>> PCA(1, method="ppca", data_norm=5.0).release_response(dp.Eps(1.0), X, rng=1).response.components.shape
    (4, 1)
    """

    k: int = attrs.field(kw_only=False, converter=_k)
    method: Literal["wishart", "ppca", "analyze_gauss", "mod_sulq"] = attrs.field(
        default="wishart", validator=one_of(*METHODS)
    )
    data_norm: float = attrs.field(default=None, converter=_data_norm)
    sampler: Literal["auto", "gibbs"] = attrs.field(
        default="auto", validator=[one_of(*SAMPLERS), lambda pca, _, value: _check_sampler(pca.method, value)]
    )
    n_sweeps: int | None = attrs.field(default=None, converter=_n_sweeps)
    # A callable object in place of the base's target function (pyright reads the base's Callable field as a method).
    target: ClippedGram = attrs.field(  # pyright: ignore[reportIncompatibleMethodOverride]
        init=False, repr=False, default=attrs.Factory(lambda self: ClippedGram(self.data_norm), takes_self=True)
    )
    sensitivity: float = attrs.field(
        # A method that is not a string (e.g. a list) is unhashable: inf here, then the method's validator refuses it.
        default=attrs.Factory(
            lambda self: _SENSITIVITY.get(self.method, math.inf) if isinstance(self.method, str) else math.inf,
            takes_self=True,
        ),
        converter=as_sensitivity,
        validator=not_below(
            lambda pca: _SENSITIVITY.get(pca.method, 0.0),
            "rows clipped to data_norm; to change the method build a new PCA: attrs.evolve keeps the old sensitivity",
        ),
    )
    gamma_sensitivity: float | None = attrs.field(default=None, converter=as_gamma_sensitivity, repr=False)

    @property
    def privacy_params_type(self) -> type[Eps]:  # type: ignore[override]
        """:class:`~diffpriv_py.Eps` for the pure methods, :class:`~diffpriv_py.Del` for the Gaussian methods."""
        return Eps if self.method in _PURE else Del

    @property
    def gibbs_sweeps(self) -> int:
        """The number of Gibbs sweeps a PPCA release runs when it needs the chain (``n_sweeps`` or the default)."""
        return default_sweeps(self.k) if self.n_sweeps is None else self.n_sweeps

    # ---- hooks ---------------------------------------------------------------------------------------------

    def _check_params(self, privacy_params: Eps) -> None:
        if self.method != "ppca" and not math.isfinite(self.data_norm * self.data_norm):
            raise ValueError(
                f"PCA(method={self.method!r}) reports its noisy eigenvalues in the data's units, which scale with "
                f"data_norm² = {self.data_norm!r}², beyond float64. Rescale the data (e.g. other units) so that "
                "data_norm is below about 1e154, or use method='ppca', which releases the subspace only."
            )
        if self.method == "wishart":
            check_wishart_epsilon(self.sensitivity, privacy_params.epsilon)
        elif self.method not in _PURE and not privacy_params.delta > 0:
            raise ValueError(
                f"PCA(method={self.method!r}) adds Gaussian noise and needs delta > 0; got {privacy_params!r}. Pass "
                "e.g. Del(epsilon=1.0, delta=1e-6), or use method='wishart' for pure epsilon-DP."
            )

    def _check_dataset(self, X: Any) -> Any:
        """Public checks before the charge: an unsupervised, numeric, non-empty 2-D matrix with at least k columns.

        Only the shape and dtype are read (public under replace-one); the values (NaN, clipping) are handled by the
        target after the charge. Out-of-core data (dask, Chunks) are checked here when their shape is known.
        """
        if is_out_of_core(X):
            d = getattr(X, "shape", (None, None))[-1]
            if isinstance(d, int):
                self._check_k(d)
            return X
        if isinstance(X, tuple):
            raise TypeError(
                "PCA is unsupervised: pass the data matrix X alone (one record per row), not an (X, y) tuple."
            )
        data = as_array(X, owner="PCA")
        if data.dtype.kind not in "biuf":
            raise TypeError(
                f"PCA needs numeric data; got an array of dtype {data.dtype}. Encode the features as numbers."
            )
        if data.ndim != 2 or data.shape[0] == 0 or data.shape[1] == 0:
            raise ValueError(
                f"PCA needs a non-empty 2-D array X of shape (n_records, n_features). Got shape {data.shape}; reshape "
                "a single feature with X.reshape(-1, 1)."
            )
        self._check_k(data.shape[1])
        return data

    def _check_k(self, d: int) -> None:
        if self.k > d:
            raise ValueError(
                f"PCA(k={self.k}) cannot release a {self.k}-dimensional subspace of {d}-dimensional data. "
                f"Choose k <= {d}."
            )

    def _evaluate(self, output: Any) -> SecondMoment:
        if not isinstance(output, SecondMoment):  # pragma: no cover - the target is fixed by the class
            raise TargetOutputError(f"The target of PCA must return a SecondMoment; got {type(output).__name__}.")
        self._check_k(output.gram.shape[0])  # out-of-core data of unknown width reach this point unchecked
        return output

    def _norm(self, value1: SecondMoment, value2: SecondMoment) -> float:
        diff = value1.gram - value2.gram
        if self.method in _PURE:
            eig = np.linalg.eigvalsh(diff)
            if self.method == "wishart":
                return float(np.abs(eig).sum())
            return float(max(eig[-self.k :].sum(), -eig[: self.k].sum(), 0.0))
        return float(math.sqrt(0.5 * (np.square(diff).sum() + np.square(np.diag(diff)).sum())))

    def _release(self, value: SecondMoment, privacy_params: Eps, rng: np.random.Generator) -> PCAModel:
        if self.method == "ppca":
            param = self._bingham_parameter(value, privacy_params)
            d = value.gram.shape[0]
            if self.sampler == "auto" or self.k == d:  # k = d: exact, the span is all of ℝ^d
                if sequential_steps(self.k, d) == 1:  # k = 1, d − 1: one vector draw, on the cheaper tridiagonal path
                    v = sample_matrix_bingham(param, self.k, rng)[0]
                else:
                    v = sample_sequential_subspace(param, self.k, rng)[0]
                return PCAModel(components=_canonical_signs(v), method="ppca", exact=True)
            warnings.warn(
                f"PCA(sampler='gibbs') released the state of a finite Gibbs chain ({self.gibbs_sweeps} sweeps): the "
                f"{privacy_params!r} recorded in the Response and the accountant is that of an exact matrix-Bingham "
                "draw and is NOT proven for this release. Use sampler='auto' for a proven guarantee.",
                DiffprivWarning,
                stacklevel=3,
            )
            v = gibbs_matrix_bingham(param, self.k, self.gibbs_sweeps, rng)[0][0]
            return PCAModel(components=_canonical_signs(v), method="ppca", exact=False)
        noisy, scale = self._noisy_second_moment(value, privacy_params, rng, 1)
        values, vectors = _top_eigenpairs(noisy[0], self.k)
        return PCAModel(
            components=_canonical_signs(vectors),
            explained_variance=values * scale,
            method=self.method,
            exact=True,
            total_variance=float(np.trace(noisy[0])) * scale,
        )

    def _sample_many(self, value: SecondMoment, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent releases for the auditor: the upper triangle of the projection VVᵀ (basis-free), then,
        for the noisy-matrix methods, the released eigenvalues and trace, then the released ``components`` with
        their signs fixed as in a release, column by column (everything :class:`PCAModel` carries, in order).

        Vectorised: batched sequential draws or batched chains for PPCA, batched eigendecompositions for the
        noisy-matrix methods. The same law as :meth:`release_response`; not a release path (the Gibbs path does not
        warn here).
        """
        d = value.gram.shape[0]
        rows, cols = _upper(d)
        if self.method != "ppca":
            noisy, _ = self._noisy_second_moment(value, privacy_params, rng, n)
            values, v = _top_eigenpairs(noisy, self.k)
            spectrum = np.concatenate([values, np.trace(noisy, axis1=1, axis2=2)[:, None]], axis=1)
            projection = np.einsum("nik,nik->ni", v[:, rows], v[:, cols])
            return np.concatenate([projection, spectrum, _canonical_signs(v).swapaxes(1, 2).reshape(n, -1)], axis=1)
        param = self._bingham_parameter(value, privacy_params)
        if self.sampler == "auto" or self.k == d:
            v = sample_sequential_subspace(param, self.k, rng, size=n)
        else:
            v = gibbs_matrix_bingham(param, self.k, self.gibbs_sweeps, rng, n_chains=n)[0]
        projection = np.einsum("nik,nik->ni", v[:, rows], v[:, cols])
        return np.concatenate([projection, _canonical_signs(v).swapaxes(1, 2).reshape(n, -1)], axis=1)

    # ---- the math ------------------------------------------------------------------------------------------

    def _bingham_parameter(self, value: SecondMoment, privacy_params: Eps) -> np.ndarray:
        """The parameter a·C of the Bingham draws of a PPCA release with this mechanism's sampler."""
        return self._concentration(value, privacy_params) * value.gram

    def _concentration(self, value: SecondMoment, privacy_params: Eps, gibbs: bool | None = None) -> float:
        # Sequential draws: a = ε/((m + 1)Δ) (proof in the class Notes). Gibbs: CSS's matrix Bingham a = ε/(2Δ).
        # Either way a·n, the largest scale of a·C, is capped: a smaller a only adds privacy.
        gibbs = self.sampler == "gibbs" if gibbs is None else gibbs
        steps = 1 if gibbs else sequential_steps(self.k, value.gram.shape[0])
        a = privacy_params.epsilon / ((steps + 1) * self.sensitivity)
        return min(a, _MAX_CONCENTRATION / max(value.n, 1))

    def _noisy_second_moment(
        self, value: SecondMoment, privacy_params: Eps, rng: np.random.Generator, n: int
    ) -> tuple[np.ndarray, float]:
        """``n`` noisy copies (n, d, d) of C (Wishart, Analyze Gauss) or C/n (MOD-SuLQ), and the factor to data
        units."""
        d, eps, delta = value.gram.shape[0], privacy_params.epsilon, privacy_params.delta
        dims = d * (d + 1) // 2
        rows, cols = _upper(d)
        if self.method == "wishart":
            r, sigma2 = wishart_calibration(self.sensitivity, eps, d)
            noisy = round_to_grid(wishart_difference(d, n, sigma2, rng)[:, rows, cols], r)
            noisy += round_to_grid(value.gram[rows, cols], r)
            return _symmetric(noisy, d), self.data_norm * self.data_norm / _divisor(value.n)
        if self.method == "analyze_gauss":
            r, sigma = gaussian_grid_calibration(
                lambda e, dl, s: analytic_gaussian_sigma(e, dl, s), self.sensitivity, eps, delta, dims
            )
            upper = value.gram[rows, cols]
            scale = self.data_norm * self.data_norm / _divisor(value.n)
        else:
            r, sigma = _mod_sulq_grid(value.n, d, eps, delta)
            # β is the paper's for rows in the unit ball; a sensitivity raised above √2 scales it up in proportion.
            sigma *= self.sensitivity / _SENSITIVITY["mod_sulq"]
            upper = value.gram[rows, cols] / value.n
            scale = self.data_norm * self.data_norm * value.n / _divisor(value.n)
        noisy = grid_gaussian(np.broadcast_to(upper, (n, dims)), r, sigma, rng)
        return _symmetric(noisy, d), scale

    # ---- diagnostics ---------------------------------------------------------------------------------------

    def gibbs_trace(
        self,
        privacy_params: Eps,
        X: Any,
        *,
        n_chains: int = 4,
        n_sweeps: int | None = None,
        start: str = "random",
        rng: RNGLike = None,
    ) -> np.ndarray:
        """Trace of q_F = tr(VᵀCV)/n along PPCA Gibbs chains, to check the burn-in. **Not private.**

        Parameters
        ----------
        privacy_params : Eps
            The ε of the release being diagnosed (it sets the concentration (ε/2)·C).
        X : array-like of shape (n, d)
            Data to diagnose on. The trace is a deterministic function of X plus sampler noise and is *not*
            differentially private: run it on public or synthetic data that resembles the private data (same n, d,
            ``data_norm`` and roughly the same spectrum), and never publish it for private data.
        n_chains : int, default 4
            Independent chains (batched).
        n_sweeps : int, optional
            Sweeps to trace; defaults to the release's :attr:`gibbs_sweeps`.
        start : {"random", "top"}, default "random"
            ``"top"`` starts every chain at the non-private top-k eigenvectors of C. Chains from both starts
            settle on the same level after the burn-in if it is adequate.
        rng : None, int or Generator

        Returns
        -------
        ndarray of shape (n_chains, n_sweeps + 1)
            q_F after each sweep (column 0: the start), in the units of the clipped, scaled data (≤ 1).
        """
        if self.method != "ppca":
            raise ValueError(f"gibbs_trace diagnoses the PPCA sampler; this PCA uses method={self.method!r}.")
        params = self.check_privacy_params(privacy_params)
        value = self._evaluate(self.target(self.check_dataset(X)))
        d = value.gram.shape[0]
        if not self.k < d:
            raise ValueError(f"The Gibbs sampler needs k < d; got k={self.k}, d={d}.")
        if start not in ("random", "top"):
            raise ValueError(f"start must be 'random' or 'top'; got {start!r}.")
        chains = check_int(n_chains, "n_chains", minimum=1, owner="gibbs_trace")
        sweeps = self.gibbs_sweeps if n_sweeps is None else check_int(n_sweeps, "n_sweeps", minimum=1)
        concentration = self._concentration(value, params, gibbs=True)
        begin = _top_eigenpairs(value.gram, self.k)[1] if start == "top" else None
        _, energy = gibbs_matrix_bingham(
            concentration * value.gram, self.k, sweeps, as_generator(rng), n_chains=chains, start=begin, trace=True
        )
        assert energy is not None  # trace=True always returns it
        return energy / (concentration * value.n)

    def _check_samplable(self) -> None:
        """Not needed: the sensitivity of PCA is derived exactly from ``data_norm`` (see Notes); raises TypeError."""
        raise TypeError(
            "PCA's sensitivity is derived exactly from the public data_norm (rows are clipped to it), so there is "
            "nothing to sample. Pass data_norm= instead."
        )
