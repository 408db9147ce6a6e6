"""Sampling an index with probability ∝ exp(scale · score) so that no candidate loses its probability to floats.

The textbook Gumbel-max trick draws G = −ln(−ln U) from a 53-bit uniform U, so G ∈ [−3.6, 36.7]: a candidate whose
scaled score trails the best by more than about 40 can never win, and a neighbouring dataset that narrows the gap
makes it possible again — an infinite privacy loss (the failure Mironov 2012 showed for textbook Laplace sampling).
Here the Gumbel variables are built from an exponential E drawn with full relative precision at *both* ends (a
geometric number of halvings plus a uniform mantissa), so G has its whole unbounded range and a candidate behind by
1000 keeps its e⁻¹⁰⁰⁰ share.
Permute-and-flip is drawn as report-noisy-max with the same unbounded Exp(1) noise (Ding et al. 2021), so its
acceptance probabilities exp(s) never underflow to zero either.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["gumbel", "sample_exponential", "sample_exponential_many"]

_MAX_CELLS = 1 << 22  # draws × candidates per vectorised block


def _leading_zeros(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Geometric(1/2) counts on {0, 1, …} from 53-bit uniforms: the zero bits leading each one's expansion.

    u = k·2⁻⁵³ lies in [2^(e−1), 2^e) with e = frexp(u)'s exponent, so −e zero bits lead it; u = 0 (53 zero bits)
    continues with fresh uniforms, so the count is unbounded.
    """
    out: np.ndarray = -np.frexp(u)[1].astype(np.float64)
    todo = np.flatnonzero(u == 0)
    while todo.size:
        fresh = rng.random(todo.size)
        out[todo] += 53 - np.frexp(fresh)[1]
        todo = todo[fresh == 0]
    return out


def _exponential(size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Exp(1) draws E accurate to float precision over their whole range, and ln h (for ln E when E underflows).

    E = K₁·ln 2 + E₀ where K₁ ~ Geometric(1/2) counts halvings of the tail (memorylessness: P(E ≥ ln 2) = 1/2) and
    E₀ = −log1p(−h) is E conditioned on E < ln 2, with h = 2^(−K₂−2)(1 + f) uniform on (0, 1/2) to full relative
    precision (K₂ geometric, f a 53-bit uniform). So P(E ≥ x) = e^(−x) holds for every x, however large, and
    E is resolved down to 2⁻¹⁰⁷⁴ and beyond (in log space).
    """
    u = rng.random((3, size))
    k1 = _leading_zeros(u[0], rng)
    k2 = _leading_zeros(u[1], rng)
    log_h = np.log1p(u[2])
    log_h -= (k2 + 2.0) * math.log(2.0)
    with np.errstate(under="ignore"):
        e = -np.log1p(-np.exp(log_h))
    e += k1 * math.log(2.0)
    return e, log_h


def gumbel(size: int, rng: np.random.Generator) -> np.ndarray:
    """Standard Gumbel draws G = −ln E, E from :func:`_exponential`: unbounded in both directions.

    P(G > g) ≈ e^(−g) holds for every g (the 53-bit textbook draw stops at 36.7); where E underflows, ln E = ln h
    to a relative 2⁻¹⁰⁰⁰.
    """
    e, log_h = _exponential(size, rng)
    with np.errstate(divide="ignore"):
        return -np.where(e > 0, np.log(e), log_h)


def _leading_zeros_scalar(u: float, rng: np.random.Generator) -> int:
    count = 0
    while u == 0.0:
        count += 53
        u = float(rng.random())
    return count - math.frexp(u)[1]


def _noisy_max_small(logits: list[float], rng: np.random.Generator, gumbel_noise: bool) -> int:
    """One draw for a few candidates in plain Python (same construction as :func:`_exponential`, less overhead)."""
    u = rng.random(3 * len(logits)).tolist()
    best, best_index = -math.inf, 0
    ln2 = math.log(2.0)
    for i, logit in enumerate(logits):
        if logit == -math.inf:
            continue
        k1 = _leading_zeros_scalar(u[3 * i], rng)
        k2 = _leading_zeros_scalar(u[3 * i + 1], rng)
        log_h = math.log1p(u[3 * i + 2]) - (k2 + 2.0) * ln2
        e = k1 * ln2 - math.log1p(-math.exp(log_h))
        noise = (-(math.log(e) if e > 0 else log_h)) if gumbel_noise else e
        if logit + noise > best:
            best, best_index = logit + noise, i
    return best_index


def _logits(scores: np.ndarray, scale: float, log_weights: np.ndarray | None) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        logits: np.ndarray = scores - scores.max()
        logits *= scale
    logits[np.isnan(logits)] = -np.inf
    if log_weights is not None:
        logits += log_weights
        logits -= logits[np.isfinite(logits)].max()
    return logits


def sample_exponential_many(
    scores: np.ndarray,
    scale: float,
    rng: np.random.Generator,
    n: int,
    *,
    method: str = "exponential",
    log_weights: np.ndarray | None = None,
) -> np.ndarray:
    """``n`` independent indices, each drawn with probability ∝ exp(scale·scores[i]) (or by permute-and-flip).

    See :func:`sample_exponential`; this is its vectorised form (one draw is the case n = 1).
    """
    scores = np.asarray(scores, dtype=np.float64)
    k = scores.size
    if log_weights is not None:
        log_weights = np.asarray(log_weights, dtype=np.float64)
        if method != "exponential":
            raise ValueError("log_weights (a base measure) is only supported with method='exponential'.")
    if np.isinf(scale):
        masked = scores if log_weights is None else np.where(np.isneginf(log_weights), -np.inf, scores)
        return np.full(n, int(np.argmax(masked)), dtype=np.int64)
    logits = _logits(scores, scale, log_weights)
    out = np.empty(n, dtype=np.int64)
    rows = max(1, _MAX_CELLS // max(k, 1))
    for start in range(0, n, rows):
        m = min(rows, n - start)
        if method == "permute_and_flip":
            # Permute-and-flip is report-noisy-max with Exp(1) noise on the logits (Ding et al. 2021), and E's
            # unbounded tail keeps every candidate's acceptance probability exp(logit) > 0.
            noisy = _exponential(m * k, rng)[0].reshape(m, k)
        else:
            noisy = gumbel(m * k, rng).reshape(m, k)
        noisy += logits
        out[start : start + m] = np.argmax(noisy, axis=1)
    return out


def sample_exponential(
    scores: np.ndarray,
    scale: float,
    rng: np.random.Generator,
    *,
    method: str = "exponential",
    log_weights: np.ndarray | None = None,
) -> int:
    """Return an index drawn with probability ∝ exp(scale · scores[i]).

    ``scale = inf`` returns the first best index (no randomness). ``method="permute_and_flip"`` draws from the
    permute-and-flip distribution instead (McKenna & Sheldon 2020). ``log_weights`` adds a base measure:
    probability ∝ exp(log_weights[i] + scale · scores[i]), with −inf meaning weight 0 (the continuous exponential
    mechanism over intervals, e.g. for quantiles, uses log interval lengths); only with ``method="exponential"``.

    Notes
    -----
    Gumbel-max with full-range Gumbel noise (:func:`gumbel`): every candidate with a finite scaled score keeps a
    positive probability, however far behind it is; probabilities are exact up to float64 rounding of the
    scaled scores and logarithms (a relative error of order 2⁻⁵⁰ per candidate). Permute-and-flip is
    report-noisy-max with the same full-range Exp(1) noise, so nothing underflows either.

    References
    ----------
    McKenna, R. & Sheldon, D. (2020). Permute-and-flip: a new mechanism for differentially private selection.
    Ding, Z. et al. (2021). The permute-and-flip mechanism is identical to report-noisy-max with exponential noise.
    """
    if log_weights is None and not math.isinf(scale) and np.size(scores) <= 64:
        values = np.asarray(scores, dtype=np.float64).tolist()
        top = max(values)
        logits = [scale * (v - top) for v in values]
        return _noisy_max_small(logits, rng, gumbel_noise=method != "permute_and_flip")
    return int(sample_exponential_many(scores, scale, rng, 1, method=method, log_weights=log_weights)[0])
