"""Regularised empirical risk minimisation for linear classifiers, and the two CMS'11 perturbations.

Everything here works in *normalised coordinates*: every row ``z`` of the design matrix has ``‖z‖₂ ≤ 1`` and the
labels are signs ``s ∈ {−1, +1}``. The objective is (Chaudhuri, Monteleoni & Sarwate, JMLR 12, 2011, eq. (1))::

    J(f) = (1/n) Σᵢ ℓ(sᵢ fᵀzᵢ) + (Λ/2) ‖f‖²

The public estimators in :mod:`diffpriv_py.estimators.linear_models` build the normalised problem and map the
released weights back to the user's features.

The solver returns a point whose *true* gradient norm is certified to be at most a public tolerance τ (the gradient
is evaluated with block sums whose rounding is bounded, and the bound is added before the comparison), so the point
is within τ/Λ of the exact minimiser (strong convexity). The perturbations cover that distance: output perturbation
in its sensitivity, objective perturbation with a small share of ε spent on noise of radius τ/Λ (approximate minima
perturbation, Iyengar et al. 2019).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from scipy.special import expit, log_expit

from .._fixed_point import UNIT_ROUNDOFF
from ..exceptions import CertificationError
from ..noise import grid_step

__all__ = [
    "HUBER",
    "LOGISTIC",
    "SOLVER_NOISE_SHARE",
    "Loss",
    "certified_gradient",
    "check_certifiable",
    "default_reg_lambda",
    "gradient_tolerance",
    "huber_loss",
    "minimise",
    "objective_perturbation",
    "objective_perturbation_budget",
    "output_perturbation",
    "round_to_grid",
    "sample_gamma_ball",
    "solve_regulariser",
    "solver_noise",
]

GRADIENT_TOLERANCE = 1e-10
"""τ₀ of :func:`gradient_tolerance`: the certified bound on ‖∇J‖₂ (mean-loss scale) for n ≤ 10⁵ and c ≤ 1/4."""

SOLVER_NOISE_SHARE = 0.01
"""ε₂/ε in objective perturbation: the share of each problem's budget spent on the noise that covers the solver's
distance to the exact minimiser (the rest, ε₁ = 0.99·ε, runs CMS'11 Algorithm 2)."""

SUM_BLOCK = 256
"""Rows per block of the certified gradient sum; block totals are summed in groups of the same size (a tree of
depth ⌈log₂₅₆ n⌉, so every term passes through at most ``SUM_BLOCK`` additions per level)."""

MAX_FALLBACK_STEPS = 10_000_000
"""Cap on the accelerated-gradient fallback's step count (see :func:`minimise`); checked from public sizes and the
noise draw only, before the solve."""

DEFAULT_WEIGHT_NORM = 8.0
"""F in :func:`default_reg_lambda`: the weight norm (in normalised coordinates) the utility proxy assumes."""

DATA_CURVATURE_FRACTION = 0.25
"""θ in :func:`default_reg_lambda`: the data's curvature is taken as θ·c/p."""

MIN_DEFAULT_REG_LAMBDA = 1e-6
"""The smallest default Λ (reached only at very large ε or n)."""

_MAX_NEWTON_STEPS = 1000  # piecewise-quadratic Huber objectives with Λ ≤ 1e-6 can need a few hundred
_FLOOR_STEPS = 3
"""Consecutive iterates at the rounding floor (see :func:`_at_floor`) after which the solve stops: near there no
float point can be certified, so more steps would only spend time."""

_DENSE_HESSIAN_MAX_DIM = 1500


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

    def curvature_near(self, m: np.ndarray, radius: float | np.ndarray) -> np.ndarray:
        """An upper bound on ℓ'' over [m − radius, m + radius] per margin (``radius`` a scalar or one per margin):
        how much an error of ``radius`` in a margin can move ℓ'. Logistic: ℓ''(ξ) = σ(ξ)σ(−ξ) ≤ min(1/4, e^{−|ξ|});
        Huber: c inside the kink, 0 outside."""
        if self.name == "logistic":
            far = np.maximum(np.abs(m) - radius, 0.0)
            # exp within an ulp or two; the doubling covers it (and the bound e^{−|ξ|} itself is loose by 4×).
            result: np.ndarray = np.minimum(self.curvature, 2.0 * np.exp(-far))
            return result
        near = np.abs(1.0 - m) <= self.width + radius + 4.0 * UNIT_ROUNDOFF * (1.0 + self.width)
        return np.where(near, self.curvature, 0.0)

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


def gradient_tolerance(n: int, curvature: float) -> float:
    """The public tolerance τ on the true ‖∇J‖₂ (mean-loss scale) that every solve is certified to meet.

    τ = τ₀·max(1, 4c)·min(1, 10⁵/n), floored at τ₀/100, with τ₀ = ``GRADIENT_TOLERANCE`` = 10⁻¹⁰. It depends on the
    public n and curvature c only, as the privacy proof needs. It is chosen two to three orders of magnitude above the
    rounding allowance of :func:`certified_gradient` for weights of moderate norm (the allowance grows with c and
    with ‖w‖ through the margins' rounding, hence the factor max(1, 4c)), and it shrinks as 1/n for large n so that
    the noise covering τ/Λ stays far below the noise of objective perturbation itself.
    """
    scale = min(1.0, 1e5 / n) if n > 0 else 1.0
    return GRADIENT_TOLERANCE * max(1.0, 4.0 * curvature) * max(scale, 0.01)


def _gamma(k: float) -> float:
    """γₖ = ku/(1 − ku): the relative error bound of a k-term floating-point sum (Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2nd ed., Lemma 3.1)."""
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)


def _block_sums(Z: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, int]:
    """Zᵀv as a tree of sums of at most ``SUM_BLOCK`` terms, and the tree's depth (for the rounding bound).

    The first level is one product per block of ``SUM_BLOCK`` rows; block totals are then summed in groups of
    ``SUM_BLOCK``. Whatever order or fused multiply-adds BLAS and numpy use inside a sum, every product zᵢⱼvᵢ passes
    through at most ``SUM_BLOCK`` roundings per level, so the error is at most γ_{depth·SUM_BLOCK}·Σᵢ|zᵢⱼvᵢ| per
    coordinate (a plain BLAS product only guarantees γₙ, too coarse for large n).
    """
    n, p = Z.shape
    m = n // SUM_BLOCK
    head = np.einsum(
        "kb,kbp->kp", v[: m * SUM_BLOCK].reshape(m, SUM_BLOCK), Z[: m * SUM_BLOCK].reshape(m, SUM_BLOCK, p)
    )
    partial = np.vstack([head, (v[m * SUM_BLOCK :] @ Z[m * SUM_BLOCK :])[None, :]])
    depth = 1
    while partial.shape[0] > 1:
        pad = -partial.shape[0] % SUM_BLOCK
        if pad:
            partial = np.vstack([partial, np.zeros((pad, p))])
        partial = partial.reshape(-1, SUM_BLOCK, p).sum(axis=1)
        depth += 1
    result: np.ndarray = partial[0]
    return result, depth


def certified_gradient(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg: float,
    lin: np.ndarray,
    w: np.ndarray,
    margins: np.ndarray,
    tol: float = 0.0,
) -> tuple[np.ndarray, float]:
    """The computed gradient of (1/n) Σ ℓ(sᵢ wᵀzᵢ) + (reg/2)‖w‖² + linᵀw at ``w``, and a rigorous upper bound on the
    norm of the *exact* gradient there (real arithmetic at the float w, with the exact b/n of which ``lin`` is the
    rounded value).

    ``margins`` must be ``s * (Z @ w)``. Rows must satisfy ‖zᵢ‖₂ ≤ 1 exactly (:func:`~diffpriv_py._fixed_point.
    clip_rows`). The bound is ‖ĝ‖·(1 + 2(p + 2)u) + E with u = 2⁻⁵³ and (Higham's γₖ, any summation order or FMA)

    * margins: |m̂ᵢ − mᵢ| ≤ γ_p‖w‖ (a p-term dot product, |zᵢᵀ|·|w| ≤ ‖w‖), so |ℓ'(m̂ᵢ) − ℓ'(mᵢ)| ≤ c·γ_p‖w‖;
    * ℓ' evaluated at m̂ᵢ within δ = 16(1 + c)u (the logistic ``expit`` with libm's exp within 1 ulp; the Huber
      pieces within (c + 4)u, branch thresholds included);
    * Σᵢ ℓ'ᵢsᵢzᵢ by :func:`_block_sums`: within γ_{depth·256}·Σᵢ|ℓ'ᵢ|‖zᵢ‖ ≤ γ_{depth·256}·n;
    * the division by n, the products reg·w, the two additions and the rounding of b/n: within
      4u(‖Σ‖/n + reg‖w‖ + ‖lin‖) + 2u‖lin‖;

    so E = 1.01·(γ_{depth·256} + c·γ_p‖w‖ + δ + 4u(‖Σ‖/n + reg‖w‖ + ‖lin‖) + 2u‖lin‖) + 10⁻³⁰⁰ (the factor 1.01
    covers the rounding of E's own evaluation and of the norms, the constant every underflow).

    When that bound exceeds ``tol`` because of the margins' term (huge ‖w‖), the term is refined per record with
    one more pass over the data: margin i's error is at most eᵢ = γ_p·Σⱼ|zᵢⱼ||wⱼ| (≤ γ_p‖w‖; a zero entry of the
    row adds nothing, so weights on features that are zero in every row — sparse data, where the noise term alone
    sets them — cost nothing), taken from the computed sum raised by (1 + 2γ_p)(1 + 2u) plus 10⁻³⁰⁰ (a sum of
    non-negative products, within γ_p relative, and underflow). That error moves ℓ' by at most eᵢ·sup ℓ'' over
    [m̂ᵢ − eᵢ, m̂ᵢ + eᵢ] (:meth:`Loss.curvature_near`), which vanishes for saturated logistic margins and for Huber
    margins away from the kink, so c·γ_p‖w‖ becomes (1/n)·Σᵢ eᵢ·sup ℓ''.
    """
    n, p = Z.shape
    total, depth = _block_sums(Z, s * loss.first(margins))
    grad: np.ndarray = total / n + reg * w + lin
    u = UNIT_ROUNDOFF
    c = loss.curvature
    w_norm = float(np.linalg.norm(w))
    lin_norm = float(np.linalg.norm(lin))
    margin_error = _gamma(p) * w_norm
    others = _gamma(depth * SUM_BLOCK) + 16.0 * (1.0 + c) * u
    others += 4.0 * u * (float(np.linalg.norm(total)) / n + reg * w_norm + lin_norm) + 2.0 * u * lin_norm
    computed = float(np.linalg.norm(grad)) * (1.0 + 2.0 * (p + 2) * u)
    bound = computed + 1.01 * (others + c * margin_error) + 1e-300
    if bound > tol and computed + 1.01 * others < tol:
        # Only in the hard regime (huge weights): one more pass over the data. Each margin's own error bound
        # γ_p·Σⱼ|zᵢⱼ||wⱼ| (≤ γ_p‖w‖; exact zeros of the row add nothing), the computed sum of non-negative terms
        # raised by (1 + 2γ_p) to cover its own rounding and 1e-300 for underflow, times ℓ'' near the margin.
        spread = (np.abs(Z) @ np.abs(w)) * (1.0 + 2.0 * _gamma(p)) + 1e-300
        errors = _gamma(p) * spread * (1.0 + 2.0 * u)
        local = float(np.mean(loss.curvature_near(margins, errors) * errors))
        bound = min(bound, computed + 1.01 * (others + local) + 1e-300)
    return grad, bound


def fallback_steps(n: int, curvature: float, reg: float, lin_norm: float, start_bound: float | None = None) -> int:
    """Steps of Nesterov's accelerated gradient that take any start within R₀ of the exact minimiser to within
    r = τ/reg of it (Bubeck 2015, Theorem 3.18, α = reg, β = c + reg):

        f(y_t) − f* ≤ ((α + β)/2)·R₀²·exp(−(t − 1)/√κ)  and  ‖y_t − w*‖² ≤ 2(f(y_t) − f*)/α,   κ = β/α,

    so t − 1 = ⌈√κ · ln((α + β)R₀²/(α r²))⌉ steps suffice. R₀ = ``start_bound``/α for a start with that certified
    gradient bound; without it, the start w = 0 with R₀ = (1 + ‖b‖/n)/α (‖∇J(0)‖ ≤ 1 + ‖b‖/n for rows in the unit
    ball and |ℓ'| ≤ 1), a bound that depends on the noise draw and public sizes only.
    """
    tol = gradient_tolerance(n, curvature)
    gradient_bound = (1.0 + lin_norm) * (1.0 + 4.0 * UNIT_ROUNDOFF) if start_bound is None else start_bound
    ratio = max(gradient_bound / tol, 1.0)  # R₀/r = (G/α)/(τ/α)
    # κ = β/α = 1 + c/Λ and (α + β)/α = 1 + κ, written so that a huge Λ (α + β overflowing) still gives finite logs.
    kappa = 1.0 + curvature / reg
    steps = math.sqrt(kappa) * (math.log1p(kappa) + 2.0 * math.log(ratio))
    if not math.isfinite(steps):  # a condition number beyond float64: more steps than any solve may take
        return MAX_FALLBACK_STEPS + 1
    return 1 + math.ceil(steps)


def check_certifiable(n: int, curvature: float, reg: float, lin_norm: float = 0.0) -> None:
    """Refuse a regulariser too small for a bounded solve: the fallback's step count for the start w = 0
    (:func:`fallback_steps`, a function of n, c, reg and ‖lin‖ only) must not exceed ``MAX_FALLBACK_STEPS``.

    With ``lin_norm = 0`` (its smallest value) the check uses public quantities only, so the estimators run it
    before the charge; :func:`minimise` runs it again with the noise term's norm (a data-independent draw).
    """
    worst_steps = fallback_steps(n, curvature, reg, lin_norm)
    if worst_steps > MAX_FALLBACK_STEPS:
        raise ValueError(
            f"reg_lambda + Δ = {reg:.3g} is too small to certify the ERM solve within a bounded number of steps "
            f"(condition number (c + Λ)/Λ = {(curvature + reg) / reg:.3g}; the fallback would need "
            f"{worst_steps:.3g} steps, more than {MAX_FALLBACK_STEPS:.3g}). Use reg_lambda ≥ 1e-8."
        )


def _at_floor(gnorm: float, bound: float, tol: float) -> bool:
    """The certificate's rounding allowance A = bound − ‖ĝ‖ exceeds 2τ while the computed gradient is already below
    it. Then ‖w − w*‖ ≤ 2A/reg, and over so short a distance A (a bound on the rounding of the margins, which
    grows with the weights the margins use) hardly changes: the floats near w* cannot be certified, and more steps
    would only spend time. (If this ever stopped a solve that could have been certified, the release would fail
    closed; it never releases an uncertified point.)"""
    allowance = bound - gnorm
    return allowance > 2.0 * tol and gnorm <= allowance


def _uncertifiable(tol: float) -> CertificationError:
    return CertificationError(
        f"The ERM solve could not be certified: near the minimiser the proven rounding error of the gradient "
        f"exceeds twice the tolerance τ = {tol:.3g}, so no floating-point point can be proven within τ/(Λ + Δ) of "
        "the exact minimiser (weights of norm far above 1/(c·p·2⁻⁵³) on directions the margins use). Nothing was "
        "released. A larger reg_lambda (smaller weights) or fewer features avoids it."
    )


def minimise(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg: float,
    lin: np.ndarray | None = None,
    w0: np.ndarray | None = None,
) -> np.ndarray:
    """A point within τ/reg of the exact minimiser w* of (1/n) Σ ℓ(sᵢ wᵀzᵢ) + (reg/2)‖w‖² + linᵀw, certified.

    τ = :func:`gradient_tolerance` (n, c). Rows must satisfy ‖zᵢ‖₂ ≤ 1 exactly. The objective is ``reg``-strongly
    convex, so ‖w − w*‖ ≤ ‖∇J(w)‖/reg; the returned point's exact gradient norm is *certified* ≤ τ by
    :func:`certified_gradient` (the computed norm plus a rigorous rounding allowance) for the floats computed,
    whichever branch below produced it. The returned point is a deterministic function of the data and ``lin``,
    which is what the perturbations need. No uncertified point is ever returned.

    Damped Newton first. Up to ``_DENSE_HESSIAN_MAX_DIM`` weights the Newton system is solved with the p×p
    Hessian, which is built (O(n p²)) only when the previous step was not a full step that cut the gradient
    fourfold; otherwise the last Hessian is corrected by a BFGS update (O(p²)), so a typical solve builds one or two
    Hessians and otherwise costs two matrix-vector products per step. A full step that halves the gradient norm is
    kept without evaluating the objective; any other step is backtracked under the Armijo rule. Above that size,
    conjugate gradients on Hessian-vector products (O(n p) per product, at most 10p products per step).

    Fallback: if Newton has not certified τ after ``_MAX_NEWTON_STEPS`` steps or its line search stalls,
    Nesterov's accelerated gradient (step 1/β, β = c + reg, momentum (√κ − 1)/(√κ + 1)) runs from the best Newton
    point for at most :func:`fallback_steps` steps (a bound from n, c, reg and ‖lin‖ only) and returns its first
    certified iterate; in exact arithmetic its last iterate would be within τ/reg of w* (Bubeck 2015, Thm 3.18),
    so the step count is the theorem's, but only the floating-point certificate decides what is returned.

    Running time: it depends on the data through the number of steps taken (the solve stops at the first certified
    point); it is at most ``_MAX_NEWTON_STEPS`` Newton steps plus :func:`fallback_steps` gradient steps, a bound
    from public quantities (n, p, c, reg, ‖lin‖).

    Raises
    ------
    ValueError
        Before any solve, from :func:`check_certifiable` (n, c, reg and ‖lin‖ only): reg is too small for a
        bounded, certified solve.
    CertificationError
        When no iterate can be certified: ``_FLOOR_STEPS`` consecutive iterates at the rounding floor
        (:func:`_at_floor`: the proven rounding allowance exceeds 2τ and the computed gradient is below it), or the
        fallback's steps are spent. Whether it happens depends on the data (never observed on the adversarial
        problems measured, see docs/erm.md); nothing is released then.
    """
    n, p = Z.shape
    Z = np.ascontiguousarray(Z, dtype=np.float64)  # _block_sums views it as blocks of rows
    lin = np.zeros(p) if lin is None else lin
    tol = gradient_tolerance(n, loss.curvature)
    check_certifiable(n, loss.curvature, reg, float(np.linalg.norm(lin)))
    w = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64)

    def gradient(w: np.ndarray, margins: np.ndarray) -> tuple[np.ndarray, float]:
        return certified_gradient(Z, s, loss, reg, lin, w, margins, tol)

    def objective(w: np.ndarray, margins: np.ndarray) -> float:
        return float(np.mean(loss.value(margins)) + 0.5 * reg * (w @ w) + lin @ w)

    margins = s * (Z @ w)
    grad, bound = gradient(w, margins)
    best_w, best_bound = w, bound
    gnorm = float(np.linalg.norm(grad))
    value: float | None = None  # the objective at w, computed only when a line search needs it
    hess, fast = None, False
    moved = change = np.zeros(p)
    floor = 0  # consecutive iterates stuck at the rounding allowance
    for _ in range(_MAX_NEWTON_STEPS):
        if bound <= tol:
            return w
        floor = floor + 1 if _at_floor(gnorm, bound, tol) else 0
        if floor >= _FLOOR_STEPS:
            raise _uncertifiable(tol)
        if p <= _DENSE_HESSIAN_MAX_DIM:
            if hess is None or not fast:
                # ℓ'' is computed only here: most steps update the Hessian instead of rebuilding it.
                hess = _gram(Z, loss.second(margins)) / n
                hess[np.diag_indices_from(hess)] += reg
            else:
                # In the fast phase (a full step cut the gradient fourfold) the Hessian is not rebuilt (O(n p²)); a
                # BFGS update (O(p²)) from the exact gradient change corrects it along the last step, which turns
                # the linear rate of a frozen Hessian into a superlinear one. The matrix stays positive definite
                # (yᵀs ≥ reg‖s‖² > 0 by strong convexity), so the step is a descent direction, and the certified
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
        if not slope < 0.0:  # pragma: no cover - a descent direction by positive definiteness
            step, slope = -grad, -(gnorm**2)
        w_new = w + step
        margins_new = s * (Z @ w_new)
        grad_new, bound_new = gradient(w_new, margins_new)
        gnorm_new = float(np.linalg.norm(grad_new))
        t = 1.0
        # The full step is kept when it halves the gradient norm: the gradient there is needed next anyway, and
        # the objective (one more pass over the margins) is then not evaluated. Otherwise Armijo backtracking on
        # the objective, which makes the method globally convergent.
        stalled = False
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
                    stalled = True
                    break
                w_new = w + t * step
                margins_new = s * (Z @ w_new)
                value_new = objective(w_new, margins_new)
            if stalled:
                break
            if t < 1.0:
                grad_new, bound_new = gradient(w_new, margins_new)
                gnorm_new = float(np.linalg.norm(grad_new))
            value = value_new
        else:
            value = None
        fast = t == 1.0 and gnorm_new <= 0.25 * gnorm
        moved, change = w_new - w, grad_new - grad
        w, margins, grad, gnorm, bound = w_new, margins_new, grad_new, gnorm_new, bound_new
        if bound < best_bound:
            best_w, best_bound = w, bound
    else:
        if bound <= tol:
            return w
    return _accelerated_fallback(Z, s, loss, reg, lin, best_w, best_bound, gradient)


def _accelerated_fallback(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg: float,
    lin: np.ndarray,
    w: np.ndarray,
    bound: float,
    gradient: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, float]],
) -> np.ndarray:
    """Nesterov's accelerated gradient from ``w`` (certified gradient bound ``bound``) for at most
    :func:`fallback_steps` steps; returns the first certified iterate, or raises :class:`CertificationError`."""
    n = Z.shape[0]
    tol = gradient_tolerance(n, loss.curvature)
    steps = fallback_steps(n, loss.curvature, reg, float(np.linalg.norm(lin)), start_bound=bound)
    beta = loss.curvature + reg
    root = math.sqrt(beta / reg)
    momentum = (root - 1.0) / (root + 1.0)
    x = y = w
    floor = 0
    for _ in range(steps):
        grad, certified = gradient(x, s * (Z @ x))
        if certified <= tol:
            return x
        floor = floor + 1 if _at_floor(float(np.linalg.norm(grad)), certified, tol) else 0
        if floor >= _FLOOR_STEPS:
            raise _uncertifiable(tol)
        y_next = x - grad / beta
        x = (1.0 + momentum) * y_next - momentum * y
        y = y_next
    if gradient(y, s * (Z @ y))[1] <= tol:  # the theorem's last iterate
        return y
    raise _uncertifiable(tol)


def round_to_grid(values: np.ndarray, scale: float) -> np.ndarray:
    """Round to the power-of-two grid 2⁻⁴⁰·``scale`` (:func:`diffpriv_py.noise.grid_step`); ``scale = 0``: unchanged.

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
    ε' = ε/2, otherwise Δ = 0. Both are nudged by 2⁻⁴⁰ (relative) toward privacy — ε' down by 2⁻⁴⁰(ε + 2 ln(…)),
    Δ up by 2⁻⁴⁰·c/(n(e^{ε/4} − 1)) — so the rounding of their few floating-point operations (≤ 10 ulps) can never
    make ε' + 2 ln(1 + c/(n(Λ + Δ))) exceed ε.
    """
    log_term = 2.0 * math.log1p(curvature / (n * reg_lambda))
    eps_prime = epsilon - log_term - 2.0**-40 * (epsilon + log_term)
    if eps_prime > 0.0:
        return eps_prime, 0.0
    return epsilon / 2.0, curvature / (n * math.expm1(epsilon / 4.0)) * (1.0 + 2.0**-40) - reg_lambda


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


def solver_noise(dim: int, radius: float, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """η with density ∝ exp(−ε‖η‖₂/(2·radius)): the noise that hides where, within ``radius`` of the exact
    minimiser, the solver stopped (two neighbours' stopping points are ≤ 2·radius apart, so this is ε-DP for them).

    The scale is rounded up by 2⁻⁴⁰ so its floating-point evaluation never falls below 2·radius/ε.
    """
    return sample_gamma_ball(dim, 2.0 * radius / epsilon * (1.0 + 2.0**-40), rng)


def _objective_split(epsilon: float, n: int, reg_lambda: float, curvature: float) -> tuple[float, float, float]:
    """(ε₂, ε', Λ + Δ) of :func:`objective_perturbation` at one problem's ε: public quantities only."""
    eps_solver = SOLVER_NOISE_SHARE * epsilon
    # Rounded down, so ε₁ + ε₂ ≤ ε for the floats used.
    eps_objective = (epsilon - eps_solver) * (1.0 - 2.0**-40)
    eps_prime, extra = objective_perturbation_budget(eps_objective, n, reg_lambda, curvature)
    return eps_solver, eps_prime, reg_lambda + extra


def solve_regulariser(perturbation: str, epsilon: float, n: int, reg_lambda: float, curvature: float) -> float:
    """The strong-convexity constant of the solve one problem runs: Λ (output perturbation) or Λ + Δ (objective
    perturbation at ``epsilon``), from public quantities only; what :func:`check_certifiable` is asked about."""
    if perturbation == "output":
        return reg_lambda
    return _objective_split(epsilon, n, reg_lambda, curvature)[2]


def objective_perturbation(
    Z: np.ndarray,
    s: np.ndarray,
    loss: Loss,
    reg_lambda: float,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """CMS'11 Algorithm 2 at ε₁ = 0.99ε, then approximate-minimum noise at ε₂ = 0.01ε; ε-DP in total.

    1. ε₂ = ``SOLVER_NOISE_SHARE``·ε, ε₁ = ε − ε₂; (ε', Δ) = :func:`objective_perturbation_budget` (ε₁, n, Λ, c);
    2. b with density ∝ exp(−(ε'/``sensitivity``)‖b‖) (``sensitivity`` = 2, the replace-one L2 bound on the change
       of Σᵢ ℓ'(·)sᵢzᵢ for ‖z‖ ≤ 1, |ℓ'| ≤ 1: the paper's exp(−(ε'/2)‖b‖));
    3. θ̂ = :func:`minimise` of J(f) + bᵀf/n + (Δ/2)‖f‖², certified ‖∇‖ ≤ τ, so ‖θ̂ − θ*‖ ≤ r = τ/(Λ + Δ) for the
       exact minimiser θ*;
    4. release θ̂ + η, η = :func:`solver_noise` (p, r, ε₂), rounded to the grid of :func:`round_to_grid`.

    Privacy (Iyengar et al. 2019, approximate minima perturbation, pure-ε form): θ* is ε₁-DP (CMS'11 Theorem 9,
    its density ratio between neighbours is ≤ e^{ε₁} at every point). Given θ*, the solver's output is a
    deterministic h(D, θ*) with ‖h(D, θ*) − θ*‖ ≤ r for every dataset D, so for neighbours D, D' the centres
    h(D, θ*), h(D', θ*) are within 2r and η's density ratio at any output is ≤ e^{ε₂}. Integrating over θ*:
    p_D(o) = ∫ p_D(θ*) q(o − h(D, θ*)) ≤ e^{ε₁ + ε₂} p_{D'}(o). Rounding is post-processing.
    """
    n, p = Z.shape
    eps_solver, eps_prime, strong = _objective_split(epsilon, n, reg_lambda, loss.curvature)
    b = sample_gamma_ball(p, sensitivity / eps_prime, rng)
    theta = minimise(Z, s, loss, strong, lin=b / n)
    radius = gradient_tolerance(n, loss.curvature) / strong
    released = theta + solver_noise(p, radius, eps_solver, rng)
    # b/n moves the minimiser by about ‖b‖/(n(Λ+Δ)): the grid is 2⁻⁴⁰ of that per-coordinate scale.
    return round_to_grid(released, sensitivity / (eps_prime * n * strong))


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

    The computed f̂ is within r = τ/Λ of the exact minimiser (:func:`minimise`, certified), so two neighbours'
    computed minimisers are within 2/(nΛ) + 2r and the noise covers that: scale (Δ + 2nτ)/(nΛε). The sum is rounded
    to the grid of :func:`round_to_grid`.
    """
    n, p = Z.shape
    f_star = minimise(Z, s, loss, reg_lambda)
    scale = output_noise_scale(n, reg_lambda, epsilon, sensitivity, loss.curvature)
    return round_to_grid(f_star + sample_gamma_ball(p, scale, rng), scale)


def output_noise_scale(n: int, reg_lambda: float, epsilon: float, sensitivity: float, curvature: float) -> float:
    """The Gamma-ball scale 1/β of output perturbation: (Δ + 2nτ)/(nΛε), τ = :func:`gradient_tolerance` (0 when
    Δ = 0); rounded up by 2⁻⁴⁰ so the floating-point value never falls below it."""
    if sensitivity == 0.0:
        return 0.0
    tol = gradient_tolerance(n, curvature)
    return (sensitivity + 2.0 * n * tol) / (n * reg_lambda * epsilon) * (1.0 + 2.0**-40)
