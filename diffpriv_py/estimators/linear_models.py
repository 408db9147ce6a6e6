"""Private logistic regression and Huber SVM by output or objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011).

Each estimator is a :class:`~diffpriv_py.DPMech`: its target turns the supervised dataset ``(X, y)`` into the
normalised ERM problem (rows clipped into the unit ball, intercept constant appended, labels as signs), and its
``_release`` solves it with the CMS'11 perturbation. ``release_response`` returns a :class:`LinearClassifierModel`.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, ClassVar

import attrs
import numpy as np
from scipy.special import expit

from .._fixed_point import clip_rows
from .._validation import check_in_range, refuse_subnormal
from ..exceptions import TargetOutputError
from ..mechanisms.base import as_gamma_sensitivity, as_sensitivity
from ..mechanisms.composed import ComposedMech
from ..mechanisms.exponential import Exponential
from ..privacy import Eps
from . import _erm
from ._sensitivity_floor import not_below
from ._supervised import (
    OBSERVED,
    OBSERVED_ASSUMPTION,
    Classes,
    check_classes,
    check_rows_to_predict,
    check_supervised_form,
    label_codes,
    public_labels,
)

__all__ = ["SVM", "LinearClassifierModel", "LogisticRegression"]

DEFAULT_REG_LAMBDA_GRID: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1)
"""Candidates tried by ``reg_lambda="private"`` (CMS'11 Algorithm 3)."""

GRADIENT_SENSITIVITY = 2.0
"""Replace-one L2 sensitivity of Σᵢ ℓ'(sᵢ fᵀzᵢ) sᵢ zᵢ for ‖zᵢ‖ ≤ 1 and |ℓ'| ≤ 1, at every f."""

DEFAULT_INTERCEPT_SCALING = 0.25
"""The constant b appended to every row (features scaled by √(1 − b²)) by :class:`SVM`; see the Notes."""

LOGISTIC_INTERCEPT_SCALING = 0.5
"""The default b of :class:`LogisticRegression` (with the private radius, 0.5 beat 0.25 on uncentred features)."""

RADIUS_SHARE = 0.1
"""The default ``radius_share`` of :class:`LogisticRegression`: the share of ε spent on the private radius."""

RADIUS_CLIPPED = 100.0
"""C of the private radius: the exponential mechanism favours the candidate ρ that leaves about k = min(n/4, C/ε)
rows outside (clipped), so few rows are clipped where the noise is small anyway (large n·ε)."""

RADIUS_GRID: tuple[float, ...] = tuple(2.0 ** (-k / 3.0) for k in range(13))
"""Candidate radii as fractions of ``data_norm``: 1, 2^(−1/3), …, 1/16 (fixed, public)."""

RADIUS_MARGIN = 4.0
"""The private radius runs only when ε_ρ·(n − k)/2 ≥ ln(m) + ``RADIUS_MARGIN`` (m candidates): then a candidate with
no row inside is picked with probability ≤ e^(−4) (a public condition on n and ε; otherwise data_norm is used as is)."""


# ---- the released model ---------------------------------------------------------------------------------------


def _frozen_array(value: Any) -> np.ndarray:
    out = np.array(value, dtype=np.float64)
    out.setflags(write=False)
    return out


def _frozen_labels(value: Any) -> np.ndarray:
    out = np.array(value)
    out.setflags(write=False)
    return out


@attrs.frozen(eq=False)
class LinearClassifierModel:
    """A released linear classifier: ``decision_function(X) = X @ coef.T + intercept`` (read-only arrays).

    Attributes
    ----------
    coef : ndarray of shape (1, n_features) for two classes, (n_classes, n_features) otherwise
        Weights in the user's feature coordinates (scikit-learn's layout).
    intercept : ndarray of shape (1,) or (n_classes,)
        Intercepts (zeros when ``fit_intercept=False``).
    classes : ndarray of shape (n_classes,)
        The labels; for two classes, a positive decision means ``classes[1]``.
    loss : {"logistic", "huber"}
        The loss the model was trained with; ``predict_proba`` needs ``"logistic"``.
    reg_lambda : float
        The regularisation strength Λ used (the privately chosen one when a grid was given).

    Notes
    -----
    Everything here is post-processing of a differentially private release, so any use of the model keeps the
    guarantee recorded in the :class:`~diffpriv_py.Response`. Prediction uses the features as given (rows are not
    clipped), like scikit-learn.
    """

    coef: np.ndarray = attrs.field(converter=_frozen_array)
    intercept: np.ndarray = attrs.field(converter=_frozen_array)
    classes: np.ndarray = attrs.field(converter=_frozen_labels)
    loss: str = "logistic"
    reg_lambda: float = math.nan

    @property
    def n_features_in(self) -> int:
        """Number of features the model expects."""
        result: int = self.coef.shape[1]
        return result

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The model as one weight vector: the rows [coef_k, intercept_k] concatenated (for analysis and audits)."""
        flat = np.concatenate([self.coef, self.intercept[:, None]], axis=1).ravel()
        return flat if dtype is None else flat.astype(dtype)

    def _features(self, X: Any) -> np.ndarray:
        return check_rows_to_predict(X, self.n_features_in, model="linear classifier")

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed scores: shape (n,) for two classes (positive means ``classes[1]``), else (n, n_classes)."""
        scores = self._features(X) @ self.coef.T + self.intercept
        result: np.ndarray = scores[:, 0] if self.coef.shape[0] == 1 else scores
        return result

    def predict(self, X: Any) -> np.ndarray:
        """Predicted labels (one-vs-rest: the class with the largest score)."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        result: np.ndarray = self.classes[index]
        return result

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (logistic loss only), columns in the order of ``classes``.

        Two classes: the sigmoid of the score. More: one-vs-rest sigmoids normalised to sum to one (as
        scikit-learn's one-vs-rest logistic regression).
        """
        if self.loss != "logistic":
            raise AttributeError(
                f"predict_proba needs a probabilistic model; this one was trained with the {self.loss!r} loss. "
                "Use decision_function, or train a LogisticRegression."
            )
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        p = expit(scores)
        result: np.ndarray = p / p.sum(axis=1, keepdims=True)
        return result

    def __repr__(self) -> str:
        return (
            f"LinearClassifierModel(n_features_in={self.n_features_in}, classes={self.classes.tolist()!r}, "
            f"loss={self.loss!r}, reg_lambda={self.reg_lambda!r})"
        )


# ---- the normalised ERM problem (the target's output) ---------------------------------------------------------


@attrs.frozen(eq=False)
class ERMProblem:
    """The non-private input of the solver: normalised rows ``Z`` (‖z‖ ≤ 1), class codes, the map back."""

    Z: np.ndarray
    codes: np.ndarray
    classes: np.ndarray
    feature_scale: float
    intercept_scale: float

    @property
    def n(self) -> int:
        result: int = self.Z.shape[0]
        return result


def build_problem(
    data: Any,
    *,
    data_norm: float,
    fit_intercept: bool,
    classes: Classes,
    intercept_scaling: float = DEFAULT_INTERCEPT_SCALING,
) -> ERMProblem:
    """Clip rows of ``X`` to ``data_norm``, rescale into the unit ball, append the intercept constant, code ``y``.

    Rows become z = x/R (clipped), or z = [a·x/R, b] with b = ``intercept_scaling`` and a ≈ √(1 − b²) when
    ``fit_intercept``; either way the floats of every row have exact norm ‖z‖₂ ≤ 1, as the solver's certificate and
    the sensitivity need: :func:`~diffpriv_py._fixed_point.clip_rows` proves ‖a·x/R‖ ≤ a for the floats it returns,
    and a is the largest float with a² + b² ≤ 1 in exact rational arithmetic. Norms are computed without overflow,
    so a finite row of any magnitude is projected onto the sphere along its own direction, never NaN or 0.

    A record whose label is not one of the public labels (NaN included) gets the row z = 0 (code -1): its loss
    ℓ(0) is a constant and its gradient is 0, so it contributes nothing to the minimiser, while n stays the public
    number of records.
    """
    # The public checks run again here because the sensitivity sampler calls the target directly.
    X, y = check_supervised_form(data, owner="A supervised estimator")
    labels = public_labels(y, classes, owner="A classifier")
    if not np.all(np.isfinite(X)):
        raise ValueError(
            "X contains NaN or infinite values; rows cannot be clipped to data_norm. Impute or drop them with a "
            "data-independent rule first."
        )
    codes = label_codes(y, labels)
    Z = np.empty((X.shape[0], X.shape[1] + int(fit_intercept)))
    intercept_scale = intercept_scaling if fit_intercept else 0.0
    if fit_intercept:
        Z[:, -1] = intercept_scaling
    # ‖[a·x/R, b]‖² ≤ a² + b² ≤ 1: the features get the largest float a with a² + b² ≤ 1 *exactly* (a = 1 without
    # the intercept), and clip_rows proves its rows' norms ≤ (a/R)·R for the floats it returns.
    feature_norm = _feature_norm(intercept_scale)
    feature_scale = _largest_factor(feature_norm, data_norm)
    Z[:, : X.shape[1]] = clip_rows(X, data_norm, feature_scale)
    Z[codes < 0] = 0.0
    return ERMProblem(Z=Z, codes=codes, classes=labels, feature_scale=feature_scale, intercept_scale=intercept_scale)


def _feature_norm(intercept: float) -> float:
    """The largest float a with a² + b² ≤ 1 in exact rational arithmetic (b = ``intercept``; 1 when b = 0)."""
    room = 1 - Fraction(intercept) ** 2  # exact: 1 − b² in floats cancels badly for b near 1
    a = math.sqrt(float(room))  # two correct roundings: within an ulp or two of √(1 − b²)
    while Fraction(a) ** 2 > room:
        a = math.nextafter(a, 0.0)
    return a


def _largest_factor(norm: float, data_norm: float) -> float:
    """The largest float f with f·R ≤ ``norm`` in exact rational arithmetic (R = ``data_norm``)."""
    f = norm / data_norm
    while Fraction(f) * Fraction(data_norm) > Fraction(norm):
        f = math.nextafter(f, 0.0)
    return f


# ---- constructor-argument converters ----------------------------------------------------------------------------


def _reg_lambda(value: Any) -> float | tuple[float, ...] | str:
    fix = "reg_lambda is the L2 regularisation strength Λ: pass a positive number such as 0.01, a list of candidates,"
    fix += ' "private" to choose among the default grid privately (CMS\'11 Algorithm 3), or "auto" for the default'
    fix += " rule from public quantities (n, number of weights, ε, the loss's curvature)."
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, str):
        if value == "auto":
            return value
        if value != "private":
            raise ValueError(f"Unknown reg_lambda {value!r}. {fix}")
        return DEFAULT_REG_LAMBDA_GRID
    if isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, numbers.Real):
        grid = tuple(
            check_in_range(v, "reg_lambda", 0.0, math.inf, low_closed=False, high_closed=False, fix=fix)
            for v in np.asarray(value, dtype=object).ravel()
        )
        if not grid:
            raise ValueError(f"The reg_lambda grid is empty. {fix}")
        return grid
    return check_in_range(value, "reg_lambda", 0.0, math.inf, low_closed=False, high_closed=False, fix=fix)


def _data_norm(value: Any) -> float:
    if value is None:
        raise ValueError(
            "data_norm is required: pass a public, data-independent bound on the L2 norm of a row of X (e.g. "
            "data_norm=1.0 after mapping each feature's public range to [-1, 1] and dividing by √d; centred ranges, "
            "not [0, 1]: the intercept is regularised, so all-positive features cost accuracy at small n). Rows are "
            "clipped to it. It is never computed from the data, since max‖x‖ of the private data would leak."
        )
    norm = check_in_range(
        value,
        "data_norm",
        0.0,
        math.inf,
        low_closed=False,
        high_closed=False,
        fix="Pass a public bound on the L2 norm of a row of X.",
    )
    return refuse_subnormal(norm, "data_norm")  # the features are scaled by 1/data_norm, which would overflow


def _intercept_scaling(value: Any) -> float:
    return check_in_range(
        value,
        "intercept_scaling",
        0.0,
        1.0,
        low_closed=False,
        high_closed=False,
        fix="intercept_scaling is the constant b appended to each row (features are scaled by √(1 − b²)); "
        "0.25 is the default.",
    )


def _radius_share(value: Any) -> float:
    return check_in_range(
        value,
        "radius_share",
        0.0,
        1.0,
        low_closed=True,
        high_closed=False,
        fix="radius_share is the share of ε spent on choosing the clipping radius privately (0.1 for "
        "LogisticRegression); 0 clips to data_norm only.",
    )


def _perturbation(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or value not in ("objective", "output"):
        raise ValueError(
            f"perturbation must be 'objective' (CMS'11 Algorithm 2, usually more accurate) or 'output' (Algorithm 1). "
            f"Got {value!r}."
        )


def _bool(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{attribute.name} must be True or False. Got {value!r} (type {type(value).__name__}).")


# ---- the mechanisms ---------------------------------------------------------------------------------------------


@attrs.frozen
class _LinearERM(ComposedMech):
    """Shared machinery of :class:`LogisticRegression` and :class:`SVM` (see their docstrings)."""

    reg_lambda: float | tuple[float, ...] | str = attrs.field(default="auto", converter=_reg_lambda)
    perturbation: str = attrs.field(default="objective", kw_only=True, validator=_perturbation)
    data_norm: float = attrs.field(default=None, kw_only=True, converter=_data_norm)
    fit_intercept: bool = attrs.field(default=True, kw_only=True, validator=_bool)
    classes: Classes = attrs.field(default=None, kw_only=True, converter=check_classes)
    intercept_scaling: float = attrs.field(
        default=DEFAULT_INTERCEPT_SCALING, kw_only=True, converter=_intercept_scaling
    )
    radius_share: float = attrs.field(default=0.0, kw_only=True, converter=_radius_share)

    # The target is fixed by the settings above; the sensitivity defaults to the analytic CMS'11 bound.
    target: Any = attrs.field(init=False, repr=False, eq=False)
    sensitivity: float = attrs.field(
        default=GRADIENT_SENSITIVITY,
        kw_only=True,
        converter=as_sensitivity,
        validator=not_below(GRADIENT_SENSITIVITY, "CMS'11: rows in the unit ball and |ℓ'| ≤ 1"),
    )
    gamma_sensitivity: float | None = attrs.field(default=None, kw_only=True, converter=as_gamma_sensitivity)

    loss_name: ClassVar[str] = "logistic"

    @target.default
    def _default_target(self) -> Any:
        return functools.partial(
            build_problem,
            data_norm=self.data_norm,
            fit_intercept=self.fit_intercept,
            classes=self.classes,
            intercept_scaling=self.intercept_scaling,
        )

    def _loss(self) -> _erm.Loss:
        return _erm.LOGISTIC

    # ---- DPMech hooks ----------------------------------------------------------------------------------------

    def _check_dataset(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Types, shapes, equal lengths and the public label set: refused before any budget is charged."""
        features, labels = check_supervised_form(X, owner=type(self).__name__)
        public_labels(labels, self.classes, owner=type(self).__name__)
        return features, labels

    def _assumptions(self) -> tuple[str, ...]:
        return (OBSERVED_ASSUMPTION,) if self.classes == OBSERVED else ()

    def _check_release(self, privacy_params: Eps, data: Any) -> None:
        """Before the charge: refuse a Λ too small for a bounded, certified solve (:func:`~._erm.check_certifiable`
        at ‖b‖ = 0, its least value).

        Each problem's regulariser (Λ, or Λ + Δ at ε/K for objective perturbation) depends on n, the number of
        weights, ε and the number of one-vs-rest problems K, which the public label set fixes (``classes=``, or the
        labels of ``y`` declared public by ``classes="observed"``). The solver checks again with the noise term's
        norm, a data-independent draw.
        """
        n_rows, n_features = data[0].shape
        n_labels = public_labels(data[1], self.classes, owner=type(self).__name__).size
        n_problems = 1 if n_labels == 2 else n_labels
        epsilon = self._radius_split(n_rows, privacy_params.epsilon)[1]
        epsilon_each = epsilon / n_problems
        curvature = self._loss().curvature
        if isinstance(self.reg_lambda, tuple):  # Algorithm 3: candidate i on part i (sizes from n and m only)
            m = len(self.reg_lambda)
            if n_rows < 2 * (m + 1):
                raise ValueError(
                    f"Private selection of reg_lambda among {m} candidates splits the data into {m + 1} parts; "
                    f"{n_rows} records are too few. Pass a single reg_lambda."
                )
            sizes = [len(part) for part in np.array_split(np.empty(n_rows), m + 1)[:m]]
            solves = list(zip(sizes, self.reg_lambda, strict=True))
        else:
            dim = n_features + int(self.fit_intercept)
            solves = [(n_rows, self._public_reg_lambda(n_rows, dim, n_problems, epsilon))]
        for n, reg in solves:
            if n > 0:
                strong = _erm.solve_regulariser(self.perturbation, epsilon_each, n, reg, curvature)
                _erm.check_certifiable(n, curvature, strong)

    def _evaluate(self, output: Any) -> ERMProblem:
        if not isinstance(output, ERMProblem):  # pragma: no cover - the target is fixed by the class
            raise TargetOutputError(f"Expected the normalised ERM problem, got {type(output).__name__}.")
        return output

    def _norm(self, value1: ERMProblem, value2: ERMProblem) -> float:
        """max over one-vs-rest problems (and Λ candidates) of nΛ‖f*(D₁) − f*(D₂)‖₂ (CMS'11 Corollary 8: ≤ 2)."""
        if value1.n != value2.n:
            raise ValueError(f"Replace-one neighbours have the same number of records; got {value1.n} and {value2.n}.")
        if value1.classes.shape != value2.classes.shape or np.any(value1.classes != value2.classes):
            return math.inf  # observed label sets differ: the model's shape itself reveals the change
        grid: tuple[float, ...]
        if isinstance(self.reg_lambda, str):
            # "auto": Λ is resolved at release time (it depends on ε); the bound nΛ‖Δf‖ ≤ 2 holds for every Λ, so
            # the distance is measured over the default grid.
            grid = DEFAULT_REG_LAMBDA_GRID
        else:
            grid = self.reg_lambda if isinstance(self.reg_lambda, tuple) else (self.reg_lambda,)
        loss = self._loss()
        worst = 0.0
        for reg in grid:
            for signs1, signs2 in zip(_signs(value1), _signs(value2), strict=True):
                f1 = _erm.minimise(value1.Z, signs1, loss, reg)
                f2 = _erm.minimise(value2.Z, signs2, loss, reg)
                worst = max(worst, value1.n * reg * float(np.linalg.norm(f1 - f2)))
        return worst

    def _release(self, value: ERMProblem, privacy_params: Eps, rng: np.random.Generator) -> LinearClassifierModel:
        epsilon_radius, epsilon = self._radius_split(value.n, privacy_params.epsilon)
        if epsilon_radius > 0.0:
            value = self._private_radius(value, epsilon_radius, privacy_params.epsilon, rng)
        if isinstance(self.reg_lambda, tuple):
            weights, reg = self._select_reg_lambda(value, epsilon, rng)
        else:
            reg = self._resolve_reg_lambda(value, epsilon)
            weights = self._fit_weights(value.Z, value.codes, value.classes.size, reg, epsilon, rng)
        coef, intercept = self._to_user_coordinates(weights, value)
        return LinearClassifierModel(
            coef=coef, intercept=intercept, classes=value.classes, loss=self.loss_name, reg_lambda=reg
        )

    def _radius_split(self, n: int, epsilon: float) -> tuple[float, float]:
        """(ε_ρ, ε_fit): the budget of the private radius (0 when it does not run) and the rest, rounded down so that
        ε_ρ + ε_fit ≤ ε for the floats used. Public quantities only (n, ε, ``radius_share``)."""
        epsilon_radius = self.radius_share * epsilon
        if (
            epsilon_radius == 0.0
            or epsilon_radius * (n - _clipped_rows(n, epsilon)) / 2.0 < math.log(len(RADIUS_GRID)) + RADIUS_MARGIN
        ):
            return 0.0, epsilon
        return epsilon_radius, (epsilon - epsilon_radius) * (1.0 - 2.0**-40)

    def _private_radius(
        self, problem: ERMProblem, epsilon: float, total: float, rng: np.random.Generator
    ) -> ERMProblem:
        """The problem with the features clipped to a privately chosen radius ρ and scaled back to the norm a.

        The exponential mechanism (ε = ``epsilon``) picks ρ = a·g among the public candidates g of ``RADIUS_GRID``
        (a = the features' norm bound in z) with score −|#{i : ‖zᵢ,ₓ‖ ≤ ρ} − (n − k)|, k = min(n/4, C/``total``)
        rows outside; replacing one record changes every count by at most 1, so the score's sensitivity is 1.
        Then every row's features become f·clip_ρ(zₓ) with f the largest float such that f·ρ ≤ a exactly: a fixed
        per-record map for the chosen ρ, rows still in the unit ball, and ``feature_scale`` multiplied by f.
        """
        p = problem.Z.shape[1] - int(self.fit_intercept)
        bound = _feature_norm(problem.intercept_scale)
        features = problem.Z[:, :p]
        radii, score = radius_scores(features, bound, total)
        selector = Exponential(
            target=lambda _: lambda indices: score[np.asarray(indices)],
            response_set=range(len(RADIUS_GRID)),
            sensitivity=1.0,
            vectorized=True,
        )
        chosen = selector.release_response(Eps(epsilon), None, rng=rng).response
        if chosen == 0:  # ρ = a: every row is inside already
            return problem
        factor = _largest_factor(bound, float(radii[chosen]))
        Z = problem.Z.copy()
        Z[:, :p] = clip_rows(features, float(radii[chosen]), factor)
        return attrs.evolve(problem, Z=Z, feature_scale=problem.feature_scale * factor)

    def _resolve_reg_lambda(self, problem: ERMProblem, epsilon: float) -> float:
        """The given Λ, or for ``"auto"`` :func:`~._erm.default_reg_lambda` of (n, weights, ε per problem, c).

        Only public quantities enter: n, the number of weights, the number of classes (from ``classes=``, or the
        labels of ``y`` declared public by ``classes="observed"``) and ε. Output perturbation spends no budget on
        the curvature term, so its rule has no budget floor (c = 0 there).
        """
        n_problems = 1 if problem.classes.size == 2 else problem.classes.size
        return self._public_reg_lambda(problem.n, problem.Z.shape[1], n_problems, epsilon)

    def _public_reg_lambda(self, n: int, dim: int, n_problems: int, epsilon: float) -> float:
        """The given Λ, or the ``"auto"`` rule at (n, number of weights, ε/K, c)."""
        if isinstance(self.reg_lambda, float):
            return self.reg_lambda
        curvature = self._loss().curvature if self.perturbation == "objective" else 0.0
        return _erm.default_reg_lambda(n, dim, epsilon / n_problems, curvature)

    def _to_user_coordinates(self, weights: np.ndarray, problem: ERMProblem) -> tuple[np.ndarray, np.ndarray]:
        """Weights on z = [a·x/R, b] (or x/R) → (coef, intercept) on the user's x; works on stacks (..., K, p)."""
        if not self.fit_intercept:
            return weights * problem.feature_scale, np.zeros(weights.shape[:-1])
        return weights[..., :-1] * problem.feature_scale, weights[..., -1] * problem.intercept_scale

    def _sample_many(self, value: ERMProblem, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent releases as flat parameter vectors (``np.asarray(model)``), for the auditor.

        Output perturbation solves once and adds ``n`` noise vectors; the other variants repeat the release.
        """
        fast = self._radius_split(value.n, privacy_params.epsilon)[0] == 0.0
        if self.perturbation == "output" and not isinstance(self.reg_lambda, tuple) and fast:
            signs = _signs(value)
            loss = self._loss()
            reg = self._resolve_reg_lambda(value, privacy_params.epsilon)
            epsilon_each = privacy_params.epsilon / len(signs)
            scale = _erm.output_noise_scale(value.n, reg, epsilon_each, self.sensitivity, loss.curvature)
            p = value.Z.shape[1]
            f_star = np.stack([_erm.minimise(value.Z, s, loss, reg) for s in signs])
            direction = rng.standard_normal((n, len(signs), p))
            direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
            weights = _erm.round_to_grid(f_star + direction * rng.gamma(p, scale, size=(n, len(signs), 1)), scale)
            coef, intercept = self._to_user_coordinates(weights, value)
            return np.concatenate([coef, intercept[..., None]], axis=-1).reshape(n, -1)
        return np.stack([np.asarray(self._release(value, privacy_params, rng)) for _ in range(n)])

    def _check_samplable(self) -> None:
        """Sampling is refused for objective perturbation: its noise is calibrated to the change of one record's loss
        gradient at *every* f, which the minimisers' distance (``sensitivity_norm``) does not bound."""
        if self.reg_lambda == "auto":
            raise TypeError(
                f"{type(self).__name__}(reg_lambda='auto') cannot use a sampled sensitivity: Λ is chosen at release "
                "time from ε, and a sensitivity sampled at one Λ does not hold at another. Pass a number for "
                "reg_lambda."
            )
        if self.radius_share > 0.0:
            raise TypeError(
                f"{type(self).__name__}(radius_share={self.radius_share!r}) cannot use a sampled sensitivity: the "
                "rows are rescaled by a radius chosen privately at release time, and a sensitivity sampled at one "
                "scaling does not hold at another. Pass radius_share=0."
            )
        if self.perturbation == "objective":
            raise TypeError(
                f"{type(self).__name__}(perturbation='objective') cannot use a sampled sensitivity: its noise is "
                "calibrated to the change of one record's loss gradient at every f (analytic bound 2), not to the "
                "distance between minimisers that sensitivity_norm measures. Use the analytic default, or "
                "perturbation='output'."
            )

    # ---- the math --------------------------------------------------------------------------------------------

    def _fit_weights(
        self, Z: np.ndarray, codes: np.ndarray, n_classes: int, reg: float, epsilon: float, rng: np.random.Generator
    ) -> np.ndarray:
        """One private weight vector per one-vs-rest problem, each at ε / (number of problems)."""
        perturb = _erm.objective_perturbation if self.perturbation == "objective" else _erm.output_perturbation
        signs = _signs_from_codes(codes, n_classes)
        # Replace-one changes one record of every one-vs-rest problem, so the budget is split (basic composition);
        # parallel composition does not apply.
        epsilon_each = epsilon / len(signs)
        loss = self._loss()
        return np.vstack([perturb(Z, s, loss, reg, epsilon_each, self.sensitivity, rng) for s in signs])

    def _select_reg_lambda(
        self, problem: ERMProblem, epsilon: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, float]:
        """CMS'11 Algorithm 3: train candidate i on part i at the full ε, pick by held-out errors with the EM."""
        grid = self.reg_lambda
        assert isinstance(grid, tuple)  # the caller's branch
        m = len(grid)
        parts = np.array_split(rng.permutation(problem.n), m + 1)
        K = problem.classes.size
        candidates = [
            self._fit_weights(problem.Z[part], problem.codes[part], K, reg, epsilon, rng)
            for part, reg in zip(parts[:m], grid, strict=True)
        ]
        held_out = parts[m]
        Zh, codes_h = problem.Z[held_out], problem.codes[held_out]
        # A record outside the public labels (code -1) counts as an error for every candidate alike.
        errors = np.array([np.count_nonzero(_predict_codes(Zh, w) != codes_h) for w in candidates], dtype=np.float64)
        # Replace-one changes each error count by at most 1, so the score -errors has sensitivity 1 and the
        # exponential mechanism picks i with probability ∝ exp(-ε zᵢ / 2), exactly as Algorithm 3.
        selector = Exponential(
            target=lambda _: lambda indices: -errors[np.asarray(indices)],
            response_set=range(m),
            sensitivity=1.0,
            vectorized=True,
        )
        chosen = selector.release_response(Eps(epsilon), None, rng=rng).response
        return candidates[chosen], grid[chosen]


def radius_scores(features: np.ndarray, bound: float, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(candidate radii ρ = ``bound``·g for g in ``RADIUS_GRID``, their scores −|#{i : ‖xᵢ‖₂ ≤ ρ} − (n − k)|).

    ``features`` are the normalised rows' feature parts (norm ≤ ``bound``), ``epsilon`` the release's total ε
    (k = min(n/4, C/ε) depends on it and n only). Each row enters one count per candidate through a fixed test on
    its own norm, so replacing one record changes every count, and every score, by at most 1.
    """
    n = features.shape[0]
    radii = np.array([bound * g for g in RADIUS_GRID])
    inside = np.searchsorted(np.sort(np.linalg.norm(features, axis=1)), radii, side="right")
    score: np.ndarray = -np.abs(inside - (n - _clipped_rows(n, epsilon)))
    return radii, score


def _clipped_rows(n: int, epsilon: float) -> float:
    """k = min(n/4, C/ε): the number of rows the private radius aims to leave outside (``RADIUS_CLIPPED``)."""
    return min(n / 4.0, RADIUS_CLIPPED / epsilon)


def _signs_from_codes(codes: np.ndarray, n_classes: int) -> list[np.ndarray]:
    if n_classes == 2:
        return [np.where(codes == 1, 1.0, -1.0)]
    return [np.where(codes == k, 1.0, -1.0) for k in range(n_classes)]


def _signs(problem: ERMProblem) -> list[np.ndarray]:
    return _signs_from_codes(problem.codes, problem.classes.size)


def _predict_codes(Z: np.ndarray, weights: np.ndarray) -> np.ndarray:
    scores = Z @ weights.T
    result: np.ndarray = (scores[:, 0] > 0).astype(np.intp) if weights.shape[0] == 1 else np.argmax(scores, axis=1)
    return result


_NOTES = """
    Notes
    -----
    **Privacy claim.** ε-differential privacy under the *replace-one* neighbouring relation (datasets of the same
    size n differing in one record (x, y)), which is the relation of Chaudhuri, Monteleoni & Sarwate (2011). Pure
    ε: ``Eps`` parameters (a ``Del`` is accepted and its δ reported unchanged). n is treated as public.

    **Normalisation.** Each row is clipped to the public ``data_norm`` R (x ← x·min(1, R/‖x‖₂)) and divided by R.
    With ``fit_intercept=True`` the constant b = ``intercept_scaling`` is appended and the features are scaled by
    a = √(1 − b²), so z = [a·x/R, b] has ‖z‖₂² ≤ a² + b² = 1 exactly as the analysis requires; the intercept
    weight is regularised like every other weight (strong convexity in every direction is part of the proof).
    Weights are mapped back to the user's features (coef = a·w_x/R, intercept = b·w_b). A small b keeps most of the
    norm budget for the features and shrinks the noise on the intercept (SVM: b = 0.25 by default; 1/√2, the
    diffprivlib-like split, gave higher error on every benchmark task). LogisticRegression defaults to b = 0.5:
    with the private radius (below) it was more accurate on uncentred features at small n.

    **Private radius** (``radius_share`` ρ_s > 0; LogisticRegression's default 0.1, SVM's 0). Rows often lie deep
    inside the public ``data_norm`` ball (e.g. [0, 1] ranges divided by √p: median norm R/4), and the noise of
    both perturbations is calibrated to the ball, not to the rows. When ε_ρ(n − k)/2 ≥ ln m + 4 (ε_ρ = ρ_s·ε,
    k = min(n/4, 100/ε) rows to leave outside, m = 13 candidates; public n and ε only), the release first spends
    ε_ρ on choosing a radius, and runs everything below at ε_fit = (ε − ε_ρ)(1 − 2⁻⁴⁰):

    1. with a the features' bound in z, the exponential mechanism (McSherry & Talwar 2007) picks ρ = a·g among the
       public candidates g ∈ {{2^(−j/3) : j = 0, …, 12}} with probability ∝ exp(ε_ρ·u(g)/2),
       u(g) = −|#{{i : ‖zᵢ,ₓ‖₂ ≤ ρ}} − (n − k)|;
    2. every row's features become f·clip_ρ(zₓ), f the largest float with f·ρ ≤ a in exact arithmetic (so the
       floats of every row still have ‖z‖₂ ≤ 1, :func:`~diffpriv_py._fixed_point.clip_rows`), and the released
       coefficients are mapped back with f (coef = f·a·w_x/R).

    *Proof.* Replacing one record changes each count, hence each u(g), by at most 1, so step 1 is ε_ρ-DP. For each
    fixed g, step 2 is a fixed map applied to each record separately, with images in the unit ball; it maps
    replace-one neighbours to replace-one neighbours (or to equal datasets), so the CMS'11 analysis below holds on
    the mapped data at ε_fit. By sequential (adaptive) composition the release is ε_ρ + ε_fit ≤ ε -DP; the map back
    is post-processing. The sensitivity sampler is refused while ρ_s > 0 (a sampled sensitivity holds for one
    scaling only). With ρ_s = 0, or n·ε below the condition, the rows are scaled by ``data_norm`` alone.

    **Calibration** (sensitivity 2 = replace-one L2 bound on Σᵢ ℓ'(yᵢfᵀzᵢ)yᵢzᵢ; c = {curvature}):

    * **The solver** returns f̂ whose exact gradient norm is *certified* ≤ τ = 1e-10·max(1, 4c)·min(1, 10⁵/n)
      (floored at 1e-12·max(1, 4c)): the gradient is evaluated with block sums of bounded rounding and a
      rigorous allowance is added before the comparison. By (Λ + Δ)-strong convexity ‖f̂ − f*‖ ≤ r = τ/(Λ + Δ).
      If damped Newton cannot certify τ, an accelerated-gradient fallback (step budget from public quantities)
      looks for a certified point; only certified points are released. When none can be (the proven rounding
      error near f* exceeds 2τ), ``CertificationError`` is raised after the charge: whether it happens depends on
      the data (never on the benchmark or adversarial problems; see docs/erm.md). A Λ too small for a bounded
      solve is refused before the charge when ``classes=`` is given (the number of problems is then public).
    * ``perturbation="output"`` (Algorithm 1): f̂ + b with density ∝ exp(−‖b‖/s), i.e. ‖b‖ ~ Gamma(p, s) in a
      uniform direction, s = (2 + 2nτ)/(nΛε), since ‖f*(D) − f*(D')‖ ≤ 2/(nΛ) (Corollary 8) and f̂ is within r.
    * ``perturbation="objective"`` (Algorithm 2 at ε₁ = 0.99ε, then approximate-minimum noise at ε₂ = 0.01ε):
      ε' = ε₁ − ln(1 + 2c/(nΛ) + c²/(nΛ)²); if ε' ≤ 0, Δ = c/(n(e^{{ε₁/4}} − 1)) − Λ and ε' = ε₁/2, else Δ = 0;
      b ~ density ∝ exp(−(ε'/2)‖b‖); f̂ ≈ argmin J(f) + bᵀf/n + (Δ/2)‖f‖² certified within r of the exact
      minimiser f*; release f̂ + η with density(η) ∝ exp(−ε₂‖η‖/(2r)). f* is ε₁-DP (CMS'11 Theorem 9); given f*,
      the neighbours' f̂ are within 2r of each other, so η makes the release ε₂-DP given f*; ε in total
      (approximate minima perturbation, Iyengar et al. 2019).
    * More than two classes: one-vs-rest, each problem at ε/K. A replaced record changes all K problems, so
      parallel composition does not apply and basic composition gives ε in total.
    * A grid of ``reg_lambda`` values (or ``"private"``) runs Algorithm 3: the data are split at random into m+1
      parts, candidate i is trained on part i at the full ε, and the exponential mechanism picks one with
      probability ∝ exp(−ε·errorsᵢ/2) on the last part; ε-DP by parallel composition.

    **Default Λ** (``reg_lambda="auto"``): from n, the number of weights p, the number of one-vs-rest problems K,
    ε/K (ε_fit/K with the private radius) and the curvature c only (no data values), Λ minimises the public
    utility proxy
    (Λ/2)F² + p(p+1)(2/ε'(Λ))²/(2n²(Λ + θc/p)) (F = 8, θ = 1/4) over Λ ≥ max(c/(n(e^{{ε/4}} − 1)), 1e-6). The
    lower bound guarantees ε' ≥ ε/2 (no Δ branch); output perturbation uses c = 0. Any Λ > 0 gives the same
    guarantee; the rule only sets accuracy. The sensitivity sampler is refused with ``"auto"``.

    **Sensitivity.** ``sensitivity=`` may be raised but not set below the derived 2 (0 would release the exact
    minimiser); a value set by the sensitivity sampler (output perturbation) is kept with its random-DP guarantee.

    **Public label set.** The labels, and with them the number of one-vs-rest problems K, the model's shape
    ((1, p) or (K, p)) and the budget split ε/K, come from ``classes=`` only, never from the private ``y``:
    ``classes=None`` is refused before the charge. ``classes="observed"`` is the user's declaration that the set of
    labels present in ``y`` is public; it is then read (and checked: two labels or more, no NaN) before the charge,
    and the release records the assumption in :attr:`~diffpriv_py.Response.assumptions`. A record whose label is
    not among the declared ``classes`` (NaN included) is not refused, which would make the release fail after the
    charge depending on one private value: it gets the row z = 0, so its loss is the constant ℓ(0) and its gradient
    0, and n stays the public record count. Every bound above still holds: the replaced record's gradient term
    ℓ'(·)yz has norm ≤ ‖z‖ ≤ 1 for either record (so the sensitivity 2 stands), its Hessian term ℓ''(·)zzᵀ is 0 ≼
    c·I (the rank-two, curvature-c argument of Theorem 9 only improves), and in Algorithm 3 it counts as one error
    for every candidate (each count still changes by at most 1). Complex X is refused before an accountant is
    charged (the dtype is public). Rows are clipped with overflow-safe norms, and every row's floats
    have exact norm ≤ 1. Noise comes from floating-point samplers (as every DP ERM library), and the release is
    rounded to a data-independent grid; the sampler's float output is where the implementation still departs from
    the real-number proof.

    References
    ----------
    K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private empirical risk minimization. JMLR 12
    (2011) 1069–1109.
    F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007 (the exponential mechanism).
    R. Iyengar, J. P. Near, D. Song, O. Thakkar, A. Thakurta, L. Wang. Towards practical differentially private
    convex optimization. IEEE S&P 2019 (approximate minima perturbation).
"""


@attrs.frozen
class LogisticRegression(_LinearERM):
    __doc__ = """Differentially private L2-regularised logistic regression (CMS'11).

    Minimises J(f) = (1/n) Σ ln(1 + exp(−yᵢ fᵀzᵢ)) + (Λ/2)‖f‖² on normalised rows and perturbs the output or
    the objective.

    Parameters
    ----------
    reg_lambda : "auto", float, sequence of float, or "private", default "auto"
        Λ > 0. ``"auto"`` computes Λ at release time from public quantities only (see Notes). A sequence (or
        ``"private"`` for ``(1e-4, 1e-3, 1e-2, 1e-1)``) is chosen privately (Algorithm 3).
    perturbation : {"objective", "output"}, default "objective"
        Algorithm 2 (objective perturbation) or Algorithm 1 (output perturbation).
    data_norm : float
        Required public bound R on ‖x‖₂ of a row; rows are clipped to it. Never taken from the data.
    fit_intercept : bool, default True
        Learn an intercept through an appended constant feature (see Notes).
    intercept_scaling : float in (0, 1), default 0.5
        The appended constant b; the features are scaled by √(1 − b²) so rows stay in the unit ball.
    radius_share : float in [0, 1), default 0.1
        Share of ε spent on a private clipping radius that rescales the rows to fill the unit ball (see Notes);
        0 clips to ``data_norm`` only.
    classes : sequence or "observed"
        Required at release: every possible label (the public label set). Two classes give one problem with
        ``classes[1]`` as the positive class; more give one-vs-rest. ``"observed"`` declares the set of labels
        present in ``y`` public (recorded in the Response's ``assumptions``). A record with another label
        contributes nothing (see Notes).

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> from diffpriv_py.estimators import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = (X[:, 0] > 0).astype(int)
    >>> mech = LogisticRegression(0.01, perturbation="objective", data_norm=3.0, classes=[0, 1])
    >>> model = mech.release_response(dp.Eps(1.0), (X, y), rng=1).response
    >>> float(np.mean(model.predict(X) == y)) > 0.9
    True
""" + _NOTES.format(curvature="1/4")

    # Other defaults than SVM's (redefined fields move to the end; the target, built from them, follows them).
    intercept_scaling: float = attrs.field(
        default=LOGISTIC_INTERCEPT_SCALING, kw_only=True, converter=_intercept_scaling
    )
    radius_share: float = attrs.field(default=RADIUS_SHARE, kw_only=True, converter=_radius_share)
    target: Any = attrs.field(
        init=False, repr=False, eq=False, default=attrs.Factory(_LinearERM._default_target, takes_self=True)
    )


def _huber_width(value: Any) -> float:
    width = check_in_range(
        value,
        "huber_width",
        0.0,
        math.inf,
        low_closed=False,
        high_closed=False,
        fix="huber_width is the h of the Huber hinge (ℓ'' ≤ 1/(2h)); 0.5 is the usual choice.",
    )
    return refuse_subnormal(width, "huber_width", owner="SVM")  # the curvature 1/(2h) would overflow


def _huber_only(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or value != "huber":
        raise ValueError(
            f"SVM supports loss='huber' only. Got {value!r}. The plain hinge loss is not differentiable, so neither "
            "CMS'11 analysis applies to it; the Huber hinge with a small huber_width approximates it."
        )


@attrs.frozen
class SVM(_LinearERM):
    __doc__ = """Differentially private linear SVM with the Huber hinge loss (CMS'11 §3.4.2).

    Minimises J(f) = (1/n) Σ ℓ_h(yᵢ fᵀzᵢ) + (Λ/2)‖f‖² on normalised rows, with ℓ_h(m) = 0 for m > 1 + h,
    (1 + h − m)²/(4h) for |1 − m| ≤ h and 1 − m for m < 1 − h.

    Parameters
    ----------
    reg_lambda : "auto", float, sequence of float, or "private", default "auto"
        Λ > 0. ``"auto"`` computes Λ at release time from public quantities only (see Notes). A sequence (or
        ``"private"`` for ``(1e-4, 1e-3, 1e-2, 1e-1)``) is chosen privately (Algorithm 3).
    loss : {"huber"}, default "huber"
        The only loss with the smoothness objective perturbation needs (the hinge is refused).
    perturbation : {"objective", "output"}, default "objective"
    data_norm : float
        Required public bound R on ‖x‖₂ of a row; rows are clipped to it. Never taken from the data.
    fit_intercept : bool, default True
    classes : sequence or "observed"
        Required at release: every possible label, or ``"observed"`` (as :class:`LogisticRegression`).
    intercept_scaling : float in (0, 1), default 0.25
        The appended constant b (see Notes).
    radius_share : float in [0, 1), default 0
        Share of ε spent on a private clipping radius (see Notes); off by default for the SVM.
    huber_width : float, default 0.5
        h; the curvature bound is c = 1/(2h), so smaller h costs more of the budget in objective perturbation.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> from diffpriv_py.estimators import SVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = np.where(X[:, 0] > 0, "yes", "no")
    >>> model = SVM(0.01, data_norm=3.0, classes=["no", "yes"]).release_response(dp.Eps(1.0), (X, y), rng=1).response
    >>> float(np.mean(model.predict(X) == y)) > 0.9
    True
""" + _NOTES.format(curvature="1/(2h)")

    loss: str = attrs.field(default="huber", kw_only=True, validator=_huber_only)
    huber_width: float = attrs.field(default=0.5, kw_only=True, converter=_huber_width)

    loss_name: ClassVar[str] = "huber"

    def _loss(self) -> _erm.Loss:
        return _erm.huber_loss(self.huber_width)
