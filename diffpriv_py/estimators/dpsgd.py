"""DP-SGD (Abadi et al. 2016) in numpy: softmax regression and small multilayer perceptrons.

Each step draws a Poisson sample, clips every sampled example's gradient to L2 norm C, adds Gaussian noise to the
sum (the library's safe grid noise, calibrated to the sum's true floating-point sensitivity) and takes a
momentum-SGD step. Per-example norms come from the per-layer factorisation ‖∂ℓ/∂W‖ = ‖δ‖·√(‖a‖² + 1) (the "ghost
norm" of Goodfellow 2015; Lee & Kifer 2021), so no per-example gradient tensor is ever formed: memory is
O(batch × width), each step two matrix products per layer. The data-independent randomness (noise, Poisson
samples) is drawn a block of steps at a time, and the parameters are one vector, so a step costs about what a
non-private mini-batch step does.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Literal, SupportsFloat

import attrs
import numpy as np

from .._fixed_point import row_norms
from .._validation import check_in_range, check_int, one_of, refuse_subnormal
from ..accounting import SubsampledGaussianEvent, dpsgd_epsilon, noise_multiplier_for
from ..events import Relation
from ..exceptions import TargetOutputError
from ..mechanisms.composed import ComposedMech, Part
from ..noise import discrete_gaussian, grid_gaussian, grid_step, round_to_grid
from ..privacy import Del, Eps
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

__all__ = [
    "DPSGDClassifier",
    "DPSGDModel",
    "SafeNoise",
    "clipped_gradient_sum",
    "step_randomness",
    "sum_sensitivity",
]


# ---- the released model ---------------------------------------------------------------------------------------


def _frozen_arrays(value: Any) -> tuple[np.ndarray, ...]:
    out = []
    for v in value:
        a = np.array(v, dtype=np.float64)
        a.setflags(write=False)
        out.append(a)
    return tuple(out)


def _frozen_labels(value: Any) -> np.ndarray:
    out = np.array(value)
    out.setflags(write=False)
    return out


def _activate(z: np.ndarray, activation: str) -> np.ndarray:
    result: np.ndarray = np.maximum(z, 0.0) if activation == "relu" else np.tanh(z)
    return result


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    result: np.ndarray = z
    return result


@attrs.frozen(eq=False)
class DPSGDModel:
    """A network released by DP-SGD: dense layers, ReLU or tanh hidden units, softmax output (read-only arrays).

    Attributes
    ----------
    weights : tuple of ndarray
        One (fan_in, fan_out) matrix per layer; a single layer is multinomial logistic regression.
    biases : tuple of ndarray
        One vector per layer.
    classes : ndarray
        The labels, in the order of the output units.
    activation : {"relu", "tanh"}
        Hidden-unit activation.
    noise_multiplier : float
        σ used in training (noise std / clipping norm).
    sampling_rate : float
        Poisson sampling rate q.
    steps : int
        Number of noisy steps.
    epsilon_add_remove : float
        ε of the same training under add/remove neighbours at the release's δ (what DP-SGD papers report), for
        comparison; the release's guarantee is replace-one (see ``Response.privacy_params``).

    Notes
    -----
    Post-processing of a DP release: any use of the model keeps the guarantee recorded in the Response.
    """

    weights: tuple[np.ndarray, ...] = attrs.field(converter=_frozen_arrays)
    biases: tuple[np.ndarray, ...] = attrs.field(converter=_frozen_arrays)
    classes: np.ndarray = attrs.field(converter=_frozen_labels)
    activation: str = "relu"
    noise_multiplier: float = math.nan
    sampling_rate: float = math.nan
    steps: int = 0
    epsilon_add_remove: float = math.nan

    @property
    def n_features_in(self) -> int:
        """Number of input features."""
        result: int = self.weights[0].shape[0]
        return result

    @property
    def hidden_layer_sizes(self) -> tuple[int, ...]:
        """Widths of the hidden layers (empty for logistic regression)."""
        return tuple(w.shape[1] for w in self.weights[:-1])

    def decision_function(self, X: Any) -> np.ndarray:
        """Logits, shape (n, n_classes)."""
        a = check_rows_to_predict(X, self.n_features_in, model="DP-SGD model")
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            a = _activate(a @ w + b, self.activation)
        result: np.ndarray = a @ self.weights[-1] + self.biases[-1]
        return result

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (softmax of the logits), columns in the order of ``classes``."""
        return _softmax(self.decision_function(X))

    def predict(self, X: Any) -> np.ndarray:
        """The most probable label for each row."""
        result: np.ndarray = self.classes[np.argmax(self.decision_function(X), axis=1)]
        return result

    def score(self, X: Any, y: Any) -> float:
        """Accuracy on (X, y) (a function of whatever data you pass: not a DP release if it is private)."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    def __repr__(self) -> str:
        return (
            f"DPSGDModel(n_features_in={self.n_features_in}, hidden_layer_sizes={self.hidden_layer_sizes}, "
            f"classes={self.classes.tolist()!r}, noise_multiplier={self.noise_multiplier:.4g}, steps={self.steps})"
        )


# ---- the training data (the target's output) --------------------------------------------------------------------


@attrs.frozen(eq=False)
class _Training:
    X: np.ndarray
    codes: np.ndarray
    classes: np.ndarray
    known: np.ndarray | None
    """Per record, whether its label is one of ``classes`` (``None``: all are); the others contribute 0."""


def _training_data(data: Any, classes: Classes) -> _Training:
    # The public checks run again here because the target may be called directly (e.g. by the auditor).
    X, y = check_supervised_form(data, owner="DPSGDClassifier")
    labels = public_labels(y, classes, owner="DPSGDClassifier")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values. Impute or drop them with a data-independent rule first.")
    codes = label_codes(y, labels)
    known = None if codes.min(initial=0) >= 0 else codes >= 0
    return _Training(X=X, codes=codes, classes=labels, known=known)


# ---- training ---------------------------------------------------------------------------------------------------


def _init_layers(
    sizes: Sequence[int], activation: str, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    weights: list[np.ndarray] = []
    biases: list[np.ndarray] = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        # He initialisation for ReLU, Glorot for tanh: data-independent, so free of privacy cost.
        scale = math.sqrt(2.0 / fan_in) if activation == "relu" else math.sqrt(2.0 / (fan_in + fan_out))
        weights.append(rng.normal(0.0, scale, size=(fan_in, fan_out)))
        biases.append(np.zeros(fan_out))
    return weights, biases


MAX_WIDTH = 2**20
"""Largest number of features or hidden units per layer, and bound on the number of layers: keeps the float error of
a per-example norm below 2⁻³⁰ (see :func:`clipped_gradient_sum`)."""
MAX_STEPS = 10**8
"""Most noisy steps T = ⌈epochs / sampling_rate⌉ of one release: each step is a pass over a sample of the data."""

HUGE_NORM_BITS = 900
"""A per-example gradient whose norm exceeds C·2⁹⁰⁰ (or is not finite) contributes 0 (see
:func:`clipped_gradient_sum`)."""


def clipped_gradient_sum(
    X: np.ndarray,
    codes: np.ndarray,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    activation: str,
    clip_norm: float,
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Σᵢ clip(∇ℓᵢ, C) for cross-entropy, per layer, without per-example gradients; also the per-example norms.

    The gradient of example i for layer l is the outer product a_{l−1,i} δ_{l,i}ᵀ (plus δ_{l,i} for the bias), so
    its norm is ‖δ_{l,i}‖·√(‖a_{l−1,i}‖² + 1); the norms of the layers combine in L2 into ‖∇ℓᵢ‖. The clipped sum
    is then a_{l−1}ᵀ(δ_l ⊙ s) with sᵢ = min(1, C/‖∇ℓᵢ‖): one matrix product per layer.

    Notes
    -----
    **Two paths, one bound, chosen per example.** The fast path squares the values directly: every ‖a‖², ‖δ‖² is one
    row-wise dot product, and an example takes it when each of its sums of squares is at most 2⁴⁰⁰ (a comparison
    that is false for NaN and inf). Then no square overflowed and each |a|, |δ| ≤ 2²⁰⁰; underflowed squares cost at
    most d·2⁻¹⁰⁷⁴ ≤ 2⁻¹⁰⁵⁴ per sum, so the computed ‖∇ℓᵢ‖² = Σ_l ‖δ_l‖²(‖a_{l−1}‖² + 1) is within a relative
    γ_{2d+L+2} ≤ 2⁻³¹ (d ≤ ``MAX_WIDTH`` values per layer, L < ``MAX_WIDTH`` layers) plus an absolute 2⁻⁶³⁰ of the
    exact one for the computed factors: with C² ≥ 1e-60, the norm is within a relative 2⁻³⁰ wherever it reaches C,
    and a gradient left unclipped has norm below C(1 + 2⁻³⁰) either way. Its unscaled products lose at most 2⁻⁸⁷⁴
    per entry to underflow (a subnormal δ·s times |a| ≤ 2²⁰⁰), negligible next to C·2⁻³⁰. Any other example takes
    the safe path below, computed from its own factors. The choice depends only on the example itself, so an
    example's contribution is the same whatever else is in the sample, as the replace-one sensitivity requires.

    **No finite input escapes the clip** (safe path). Norms are computed without squaring raw values
    (:func:`row_norms` scales each row by a power of two, and the layer factors combine through ``hypot`` and a
    second scaled norm), so a record with entries near 1e154, whose squared norm overflows, gets its true norm and
    is clipped like any other. An example whose norm is not finite (an activation, logit or gradient that
    overflowed, or a norm beyond the largest double) or exceeds C·2⁹⁰⁰ contributes exactly 0 (its rows are zeroed
    before the products, so inf·0 cannot make NaN): a data-independent value in the ball of radius C. The returned
    norm is then inf.

    **Float error.** Each computed norm is within a relative 2⁻³⁰ of the exact norm of the computed factors, so
    every contribution has norm ≤ C(1 + 2⁻³⁰); the products and sums of the b contributions add at most
    γ_b·Σᵢ‖gᵢ‖ (γ_b = bu/(1 − bu), u = 2⁻⁵³, Higham 2002, §3.1; any summation order) in L2. In the safe path the
    weight products are formed as (a·2⁻ᵉ)ᵀ(δ·2ᵉ·s) with 2ᵉ near the row's largest |a|: both shifts are exact, the
    left factor is at most 1 and the right one at most 2C per entry, so an underflow costs at most 2⁻¹⁰⁷⁴ per
    product, far below C·2⁻³⁰ for ``clip_norm`` ≥ 1e-30. :func:`sum_sensitivity` turns this into the sum's
    sensitivity.
    """
    out_w = [np.empty_like(w) for w in weights]
    out_b = [np.empty_like(b) for b in biases]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        norms = _clipped_sum_into(X, _squared_rows(X), codes, weights, biases, activation, clip_norm, out_w, out_b)
    return out_w, out_b, norms


FAST_SQUARES = 2.0**400
"""Largest sum of squares (of a record, an activation or a delta) for which an example takes the fast clipping path."""


def _squared_rows(block: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.einsum("ij,ij->i", block, block)
    return result


def _clipped_sum_into(
    X: np.ndarray,
    x_squares: np.ndarray,
    codes: np.ndarray,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    activation: str,
    clip_norm: float,
    out_w: Sequence[np.ndarray],
    out_b: Sequence[np.ndarray],
    *,
    fast_squares: float = FAST_SQUARES,
) -> np.ndarray:
    """:func:`clipped_gradient_sum` written into ``out_w``/``out_b``; returns the norms. ``x_squares`` is ‖xᵢ‖²;
    an example takes the fast path when each of its sums of squares is at most ``fast_squares``.

    Call under ``np.errstate(over="ignore", invalid="ignore", under="ignore")``: an overflow is detected, not raised.
    """
    layers = len(weights)
    b = X.shape[0]
    acts = [X]
    for w, bias in zip(weights[:-1], biases[:-1], strict=True):
        z = acts[-1] @ w
        z += bias
        acts.append(np.maximum(z, 0.0, out=z) if activation == "relu" else np.tanh(z, out=z))
    delta = _softmax(acts[-1] @ weights[-1] + biases[-1])
    delta[np.arange(b), codes] -= 1.0
    deltas = [delta]
    for layer in range(layers - 1, 0, -1):
        back = deltas[0] @ weights[layer].T
        # ReLU's derivative is 1 exactly where the activation is positive; tanh's is 1 − tanh².
        back *= acts[layer] > 0 if activation == "relu" else 1.0 - acts[layer] ** 2
        deltas.insert(0, back)
    squares = np.empty((2 * layers, b))
    squares[0] = x_squares
    for layer in range(1, layers):
        np.einsum("ij,ij->i", acts[layer], acts[layer], out=squares[layer])
    for layer in range(layers):
        np.einsum("ij,ij->i", deltas[layer], deltas[layer], out=squares[layers + layer])
    # The path is chosen per example, from its own sums of squares only, so that an example's contribution never
    # depends on the other examples of the sample (the replace-one sensitivity counts on it).
    safe = np.flatnonzero(~(squares.max(axis=0, initial=0.0) <= fast_squares))  # NaN is not ≤: safe path
    factors = squares[:layers]
    factors += 1.0
    norms: np.ndarray = np.sqrt(np.einsum("lb,lb->b", squares[layers:], factors))
    # C / max(‖g‖, C) is min(1, C/‖g‖) exactly (C/C = 1), and 1 for a zero gradient.
    scale = clip_norm / np.maximum(norms, clip_norm)
    shifts: list[np.ndarray] | None = None
    if safe.size:
        acts, deltas, shifts = _safe_rows(safe, acts, deltas, norms, scale, clip_norm)
    for layer, (a, d, gw, gb) in enumerate(zip(acts, deltas, out_w, out_b, strict=True)):
        scaled = d * scale[:, None]
        if shifts is None:
            np.matmul(a.T, scaled, out=gw)
        else:
            e = shifts[layer][:, None]  # 0 except on the safe path's rows
            np.matmul(np.ldexp(a, -e).T, np.ldexp(d, e) * scale[:, None], out=gw)
        np.add.reduce(scaled, axis=0, out=gb)
    return norms


def _safe_rows(
    rows: np.ndarray,
    acts: list[np.ndarray],
    deltas: list[np.ndarray],
    norms: np.ndarray,
    scale: np.ndarray,
    clip_norm: float,
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """The safe path for the examples ``rows``: their norms and scales (written into ``norms`` and ``scale``), the
    factors with non-finite examples zeroed (new arrays; the inputs, X among them, are not modified), and per layer
    the power-of-two exponents e that shift a ⊗ δ to (a·2⁻ᵉ) ⊗ (δ·2ᵉ), 0 for every other example."""
    safe = _safe_norms([a[rows] for a in acts], [d[rows] for d in deltas])
    ok = np.isfinite(safe) & (safe <= math.ldexp(clip_norm, HUGE_NORM_BITS))
    norms[rows] = np.where(ok, safe, np.inf)
    scale[rows] = np.where(ok, np.minimum(1.0, clip_norm / np.where(ok, np.maximum(safe, 1e-300), 1.0)), 0.0)
    if not np.all(ok):
        # Zero the whole example (inputs and deltas), so that no inf or NaN reaches the products.
        keep = np.ones(norms.size, dtype=bool)
        keep[rows[~ok]] = False
        acts = [np.where(keep[:, None], a, 0.0) for a in acts]
        deltas = [np.where(keep[:, None], d, 0.0) for d in deltas]
    shifts = []
    for a in acts:
        e = np.zeros(norms.size, dtype=np.intp)
        if a.shape[1]:
            e[rows] = np.frexp(np.max(np.abs(a[rows]), axis=1))[1]
        shifts.append(e)
    return acts, deltas, shifts


def _safe_norms(acts: Sequence[np.ndarray], deltas: Sequence[np.ndarray]) -> np.ndarray:
    """Per-example gradient norms from power-of-two-scaled row norms (:func:`row_norms`); +inf if not finite."""
    layer_norms = np.column_stack(
        [row_norms(d) * np.hypot(row_norms(a), 1.0) for a, d in zip(acts, deltas, strict=True)]
    )
    result: np.ndarray = row_norms(layer_norms)
    return result


def _safe_clipped_sum(
    X: np.ndarray,
    codes: np.ndarray,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    activation: str,
    clip_norm: float,
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """:func:`clipped_gradient_sum` with every example on the safe path (the reference tests and benchmarks use)."""
    out_w = [np.empty_like(w) for w in weights]
    out_b = [np.empty_like(b) for b in biases]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        norms = _clipped_sum_into(
            X, _squared_rows(X), codes, weights, biases, activation, clip_norm, out_w, out_b, fast_squares=-1.0
        )
    return out_w, out_b, norms


def sum_sensitivity(clip_norm: float, n: int) -> float:
    """Replace-one L2 sensitivity of the *computed* clipped sum of a step: C·(1 + 2⁻³⁰)·(1 + 2n·γ_n).

    One record added to or removed from a sample of at most n examples changes the exact sum of the computed
    contributions by at most C(1 + 2⁻³⁰); each dataset's computed sum is off the exact one by at most
    γ_n·n·C(1 + 2⁻³⁰) (see :func:`clipped_gradient_sum`), hence the bound, rounded up.
    """
    unit = n * 2.0**-53
    gamma = unit / (1.0 - unit)
    return clip_norm * (1.0 + 2.0**-30) * (1.0 + 2.0 * n * gamma) * (1.0 + 2.0**-50)


@attrs.frozen
class SafeNoise:
    """The noise of every step: the grid ``r`` the sums are rounded to and the standard deviation of the noise.

    Attributes
    ----------
    noise_multiplier : float
        σ of the subsampled Gaussian event the release is accounted as (noise std / C, ideal arithmetic).
    grid : float
        r, a power of two ≤ σC·2⁻⁴⁰ (:func:`diffpriv_py.noise.grid_step`).
    step_sensitivity : float
        The per-step sensitivity of what is actually perturbed: :func:`sum_sensitivity` + √d·r.
    noise_std : float
        The standard deviation actually sampled: σ_c × ``step_sensitivity`` with σ_c ≥ σ (see
        :meth:`DPSGDClassifier.safe_noise`).
    """

    noise_multiplier: float
    grid: float
    step_sensitivity: float
    noise_std: float

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``values`` rounded to the grid plus grid Gaussian noise (:func:`diffpriv_py.noise.grid_gaussian`)."""
        return grid_gaussian(values, self.grid, self.noise_std, rng)

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` i.i.d. noise values r·G, G discrete Gaussian of parameter ``noise_std``/r (exact floats).

        ``add(values, draw(values.size, rng))`` has the law of ``perturb(values, rng)``: the same integer sampler,
        and the same two floats added.
        """
        noise: np.ndarray = discrete_gaussian(count, self.noise_std / self.grid, rng) * self.grid
        return noise

    def add(self, values: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """``values`` rounded to the grid plus pre-drawn ``noise`` from :meth:`draw`: one correctly rounded sum of
        two grid multiples, so the result depends only on the integer sum (as in :meth:`perturb`)."""
        rounded = round_to_grid(values, self.grid)
        rounded += noise
        return rounded


BLOCK_BYTES = 2**25
"""Memory bound of the randomness drawn ahead for a block of steps (noise and Poisson uniforms): 32 MiB."""


def step_randomness(
    noise: SafeNoise,
    steps: int,
    dims: int,
    n: int,
    q: float,
    rng: np.random.Generator,
    block_bytes: int | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Each step's noise vector (``dims`` values) and Poisson sample (sorted row indices), drawn a block at a time.

    The noise and the samples are data-independent, so they can be drawn ahead: a block of
    k = max(1, min(steps, ⌊block_bytes / (8(dims + n))⌋)) steps (``block_bytes`` defaults to ``BLOCK_BYTES``) takes
    k·dims values from :meth:`SafeNoise.draw` (step after step) and then k·n uniforms (record i joins step t's
    sample iff its uniform is < q). Each step gets its own row of the block, never another step's: the T noise
    vectors are i.i.d. and independent of the samples, exactly as when each is drawn at its step, so the privacy
    analysis is unchanged. A seed fixes the result for a given (dims, n), which fix the block size.
    """
    per_block = max(1, min(steps, (BLOCK_BYTES if block_bytes is None else block_bytes) // (8 * (dims + n))))
    for start in range(0, steps, per_block):
        k = min(per_block, steps - start)
        values = noise.draw(k * dims, rng).reshape(k, dims)
        joins = rng.random((k, n)) < q
        for row, mask in zip(values, joins, strict=True):
            yield row, np.flatnonzero(mask)


def _train(
    data: _Training,
    sizes: Sequence[int],
    *,
    activation: str,
    noise: SafeNoise,
    q: float,
    steps: int,
    learning_rate: float,
    momentum: float,
    clip_norm: float,
    rng: np.random.Generator,
    progress: bool,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    from tqdm.auto import tqdm

    n = data.X.shape[0]
    weights, biases = _init_layers(sizes, activation, rng)
    # All parameters live in one vector, layer by layer ([W; b] as a (fan_in + 1) × fan_out block), and the gradient
    # in another of the same layout: the noise and the momentum update are whole-vector operations, whatever the
    # number of layers.
    shapes = [(w.shape[0] + 1, w.shape[1]) for w in weights]
    ends = np.cumsum([rows * cols for rows, cols in shapes]).tolist()
    params, grad = np.empty(ends[-1]), np.empty(ends[-1])
    blocks = [v[e - r * c : e].reshape(r, c) for v in (params, grad) for (r, c), e in zip(shapes, ends, strict=True)]
    param_blocks, grad_blocks = blocks[: len(shapes)], blocks[len(shapes) :]
    for block, w, b in zip(param_blocks, weights, biases, strict=True):
        block[:-1], block[-1] = w, b
    weights, biases = [p[:-1] for p in param_blocks], [p[-1] for p in param_blocks]
    grad_w, grad_b = [g[:-1] for g in grad_blocks], [g[-1] for g in grad_blocks]
    velocity = np.zeros_like(params)
    x_squares = _squared_rows(data.X)
    # Normalise by the *expected* batch size qn (public), not the sampled one, which depends on the data under
    # add/remove neighbours (Abadi et al. 2016; Opacus).
    step_size = learning_rate / (q * n)
    draws = step_randomness(noise, steps, params.size, n, q, rng)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for step_noise, batch in tqdm(
            draws, total=steps, disable=not progress, desc="DP-SGD", unit="step", leave=False
        ):
            if data.known is not None:  # a record outside the public labels contributes 0, like a non-finite one
                batch = batch[data.known[batch]]
            if batch.size == 0:  # an empty sample still releases noise, exactly as the analysis assumes
                grad.fill(0.0)
            else:
                X, codes, squares = data.X[batch], data.codes[batch], x_squares[batch]
                _clipped_sum_into(X, squares, codes, weights, biases, activation, clip_norm, grad_w, grad_b)
            noisy = noise.add(grad, step_noise)
            velocity *= momentum
            noisy *= step_size
            velocity -= noisy
            params += velocity
    return weights, biases


# ---- constructor converters -------------------------------------------------------------------------------------


def _hidden(value: Any) -> tuple[int, ...]:
    if isinstance(value, np.ndarray) and value.ndim == 0:  # has __len__, but len() raises: read it as its scalar
        value = value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (Sequence, np.ndarray)) or isinstance(value, str):
        raise TypeError(
            f"hidden_layer_sizes must be a sequence of layer widths such as (64, 32), or () for logistic regression. "
            f"Got {value!r}."
        )
    if len(value) >= MAX_WIDTH:
        raise ValueError(
            f"hidden_layer_sizes must list fewer than {MAX_WIDTH} layers (the float-error bound of the clipping "
            f"assumes it). Got {len(value)} layers; use fewer, wider layers."
        )
    sizes = tuple(check_int(v, "hidden_layer_sizes", minimum=1, owner="DPSGDClassifier") for v in value)
    if any(v > MAX_WIDTH for v in sizes):
        raise ValueError(
            f"hidden_layer_sizes must be at most {MAX_WIDTH} units per layer (the float-error bound of the clipping "
            f"assumes it). Got {sizes!r}."
        )
    return sizes


def _clip_norm(value: Any) -> float:
    return check_in_range(
        value,
        "clip_norm",
        1e-30,
        1e30,
        low_closed=True,
        high_closed=True,
        owner="DPSGDClassifier",
        fix="C bounds each example's gradient norm; e.g. 1.0 (the float-error analysis assumes 1e-30 ≤ C ≤ 1e30).",
    )


def _positive(value: Any, name: str, fix: str) -> float:
    return check_in_range(
        value, name, 0.0, math.inf, low_closed=False, high_closed=False, owner="DPSGDClassifier", fix=fix
    )


# Named converters: mypy's attrs plugin types a constructor argument only from a named function.
def _epochs(value: SupportsFloat) -> float:
    return _positive(value, "epochs", "epochs is the expected passes.")


def _learning_rate(value: SupportsFloat) -> float:
    return _positive(value, "learning_rate", "Pass e.g. 0.1.")


def _rate(value: Any) -> float:
    return check_in_range(
        value,
        "sampling_rate",
        0.0,
        1.0,
        low_closed=False,
        high_closed=True,
        owner="DPSGDClassifier",
        fix="sampling_rate is the probability q that a record joins a step's sample: expected batch size / n.",
    )


def _momentum(value: Any) -> float:
    return check_in_range(value, "momentum", 0.0, 1.0, low_closed=True, high_closed=False, owner="DPSGDClassifier")


def _sigma_or_none(value: Any) -> float | None:
    if value is None:
        return None
    sigma = check_in_range(
        value, "noise_multiplier", 0.0, math.inf, low_closed=False, high_closed=False, owner="DPSGDClassifier"
    )
    return refuse_subnormal(sigma, "noise_multiplier", owner="DPSGDClassifier")


def _bool(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{attribute.name} must be True or False. Got {value!r}.")


@functools.lru_cache(maxsize=256)
def _add_remove_epsilon(sigma: float, q: float, steps: int, delta: float) -> float:
    return dpsgd_epsilon(sigma, q, steps, delta, neighbouring="add_remove", method="pld")


# ---- the mechanism ----------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class DPSGDClassifier(ComposedMech):
    """Differentially private SGD (Abadi et al. 2016) for softmax regression or a small MLP, in numpy.

    Parameters
    ----------
    hidden_layer_sizes : sequence of int, default (64, 32)
        Widths of the hidden layers; ``()`` gives multinomial logistic regression.
    sampling_rate : float, default 0.05
        q: each record joins a step's sample independently with probability q (Poisson sampling); the expected
        batch size is qn. Public (n is public under replace-one neighbours).
    epochs : float, default 10
        Expected passes over the data; the number of steps is T = ⌈epochs / q⌉.
    learning_rate : float, default 0.1
        Step size η of momentum SGD on the mean noisy clipped gradient.
    momentum : float, default 0.9
        Heavy-ball momentum (post-processing of the noisy gradients, free of privacy cost).
    clip_norm : float, default 1.0
        C: every example's gradient (all layers together) is clipped to L2 norm C.
    noise_multiplier : float, optional
        σ. By default it is calibrated (:func:`~diffpriv_py.accounting.noise_multiplier_for`) so that the
        release meets the privacy parameters; if given, it must meet them and the release reports what it gives.
    activation : {"relu", "tanh"}, default "relu"
    classes : sequence or "observed"
        Required at release: every possible label (the public label set, which fixes the output layer's width).
        ``"observed"`` declares the set of labels present in ``y`` public (recorded in the Response's
        ``assumptions``). A record with another label contributes a zero gradient (see Notes).
    neighbouring : {"replace_one", "add_remove"}, default "replace_one"
        The relation the privacy parameters are *calibrated* for (see Notes). The reported guarantee is always
        replace-one.
    accounting : {"pld", "rdp"}, default "pld"
        Accountant used for calibration: the numerical privacy-loss distribution (tight) or Rényi DP (Mironov,
        Talwar & Zhang 2019; add/remove only).
    progress : bool, default False
        Show a progress bar over the steps (tqdm).

    Notes
    -----
    **Privacy claim.** (ε, δ)-DP under replace-one neighbours (the library's relation), for ``Del``
    parameters with δ > 0. Each step is a Poisson-sampled Gaussian mechanism on the sum of clipped per-example
    gradients; the T steps are composed with the privacy-loss distribution of that step (adaptivity is covered
    by composition; the model is post-processing of the noisy sums).

    **Relations.** DP-SGD's literature (Abadi et al. 2016; Opacus) states add/remove guarantees. Under
    replace-one a record's clipped contribution can move from one point of the ball of radius C to the opposite
    one, so the dominating pair of a step is (1−q)N(0, σ²) + qN(−1, σ²) versus (1−q)N(0, σ²) + qN(1, σ²) in units
    of C (as Google's ``dp_accounting`` uses): costlier than add/remove (at q = 0.045, 225 steps, σ = 1:
    ε ≈ 6.7 against 4.5 at δ = 1e-5), but far cheaper than converting an add/remove guarantee by group privacy
    (2ε, (1 + e^ε)δ), which gives 12.4. With ``neighbouring="replace_one"`` (default) σ is calibrated so that
    the replace-one guarantee equals the parameters. With ``"add_remove"`` σ is calibrated to the parameters read as an
    add/remove guarantee, to reproduce published settings; the release then reports the (larger) replace-one
    ε at the same δ in ``Response.privacy_params`` and the add/remove ε in ``model.epsilon_add_remove``.

    **Accounting.** An :class:`~diffpriv_py.Accountant` is charged with the exact subsampled-Gaussian event
    (``privacy_events``, from its one part in :meth:`composed_of`), so DP-SGD composes tightly with other releases.

    **Noise (floating-point safe).** Each step's clipped sum is rounded to a power-of-two grid r ≤ σC·2⁻⁴⁰ and
    gets r times a discrete Gaussian (:func:`diffpriv_py.noise.grid_gaussian`), so the output's float structure
    does not depend on the data. Its standard deviation is σ_c·Δ_step, with Δ_step = C(1 + 2⁻³⁰)(1 + 2nγₙ) + √d·r
    the replace-one (add/remove-one within a step) sensitivity of the *computed* and rounded sum
    (:func:`clipped_gradient_sum`, :func:`sum_sensitivity`) and σ_c ≥ σ calibrated for the reported guarantee
    minus the sampler's float reserve (ε − N·2⁻³⁷, δ(1 − N·2⁻³⁶)) over all N = T·d values drawn (as
    :class:`~diffpriv_py.Gaussian` does). The mechanism that runs is therefore at least as private as the
    subsampled Gaussian at multiplier σ that is reported and charged. See :meth:`safe_noise`. The noise and the
    Poisson samples are data-independent and drawn ahead for a block of steps (:func:`step_randomness`); every step
    adds its own fresh noise vector, so the steps are the same independent draws the analysis composes.

    **Robustness.** No finite record escapes the clip: norms are computed without overflow, and an example
    whose gradient is not finite (or exceeds C·2⁹⁰⁰) contributes exactly 0. ``sensitivity`` is C and cannot be
    lowered. Public checks of ``(X, y)`` (shapes, real X, the public label set) run before the
    accountant is charged.

    **Public label set.** The output layer has one unit per label of ``classes=``, never per label found in the
    private ``y``: ``classes=None`` is refused before the charge, and ``classes="observed"`` is the user's
    declaration that the set of labels present in ``y`` is public (read before the charge, recorded in
    :attr:`~diffpriv_py.Response.assumptions`). A record whose label is not declared (NaN included) is not refused
    after the charge: it takes part in the Poisson sampling like any record but contributes a zero gradient, a
    point of the ball of radius C, so every step's sensitivity bound (and n, the public record count) is unchanged.

    **What is not covered.** Hyper-parameters (C, η, epochs, architecture) must be chosen without looking at
    the private data, or their selection accounted for. Features should be on a public, data-independent scale
    (e.g. pixels / 16); nothing is standardised with statistics of the data.

    References
    ----------
    M. Abadi et al. Deep learning with differential privacy. CCS 2016.
    I. Mironov, K. Talwar, L. Zhang. Rényi differential privacy of the sampled Gaussian mechanism. 2019.
    J. Lee, D. Kifer. Scaling up differentially private deep learning with fast per-example gradient clipping.
    PoPETs 2021.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> from diffpriv_py.estimators import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 4)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.05, epochs=5, classes=[0, 1])
    >>> model = mech.release_response(dp.Del(2.0, 1e-5), (X, y), rng=1).response
    >>> model.score(X, y) > 0.9
    True
    """

    hidden_layer_sizes: tuple[int, ...] = attrs.field(default=(64, 32), converter=_hidden)
    sampling_rate: float = attrs.field(default=0.05, converter=_rate)
    epochs: float = attrs.field(default=10.0, converter=_epochs)
    learning_rate: float = attrs.field(default=0.1, converter=_learning_rate)
    momentum: float = attrs.field(default=0.9, converter=_momentum)
    clip_norm: float = attrs.field(default=1.0, converter=_clip_norm)
    noise_multiplier: float | None = attrs.field(default=None, converter=_sigma_or_none)
    activation: Literal["relu", "tanh"] = attrs.field(default="relu", validator=one_of("relu", "tanh"))
    classes: Classes = attrs.field(default=None, converter=check_classes)
    neighbouring: Relation = attrs.field(default="replace_one", validator=one_of("replace_one", "add_remove"))
    accounting: Literal["pld", "rdp"] = attrs.field(default="pld", validator=one_of("pld", "rdp"))
    progress: bool = attrs.field(default=False, validator=_bool)

    # Derived, not settable: the target reads (X, y); the sensitivity of a step's sum is the clipping norm.
    target: Any = attrs.field(init=False, repr=False, eq=False)
    # pyright reads the base class's converters as descriptors, so an init=False redefinition looks incompatible.
    sensitivity: float = attrs.field(  # pyright: ignore[reportIncompatibleVariableOverride]
        init=False, repr=False, validator=not_below(lambda self: self.clip_norm, "every gradient is clipped to C")
    )
    gamma_sensitivity: float | None = attrs.field(  # pyright: ignore[reportIncompatibleVariableOverride]
        init=False, default=None, repr=False
    )
    _no_single_sensitivity: ClassVar[str] = "every step's sensitivity is the clipping norm clip_norm by construction"

    privacy_params_type: ClassVar[type[Eps]] = Del

    @target.default
    def _default_target(self) -> Any:
        return functools.partial(_training_data, classes=self.classes)

    @sensitivity.default  # pyright: ignore[reportAttributeAccessIssue]  # attrs' decorator, which pyright does not model
    def _default_sensitivity(self) -> float:
        return self.clip_norm

    def __attrs_post_init__(self) -> None:
        if not self.epochs / self.sampling_rate <= MAX_STEPS:  # also inf: T = ⌈epochs / q⌉ must be a feasible count
            raise ValueError(
                f"epochs={self.epochs!r} at sampling_rate={self.sampling_rate!r} would train "
                f"{self.epochs / self.sampling_rate:.3g} noisy steps (epochs / sampling_rate); at most {MAX_STEPS:.0e} "
                "are supported. Use fewer epochs or a larger sampling_rate."
            )
        if self.accounting == "rdp" and self.neighbouring == "replace_one" and self.sampling_rate < 1:
            raise ValueError(
                "accounting='rdp' is the add/remove analysis of Mironov, Talwar & Zhang (2019); for the library's "
                "replace-one relation use accounting='pld' (default), or set neighbouring='add_remove'."
            )

    # ---- privacy ---------------------------------------------------------------------------------------------

    @property
    def steps(self) -> int:
        """Number of noisy steps T = ⌈epochs / sampling_rate⌉."""
        return max(1, math.ceil(self.epochs / self.sampling_rate - 1e-9))

    def noise_multiplier_for(self, privacy_params: Eps) -> float:
        """σ used for a release at ``privacy_params`` (the given one, or calibrated)."""
        if self.noise_multiplier is not None:
            return self.noise_multiplier
        return noise_multiplier_for(
            privacy_params.epsilon,
            privacy_params.delta,
            self.sampling_rate,
            self.steps,
            neighbouring=self.neighbouring,
            method=self.accounting,
        )

    def _check_params(self, privacy_params: Eps) -> None:
        if not privacy_params.delta > 0:
            raise ValueError(
                f"DP-SGD adds Gaussian noise and needs delta > 0; got {privacy_params!r}. Pass e.g. "
                "Del(epsilon=8.0, delta=1e-5) (δ well below 1/n)."
            )
        if self.noise_multiplier is not None:
            achieved = dpsgd_epsilon(
                self.noise_multiplier,
                self.sampling_rate,
                self.steps,
                privacy_params.delta,
                neighbouring=self.neighbouring,
                method=self.accounting,
            )
            if achieved > privacy_params.epsilon * (1 + 1e-12):
                raise ValueError(
                    f"noise_multiplier={self.noise_multiplier} over {self.steps} steps at sampling_rate="
                    f"{self.sampling_rate} gives ε={achieved:.4g} ({self.neighbouring}) at δ={privacy_params.delta:g}, "
                    f"more than the requested ε={privacy_params.epsilon:g}. Raise noise_multiplier, train fewer "
                    "epochs, or leave noise_multiplier unset to calibrate it."
                )

    def privacy_guarantee(self, privacy_params: Eps) -> Eps:
        """The replace-one guarantee of a release at ``privacy_params`` (see Notes)."""
        if self.neighbouring == "replace_one" and self.noise_multiplier is None:
            return privacy_params
        sigma = self.noise_multiplier_for(privacy_params)
        epsilon = dpsgd_epsilon(sigma, self.sampling_rate, self.steps, privacy_params.delta)
        if self.neighbouring == "replace_one":
            epsilon = min(epsilon, privacy_params.epsilon)
        # A guarantee needs ε > 0; ε = 0 (δ alone covers everything) is reported as a tiny, still valid, ε.
        return Del(max(epsilon, 1e-12), privacy_params.delta)

    def composed_of(self, privacy_params: Eps) -> tuple[Part, ...]:
        """The T noisy steps, described exactly: replace-one subsampled Gaussians (what an accountant is charged)."""
        step = SubsampledGaussianEvent(
            noise_multiplier=self.noise_multiplier_for(privacy_params),
            sampling_rate=self.sampling_rate,
            relation="replace_one",
            count=self.steps,
        )
        return (Part(name="steps", privacy_params=self.privacy_guarantee(privacy_params), events=(step,)),)

    def safe_noise(self, privacy_params: Eps, n: int, dims: int) -> SafeNoise:
        """The grid and noise of a release on ``n`` records training ``dims`` parameters (see Notes, *Noise*)."""
        sigma = self.noise_multiplier_for(privacy_params)
        eps_c, delta_c = self._reserve(self.privacy_guarantee(privacy_params), dims)
        sigma_c = max(
            sigma,
            noise_multiplier_for(eps_c, delta_c, self.sampling_rate, self.steps, neighbouring="replace_one"),
        )
        grid = grid_step(sigma * self.clip_norm)
        step_sensitivity = sum_sensitivity(self.clip_norm, n) + math.sqrt(dims) * grid
        return SafeNoise(
            noise_multiplier=sigma, grid=grid, step_sensitivity=step_sensitivity, noise_std=sigma_c * step_sensitivity
        )

    def _reserve(self, guarantee: Eps, dims: int) -> tuple[float, float]:
        """(ε, δ) left for the noise after the safe sampler's float-error reserve for ``steps × dims`` values."""
        coordinates = self.steps * dims
        eps_c = guarantee.epsilon - coordinates * 2.0**-37
        delta_c = guarantee.delta * (1.0 - coordinates * 2.0**-36)
        # The reserve is refused only when it would take half of the guarantee (a release at, e.g., ε = 1e-4 on
        # digits is still served, with noise raised by the calibration).
        if not (eps_c > guarantee.epsilon / 2 and delta_c > guarantee.delta / 2 and guarantee.epsilon < 500):
            given = (
                f" (noise_multiplier={self.noise_multiplier!r} gives that guarantee)"
                if self.noise_multiplier is not None
                else ""
            )
            raise ValueError(
                f"DP-SGD draws {coordinates} noise values ({self.steps} steps × {dims} parameters); the safe sampler's "
                f"float-error reserve of {coordinates}·2^-37 would exceed half of epsilon={guarantee.epsilon:g}"
                f"{given} (or epsilon ≥ 500). Train fewer steps or parameters, use a larger epsilon, or a smaller "
                "noise_multiplier."
            )
        return eps_c, delta_c

    # ---- DPMech hooks ----------------------------------------------------------------------------------------

    def _check_release(self, privacy_params: Eps, data: Any) -> None:
        """Before the charge: the safe sampler's reserve at the number of parameters the public shapes give."""
        features, labels = data
        n_classes = public_labels(labels, self.classes, owner="DPSGDClassifier").size
        sizes = [features.shape[1], *self.hidden_layer_sizes, n_classes]
        dims = sum((fan_in + 1) * fan_out for fan_in, fan_out in itertools.pairwise(sizes))
        self._reserve(self.privacy_guarantee(privacy_params), dims)

    def _check_dataset(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Types, shapes, equal lengths, width and the public label set: refused before any charge."""
        features, labels = check_supervised_form(X, owner="DPSGDClassifier")
        public_labels(labels, self.classes, owner="DPSGDClassifier")
        if features.shape[1] > MAX_WIDTH:
            raise ValueError(
                f"DPSGDClassifier takes at most {MAX_WIDTH} features (the float-error bound of the clipping assumes "
                f"it). Got {features.shape[1]}. Reduce the dimension with a public projection first."
            )
        return features, labels

    def _assumptions(self) -> tuple[str, ...]:
        return (OBSERVED_ASSUMPTION,) if self.classes == OBSERVED else ()

    def _evaluate(self, output: Any) -> _Training:
        if not isinstance(output, _Training):  # pragma: no cover - the target is fixed by the class
            raise TargetOutputError(f"Expected the training data, got {type(output).__name__}.")
        return output

    def _release(self, value: _Training, privacy_params: Eps, rng: np.random.Generator) -> DPSGDModel:
        sizes = [value.X.shape[1], *self.hidden_layer_sizes, value.classes.size]
        dims = sum((fan_in + 1) * fan_out for fan_in, fan_out in itertools.pairwise(sizes))
        noise = self.safe_noise(privacy_params, value.X.shape[0], dims)
        sigma = noise.noise_multiplier
        weights, biases = _train(
            value,
            sizes,
            activation=self.activation,
            noise=noise,
            q=self.sampling_rate,
            steps=self.steps,
            learning_rate=self.learning_rate,
            momentum=self.momentum,
            clip_norm=self.clip_norm,
            rng=rng,
            progress=self.progress,
        )
        return DPSGDModel(
            weights=weights,
            biases=biases,
            classes=value.classes,
            activation=self.activation,
            noise_multiplier=sigma,
            sampling_rate=self.sampling_rate,
            steps=self.steps,
            epsilon_add_remove=_add_remove_epsilon(sigma, self.sampling_rate, self.steps, privacy_params.delta),
        )
