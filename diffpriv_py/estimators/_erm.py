"""Regularised empirical risk minimisation for linear classifiers, and the two CMS'11 perturbations.

Everything here works in *normalised coordinates*: every row ``z`` of the design matrix has ``‖z‖₂ ≤ 1`` and the
labels are signs ``s ∈ {−1, +1}``. The objective is (Chaudhuri, Monteleoni & Sarwate, JMLR 12, 2011, eq. (1))::

    J(f) = (1/n) Σᵢ ℓ(sᵢ fᵀzᵢ) + (Λ/2) ‖f‖²

The public estimators in :mod:`diffpriv_py.estimators.linear_models` build the normalised problem and map the
released weights back to the user's features.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from scipy.special import expit, log_expit

from .._noise import grid_step

__all__ = [
    "HUBER",
    "LOGISTIC",
    "ConvergenceError",
    "Loss",
    "default_reg_lambda",
    "huber_loss",
    "minimise",
    "objective_perturbation",
    "objective_perturbation_budget",
    "output_perturbation",
    "round_to_grid",
    "sample_gamma_ball",
]

GRADIENT_TOLERANCE = 1e-10
"""The solver stops when ‖∇J‖₂ ≤ this (times max(1, ‖b‖/n) for the linear noise term b): the privacy proof of
objective perturbation is about the *exact* minimiser, so the solve is pushed to double-precision resolution."""

DEFAULT_WEIGHT_NORM = 8.0
"""F in :func:`default_reg_lambda`: the weight norm (in normalised coordinates) the utility proxy assumes."""

DATA_CURVATURE_FRACTION = 0.25
"""θ in :func:`default_reg_lambda`: the data's curvature is taken as θ·c/p."""

MIN_DEFAULT_REG_LAMBDA = 1e-6
"""The smallest default Λ (reached only at very large ε or n)."""

_MAX_NEWTON_STEPS = 200
_DENSE_HESSIAN_MAX_DIM = 1500


class ConvergenceError(RuntimeError):
    """The ERM solver did not reach the exact minimiser; nothing is released (the privacy proof needs it)."""


@attrs.frozen
class Loss:
    """A margin loss ℓ(m) with |ℓ'| ≤ 1 and 0 ≤ ℓ'' ≤ ``curvature`` (the constant c of CMS'11).

    Every derivative is finite for every finite margin, however large (the logistic loss through ``expit``, which
    saturates to 0 or 1 instead of overflowing; the Huber pieces evaluated only inside their own interval), so no
    record can contribute a NaN or infinite gradient to the solver.
    """

    name: str
    curvature: float
    width: float = 0.0  # Huber width h; unused by the logistic loss

    def value(self, m: np.ndarray) -> np.ndarray:
        if self.name == "logistic":
            result: np.ndarray = -log_expit(m)  # ln(1 + e^{−m}) without overflow; one ufunc pass (logaddexp takes ~2×)
            return result
        h = self.width
        # The quadratic piece is evaluated on margins clipped to its own interval, so a huge margin in the other
        # branches never overflows (inf or NaN would otherwise be computed, if not selected).
        inner = np.clip(m, 1.0 - h, 1.0 + h)
        return np.where(m > 1.0 + h, 0.0, np.where(m < 1.0 - h, 1.0 - m, (1.0 + h - inner) ** 2 / (4.0 * h)))

    def first(self, m: np.ndarray) -> np.ndarray:
        if self.name == "logistic":
            result: np.ndarray = expit(m) - 1.0  # = −expit(−m) to within 1e-16 absolute; two passes instead of three
            return result
        h = self.width
        inner = np.clip(m, 1.0 - h, 1.0 + h)
        return np.where(m > 1.0 + h, 0.0, np.where(m < 1.0 - h, -1.0, -(1.0 + h - inner) / (2.0 * h)))

    def second(self, m: np.ndarray) -> np.ndarray:
        if self.name == "logistic":
            p = expit(m)
            result: np.ndarray = p * (1.0 - p)
            return result
        return np.where(np.abs(1.0 - m) <= self.width, 1.0 / (2.0 * self.width), 0.0)

    def derivatives(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ℓ'(m), ℓ''(m)) with one pass over the margins."""
        if self.name == "logistic":
            p = expit(m)
            return p - 1.0, p * (1.0 - p)
        return self.first(m), self.second(m)


LOGISTIC = Loss("logistic", 0.25)
"""ℓ(m) = ln(1 + e^{−m}); |ℓ'| ≤ 1, ℓ'' ≤ 1/4."""


def huber_loss(width: float) -> Loss:
    """The Huber hinge of CMS'11 §3.4.2 with width h: |ℓ'| ≤ 1 and ℓ'' ≤ 1/(2h)."""
    return Loss("huber", 1.0 / (2.0 * width), width)


HUBER = huber_loss(0.5)


def _cg(hessp: Callable[[np.ndarray], np.ndarray], rhs: np.ndarray, rtol: float, max_iter: int) -> np.ndarray:
    """Conjugate gradients for H x = rhs with H symmetric positive definite (given as a product)."""
    x = np.zeros_like(rhs)
    r = rhs.copy()
    p = r.copy()
    rr = r @ r
    stop = (rtol * math.sqrt(rr)) ** 2
    for _ in range(max_iter):
        if rr <= stop:
            break
        hp = hessp(p)
        alpha = rr / (p @ hp)
        x += alpha * p
        r -= alpha * hp
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def _gram(Z: np.ndarray, curv: np.ndarray) -> np.ndarray:
    """Zᵀ diag(curv) Z as a symmetric rank-k update (BLAS syrk), skipping rows of zero curvature (Huber)."""
    if curv.size and curv.min() == curv.max():
        # Constant curvature (the logistic loss at w = 0): one syrk on Z, no weighted copy of the design matrix.
        result: np.ndarray = (Z.T @ Z) * curv[0]
        return result
    active = curv > 0.0
    if not np.all(active):
        Z, curv = Z[active], curv[active]
    W = Z * np.sqrt(curv)[:, None]
    result = W.T @ W
    return result


def minimise(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg: float,
    lin: np.ndarray | None = None,
    w0: np.ndarray | None = None,
) -> np.ndarray:
    """Exact minimiser of (1/n) Σ ℓ(sᵢ wᵀzᵢ) + (reg/2)‖w‖² + linᵀw by damped Newton.

    The objective is ``reg``-strongly convex, so Newton's method with a backtracking line search converges
    globally and fast near the optimum; it stops at ‖∇‖₂ ≤ 1e-10·max(1, ‖lin‖₂). Up to
    ``_DENSE_HESSIAN_MAX_DIM`` weights the Newton system is solved with the p×p Hessian, which is built (O(n p²))
    only when the previous step was not a full step that cut the gradient fourfold; otherwise the last Hessian is
    corrected by a BFGS update (O(p²)), so a typical solve builds one or two Hessians and otherwise costs two
    matrix-vector products per step. A full step that halves the gradient norm is kept without evaluating the
    objective; any other step is backtracked under the Armijo rule. Above that size, conjugate gradients on
    Hessian-vector products (O(n p) per product).

    Raises
    ------
    ConvergenceError
        If the gradient tolerance is not reached (nothing may be released then).
    """
    n, p = Z.shape
    lin = np.zeros(p) if lin is None else lin
    w = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64)
    tol = GRADIENT_TOLERANCE * max(1.0, float(np.linalg.norm(lin)))

    def gradient(w: np.ndarray, margins: np.ndarray) -> np.ndarray:
        result: np.ndarray = Z.T @ (s * loss.first(margins)) / n + reg * w + lin
        return result

    def objective(w: np.ndarray, margins: np.ndarray) -> float:
        return float(np.mean(loss.value(margins)) + 0.5 * reg * (w @ w) + lin @ w)

    margins = s * (Z @ w)
    grad = gradient(w, margins)
    gnorm = float(np.linalg.norm(grad))
    value: float | None = None  # the objective at w, computed only when a line search needs it
    hess, fast = None, False
    moved = change = np.zeros(p)
    for _ in range(_MAX_NEWTON_STEPS):
        if gnorm <= tol:
            return w
        if p <= _DENSE_HESSIAN_MAX_DIM:
            if hess is None or not fast:
                # ℓ'' is computed only here: most steps update the Hessian instead of rebuilding it.
                hess = _gram(Z, loss.second(margins)) / n
                hess[np.diag_indices_from(hess)] += reg
            else:
                # In the fast phase (a full step cut the gradient fourfold) the Hessian is not rebuilt (O(n p²)); a
                # BFGS update (O(p²)) from the exact gradient change corrects it along the last step, which turns
                # the linear rate of a frozen Hessian into a superlinear one. The matrix stays positive definite
                # (yᵀs ≥ reg‖s‖² > 0 by strong convexity), so the step is a descent direction, and the exact
                # gradient alone decides convergence.
                curvature = float(change @ moved)
                if curvature > 0.0:
                    h_moved = hess @ moved
                    hess = hess - np.outer(h_moved, h_moved) / float(moved @ h_moved)
                    hess += np.outer(change, change) / curvature
            step = -np.linalg.solve(hess, grad)  # symmetric positive definite: ≥ reg·I
        else:
            curv = loss.second(margins)

            def hessp(v: np.ndarray, curv: np.ndarray = curv) -> np.ndarray:
                result: np.ndarray = Z.T @ (curv * (Z @ v)) / n + reg * v
                return result

            step = _cg(hessp, -grad, rtol=min(0.1, math.sqrt(gnorm)), max_iter=10 * p)
        slope = float(grad @ step)
        if slope >= 0.0:  # pragma: no cover - a descent direction by positive definiteness
            step, slope = -grad, -(gnorm**2)
        w_new = w + step
        margins_new = s * (Z @ w_new)
        grad_new = gradient(w_new, margins_new)
        gnorm_new = float(np.linalg.norm(grad_new))
        t = 1.0
        # The full step is kept when it halves the gradient norm: the gradient there is needed next anyway, and
        # the objective (one more pass over the margins) is then not evaluated. Otherwise Armijo backtracking on
        # the objective, which makes the method globally convergent; the exact gradient alone decides when to stop.
        if not gnorm_new <= 0.5 * gnorm:
            if value is None:
                value = objective(w, margins)
            value_new = objective(w_new, margins_new)
            # Armijo, or (near the optimum, where the decrease is below the objective's rounding) the full step.
            while not (
                value_new <= value + 1e-4 * t * slope or (t == 1.0 and abs(slope) < 1e-12 * max(1.0, abs(value)))
            ):
                t *= 0.5
                if t < 1e-12:
                    raise ConvergenceError(
                        f"The ERM line search stalled at gradient norm {gnorm:.3g} (tolerance {tol:.3g}). Nothing "
                        "was released. Try a larger reg_lambda (the problem is badly conditioned)."
                    )
                w_new = w + t * step
                margins_new = s * (Z @ w_new)
                value_new = objective(w_new, margins_new)
            if t < 1.0:
                grad_new = gradient(w_new, margins_new)
                gnorm_new = float(np.linalg.norm(grad_new))
            value = value_new
        else:
            value = None
        fast = t == 1.0 and gnorm_new <= 0.25 * gnorm
        moved, change = w_new - w, grad_new - grad
        w, margins, grad, gnorm = w_new, margins_new, grad_new, gnorm_new
    raise ConvergenceError(
        f"The ERM solver did not reach the exact minimiser in {_MAX_NEWTON_STEPS} Newton steps (gradient norm "
        f"{gnorm:.3g}, tolerance {tol:.3g}). Nothing was released. Try a larger reg_lambda."
    )


def round_to_grid(values: np.ndarray, scale: float) -> np.ndarray:
    """Round to the power-of-two grid 2⁻⁴⁰·``scale`` (:func:`diffpriv_py._noise.grid_step`); ``scale = 0``: unchanged.

    Post-processing that makes the set of doubles a release can take independent of the data: without it the
    float structure of f + b (e.g. finer trailing bits when f = 0) tells neighbours apart (Mironov 2012), which
    the auditor's float-structure events detect.
    """
    if scale == 0.0:
        return values
    r = grid_step(scale)
    q = values / r
    small = np.abs(q) < 2.0**52  # beyond, the ulp of a value is ≥ r: it is on the grid already
    return np.where(small, np.rint(np.where(small, q, 0.0)) * r, values)


def sample_gamma_ball(dim: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Draw b ∈ R^dim with density ∝ exp(−‖b‖₂/scale): a uniform direction times a Gamma(dim, scale) norm."""
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return direction * rng.gamma(dim, scale)


def objective_perturbation_budget(epsilon: float, n: int, reg_lambda: float, curvature: float) -> tuple[float, float]:
    """Steps 1–2 of CMS'11 Algorithm 2: the noise budget ε' and the extra regulariser Δ.

    ε' = ε − ln(1 + 2c/(nΛ) + c²/(nΛ)²) = ε − 2 ln(1 + c/(nΛ)); if ε' ≤ 0 then Δ = c/(n(e^{ε/4} − 1)) − Λ and
    ε' = ε/2, otherwise Δ = 0.
    """
    eps_prime = epsilon - 2.0 * math.log1p(curvature / (n * reg_lambda))
    if eps_prime > 0.0:
        return eps_prime, 0.0
    return epsilon / 2.0, curvature / (n * math.expm1(epsilon / 4.0)) - reg_lambda


def default_reg_lambda(n: int, dim: int, epsilon: float, curvature: float) -> float:
    """The default Λ, computed from public quantities only (n, the number of weights, ε, the loss's curvature c).

    Λ minimises a public utility proxy over Λ ≥ max(Λ_ε, ``MIN_DEFAULT_REG_LAMBDA``)::

        U(Λ) = (Λ/2)·F²  +  E‖b‖² / (2n²(Λ + θc/p)),   E‖b‖² = p(p+1)·(2/ε'(Λ))²,   ε'(Λ) = ε − 2 ln(1 + c/(nΛ))

    * **Budget floor** Λ_ε = c/(n(e^{ε/4} − 1)) is the smallest Λ with ε' ≥ ε/2: at least half of the budget pays
      for noise. Below it Algorithm 2 either leaves almost no ε' (the noise explodes) or adds Δ up to Λ_ε anyway
      with ε' = ε/2, so a smaller Λ is never better.
    * The first term of U is the regularisation bias for a classifier of weight norm F (``DEFAULT_WEIGHT_NORM``,
      in the normalised coordinates ‖z‖ ≤ 1); the second bounds the excess risk the term bᵀf/n causes on an
      objective whose curvature is Λ plus a typical data curvature θc/p (θ = ``DATA_CURVATURE_FRACTION``: rows
      in the unit ball spread c over p directions). It weighs the bias against the noise and the budget
      (through ε'(Λ)): small n or ε give a larger Λ, large n and ε end at the budget floor.
    * The minimum is taken on a fixed geometric grid (801 points over eight decades above the floor).

    For output perturbation pass ``curvature=0``: no budget term and no data curvature (the noise is added to the
    minimiser itself). ``dim`` counts every weight (the intercept included); ``epsilon`` is one problem's budget.
    The constants F = 8 and θ = 1/4 were fitted on benchmark tasks (docs/erm.md) — they are public, fixed in
    advance, and change no privacy claim: any Λ > 0 gives the stated guarantee.
    """
    budget = curvature / (n * math.expm1(epsilon / 4.0)) if epsilon < 2800.0 else 0.0  # expm1 overflows beyond
    lam = max(budget, MIN_DEFAULT_REG_LAMBDA) * np.geomspace(1.0, 1e8, 801)
    eps_prime = epsilon - 2.0 * np.log1p(curvature / (n * lam))
    noise = (
        dim * (dim + 1.0) * (2.0 / eps_prime) ** 2 / (2.0 * n * n * (lam + DATA_CURVATURE_FRACTION * curvature / dim))
    )
    return float(lam[np.argmin(0.5 * lam * DEFAULT_WEIGHT_NORM**2 + noise)])


def objective_perturbation(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg_lambda: float,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """CMS'11 Algorithm 2: argmin J(f) + (1/n) bᵀf + (Δ/2)‖f‖² with ‖b‖ ~ Gamma(p, Δ_grad/ε').

    ``sensitivity`` is the L2 bound on the change of Σᵢ ℓ'(·) sᵢ zᵢ between replace-one neighbours (2 for
    ‖z‖ ≤ 1, |ℓ'| ≤ 1), i.e. the density of b is ∝ exp(−(ε'/2)‖b‖) as in the paper.
    """
    n, p = Z.shape
    eps_prime, extra = objective_perturbation_budget(epsilon, n, reg_lambda, loss.curvature)
    b = sample_gamma_ball(p, sensitivity / eps_prime, rng)
    f_priv = minimise(Z, s, loss, reg_lambda + extra, lin=b / n)
    # b/n moves the minimiser by about ‖b‖/(n(Λ+Δ)): the grid is 2⁻⁴⁰ of that per-coordinate scale.
    return round_to_grid(f_priv, sensitivity / (eps_prime * n * (reg_lambda + extra)))


def output_perturbation(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg_lambda: float,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """CMS'11 Algorithm 1: f* + b with density(b) ∝ exp(−(nΛε/Δ)‖b‖), Δ = 2 (so β = nΛε/2 as in the paper).

    The computed f* is within ``GRADIENT_TOLERANCE``/Λ of the exact minimiser, so the noise covers the sensitivity
    of the *computed* minimiser, (Δ + 2n·tol)/(nΛ); the sum is rounded to the grid of :func:`round_to_grid`.
    """
    n, p = Z.shape
    f_star = minimise(Z, s, loss, reg_lambda)
    scale = output_noise_scale(n, reg_lambda, epsilon, sensitivity)
    return round_to_grid(f_star + sample_gamma_ball(p, scale, rng), scale)


def output_noise_scale(n: int, reg_lambda: float, epsilon: float, sensitivity: float) -> float:
    """The Gamma-ball scale 1/β of output perturbation: (Δ + 2n·tol)/(nΛε) (0 when Δ = 0)."""
    if sensitivity == 0.0:
        return 0.0
    return (sensitivity + 2.0 * n * GRADIENT_TOLERANCE) / (n * reg_lambda * epsilon)
