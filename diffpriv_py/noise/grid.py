"""The power-of-two grid that safe noise lands on, exact Bernoulli draws and the float-error reserve of ε.

Textbook float noise leaks the input through the set of doubles it can produce (Mironov 2012; Haney et al. 2022).
Here a real value is rounded to a power-of-two grid ``r`` that is 2⁻⁴⁰ of the noise scale, integer noise is drawn on
that grid, and the sum ``(m + i)·r`` is formed in floating point. IEEE addition is correctly rounded, so the output is
a deterministic function of the integer ``m + i``: a post-processing of an integer release whose support (all
integers) is the same for every input (Google's "Secure Noise Generation", 2020; OpenDP's discretisation).

Two integer samplers are offered:

* ``safe`` (vectorised numpy): the two-sided geometric (:mod:`.geometric`) and discrete Gaussian (:mod:`.gaussian`)
  samplers. Their probabilities are computed in float64, so each integer's probability is off by a bounded relative
  error (of order 2⁻⁴³ per coordinate, see :func:`laplace_epsilon_reserve`). That error is paid for in the
  calibration: the noise is drawn for a slightly smaller ε (or δ), so the guarantee reported is exactly the one
  requested.
* ``exact`` (pure Python, :mod:`.exact`): Canonne, Kamath & Steinke (2020) on ``int`` and
  :class:`fractions.Fraction`, with no floating point at all in the sampling; 10⁴ to 4×10⁴ values per second.

Timing side channels are out of scope (see the security model in the docs): both samplers take longer for larger
noise draws.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["GRID_BITS", "bernoulli", "grid_step", "laplace_epsilon_reserve", "round_to_grid"]

GRID_BITS = 40
"""The grid step is the power of two r with r ≤ scale·2⁻⁴⁰ < 2r (Google's ``kLaplaceGranularityParam``)."""

_U64 = np.uint64
_TWO64 = 2**64


# ---------------------------------------------------------------------------------------------------------------
# Bernoulli draws whose probability is exactly the float given
# ---------------------------------------------------------------------------------------------------------------


def _raw_bits(rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.integers(0, _TWO64, size=size, dtype=_U64)


def bernoulli(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw Bernoulli(p) elementwise with success probability *exactly* the float ``p`` (no rounding to 2⁻⁵³).

    ``p = mant·2^e`` with ``mant ∈ [1/2, 1)``; Bernoulli(mant) is exact with a 53-bit uniform because ``mant`` is a
    multiple of 2⁻⁵³, and Bernoulli(2^e) is "the first −e random bits are all zero". So even p = 10⁻³⁰⁰ keeps its
    probability, which a comparison ``U < p`` with a 53-bit uniform would round to 0.
    """
    p = np.asarray(p, dtype=np.float64)
    flat = p.ravel()
    mant, exp = np.frexp(flat)
    out = rng.random(flat.size) < mant
    out &= flat > 0
    ones = flat >= 1
    out[ones] = True
    zeros_needed = np.where(ones, 0, -exp).astype(np.int64)
    pending = (out & (zeros_needed > 0)).nonzero()[0]  # 1-D: flatnonzero without its wrappers
    while pending.size:
        z = zeros_needed[pending]
        raw = _raw_bits(rng, pending.size)
        take = np.minimum(z, 64)
        # The first `take` bits are zero iff raw >> (64 − take) == 0; take ≥ 1 keeps the shift within [0, 63].
        ok = (raw >> (64 - take).astype(_U64)) == 0
        out[pending[~ok]] = False
        zeros_needed[pending] = z - take
        pending = pending[ok & (z > 64)]
    result: np.ndarray = out.reshape(p.shape)
    return result


# ---------------------------------------------------------------------------------------------------------------
# The grid and the ε reserve that pays for its float error
# ---------------------------------------------------------------------------------------------------------------


def grid_step(scale: float) -> float:
    """The power of two r with r ≤ scale·2⁻⁴⁰ < 2r: the output grid of safe noise at this noise scale."""
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"The noise scale must be finite and > 0 to choose a grid; got {scale!r}.")
    _, e = math.frexp(scale)  # 2^(e-1) <= scale < 2^e
    r = math.ldexp(1.0, e - 1 - GRID_BITS)
    if r < 2.0**-1022 or not math.isfinite(r):
        raise ValueError(
            f"The noise scale {scale!r} is too small for a safe grid (its step would be subnormal). Rescale the "
            "target (e.g. report in other units) or use noise='exact'."
        )
    return r


def round_to_grid(values: np.ndarray, r: float) -> np.ndarray:
    # Scaling by the power of two 1/r is exact; |v/r| < 2^52 makes rint exact and v/r an integer-valued float.
    if values.size and _magnitude_below(values, 2.0**52 * r):
        rounded = np.multiply(values, 1.0 / r)
        np.rint(rounded, out=rounded)
        rounded *= r
        result: np.ndarray = rounded
        return result
    # |v| >= 2^52·r means v's ulp is >= r, so v is already on the grid (and v/r might not fit an integer).
    big = np.abs(values) >= 2.0**52 * r
    return np.where(big, values, np.rint(np.where(big, 0.0, values) / r) * r)


def _magnitude_below(values: np.ndarray, limit: float) -> bool:
    """Whether every |v| < ``limit`` (``values`` not empty), with the ufuncs' reductions called directly: their
    array-method wrappers cost about a µs per call, much of a small release."""
    if values.size <= 4096:  # one reduction over a small temporary of |v|
        return bool(np.maximum.reduce(np.abs(values), axis=None) < limit)
    return bool(-limit < np.minimum.reduce(values, axis=None) and np.maximum.reduce(values, axis=None) < limit)


def laplace_epsilon_reserve(epsilon: float, dims: int) -> float:
    """The ε the safe Laplace sampler is calibrated to so that the release is ``epsilon``-DP in full.

    Notes
    -----
    Per coordinate the sampled integer probabilities differ from the ideal geometric law by relative errors (the
    float64 decisions of ``noise.geometric._signed_geometric``, each on a probability ≥ e⁻⁴·(1 − e^(−β)), with
    numpy's ``exp`` and ``log`` taken to be accurate to 4 ulp) whose effect on the privacy loss of d coordinates is
    at most ε·2⁻⁴⁸ + d·2⁻⁴²·⁷: the per-block error of G enters once per block the neighbours' shift crosses, i.e.
    about ε/(cβ) times. Calibrating to ε_c = (ε − d·2⁻⁴⁰)/(1 + 2⁻⁴⁰) covers it with a margin above 6. The cost is a
    relative noise increase of about d·2⁻⁴⁰/ε.
    """
    eps_c = (epsilon - dims * 2.0**-40) / (1.0 + 2.0**-40)
    if not eps_c > epsilon * (1.0 - 2.0**-10):
        raise ValueError(
            f"epsilon={epsilon!r} is too small for safe noise on {dims} values (the sampler's float error reserve "
            f"of {dims}·2^-40 would exceed 1/1024 of it). Use noise='exact', fewer values, or a larger epsilon."
        )
    return eps_c


def _grid_rounding(sensitivity: float, r: float, dims: int, norm: str) -> float:
    # Rounding each coordinate to the grid moves it by at most r/2, so neighbours' rounded values differ by at most
    # Δ + d·r in L1 and Δ + √d·r in L2.
    return sensitivity + (dims if norm == "l1" else math.sqrt(dims)) * r


# Scalar twin, kept: round_to_grid of an array of one is 17× slower (bench_noise.py --twins).
def _one_round_to_grid(value: float, r: float) -> float:
    # round_to_grid of one float: below 2^52·r, value/r is exact and round() (half to even, like rint) gives the
    # integer.
    if abs(value) < 2.0**52 * r:
        return float(round(value * (1.0 / r))) * r
    return value
