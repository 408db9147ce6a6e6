"""Linear regression under differential privacy: sufficient-statistics perturbation (AdaSSP) and the functional
mechanism, both with a ridge term.

Both perturb the sufficient statistics XᵀX and Xᵀy of the data normalised by the public ``data_norm`` (row L2
norm) and ``label_bound``, then solve a ridge system: one pass of BLAS ``syrk`` over the data, O(d³) after it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal, SupportsFloat

import attrs
import numpy as np

from .._blockwise import first_block, is_out_of_core, map_reduce, n_rows
from .._datasets import as_array
from .._fixed_point import UNIT_ROUNDOFF, clip_rows_to_norm, clipped_grid_gram, grid_rows, record_bits
from .._validation import check_in_range
from ..exceptions import TargetOutputError
from ..mechanisms.base import as_gamma_sensitivity, as_sensitivity
from ..mechanisms.composed import ComposedMech
from ..mechanisms.gaussian import Gaussian
from ..mechanisms.laplace import Laplace
from ..privacy import Del, Eps
from ._sensitivity_floor import not_below
from ._supervised import check_rows_to_predict

__all__ = ["LinearModel", "LinearRegression"]

RHO = 0.05
"""Failure probability of AdaSSP's high-probability bounds (Wang 2018), used for the ridge only."""

ADASSP_WEIGHTS = {"lambda": 0.1, "gram": 0.4, "cross": 0.4, "feature_sum": 0.05, "label_sum": 0.05}
"""Shares of the joint Gaussian budget (squared-sensitivity units) of λ_min, XᵀX, Xᵀy, Σx and Σy.

Wang (2018) splits in thirds over λ_min, XᵀX and Xᵀy; λ_min only tunes the ridge and the two sums (for the intercept)
are sums of n values, so they get small shares. Parts that are not released (λ_min with a fixed ridge, the sums
without an intercept) are dropped and the others rescaled to sum to 1."""

# ---- validation --------------------------------------------------------------------------------------------------


def _positive(name: str, fix: str) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        if value is None:
            raise ValueError(f"LinearRegression needs a public, data-independent '{name}'. {fix}")
        return check_in_range(
            value, name, 0.0, math.inf, low_closed=False, high_closed=False, owner="LinearRegression", fix=fix
        )

    return convert


def _data_norm(value: SupportsFloat | None) -> float:
    # A named converter: mypy's attrs plugin types a constructor argument only from a named function.
    return _positive("data_norm", _DATA_NORM_FIX)(value)


_DATA_NORM_FIX = (
    "Pass data_norm= an upper bound on the L2 norm of a feature row known without looking at the private data "
    "(e.g. from the features' documented ranges); rows with a larger norm are scaled down to it."
)
_LABEL_FIX = (
    "Pass label_bound=B for labels in [-B, B], or label_bound=(low, high), or one (low, high) pair per output for a "
    "2-D y, known without looking at the private data; labels outside are clipped."
)

LabelBound = tuple[float, float] | tuple[tuple[float, float], ...]
"""``(low, high)`` for every output, or one ``(low, high)`` pair per output."""


def _label_bound(value: Any) -> LabelBound:
    if value is None:
        raise ValueError(f"LinearRegression needs a public, data-independent 'label_bound'. {_LABEL_FIX}")
    if (isinstance(value, np.ndarray) and value.ndim == 2) or (
        isinstance(value, (tuple, list)) and len(value) > 0 and isinstance(value[0], (tuple, list, np.ndarray))
    ):
        # One (low, high) pair per output: a sequence of pairs, or an array of shape (t, 2).
        return tuple(_label_pair(pair) for pair in value)
    return _label_pair(value)


def _label_pair(value: Any) -> tuple[float, float]:
    if isinstance(value, (tuple, list)) or (isinstance(value, np.ndarray) and value.ndim > 0):  # 0-d: a scalar B
        if len(value) != 2:
            raise TypeError(f"The 'label_bound' parameter of LinearRegression must be B or (low, high). Got {value!r}.")
        low = check_in_range(
            value[0], "label_bound[0]", -math.inf, math.inf, low_closed=False, high_closed=False,
            owner="LinearRegression", fix=_LABEL_FIX,
        )  # fmt: skip
        high = check_in_range(
            value[1], "label_bound[1]", -math.inf, math.inf, low_closed=False, high_closed=False,
            owner="LinearRegression", fix=_LABEL_FIX,
        )  # fmt: skip
        if not low < high:
            raise ValueError(
                f"The 'label_bound' of LinearRegression must have low < high. Got ({low!r}, {high!r}). {_LABEL_FIX}"
            )
        return (low, high)
    bound = _positive("label_bound", _LABEL_FIX)(value)
    return (-bound, bound)


def _reg_lambda(value: Any) -> float | str:
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"The 'reg_lambda' parameter of LinearRegression must be 'auto' or >= 0. Got {value!r}.")
        return value
    return check_in_range(
        value, "reg_lambda", 0.0, math.inf, low_closed=True, high_closed=False, owner="LinearRegression",
        fix="Pass 'auto' (the default) or a ridge strength >= 0 in normalised units.",
    )  # fmt: skip


def _method(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or value not in ("adassp", "functional"):
        raise ValueError(f"The 'method' parameter of LinearRegression must be 'adassp' or 'functional'. Got {value!r}.")


def _bool(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The '{attribute.name}' parameter of LinearRegression must be True or False. Got {value!r}.")


_NONFINITE = "The data passed to LinearRegression contains NaN or infinite values. Remove or impute them."


def _supervised(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) as float64 arrays of the shapes given, refusing NaN or infinite values."""
    X, y = _public_form(data)
    X, y = X.astype(np.float64, copy=False), y.astype(np.float64, copy=False)
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError(_NONFINITE)
    return X, y


def _grid_labels(y: np.ndarray, mid: Any, half: Any, bits: int) -> np.ndarray:
    """Labels mapped into [−1, 1] by ``label_bound`` and truncated onto the grid: integers k with |k| ≤ 2ᵇ."""
    t = np.clip((y.astype(np.float64, copy=False) - mid) / half, -1.0, 1.0)
    result: np.ndarray = np.trunc(np.ldexp(t, bits))
    return result


def _exact_sums(
    X: np.ndarray, y: np.ndarray, n: int, data_norm: float, label_scale: tuple[Any, Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A = Σzzᵀ, b = Σz·tᵀ, s = Σz and u = Σt over the normalised records (:meth:`LinearRegression.normalise`).

    One fused exact pass (:func:`~diffpriv_py._fixed_point.clipped_grid_gram`) over w = [q | k | 1], q the grid
    row and k the grid labels (integers ≤ 2ᵇ in magnitude): the Gram matrix of w holds every sum as an exact
    integer, scaled back by 2⁻²ᵇ or 2⁻ᵇ (exact), so the four sums are bit for bit those of the normalised records.
    n is the size of the whole dataset (it sets the grid), also when X, y are one block of it.
    """
    bits = record_bits(n, degree=2)
    labels = y.reshape(y.shape[0], -1)  # every sum is exact, so a 1-D y gives the same bits
    d, t = X.shape[1], labels.shape[1]

    def fill(start: int, stop: int, out: np.ndarray) -> None:
        block = labels[start:stop]
        if not np.isfinite(block).all():
            raise ValueError(_NONFINITE)
        out[...] = _grid_labels(block, *label_scale, bits)

    gram = clipped_grid_gram(X, data_norm, bits, extra=t, fill=fill, ones=True, nonfinite=_NONFINITE)
    return (
        np.ldexp(gram[:d, :d], -2 * bits),
        np.ldexp(gram[:d, d : d + t], -2 * bits),
        np.ldexp(gram[:d, d + t], -bits),
        np.ldexp(gram[d : d + t, d + t], -bits),
    )


def _public_form(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) as arrays after the checks that need only their form: types, shapes, equal lengths.

    y is 1-D (one output) or 2-D of shape (n, t) (t outputs, each bounded by ``label_bound``).
    """
    if not isinstance(data, tuple) or len(data) != 2:
        raise TypeError(
            "LinearRegression needs a supervised dataset: pass the tuple (X, y) with X of shape (n, d) and y of "
            f"shape (n,) or (n, t). Got {type(data).__name__}."
        )
    X, y = as_array(data[0], "X", owner="LinearRegression"), as_array(data[1], "y", owner="LinearRegression")
    if X.dtype.kind not in "biuf" or X.ndim != 2:
        raise TypeError(
            f"LinearRegression needs X as a 2-D numeric array (one record per row). Got shape {X.shape}, dtype "
            f"{X.dtype}."
        )
    if y.dtype.kind not in "biuf" or y.ndim not in (1, 2) or (y.ndim == 2 and y.shape[1] == 0):
        raise TypeError(
            "LinearRegression needs y as a numeric array of shape (n,) (one output) or (n, t) with t >= 1 (t outputs). "
            f"Got shape {y.shape}, dtype {y.dtype}."
        )
    if X.shape[0] != y.shape[0] or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(
            f"LinearRegression needs X and y with the same, positive number of records and d >= 1. Got X {X.shape} "
            f"and y {y.shape}."
        )
    return X, y


# ---- the released model ------------------------------------------------------------------------------------------


def _frozen_array(value: Any) -> np.ndarray:
    arr = np.array(value, dtype=np.float64)
    arr.setflags(write=False)
    return arr


@attrs.frozen(eq=False)
class LinearModel:
    """A privately released linear model ŷ = X·coefᵀ + intercept.

    Attributes
    ----------
    coef : ndarray of shape (d,) or (t, d)
        Coefficients in the original units (read-only): shape (d,) for a 1-D y, (t, d) for a y of shape (n, t),
        one row per output (scikit-learn's layout, also for t = 1).
    intercept : float or ndarray of shape (t,)
        The intercept, one per output for a 2-D y (the midpoint of ``label_bound`` when ``fit_intercept=False``).
    reg_lambda : float
        The ridge strength used, in normalised units (chosen privately by AdaSSP, or set).
    method : str
        ``"adassp"`` or ``"functional"``.

    Notes
    -----
    Post-processing of a DP release: using the model costs no privacy.
    """

    coef: np.ndarray = attrs.field(converter=_frozen_array)
    intercept: float | np.ndarray
    reg_lambda: float
    method: str

    @property
    def n_outputs(self) -> int:
        """t, the number of outputs (1 for a model fitted on a 1-D y)."""
        return 1 if self.coef.ndim == 1 else int(self.coef.shape[0])

    def predict(self, X: Any) -> np.ndarray:
        """Predictions X·coefᵀ + intercept for the rows of ``X``: shape (n,) or, for a 2-D ``coef``, (n, t)."""
        result: np.ndarray = (
            check_rows_to_predict(X, self.coef.shape[-1], model="linear model") @ self.coef.T + self.intercept
        )
        return result

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The parameters (coef row by row, then the intercepts) as one array, so tools such as the auditor can use
        them."""
        return np.append(self.coef, self.intercept).astype(dtype or np.float64)

    def __repr__(self) -> str:
        intercept = (
            np.array2string(np.asarray(self.intercept), precision=4)
            if self.coef.ndim == 2
            else (f"{self.intercept:.4g}")
        )
        return (
            f"LinearModel(coef={np.array2string(self.coef, precision=4)}, intercept={intercept}, "
            f"method={self.method!r})"
        )


# ---- the mechanism -----------------------------------------------------------------------------------------------


def _prepare_target(self: LinearRegression) -> Any:
    return self.statistics


@attrs.frozen(eq=False)
class SufficientStatistics:
    """The target's output: the scaled statistics vector and the public sizes needed to read it back.

    Attributes
    ----------
    vector : ndarray
        The statistics, each part scaled so that the whole vector has sensitivity 1 (see :class:`LinearRegression`).
    n, d : int
        Number of records and features (public under replace-one).
    n_outputs : int or None
        t, the number of columns of a 2-D y; ``None`` for a 1-D y (one output, released as a 1-D model). Public: it
        is the shape of the data.
    """

    vector: np.ndarray
    n: int
    d: int
    n_outputs: int | None = None

    @property
    def t(self) -> int:
        """The number of outputs (1 for a 1-D y)."""
        return 1 if self.n_outputs is None else self.n_outputs


@attrs.frozen(kw_only=True)
class LinearRegression(ComposedMech):
    """Differentially private linear regression as a mechanism: AdaSSP (default) or the functional mechanism.

    ``LinearRegression(data_norm=..., label_bound=...).release_response(Del(ε, δ), (X, y), rng=...)`` returns a
    :class:`~diffpriv_py.Response` whose ``.response`` is a :class:`LinearModel` (coefficients with ``predict``).

    Parameters
    ----------
    method : {"adassp", "functional"}, default "adassp"
        ``"adassp"``: sufficient-statistics perturbation with Gaussian noise and an adaptive ridge (Wang 2018);
        needs :class:`~diffpriv_py.Del` parameters with δ > 0. ``"functional"``: the functional mechanism
        (Zhang et al. 2012), Laplace noise on the coefficients of the squared-error polynomial; pure ε-DP.
    data_norm : float
        Public bound B_x on the L2 norm of a feature row. Required; rows with a larger norm are scaled down to it.
    label_bound : float, (float, float) or sequence of t (float, float)
        Public bound on the labels: B for [-B, B], or (low, high). Required; labels are clipped to it. With a 2-D
        y of shape (n, t) (t outputs) the bound holds for every output, or pass one (low, high) pair per output
        (a sequence of t pairs or an array of shape (t, 2)).
    fit_intercept : bool, default True
        Fit an (unpenalised) intercept. The sums Σx and Σy are released together with XᵀX and Xᵀy and the system
        is centred afterwards (post-processing), which costs far less than appending a constant feature inside the
        norm bound (that halves the signal in XᵀX).
    reg_lambda : "auto" or float, default "auto"
        Ridge strength added to the noisy normalised (and, with an intercept, centred) Gram matrix Σ zᵢzᵢᵀ (rows
        of norm ≤ 1). ``"auto"``: AdaSSP chooses it privately from a noisy λ_min (Wang 2018); the functional
        mechanism uses a high-probability bound on the spectral norm of its noise matrix (data-independent). A
        number fixes it (AdaSSP then spends nothing on λ_min).
    sensitivity : float, default 1
        Multiplier of every noise scale: the declared sensitivity of the target (:meth:`statistics`, scaled so that
        the analytic replace-one bound is exactly 1). A smaller value (0 included) is refused: it would void the
        guarantee. A larger one adds noise. :meth:`sensitivity_sampler` may
        set it from a public population, with a random-DP γ.

    Notes
    -----
    **Privacy claim.** ``"adassp"``: (ε, δ)-DP; ``"functional"``: ε-DP; both under the replace-one neighbouring
    relation (datasets of equal size differing in one record), for the data clipped to the public bounds.

    **Normalisation.** Rows are scaled to z = x/B_x (then to norm ≤ 1), labels to t = (y − m)/h ∈ [-1, 1] with
    m, h the midpoint and half-width of ``label_bound``. Values are rounded toward zero onto a 2^-b grid (b from
    n, at most 30) so that XᵀX, Xᵀy and the sums are computed exactly in float64 by BLAS in any summation order,
    which removes the float-sum sensitivity gap of Casacuberta et al. (CCS 2022). The mechanism's ``target``
    (:meth:`statistics`) returns the noised statistics scaled so that their sensitivity is exactly 1 (L2 for
    AdaSSP, L1 for the functional mechanism); n and d are public under replace-one.

    **AdaSSP calibration** (replace-one, normalised units). Replacing a record changes A = Σ zzᵀ by
    M = zzᵀ − z′z′ᵀ, whose upper triangle (with the diagonal) has L2 norm at most ‖M‖_F ≤ √2; b = Σ t·z by at
    most 2 in L2; s = Σ z and u = Σ t by at most 2 each; λ_min(A) by at most ‖M‖₂ ≤ 1 (Weyl), and λ_min of the
    scatter matrix A − ssᵀ/n (used with an intercept) by at most 4n/(n − 1) (a rank-one downdate and update of
    norm ≤ 4 each); a 64·(d + 1)·n·2^-52 allowance covers the eigensolver's rounding. The parts are released
    *jointly* by one Gaussian mechanism: each is scaled by √w/Δ with budget shares w (λ_min 0.1, A 0.4, b 0.4,
    s 0.05, u 0.05, rescaled over the parts present), so the joint vector has L2 sensitivity 1 and the analytic
    Gaussian σ for (ε, δ) (Balle & Wang 2018) makes the release (ε, δ)-DP. This is tighter than Wang's split into
    three (ε/3, δ/3) releases, so the same guarantee costs less noise. Post-processing as Wang's Algorithm 2:
    λ̃_min = max(λ̂_min − σ_λ√ln(6/δ), 0), ridge λ = max(0, σ_A√(d·ln(2d²/ρ)) − λ̃_min) with ρ = 0.05; with an
    intercept the system is centred with the noisy means z̄ = s̃/n (projected onto the unit ball) and
    t̄ = ũ/n (clipped to [-1, 1]): Â − n·z̄z̄ᵀ and b̂ − n·z̄t̄; θ = (Â + λI)⁻¹b̂ (directions with non-positive
    eigenvalues are dropped) and the intercept is the mean residual t̄ − θᵀz̄.

    **Functional mechanism calibration.** The objective Σ(tᵢ − zᵢᵀθ − θ₀)² has monomial coefficients Σzⱼ² (θⱼ²),
    2Σzⱼzₗ (θⱼθₗ, j < l), −2Σtzⱼ (θⱼ) and, with an intercept, 2Σzⱼ (θ₀θⱼ), −2Σt (θ₀) and n (θ₀², public); the
    constant Σt² does not affect the minimiser and is not released. One record contributes at most
    ‖z‖₁² + 2|t|‖z‖₁ (+ 2‖z‖₁ + 2|t|) ≤ d + 2√d (+ 2√d + 2) in L1, so the replace-one sensitivity is
    Δ = 2(d + 2√d), or 2(d + 4√d + 2) with an intercept (the paper's 2(1 + 2d + d²) is for its normalisation and
    includes the constant). Every coefficient gets Lap(Δ/ε) (the library's Laplace mechanism). The noisy
    quadratic may be indefinite: a ridge λ = σ√(d·ln(2d²/ρ)), σ = Δ/(√2·ε) the standard deviation of an
    off-diagonal noise entry of Â (AdaSSP's bound on the noise's spectral norm, data-independent here) is added
    and non-positive directions are trimmed, as Zhang et al. recommend; without the ridge the error is not
    monotone in ε. The intercept is eliminated exactly as for AdaSSP.

    **Several outputs.** A y of shape (n, t) releases t regressions on the same features in *one* Response (one
    charge of (ε, δ)); the model's ``coef`` has shape (t, d), one row per output as in scikit-learn (also for
    t = 1, while a 1-D y gives a 1-D model). Every output is normalised with its ``label_bound`` (shared, or one
    pair per output), so tⱼ ∈ [-1, 1] and
    the label vector of a record has ‖t‖₂ ≤ √t and ‖t‖₁ ≤ t. The feature statistics (A, s, λ_min) do not involve
    y and keep their sensitivities. Proof of the label parts under replace-one: Xᵀy becomes the d×t block
    B = Σ z tᵀ; replacing (z, t) by (z′, t′) changes it by ztᵀ − z′t′ᵀ with ‖ztᵀ‖_F = ‖z‖₂‖t‖₂ ≤ √t, so
    ‖ΔB‖_F ≤ 2√t; likewise ‖Δu‖₂ = ‖t − t′‖₂ ≤ 2√t for u = Σ t. AdaSSP therefore scales B and u by
    √w/(2√t) instead of √w/2 (the joint vector keeps L2 sensitivity 1, so more outputs cost noise on the label
    parts only, growing like √t). For the functional mechanism the t objectives Σᵢ(tᵢⱼ − zᵢᵀθⱼ − θ₀ⱼ)² share
    their quadratic coefficients (Σ zzᵀ and n, released once), and a record contributes Σⱼ 2|tⱼ|‖z‖₁ ≤ 2t√d to
    the t·d coefficients −2Σtⱼz and Σⱼ 2|tⱼ| ≤ 2t to the t coefficients −2Σtⱼ, so the linear block's L1
    sensitivity is 4t√d (+ 4√d + 4t with an intercept): it grows linearly in t. For t = 1 both reduce to the
    one-output constants (the release is then bit for bit that of the 1-D y with the same seed). The label means
    are shrunk jointly (post-processing) and every output gets the same ridge.

    Deliberate divergence from diffprivlib 0.6.6, whose ``LinearRegression`` (functional mechanism) uses
    ``bounds_X[0][i]`` twice for the diagonal sensitivity (no noise when a lower bound is 0; diffprivlib #105) and
    minimises the noisy, possibly unbounded, objective without a ridge.

    References
    ----------
    Wang, Y.-X. (2018). Revisiting differentially private linear regression: optimal and adaptive prediction &
    estimation in unbounded domain. UAI.
    Zhang, Zhang, Xiao, Yang & Winslett (2012). Functional mechanism: regression analysis under differential
    privacy. PVLDB 5(11).
    Balle & Wang (2018). Improving the Gaussian mechanism for differential privacy. ICML.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (20_000, 3))
    >>> y = X @ [0.5, -0.3, 0.1] + 0.3 + rng.normal(0, 0.1, 20_000)
    >>> mech = dp.estimators.LinearRegression(data_norm=np.sqrt(3), label_bound=2.0)
    >>> model = mech.release_response(dp.Del(1.0, 1e-6), (X, y), rng=1).response
    >>> np.round(model.coef, 1), round(model.intercept, 1)
    (array([ 0.5, -0.3,  0.1]), 0.3)
    """

    method: Literal["adassp", "functional"] = attrs.field(default="adassp", validator=_method)
    data_norm: float = attrs.field(default=None, converter=_data_norm)
    label_bound: LabelBound = attrs.field(default=None, converter=_label_bound)
    fit_intercept: bool = attrs.field(default=True, validator=_bool)
    reg_lambda: float | str = attrs.field(default="auto", converter=_reg_lambda)
    target: Any = attrs.field(init=False, repr=False, eq=False, default=attrs.Factory(_prepare_target, takes_self=True))
    sensitivity: float = attrs.field(default=1.0, converter=as_sensitivity, repr=False, validator=not_below(1.0))
    gamma_sensitivity: float | None = attrs.field(default=None, converter=as_gamma_sensitivity, repr=False)

    @property
    def privacy_params_type(self) -> type[Eps]:  # type: ignore[override]
        """``Del`` for AdaSSP (Gaussian noise), ``Eps`` for the functional mechanism."""
        return Del if self.method == "adassp" else Eps

    # ---- the statistics --------------------------------------------------------------------------------------

    def normalise(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """The normalised records (z, t): rows of L2 norm ≤ 1, labels in [-1, 1], on the exact-sum grid.

        ``t`` has the shape of y ((n,) or (n, t), every output normalised with the same ``label_bound``). The input
        is never modified.
        """
        X, y = _supervised(data)
        return self._normalise(X, y, X.shape[0])

    def _normalise(self, X: np.ndarray, y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        # n is the size of the whole dataset (it sets the grid), also when X, y are one block of it. Rows are clipped
        # into the unit ball with a proven exact norm ≤ 1 (overflow-safe; a non-finite row becomes 0) and rounded
        # toward zero onto multiples of 2⁻ᵇ, so every sum below is exact in float64 (see record_bits).
        bits = record_bits(n, degree=2)
        Z = np.ldexp(grid_rows(clip_rows_to_norm(X, self.data_norm), bits), -bits)
        return Z, np.ldexp(_grid_labels(y, *self._label_scale(), bits), -bits)

    def _label_scale(self) -> tuple[Any, Any]:
        """Midpoint and half-width of ``label_bound``: floats, or arrays (t,) for per-output bounds."""
        bounds = np.asarray(self.label_bound, dtype=np.float64)
        if bounds.ndim == 1:
            low, high = self.label_bound
            return (low + high) / 2.0, (high - low) / 2.0  # type: ignore[operator]
        return (bounds[:, 0] + bounds[:, 1]) / 2.0, (bounds[:, 1] - bounds[:, 0]) / 2.0

    def _check_outputs(self, t: int) -> None:
        """Per-output bounds must match y's number of outputs (public: the shape of y)."""
        if isinstance(self.label_bound[0], tuple) and len(self.label_bound) != t:
            raise ValueError(
                f"LinearRegression has {len(self.label_bound)} per-output label bounds but y has {t} output(s). "
                "Pass one (low, high) pair per column of y, or a single bound for every output."
            )

    @staticmethod
    def _shrink(n: int, coefficient_norm: float) -> float:
        """Factor that keeps the declared sensitivity 1 for the float64 vector, not only for the real one.

        Each released coordinate is fl(c·S) for an exact sum S (|S| ≤ 2n) and a constant c computed with a few
        roundings (relative error ≤ 4u): neighbours' coordinates differ by at most c·|S − S′|(1 + 4u) + 2u·c·2n, so
        the vector moves by at most (1 + 4u)·R + 4u·n·‖c‖ in the mechanism's norm, R ≤ 1 the real-number bound of
        the shrunk parts; dividing every c by 1 + 8u + 8u·n·‖c‖ brings that back to ≤ R whenever R ≥ ½ (here
        R² ≥ 0.8 of the budget: λ_min, which has its own allowance, takes at most 0.1 of it).
        """
        return 1.0 / (1.0 + 8.0 * UNIT_ROUNDOFF * (1.0 + n * coefficient_norm))

    def _weights(self) -> dict[str, float]:
        weights = dict(ADASSP_WEIGHTS)
        if self.reg_lambda != "auto":
            del weights["lambda"]
        if not self.fit_intercept:
            del weights["feature_sum"], weights["label_sum"]
        total = math.fsum(weights.values())
        return {part: w / total for part, w in weights.items()}

    def statistics(self, data: Any) -> SufficientStatistics:
        """The mechanism's target: the perturbed sufficient statistics, scaled to sensitivity exactly 1.

        On the normalised data (:meth:`normalise`) with A = Σ zzᵀ, b = Σ t·z, s = Σ z and u = Σ t:

        * AdaSSP: [√w_λ·λ_min/Δ_λ] + √w_A·upper(A)/√2 + √w_b·b/2 + [√w_s·s/2 + √w_u·u/2], L2 sensitivity 1, where
          λ_min is that of A (no intercept) or of the scatter matrix A − ssᵀ/n (with an intercept); the λ_min part
          only with ``reg_lambda="auto"``, the sums only with ``fit_intercept``.
        * Functional: the monomial coefficients [diag(A), 2·upper_offdiag(A), −2b] + [2s, −2u], divided by Δ,
          L1 sensitivity 1.
        """
        if is_out_of_core(data):
            # Two passes: n first (it sets the exact-sum grid), then the partial sums per block. On the grid every
            # sum is exact, so the totals equal the in-memory ones bit for bit.
            # The width of y is read from the sums: a y of one column is released as a 1-D model.
            n = n_rows(data)
            A, b, s, u = map_reduce(data, functools.partial(self._block_sums, n=n))
            d, t = b.shape
            n_outputs = None if t == 1 else t
        else:
            X, y = _public_form(data)
            n_outputs = None if y.ndim == 1 else y.shape[1]
            n, d = X.shape
            A, b, s, u = self._block_sums((X, y), n)
            t = b.shape[1]
        if self.fit_intercept and n < 2:
            raise ValueError("LinearRegression with fit_intercept=True needs at least 2 records.")
        rows, cols = np.triu_indices(d)
        sums = [s, u] if self.fit_intercept else []
        lambda_min = None
        if self.reg_lambda == "auto":
            scatter = A - np.outer(sums[0], sums[0]) / n if sums else A
            lambda_min = float(np.linalg.eigvalsh(scatter)[0])
        if self.method == "functional":
            scale_lambda, scale_quadratic, scale_linear = self._fm_scales(n, d, t)
            # ×2 and ×(−2) are exact; one multiplication by a shrunk reciprocal is the only rounding (L1 norm).
            quadratic = np.where(rows == cols, 1.0, 2.0) * A[rows, cols]
            linear = np.concatenate([-2.0 * b.ravel()] + ([2.0 * sums[0], -2.0 * sums[1]] if sums else []))
            gamma = self._shrink(n, quadratic.size / scale_quadratic + linear.size / scale_linear)
            parts = [quadratic * (gamma / scale_quadratic), linear * (gamma / scale_linear)]
            if lambda_min is not None:
                parts.insert(0, np.array([lambda_min / scale_lambda]))
            return SufficientStatistics(vector=np.concatenate(parts), n=n, d=d, n_outputs=n_outputs)
        w = self._weights()
        label_part = _label_l2_sensitivity(t)
        blocks = [(A[rows, cols], math.sqrt(w["gram"] / 2.0)), (b.ravel(), math.sqrt(w["cross"]) / label_part)]
        if sums:
            blocks += [
                (sums[0], math.sqrt(w["feature_sum"]) / 2.0),
                (sums[1], math.sqrt(w["label_sum"]) / label_part),
            ]
        gamma = self._shrink(n, math.sqrt(math.fsum(c * c * v.size for v, c in blocks)))
        parts = [v * (gamma * c) for v, c in blocks]
        if lambda_min is not None:
            parts.insert(0, np.array([math.sqrt(w["lambda"]) * lambda_min / self._lambda_sensitivity(n, d)]))
        return SufficientStatistics(vector=np.concatenate(parts), n=n, d=d, n_outputs=n_outputs)

    def _block_sums(self, block: Any, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return _exact_sums(*_public_form(block), n, self.data_norm, self._label_scale())

    def _lambda_sensitivity(self, n: int, d: int) -> float:
        # Weyl: λ_min(A) moves by at most ‖zzᵀ − z′z′ᵀ‖₂ ≤ 1. The scatter matrix S = Σ(z − z̄)(z − z̄)ᵀ loses
        # n/(n−1)·(z − z̄)(z − z̄)ᵀ when a record leaves and gains (n−1)/n·(z′ − z̄₋)(z′ − z̄₋)ᵀ when one joins, each
        # of norm at most 4·n/(n−1), so λ_min(S) moves by at most 4n/(n−1). The allowance covers the rounding of
        # the symmetric eigensolver (backward error ≈ d·u·‖A‖₂, ‖A‖₂ ≤ n) and of ssᵀ/n.
        bound = 4.0 * n / (n - 1) if self.fit_intercept else 1.0
        return bound + 64.0 * (d + 1) * n * 2.0**-52

    def _fm_scales(self, n: int, d: int, t: int = 1) -> tuple[float, float, float]:
        """Divisors Δ_part/share that give the functional mechanism's parts a joint L1 sensitivity of exactly 1."""
        shares = dict(FM_SHARES)
        if self.reg_lambda != "auto":
            del shares["lambda"]
        total = math.fsum(shares.values())
        quadratic, linear = _fm_sensitivity(d, self.fit_intercept, t)
        scale_lambda = self._lambda_sensitivity(n, d) * total / shares["lambda"] if "lambda" in shares else math.inf
        return scale_lambda, quadratic * total / shares["quadratic"], linear * total / shares["linear"]

    # ---- DPMech hooks ----------------------------------------------------------------------------------------

    def _check_dataset(self, X: Any) -> Any:
        """Form and size of (X, y), public under replace-one, checked before any budget is charged."""
        if is_out_of_core(X):
            if isinstance(self.label_bound[0], tuple):  # per-output bounds: read y's width from the first block
                block = first_block(X)
                width = np.shape(block[1]) if isinstance(block, tuple) and len(block) == 2 else ()
                self._check_outputs(width[1] if len(width) == 2 else 1)
            return X
        rows, labels = _public_form(X)
        self._check_outputs(1 if labels.ndim == 1 else labels.shape[1])
        if self.fit_intercept and rows.shape[0] < 2:
            raise ValueError(
                f"LinearRegression with fit_intercept=True needs at least 2 records; got n_samples = {rows.shape[0]}."
            )
        return X

    def _check_params(self, privacy_params: Eps) -> None:
        if self.method == "adassp" and not privacy_params.delta > 0:
            raise ValueError(
                f"LinearRegression(method='adassp') adds Gaussian noise and needs delta > 0; got {privacy_params!r}. "
                "Pass e.g. Del(epsilon=1.0, delta=1e-6) (δ well below 1/n), or use method='functional' for pure ε-DP."
            )

    def _evaluate(self, output: Any) -> SufficientStatistics:
        if not isinstance(output, SufficientStatistics) or not np.all(np.isfinite(output.vector)):
            raise TargetOutputError(
                "The target of LinearRegression must return its scaled sufficient statistics; it is built from "
                "data_norm= and label_bound= and cannot be replaced."
            )
        return output

    def _norm(self, value1: SufficientStatistics, value2: SufficientStatistics) -> float:
        if value1.vector.shape != value2.vector.shape or value1.n != value2.n:
            raise ValueError(
                "LinearRegression compares datasets of equal size and dimension (replace-one neighbours); got "
                f"n={value1.n}, d={value1.d} and n={value2.n}, d={value2.d}."
            )
        diff = value1.vector - value2.vector
        if self.method == "functional":
            return float(np.abs(diff).sum())
        return float(np.linalg.norm(diff))

    def _release(self, value: SufficientStatistics, privacy_params: Eps, rng: np.random.Generator) -> LinearModel:
        coef, intercept, ridge = self._releases(value, privacy_params, rng, 1)
        if value.n_outputs is None:  # a 1-D y: a 1-D model
            return LinearModel(
                coef=coef[0, 0], intercept=float(intercept[0, 0]), reg_lambda=float(ridge[0]), method=self.method
            )
        return LinearModel(coef=coef[0], intercept=intercept[0].copy(), reg_lambda=float(ridge[0]), method=self.method)

    def _sample_many(
        self, value: SufficientStatistics, privacy_params: Eps, rng: np.random.Generator, n: int
    ) -> np.ndarray:
        """``n`` independent releases as flat parameter vectors (``np.asarray(model)``), for the auditor.

        The same code path as a release (a release is the batch of one); all the noise is drawn at once.
        """
        coef, intercept, _ = self._releases(value, privacy_params, rng, n)
        return np.concatenate([coef.reshape(n, -1), intercept], axis=1)

    # ---- randomisation and post-processing, for a batch of independent releases -------------------------------

    def _releases(
        self, value: SufficientStatistics, privacy_params: Eps, rng: np.random.Generator, n_releases: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # The statistics form one row, so the safe samplers' rounding allowance covers every coordinate.
        stack = np.broadcast_to(value.vector, (n_releases, 1, value.vector.size))
        if self.method == "functional":
            noise: Laplace | Gaussian = Laplace(target=_no_target, sensitivity=self.sensitivity)
            noisy = noise._perturb(stack, Eps(privacy_params.epsilon), rng)[:, 0, :]
            A, b, sums, ridge = self._functional_system(noisy, value, privacy_params)
            # Laplace of scale Δ/ε on the coefficients 2s and −2u: each sum has noise standard deviation Δ/(√2·ε).
            scale = self._fm_scales(value.n, value.d, value.t)[2] * self.sensitivity / privacy_params.epsilon
            sum_sigmas = (scale / math.sqrt(2.0), scale / math.sqrt(2.0))
        else:
            noise = Gaussian(target=_no_target, sensitivity=self.sensitivity)
            noisy = noise._perturb(stack, privacy_params, rng)[:, 0, :]
            sigma = noise.noise_scale(privacy_params)
            A, b, sums, ridge = self._adassp_system(noisy, value, sigma, privacy_params)
            w = self._weights()
            if sums is not None:
                label_part = _label_l2_sensitivity(value.t)
                sum_sigmas = (2.0 * sigma / math.sqrt(w["feature_sum"]), label_part * sigma / math.sqrt(w["label_sum"]))
        n = value.n
        if sums is not None:
            # Minimising over the intercept first leaves the centred system (Σ(z − z̄)(z − z̄)ᵀ)θ = Σ(z − z̄)t;
            # the intercept is then the mean residual and is not penalised by the ridge (as in scikit-learn).
            # The noisy means are projected onto where the true ones lie (the unit ball, [-1, 1]): at small n and
            # ε this keeps the noise of the sums from throwing the intercept far outside the labels' range.
            mean_z = _shrink(sums[0] / n, sum_sigmas[0] / n)  # pyright: ignore[reportPossiblyUnboundVariable]  # set with sums
            mean_z /= np.maximum(np.linalg.norm(mean_z, axis=1), 1.0)[:, None]
            # The t label means are shrunk jointly (one James–Stein step on the vector of means; t = 1 as before).
            mean_t = np.clip(
                _shrink(sums[1] / n, sum_sigmas[1] / n),  # pyright: ignore[reportPossiblyUnboundVariable]
                -1.0,
                1.0,
            )
            A = A - n * np.einsum("ni,nj->nij", mean_z, mean_z)
            b = b - n * mean_z[:, :, None] * mean_t[:, None, :]
        theta = _ridge_solve(A, b, ridge)
        mid, half = self._label_scale()
        coef = np.swapaxes(half * theta / self.data_norm, 1, 2)  # (releases, t, d): one row per output
        if sums is not None:
            # mean_t and mean_z were set above under the same condition.
            intercept = mid + half * (mean_t - np.einsum("nit,ni->nt", theta, mean_z))  # pyright: ignore[reportPossiblyUnboundVariable]
        else:
            intercept = np.broadcast_to(mid, (n_releases, value.t)).astype(np.float64)
        return coef, intercept, ridge

    def _adassp_system(
        self, noisy: np.ndarray, value: SufficientStatistics, sigma: float, privacy_params: Eps
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None, np.ndarray]:
        w = self._weights()
        d = value.d
        m = d * (d + 1) // 2
        offset = 1 if "lambda" in w else 0
        t, label_part = value.t, _label_l2_sensitivity(value.t)
        A = _symmetric(noisy[:, offset : offset + m] * (math.sqrt(2.0) / math.sqrt(w["gram"])), d)
        b = (noisy[:, offset + m : offset + m + d * t] * (label_part / math.sqrt(w["cross"]))).reshape(-1, d, t)
        sums = None
        if self.fit_intercept:
            rest = noisy[:, offset + m + d * t :]
            sums = (
                rest[:, :d] * (2.0 / math.sqrt(w["feature_sum"])),
                rest[:, d : d + t] * (label_part / math.sqrt(w["label_sum"])),
            )
        if "lambda" in w:
            delta_lambda = self._lambda_sensitivity(value.n, d)
            sigma_lambda = sigma * delta_lambda / math.sqrt(w["lambda"])
            lambda_hat = noisy[:, 0] * delta_lambda / math.sqrt(w["lambda"])
            # Wang (2018), Algorithm 2: a noisy λ_min shifted down so that it undershoots with high probability,
            # and a ridge that tops it up to a high-probability bound on the noise's spectral norm.
            lambda_tilde = np.maximum(lambda_hat - sigma_lambda * math.sqrt(math.log(6.0 / privacy_params.delta)), 0.0)
            sigma_a = sigma * math.sqrt(2.0) / math.sqrt(w["gram"])
            ridge = np.maximum(0.0, sigma_a * math.sqrt(d * math.log(2.0 * d * d / RHO)) - lambda_tilde)
        else:
            ridge = np.full(noisy.shape[0], float(self.reg_lambda))
        return A, b, sums, ridge

    def _functional_system(
        self, noisy: np.ndarray, value: SufficientStatistics, privacy_params: Eps
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None, np.ndarray]:
        d, t = value.d, value.t
        scale_lambda, quadratic, linear = self._fm_scales(value.n, d, t)
        offset = 1 if math.isfinite(scale_lambda) else 0
        m = d * (d + 1) // 2
        rows, cols = np.triu_indices(d)
        A = _symmetric(noisy[:, offset : offset + m] * quadratic / np.where(rows == cols, 1.0, 2.0), d)
        coefficients = noisy[:, offset + m :] * linear
        b = (-coefficients[:, : d * t] / 2.0).reshape(-1, d, t)
        sums = None
        if self.fit_intercept:
            sums = (coefficients[:, d * t : d * t + d] / 2.0, -coefficients[:, d * t + d :] / 2.0)
        if self.reg_lambda == "auto":
            # Standard deviation of an off-diagonal noise entry of Â (the bulk of the matrix): the coefficient
            # 2Aⱼₗ gets Lap(quadratic/ε), so Aⱼₗ has standard deviation quadratic/(√2·ε); AdaSSP's bound on the
            # noise's spectral norm, topped down by a noisy λ_min shifted to undershoot with probability ρ/2.
            sigma = quadratic * self.sensitivity / (math.sqrt(2.0) * privacy_params.epsilon)
            lambda_scale = scale_lambda * self.sensitivity / privacy_params.epsilon
            lambda_tilde = np.maximum(noisy[:, 0] * scale_lambda - lambda_scale * math.log(1.0 / RHO), 0.0)
            ridge = np.maximum(0.0, sigma * math.sqrt(d * math.log(2.0 * d * d / RHO)) - lambda_tilde)
        else:
            ridge = np.full(noisy.shape[0], float(self.reg_lambda))
        return A, b, sums, ridge


def _no_target(data: Any) -> Any:  # pragma: no cover - never evaluated
    raise TypeError("internal noise mechanism of LinearRegression: statistics are passed to _perturb directly")


SHRINK = True


def _shrink(noisy: np.ndarray, sigma: float) -> np.ndarray:
    """Positive-part James–Stein shrinkage of noisy vectors (rows) towards 0, for i.i.d. noise of std ``sigma``.

    Post-processing: where the noise swamps the sums (small n and ε) the means fall back to 0, i.e. to the
    uncentred system, instead of subtracting a large random rank-one matrix.
    """
    if not SHRINK:
        return noisy
    d = noisy.shape[1]
    squared = np.maximum(np.einsum("ni,ni->n", noisy, noisy), np.finfo(np.float64).tiny)
    factor = (
        np.maximum(0.0, 1.0 - max(d - 2, 1) * sigma**2 / squared)
        if d > 2
        else np.maximum(0.0, 1.0 - sigma**2 / squared)
    )
    result: np.ndarray = noisy * factor[:, None]
    return result


FM_SHARES = {"lambda": 0.1, "quadratic": 0.45, "linear": 0.45}
"""Shares of the functional mechanism's ε: a noisy λ_min for the ridge (only with ``reg_lambda="auto"``), the
quadratic coefficients (XᵀX) and the linear ones (Xᵀy and, with an intercept, the sums)."""


def _label_l2_sensitivity(t: int) -> float:
    """Replace-one L2 sensitivity of Xᵀy (d×t, Frobenius) and of Σy for t outputs in [-1, 1] and ‖z‖₂ ≤ 1: 2√t.

    ‖ztᵀ − z′t′ᵀ‖_F ≤ ‖z‖₂‖t‖₂ + ‖z′‖₂‖t′‖₂ ≤ 2√t and ‖t − t′‖₂ ≤ 2√t; 2·√1 = 2 exactly, so t = 1 is the
    one-output constant bit for bit.
    """
    return 2.0 * math.sqrt(t)


def _fm_sensitivity(d: int, fit_intercept: bool, t: int = 1) -> tuple[float, float]:
    """Replace-one L1 sensitivities of the quadratic and the linear coefficients for ‖z‖₂ ≤ 1, every |tⱼ| ≤ 1.

    One record contributes ‖z‖₁² ≤ d to the quadratic ones (shared by the t outputs) and Σⱼ 2|tⱼ|‖z‖₁
    (+ 2‖z‖₁ + Σⱼ 2|tⱼ| with an intercept) ≤ 2t√d (+ 2√d + 2t) to the linear ones; a replacement moves each
    block by at most twice that. t = 1 gives 4√d (+ 4√d + 4).
    """
    root = math.sqrt(d)
    return 2.0 * d, (4.0 * (t * root + root + t) if fit_intercept else 4.0 * t * root)


def _symmetric(upper: np.ndarray, p: int) -> np.ndarray:
    """A stack of symmetric p×p matrices from their stacked upper triangles (row-major, with the diagonal)."""
    rows, cols = np.triu_indices(p)
    A = np.zeros((upper.shape[0], p, p))
    A[:, rows, cols] = upper
    A[:, cols, rows] = upper
    return A


def _ridge_solve(A: np.ndarray, b: np.ndarray, ridge: np.ndarray) -> np.ndarray:
    """θ = (A + ridge·I)⁻¹ b per stacked system (b of shape (n, p, t): t right-hand sides), on the positive part
    of the spectrum (the rest is trimmed)."""
    p = A.shape[-1]
    values, vectors = np.linalg.eigh(A + ridge[:, None, None] * np.eye(p))
    keep = values > np.maximum(values.max(axis=1, keepdims=True), 0.0) * 1e-12
    inverse = np.where(keep, 1.0 / np.where(keep, values, 1.0), 0.0)
    projected = np.einsum("nij,nit->njt", vectors, b) * inverse[:, :, None]
    result: np.ndarray = np.einsum("nij,njt->nit", vectors, projected)
    return result
