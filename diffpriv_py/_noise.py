"""Noise samplers whose output support does not depend on the input: grid noise (fast, vectorised) and CKS20 (exact).

Textbook float noise leaks the input through the set of doubles it can produce (Mironov 2012; Haney et al. 2022).
Here a real value is rounded to a power-of-two grid ``r`` that is 2⁻⁴⁰ of the noise scale, integer noise is drawn on
that grid, and the sum ``(m + i)·r`` is formed in floating point. IEEE addition is correctly rounded, so the output is
a deterministic function of the integer ``m + i``: a post-processing of an integer release whose support (all
integers) is the same for every input (Google's "Secure Noise Generation", 2020; OpenDP's discretisation).

Two integer samplers are offered:

* ``safe`` (vectorised numpy): the two-sided geometric sampler below. Its probabilities are computed in float64, so
  each integer's probability is off by a bounded relative error (of order 2⁻⁴³ per coordinate, see
  :func:`laplace_epsilon_reserve`). That error is paid for in the calibration: the noise is drawn for a slightly
  smaller ε (or δ), so the guarantee reported is exactly the one requested.
* ``exact`` (pure Python): Canonne, Kamath & Steinke (2020) on ``int`` and :class:`fractions.Fraction`, with no
  floating point at all in the sampling; 10⁴ to 4×10⁴ values per second.

Timing side channels are out of scope (see the security model in the docs): both samplers take longer for larger
noise draws.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ._rng import double_source, random_words, word_source

__all__ = [
    "GRID_BITS",
    "bernoulli",
    "discrete_gaussian",
    "exact_discrete_gaussian",
    "exact_discrete_laplace",
    "exact_grid_gaussian",
    "exact_grid_laplace",
    "gaussian_grid_calibration",
    "grid_gaussian",
    "grid_laplace",
    "grid_step",
    "laplace_epsilon_reserve",
    "two_sided_geometric",
]

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
# The vectorised two-sided geometric sampler (the "safe" integer noise)
# ---------------------------------------------------------------------------------------------------------------


def _block(lam: float) -> tuple[int, float]:
    """Block size T = 2^k with β = T·λ in (1/4, 1/2] (T = 1 and β = λ when λ > 1/4)."""
    if lam > 0.25:
        return 0, lam
    _, e = math.frexp(0.5 / lam)  # 2^(e-1) <= 1/(2λ) < 2^e
    k = e - 1
    return k, math.ldexp(lam, k)


_CHUNK = 1 << 18  # values per pass: keeps every temporary array in cache


def _geometric_blocks(n: int, beta: float, rng: np.random.Generator) -> np.ndarray:
    """n draws of G ≥ 0 with P(G ≥ g) = exp(−gβ), as float64.

    For β ≤ 2, one 53-bit uniform is compared with the thresholds exp(−β), …, exp(−cβ), all ≥ e⁻², and in the
    rare case G ≥ c the draw starts again and adds c (memorylessness). For β > 2 (tiny noise) G counts the
    successes of Bernoulli(exp(−β)) draws, each exact for its float value.
    """
    if beta <= 2.0:
        thresholds, ascending = _stage_tables(beta)
        c = thresholds.size
        blocks = _stages(rng.random(n), thresholds, ascending)  # a fresh array: the first stage is the running sum
        active = (blocks == c).nonzero()[0]
        while active.size:
            stage = _stages(rng.random(active.size), thresholds, ascending)
            blocks[active] += stage
            active = active[stage == c]
    else:
        blocks = np.zeros(n)
        p = np.array([math.exp(-beta)])
        active = np.arange(n)
        while active.size:
            active = active[bernoulli(np.broadcast_to(p, active.shape), rng)]
            blocks[active] += 1.0
    return blocks


@functools.lru_cache(maxsize=256)
def _stage_tables(beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The thresholds exp(−β), …, exp(−cβ) (c = max(1, ⌊2/β⌋)) of :func:`_geometric_blocks`, and the same floats in
    ascending order."""
    thresholds = np.exp(-beta * np.arange(1, max(1, int(2.0 / beta)) + 1, dtype=np.float64))
    thresholds.flags.writeable = False
    ascending = thresholds[::-1].copy()
    ascending.flags.writeable = False
    return thresholds, ascending


def _stages(u: np.ndarray, thresholds: np.ndarray, ascending: np.ndarray) -> np.ndarray:
    """The number of thresholds above each uniform, #{i : u < t_i}, as float64: G's stage, capped at c.

    The thresholds decrease, so that count is c − #{i : t_i ≤ u}, which a binary search over the ascending copy
    gives in one call (the same comparisons, so the same integers). It is the faster form for few values (the
    threshold loop costs two numpy calls per threshold, up to 40 for the Gaussian tail's small β); the loop's
    passes, branch-free, are faster for many.
    """
    c = thresholds.size
    if u.size <= 100 * c:
        stage: np.ndarray = np.searchsorted(ascending, u, side="right").astype(np.float64)
        np.subtract(c, stage, out=stage)
        return stage
    stage = (u < thresholds[0]).astype(np.float64)
    for t in thresholds[1:]:
        stage += u < t
    return stage


def _signed_geometric(
    n: int, lam: float, rng: np.random.Generator, unit: float = 1.0, offset: np.ndarray | None = None
) -> np.ndarray:
    """n two-sided geometric draws times ``unit`` (a power of two) as float64: P(i) ∝ exp(−λ|i|).

    With ``offset`` (n floats), returns offset rounded to the grid ``unit`` plus the noise, chunk by chunk.

    A fair sign and a magnitude M with P(M = m) ∝ exp(−λm); (negative, 0) is rejected so 0 is not counted twice.

    M = G·T + R is an exact factorisation of the geometric law (T = 2^k): R ∈ {0, …, T − 1} with P ∝ exp(−λR)
    by a uniform proposal accepted with probability exp(−λR) ∈ [e^(−1/2), 1], and G geometric with
    P(G ≥ g) = exp(−gβ), β = T·λ ∈ (1/4, 1/2]. The acceptance uniform w = 2U − 1 gives the test |w| < exp(−λR), the
    sign, and — given acceptance — v = |w|/exp(−λR), uniform on [0, 1), whose ⌊−ln(v)/β⌋ is G (capped at c with
    cβ ≤ 4; capped draws continue with fresh uniforms by memorylessness). Every probability decided this way is at
    least e⁻⁴·(1 − e^(−β)), so v's 2⁻⁵² grid and float rounding change each by a relative error below 2⁻⁴⁴;
    :func:`laplace_epsilon_reserve` charges for it.
    """
    k, beta = _block(lam)
    out = np.empty(n)
    if k == 0:
        todo = np.arange(n)
        while todo.size:
            draws = np.copysign(_geometric_blocks(todo.size, beta, rng) * unit, rng.random(todo.size) - 0.5)
            out[todo] = draws
            todo = todo[(draws == 0) & np.signbit(draws)]
        if offset is not None:
            out += _round_to_grid(offset, unit)
        return out
    if k > 52:
        raise ValueError(
            f"The geometric noise parameter {lam!r} is too small to sample (its scale exceeds 2^52). Use a larger "
            "epsilon or a smaller sensitivity."
        )
    block = math.ldexp(1.0, k)
    acceptance = -math.expm1(-beta) / beta
    c = float(max(1, int(4.0 / beta)))
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        filled = start
        while filled < stop:
            need = stop - filled
            m = int(need / acceptance * 1.03) + 32
            # j = ⌊U·T⌋ is exactly uniform on {0, …, T − 1} for a 53-bit uniform U and T = 2^k ≤ 2^52, and
            # w = 2U′ − 1 is exact: |w| decides acceptance, its sign is the noise's sign.
            j = np.floor(rng.uniform(0.0, block, m))
            w = rng.uniform(-1.0, 1.0, m)
            bound = np.multiply(j, -lam)
            np.exp(bound, out=bound)
            magnitude_w = np.abs(w)
            accepted = (magnitude_w < bound).nonzero()[0][:need]
            # Given acceptance, |w|/exp(−λj) is uniform on [0, 1) and independent of j and of w's sign: it draws G.
            v = magnitude_w.take(accepted)
            v /= bound.take(accepted)
            # G's stage: ⌊−ln(v)/β⌋ capped at c (v ≥ e^(−cβ) ≥ e⁻⁴ where it is not capped, so v's 2⁻⁵² grid and
            # the float log move each stage probability by a relative error below 2⁻⁴⁴); capped draws continue
            # afresh (memorylessness).
            np.log(v, out=v)
            v *= -1.0 / beta
            blocks = np.floor(v, out=v)
            np.minimum(blocks, c, out=blocks)
            more = (blocks == c).nonzero()[0]
            if more.size:
                blocks[more] += _geometric_blocks(more.size, beta, rng)
            blocks *= block
            blocks += j.take(accepted)
            signs = w.take(accepted)
            if blocks.size and blocks.min() == 0:
                zero = (blocks == 0).nonzero()[0]
                if (signs[zero] < 0).any():  # reject (negative, 0): 0 must not be counted twice
                    keep = np.ones(blocks.size, dtype=bool)
                    keep[zero[signs[zero] < 0]] = False
                    blocks, signs = blocks[keep], signs[keep]
            if unit != 1.0:
                blocks *= unit
            np.copysign(blocks, signs, out=out[filled : filled + blocks.size])
            filled += blocks.size
        if offset is not None:
            out[start:stop] += _round_to_grid(offset[start:stop], unit)
    return out


def _one_signed_geometric(
    lam: float, k: int, beta: float, rng: np.random.Generator, unit: float, offset: float
) -> float:
    """One draw of :func:`_signed_geometric` (block size T > 1) plus ``offset`` on the grid, in scalar arithmetic.

    The same proposal, acceptance test and G stage as the vectorised sampler, computed with the same float
    operations (``math.exp``/``math.log`` are as accurate as numpy's), one proposal at a time: the draws are i.i.d.,
    so the first accepted proposal has the law of any accepted one, and every probability keeps the error bound
    (and so the ε reserve) of :func:`_signed_geometric`. One release of one value then costs a few microseconds
    instead of the ~20 array passes of a vectorised chunk.
    """
    return _one_signed_geometric_with(_scalar_constants(lam, k, beta), rng, unit, offset)


_ScalarConstants = tuple[float, float, float, int, float, float]


def _scalar_constants(lam: float, k: int, beta: float) -> _ScalarConstants:
    """−λ, −1/β, T = 2^k, 64 − k, the cap c and β: what :func:`_one_signed_geometric_with` needs, computed once."""
    return -lam, -1.0 / beta, math.ldexp(1.0, k), 64 - k, float(max(1, int(4.0 / beta))), beta


def _one_signed_geometric_with(
    constants: _ScalarConstants, rng: np.random.Generator, unit: float, offset: float
) -> float:
    """:func:`_one_signed_geometric` with its constants precomputed (a cached release plan passes them)."""
    neg_lam, neg_inv_beta, block, shift, c, beta = constants
    # Uniforms as the top 53 bits m of 64-bit words, U = m·2⁻⁵³ (rng.random()'s values, see double_source): then
    # ⌊U·T⌋ = m >> (53 − k) = word >> (64 − k) exactly (T = 2^k, k ≤ 52), and 2U − 1 = m·2⁻⁵² − 1 with the same
    # rounding as numpy's uniform(−1, 1).
    word = double_source(rng)
    while True:
        j = word() >> shift  # exactly uniform on {0, …, T − 1}, as in the vectorised sampler
        w = (word() >> 11) * 2.0**-52 - 1.0  # numpy's uniform(−1, 1), exact
        bound = math.exp(j * neg_lam)
        magnitude_w = abs(w)
        if not magnitude_w < bound:
            continue
        # G's stage ⌊−ln(v)/β⌋ capped at c, with the vectorised sampler's float operations. v = 0 (w = 0, chance
        # 2⁻⁵³) is capped there (−ln 0 = inf), where math.log would raise.
        v = magnitude_w / bound
        stage = math.floor(math.log(v) * neg_inv_beta) if v > 0.0 else c
        if stage >= c:
            stage = c + _one_geometric_block(beta, rng)  # β ≤ 1/2 here: _geometric_blocks(1, β, rng), in scalars
        magnitude = stage * block + j
        if magnitude == 0 and w < 0:  # reject (negative, 0): 0 must not be counted twice
            continue
        noise = math.copysign(magnitude * unit if unit != 1.0 else magnitude, w)
        # offset on the grid, as _round_scalar_to_grid (inline: a call is a tenth of this function's time)
        return noise + (float(round(offset * (1.0 / unit))) * unit if abs(offset) < 2.0**52 * unit else offset)


def _round_scalar_to_grid(value: float, r: float) -> float:
    # As _round_to_grid: below 2^52·r, value/r is exact and round() (half to even, like rint) gives the integer.
    if abs(value) < 2.0**52 * r:
        return float(round(value * (1.0 / r))) * r
    return value


def two_sided_geometric(shape: int | tuple[int, ...], lam: float, rng: np.random.Generator) -> np.ndarray:
    """Integers with P(i) ∝ exp(−λ|i|) (the discrete Laplace of scale 1/λ), vectorised; returns int64.

    Parameters
    ----------
    shape : int or tuple of int
        Output shape.
    lam : float
        The decay λ > 0 per unit; the noise scale is 1/λ.
    rng : numpy.random.Generator
        The randomness source.

    Notes
    -----
    A fair sign and a geometric magnitude, with (negative, 0) rejected so 0 is not counted twice (CKS20, Alg. 2).
    Every integer has positive probability; see :func:`_signed_geometric` for the accuracy of each probability.
    """
    return _two_sided_geometric_float(shape, lam, rng).astype(np.int64)


@functools.lru_cache(maxsize=256)
def _stage_ascending(beta: float) -> tuple[float, ...]:
    # The very floats _geometric_blocks compares with, as Python floats in ascending order (for bisect).
    ascending: list[float] = _stage_tables(beta)[1].tolist()
    return tuple(ascending)


def _one_geometric_block(beta: float, rng: np.random.Generator, word: Callable[[], int] | None = None) -> int:
    """One draw of ``_geometric_blocks(1, beta, rng)`` for β ≤ 2: the same thresholds, uniforms and comparisons.

    ``word``: the generator's :func:`~diffpriv_py._rng.double_source`, if the caller has it already.
    """
    ascending = _stage_ascending(beta)
    c = len(ascending)
    if word is None:
        word = double_source(rng)
    blocks = 0
    while True:
        u = (word() >> 11) * 2.0**-53  # the value rng.random(1) holds: the same stream
        stage = c - bisect.bisect_right(ascending, u)  # #{thresholds > u}, as _stages counts it
        blocks += stage
        if stage != c:  # a capped draw (G ≥ c) starts again and adds c (memorylessness)
            return blocks


def one_two_sided_geometric(lam: float, rng: np.random.Generator) -> int | None:
    """One draw of :func:`two_sided_geometric` as a Python int, in scalar arithmetic; None when λ ≤ 1/4 or λ > 2
    (then call :func:`two_sided_geometric`).

    For 1/4 < λ ≤ 2 this is the vectorised sampler for one value step by step: the same thresholds (computed by
    numpy, cached), the same uniforms from the same stream (one ``rng.random()`` is the value ``rng.random(1)``
    holds) and the same comparisons, sign and rejection of (negative, 0), so the same integer, without a dozen
    numpy calls on arrays of one element.
    """
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"The geometric decay must be finite and > 0; got {lam!r}.")
    if not 0.25 < lam <= 2.0:  # _block gives T = 1 and β = λ exactly here; _geometric_blocks compares uniforms
        return None
    word = double_source(rng)  # uniforms as rng.random() gives them (see _one_signed_geometric_with)
    while True:
        blocks = _one_geometric_block(lam, rng, word)
        sign = (word() >> 11) * 2.0**-53 - 0.5
        if blocks == 0 and sign < 0:  # sign is never −0.0: u − 0.5 is +0.0 at u = 0.5
            continue  # reject (negative, 0): 0 must not be counted twice
        return -blocks if sign < 0 else blocks


def _two_sided_geometric_float(shape: int | tuple[int, ...], lam: float, rng: np.random.Generator) -> np.ndarray:
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"The geometric decay must be finite and > 0; got {lam!r}.")
    size = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    return _signed_geometric(size, lam, rng).reshape(shape)


def discrete_gaussian(shape: int | tuple[int, ...], sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Integers with P(i) ∝ exp(−i²/(2σ²)), vectorised; returns int64.

    For σ ≥ 2²⁰ (every safe Gaussian release): :func:`_discrete_gaussian_blocks`. Below: CKS20's Alg. 3 in float64,
    a two-sided geometric proposal of scale t = ⌊σ⌋ + 1 accepted with probability exp(−(|Y| − σ²/t)²/(2σ²)),
    drawn by :func:`bernoulli` so that small acceptance probabilities are not rounded to zero.
    """
    return _discrete_gaussian_float(shape, sigma, rng).astype(np.int64)


_BLOCKS_PER_SIGMA = 16


@functools.lru_cache(maxsize=64)
def _gaussian_block_tables(rho: float) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Alias tables for G with P(G = g) ∝ exp(−g²/(2ρ²)): outcomes g = 0 … K − 1 and a tail outcome K (G ≥ K).

    K = ⌈3ρ⌉. The table has 2^b ≥ K + 1 slots (zero-mass outcomes pad it), so a slot is b random bits, exactly
    uniform. It is built by Vose's method in exact rational arithmetic from the float weights (each within 4 ulp
    of exp); slot s keeps its own outcome when 53 further random bits, read as an integer i, satisfy i < t_s with
    t_s = round(2⁵³·p_s) (an exact integer; p_s is the exact rational keep-probability), and goes to its alias
    otherwise. Each t_s/2⁵³ is within 2⁻⁵⁴ of p_s, so each outcome's probability is off by at most 2⁻⁵⁴ absolute
    (every slot moves mass between two outcomes by at most 2⁻⁵⁴/2^b); with every outcome of probability ≥ 2⁻¹²,
    that is a relative 2⁻⁴² at most. The tail weight is the correctly rounded sum (math.fsum) of the weights up to
    40ρ; beyond lies less than e⁻⁸⁰⁰.

    Returns the keep thresholds t (uint64), the aliases (int64), K and the number of slot bits b.
    """
    k = math.ceil(3 * rho)
    weights = [math.exp(-(g * g) / (2 * rho * rho)) for g in range(math.ceil(40 * rho) + 1)]
    masses = [Fraction(w) for w in weights[:k]] + [Fraction(math.fsum(weights[k:]))]
    bits = max(1, (len(masses) - 1).bit_length())
    n_slots = 1 << bits
    masses += [Fraction(0)] * (n_slots - len(masses))
    total = sum(masses)
    scaled = [m * n_slots / total for m in masses]
    prob = [Fraction(1)] * n_slots
    alias = list(range(n_slots))
    small = [i for i, p in enumerate(scaled) if p < 1]
    large = [i for i, p in enumerate(scaled) if p >= 1]
    while small and large:  # Vose's alias method, exactly
        s, big = small.pop(), large.pop()
        prob[s], alias[s] = scaled[s], big
        scaled[big] = scaled[big] + scaled[s] - 1
        (small if scaled[big] < 1 else large).append(big)
    thresholds = np.array([round(p * 2**53) for p in prob], dtype=np.uint64)
    return thresholds, np.array(alias, dtype=np.int64), k, bits


def _gaussian_tail(n: int, rho: float, k: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of G ≥ k with P(G = g) ∝ exp(−g²/(2ρ²)), by rejection from a geometric envelope.

    g² ≥ k² + 2k(g − k), so k + D with P(D ≥ j) = exp(−jk/ρ²) (drawn by :func:`_geometric_blocks`, β = k/ρ² ≥ 3/ρ)
    accepted with probability exp(−D²/(2ρ²)) (by :func:`bernoulli`, exact for the float, however small) has
    exactly the tail law.
    """
    if n <= _FEW_TAILS:  # a release's first batch below ~10⁴ values, or a scalar release's draw: in Python
        return np.array(_few_gaussian_tails(n, rho, k, rng))
    return _gaussian_tail_arrays(n, rho, k, rng)


_FEW_TAILS = 32


def _gaussian_tail_arrays(n: int, rho: float, k: int, rng: np.random.Generator) -> np.ndarray:
    beta = k / (rho * rho)
    out = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        d = _geometric_blocks(todo.size, beta, rng)
        ok = bernoulli(np.exp(-(d * d) / (2 * rho * rho)), rng)
        out[todo[ok]] = k + d[ok]
        todo = todo[~ok]
    return out


def _few_gaussian_tails(n: int, rho: float, k: int, rng: np.random.Generator) -> list[float]:
    """:func:`_gaussian_tail` of a few values, replayed in Python arithmetic: the same values from the same stream.

    Round by round, as the array path: ``_geometric_blocks(t, β)`` (t uniforms compared with the same thresholds —
    a binary search over them counts the same comparisons — then one more uniform per capped draw, batch by batch),
    the acceptance probabilities (the same IEEE operations, and numpy's ``exp`` on an array of the same t values),
    and :func:`bernoulli` (the same t uniforms, exponent test and batches of 64-bit words), the failures retried in
    order. The tail is drawn once per release of a few hundred values or fewer (four draws at 10³ values), and by a
    scalar release: a few µs instead of ~35 numpy calls.
    """
    beta = k / (rho * rho)
    if beta > 2.0:  # G by Bernoulli trials (never for the block sampler, where ρ ≥ 16 and β ≈ 3/ρ): the array path
        tails: list[float] = _gaussian_tail_arrays(n, rho, k, rng).tolist()
        return tails
    ascending = _stage_ascending(beta)
    c = len(ascending)
    two_rho2 = 2 * rho * rho
    out = [0.0] * n
    todo = list(range(n))
    while todo:
        # _geometric_blocks(t, β): stage = #{thresholds > u} = c − #{ascending ≤ u}
        blocks = [c - bisect.bisect_right(ascending, u) for u in rng.random(len(todo)).tolist()]
        active = [i for i, b in enumerate(blocks) if b == c]
        while active:
            stages = [c - bisect.bisect_right(ascending, u) for u in rng.random(len(active)).tolist()]
            for i, stage in zip(active, stages, strict=True):
                blocks[i] += stage
            active = [i for i, stage in zip(active, stages, strict=True) if stage == c]
        d = [float(b) for b in blocks]
        p = np.exp(np.array([-(x * x) / two_rho2 for x in d])).tolist()
        # bernoulli(p): Bernoulli(mant) with a uniform, then Bernoulli(2^e) as "the first −e random bits are zero"
        ok, zeros_needed = [], []
        for q, u in zip(p, rng.random(len(p)).tolist(), strict=True):
            mant, e = math.frexp(q)
            ok.append(q >= 1 or (u < mant and q > 0))
            zeros_needed.append(0 if q >= 1 else -e)
        pending = [i for i, (o, z) in enumerate(zip(ok, zeros_needed, strict=True)) if o and z > 0]
        while pending:
            words = _raw_bits(rng, len(pending)).tolist()
            passed = []
            for i, word in zip(pending, words, strict=True):
                z = zeros_needed[i]
                take = min(z, 64)
                if word >> (64 - take) != 0:
                    ok[i] = False
                zeros_needed[i] = z - take
                if ok[i] and z > 64:
                    passed.append(i)
            pending = passed
        for j, i in enumerate(todo):
            if ok[j]:
                out[i] = k + d[j]
        todo = [i for j, i in enumerate(todo) if not ok[j]]
    return out


_LOW_53 = np.uint64(11)  # a 64-bit word shifted right by 11 leaves 53 bits, numpy's own double-uniform construction
_SIGN_BIT = np.uint64(63)
# Proposals per pass: each temporary (128 000 bytes) stays below glibc's 128 KiB mmap threshold, so it is reused
# heap memory, not fresh pages faulted in on every pass (which costs as much as the arithmetic).
_GAUSSIAN_CHUNK = 16_000


@functools.lru_cache(maxsize=64)
def _gaussian_alias_lookup(rho: float, block: float) -> tuple[np.ndarray, np.ndarray, int, int]:
    """:func:`_gaussian_block_tables` laid out for a branch-free alias draw from one 64-bit word W.

    W's bit 0 is left for the caller (the sign), bits 1 … b give the slot s (b ≤ 7 as K < 97), and ⌊W/2¹¹⌋ is the
    53-bit coin: the coin is below t_s iff W < t_s·2¹¹, so W itself is compared with the shifted threshold, found at
    index 2s = W & (2^(b+1) − 2). The outcome is entry 2s + keep of a table holding alias(s)·T at 2s and s·T at 2s + 1
    (exact: small integers times the power of two T): a gather replaces a data-dependent ``where``, slow on random
    masks. Slots kept with probability 1 (t_s = 2⁵³, whose shifted threshold would overflow 64 bits) get their own
    outcome as alias and threshold 0: the same outcome whatever the coin. The law is the alias table's, unchanged.

    Returns the shifted thresholds (uint64, at even indices), the outcomes·T (float64), K and b.
    """
    thresholds, alias, k, bits = _gaussian_block_tables(rho)
    if bits > 10:  # the slot must stay within the 11 bits below the coin
        raise ValueError(f"The Gaussian block table needs at most 2^10 slots; got 2^{bits} for rho={rho!r}.")
    slots = np.arange(1 << bits)
    full = thresholds == np.uint64(1 << 53)
    shifted = np.zeros(2 << bits, dtype=np.uint64)
    shifted[0::2] = np.where(full, 0, thresholds) << _LOW_53
    outcomes = np.empty(2 << bits)
    outcomes[0::2] = np.where(full, slots, alias) * block
    outcomes[1::2] = slots * block
    return shifted, outcomes, k, bits


class _GaussianTailPool:
    """I.i.d. draws of :func:`_gaussian_tail` made in batches and handed out in order.

    The tail sampler's cost is mostly per call (tens of µs), and a release hits the tail in ~0.3 % of proposals:
    about one batch per release instead of one call per chunk. Handing out pre-drawn i.i.d. values in order is the
    same law as drawing each when needed: they are independent of the bits that decide which proposals reach it.
    """

    def __init__(self, rho: float, k: int, rng: np.random.Generator, expected: int) -> None:
        self._rho, self._k, self._rng = rho, k, rng
        self._batch = expected
        self._values = np.empty(0)
        self._used = 0

    def take(self, n: int) -> np.ndarray:
        if self._used + n > self._values.size:
            fresh = _gaussian_tail(max(n, self._batch), self._rho, self._k, self._rng)
            self._values = np.concatenate([self._values[self._used :], fresh])
            self._used = 0
        values = self._values[self._used : self._used + n]
        self._used += n
        return values


def _draw_blocks(
    words: np.ndarray, rho: float, block: float, rng: np.random.Generator, tails: _GaussianTailPool | None
) -> np.ndarray:
    """G·T for each 64-bit word (bit layout of :func:`_gaussian_alias_lookup`; bit 0 unused), tail included."""
    shifted, outcomes, k, bits = _gaussian_alias_lookup(rho, block)
    slot2 = (words & _slot_mask(bits)).view(np.int64)
    keep = words < shifted.take(slot2)
    slot2 += keep
    g: np.ndarray = outcomes.take(slot2)
    tail = (g == k * block).nonzero()[0]  # 1-D: nonzero()[0] is flatnonzero without its µs of wrappers
    if tail.size:
        draws = _gaussian_tail(tail.size, rho, k, rng) if tails is None else tails.take(tail.size)
        g[tail] = draws * block
    return g


def _gaussian_blocks(n: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    """n draws of G ≥ 0 with P(G = g) ∝ exp(−g²/(2ρ²)) (alias method for g < 3ρ, geometric envelope beyond), float64.

    One 64-bit word per draw: bits 1 … b pick the slot, the high 53 bits are the keep-or-alias coin (disjoint bits
    of a uniform word are independent and uniform); see :func:`_gaussian_alias_lookup`.
    """
    return _draw_blocks(random_words(rng, n), rho, 1.0, rng, None)


@functools.lru_cache(maxsize=128)
def _uint64(value: int) -> np.uint64:
    # numpy scalars of the masks and shifts used on every call (building one costs ~0.2 µs); immutable, so shared.
    result: np.uint64 = np.uint64(value)
    return result


def _slot_mask(bits: int) -> np.uint64:
    """Bits 1 … b of a word: twice the alias slot (see :func:`_gaussian_alias_lookup`)."""
    return _uint64(((1 << bits) - 1) << 1)


def _low_mask(k: int) -> np.uint64:
    return _uint64((1 << k) - 1)


def _acceptance_bits(k: int) -> int:
    """Bits of the offset word above R (its low k bits) used as the acceptance uniform's leading part, at most 52."""
    return min(52, 64 - k)


def _gaussian_block_proposals(
    m: int, rho: float, block: float, k: int, scale: float, rng: np.random.Generator, tails: _GaussianTailPool
) -> tuple[np.ndarray, np.ndarray]:
    """m signed proposals of :func:`_discrete_gaussian_blocks` and the (sorted) indices of the rejected ones.

    Two 64-bit words per proposal. The alias word gives the block G (bits 1 and up, see :func:`_gaussian_alias_lookup`)
    and, in its bit 0, the sign. The offset word's low k bits are R (exactly uniform on {0, …, T − 1}, T = 2^k ≤ 2⁵²)
    and its top a = min(52, 64 − k) bits are H, the leading a bits of the acceptance uniform U = (H + V)/2^a (V
    uniform on [0, 1) and independent). Disjoint bits of uniform words are independent and uniform.

    The pair is accepted with probability p = fl(exp(−R(2GT + R)/(2σ²))), decided lazily: with y = p·2^a (exact, a
    power-of-two scaling), U < p iff H < ⌊y⌋, or H = ⌊y⌋ and V < y − ⌊y⌋. Only the ties H = ⌊y⌋ (probability
    2^−a ≤ 2⁻¹²) draw V, as a 53-bit uniform, so the acceptance probability is ⌊y⌋/2^a + ⌈2⁵³(y − ⌊y⌋)⌉/2^(53+a):
    within 2^−(53+a) ≤ 2⁻⁶⁵ of p, closer than a plain 53-bit uniform. The sign is written into the IEEE sign bit, and
    (negative, 0) is rejected so that 0 is not counted twice.
    """
    signs = random_words(rng, m)
    g = _draw_blocks(signs, rho, block, rng, tails)
    words = random_words(rng, m)
    a = _acceptance_bits(k)
    # R < 2^k ≤ 2⁵² and H < 2^a ≤ 2⁵²: the int64 views are the same integers, and compare exactly with doubles.
    j = (words & _low_mask(k)).view(np.int64).astype(np.float64)
    words >>= _uint64(64 - a)
    lead = words.view(np.int64)
    y = g * 2.0
    y += j
    y *= j
    y *= scale
    np.exp(y, out=y)
    y *= 2.0**a
    floor_y = np.floor(y)
    rejected = (lead >= floor_y).nonzero()[0]
    g += j
    signs <<= _SIGN_BIT
    g_bits = g.view(np.uint64)
    g_bits |= signs
    ties = rejected[lead.take(rejected) == floor_y.take(rejected)] if rejected.size else rejected
    if ties.size:
        won = rng.random(ties.size) < y.take(ties) - floor_y.take(ties)  # y − ⌊y⌋ is exact
        rejected = np.setdiff1d(rejected, ties[won], assume_unique=True)
    zeros = (g == 0).nonzero()[0]  # −0.0 == 0 too; rare (P(0) ≈ 1/(2.5σ))
    if zeros.size:
        negative_zeros = zeros[np.signbit(g.take(zeros))]
        if negative_zeros.size:
            rejected = np.union1d(rejected, negative_zeros)
    return g, rejected


def _discrete_gaussian_blocks(
    size: int, sigma: float, rng: np.random.Generator, unit: float = 1.0, offset: np.ndarray | None = None
) -> np.ndarray:
    """Signed draws with P(y) ∝ exp(−y²/(2σ²)) for large σ: Gaussian-weighted blocks, uniform within, rejection.

    Returns y·``unit`` (a power of two), plus ``offset`` rounded to that grid when given, chunk by chunk.

    |y| = G·T + R with T = 2^k ≈ σ/16: the block G is drawn with probability ∝ T·exp(−(GT)²/(2σ²)) (an upper
    envelope of the block's mass, since the density falls; one 64-bit word per block, see
    :func:`_gaussian_block_tables`), R uniformly (the top k bits of a second word, so k ≤ 52 and σ < 2⁵⁷; its lowest
    bit is the sign), and the pair is accepted with probability exp(−R(2GT + R)/(2σ²)) ≥ e^(−2.6) for |y| ≤ 40σ,
    decided by a 53-bit uniform from a third word (see :func:`_gaussian_block_proposals`); this gives exactly
    P(|y|) ∝ exp(−y²/(2σ²)), and (negative, 0) is rejected. Acceptance rate ≈ 0.97. A rejected proposal is
    replaced in place by a fresh one (and so on until accepted): every position's value is the first accepted of
    its own i.i.d. proposals, which has the accepted law, independently of the other positions (which positions
    are retried depends only on their own earlier proposals, and fresh proposals are independent of those).

    For |y| ≤ 40σ every integer's probability is within a relative 2⁻⁴⁰ of the ideal one: the alias table 2⁻⁴²,
    the tail envelope and its acceptance 2⁻⁴¹, the within-block acceptance 2⁻⁴⁹ (fl(exp) within 4 ulp, a relative
    2⁻⁵⁰, of the acceptance probability p ≥ e^(−2.6), and the lazy decision within 2⁻⁶⁵ of fl(exp)), and the
    normalising constant as much again.
    """
    _, e = math.frexp(sigma / _BLOCKS_PER_SIGMA)
    block = math.ldexp(1.0, e - 1)  # T ≤ σ/16 < 2T
    if not 1 <= e - 1 <= 52:
        raise ValueError(
            f"The discrete Gaussian block sampler needs 2^20 <= sigma < 2^57; got {sigma!r}. Use a smaller sigma or "
            "noise='exact'."
        )
    rho = sigma / block
    scale = -0.5 / (sigma * sigma)
    # P(G ≥ 3ρ) < 0.0028 and ≈ 1.03 proposals per value: a first batch of 0.003·size + 1 tail draws covers most
    # releases (the tail sampler's cost is mostly per call); the pool draws more if it runs out.
    tails = _GaussianTailPool(rho, math.ceil(3 * rho), rng, int(0.003 * size) + 1)
    k = e - 1
    if size < _GAUSSIAN_CHUNK:
        # No full chunk: the first round of the refill below (one batch for all positions 0 … size − 1, accepted
        # proposals handed out in order) without its position bookkeeping. The same proposals, the same accepted
        # ones in the same order and the same float operations, so the same output; about ten numpy calls fewer,
        # which is most of the cost of a release of a few values.
        again, rejected = _gaussian_block_proposals(int(size / 0.95) + 32, rho, block, k, scale, rng, tails)
        if rejected.size:
            kept = np.ones(again.size, dtype=bool)  # np.delete's own method, without its argument handling
            kept[rejected] = False
            again = again[kept]
        if again.size >= size:
            again = again[:size]
            again *= unit
            if offset is not None:
                again += _round_to_grid(offset, unit)
            return again
        out = np.empty(size)  # too few accepted (rare): the refill continues from the first unfilled position
        out[: again.size] = again * unit
        if offset is not None:
            out[: again.size] += _round_to_grid(offset[: again.size], unit)
        _refill(out, np.arange(again.size, size), rho, block, k, scale, rng, tails, unit, offset)
        return out
    out = np.empty(size)
    pending = []
    full = size - size % _GAUSSIAN_CHUNK
    for start in range(0, full, _GAUSSIAN_CHUNK):  # full chunks: accepted in place, the rejected ones remembered
        stop = start + _GAUSSIAN_CHUNK
        g, rejected = _gaussian_block_proposals(_GAUSSIAN_CHUNK, rho, block, k, scale, rng, tails)
        np.multiply(g, unit, out=out[start:stop])  # unit is a power of two: exact
        if offset is not None:
            out[start:stop] += _round_to_grid(offset[start:stop], unit)
        if rejected.size:
            pending.append(rejected + start)
    pending.append(np.arange(full, size))
    _refill(out, np.concatenate(pending), rho, block, k, scale, rng, tails, unit, offset)
    return out


def _refill(
    out: np.ndarray,
    todo: np.ndarray,
    rho: float,
    block: float,
    k: int,
    scale: float,
    rng: np.random.Generator,
    tails: _GaussianTailPool,
    unit: float,
    offset: np.ndarray | None,
) -> None:
    """Fill the positions ``todo`` of ``out`` (in order) with accepted proposals of :func:`_discrete_gaussian_blocks`.

    The rejected positions (≈ 3 %) of the whole release and the last partial chunk are filled together, in full
    chunks, from an oversampled batch of proposals whose accepted ones are handed out in order (they are i.i.d.):
    almost always one round, where per-chunk retry rounds would cost more in call overhead than the arithmetic.
    """
    while todo.size:
        pending = []
        for start in range(0, todo.size, _GAUSSIAN_CHUNK):
            where = todo[start : start + _GAUSSIAN_CHUNK]
            m = int(where.size / 0.95) + 32
            again, rejected = _gaussian_block_proposals(m, rho, block, k, scale, rng, tails)
            if rejected.size:
                again = np.delete(again, rejected)
            again = again[: where.size]
            filled = where[: again.size]
            again *= unit
            if offset is not None:
                again += _round_to_grid(offset[filled], unit)
            out[filled] = again
            pending.append(where[again.size :])
        todo = np.concatenate(pending)


def _one_discrete_gaussian_block(sigma: float, rng: np.random.Generator, unit: float, offset: float) -> float:
    """One draw of :func:`_discrete_gaussian_blocks` plus ``offset`` on the grid, in scalar arithmetic.

    The same two words per proposal, bit layout, alias draw of the block, uniform offset within it, lazy acceptance
    test and sign as the vectorised sampler (:func:`_gaussian_block_proposals`), with the same float operations,
    one proposal at a time (the draws are i.i.d., so the first accepted proposal has the law of any accepted one);
    the error bound and the (ε, δ) reserve are unchanged.
    """
    constants = _gaussian_scalar_constants(sigma)
    if constants is None:
        return float(_discrete_gaussian_blocks(1, sigma, rng, unit=unit, offset=np.array([offset]))[0])  # it raises
    shifted, outcomes, slot_mask, r_mask, lead_shift, scale, two_a, tail_g, rho, k, block = constants
    raw = word_source(rng)  # 64-bit words, as random_words gives them to the vectorised sampler
    while True:
        first = raw()
        slot2 = first & slot_mask
        g = outcomes[slot2 + 1] if first < shifted[slot2] else outcomes[slot2]
        if g == tail_g:
            g = _few_gaussian_tails(1, rho, k, rng)[0] * block
        word = raw()
        j = float(word & r_mask)
        lead = word >> lead_shift
        y = math.exp((g * 2.0 + j) * j * scale) * two_a
        floor_y = math.floor(y)
        accept = lead < floor_y or (lead == floor_y and rng.random() < y - floor_y)
        g += j
        negative = first & 1
        if accept and not (g == 0 and negative):
            return (-g if negative else g) * unit + _round_scalar_to_grid(offset, unit)


_GaussianConstants = tuple[list[int], list[float], int, int, int, float, float, float, float, int, float]


@functools.lru_cache(maxsize=256)
def _gaussian_scalar_constants(sigma: float) -> _GaussianConstants | None:
    """What :func:`_one_discrete_gaussian_block` needs at this σ, computed once: the alias lists, the slot and offset
    masks, the lead shift 64 − a, −1/(2σ²), 2^a, the tail outcome K·T, ρ, K and T; None outside 2²⁰ ≤ σ < 2⁵⁷."""
    _, e = math.frexp(sigma / _BLOCKS_PER_SIGMA)
    block = math.ldexp(1.0, e - 1)
    if not 1 <= e - 1 <= 52:
        return None
    k_bits = e - 1
    a = _acceptance_bits(k_bits)
    rho = sigma / block
    shifted, outcomes, k, bits = _gaussian_alias_lists(rho, block)
    slot_mask = ((1 << bits) - 1) << 1
    return (
        shifted,
        outcomes,
        slot_mask,
        (1 << k_bits) - 1,
        64 - a,
        -0.5 / (sigma * sigma),
        2.0**a,
        k * block,
        rho,
        k,
        block,
    )


@functools.lru_cache(maxsize=64)
def _gaussian_alias_lists(rho: float, block: float) -> tuple[list[int], list[float], int, int]:
    shifted, outcomes, k, bits = _gaussian_alias_lookup(rho, block)
    return shifted.tolist(), outcomes.tolist(), k, bits


def _discrete_gaussian_float(shape: int | tuple[int, ...], sigma: float, rng: np.random.Generator) -> np.ndarray:
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"The discrete Gaussian sigma must be finite and > 0; got {sigma!r}.")
    size = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    if sigma >= 2.0**20:
        return _discrete_gaussian_blocks(size, sigma, rng).reshape(shape)
    t = math.floor(sigma) + 1
    centre = sigma * sigma / t
    # CKS20's acceptance rate tends to e^(−1/2)·√(π/2) ≈ 0.76 for large σ; draws are i.i.d., so accepted ones are
    # simply collected in order until there are enough.
    parts, have = [], 0
    while have < size:
        need = size - have
        y = _two_sided_geometric_float(int(need / 0.74) + 32, 1.0 / t, rng)
        gap = np.abs(y) - centre
        gap *= gap
        gap *= -0.5 / (sigma * sigma)
        p = np.exp(gap, out=gap)
        # p ≥ 2⁻⁸ is a multiple of 2⁻⁶¹, so a 53-bit uniform decides it to within 2⁻⁴⁵ relative; the rare
        # smaller acceptance probabilities are drawn exactly by `bernoulli`.
        ok = rng.random(p.size) < p
        small = np.flatnonzero(p < 2.0**-8)
        if small.size:
            ok[small] = bernoulli(p[small], rng)
        accepted = y.take(np.flatnonzero(ok)[:need])
        parts.append(accepted)
        have += accepted.size
    return (parts[0] if len(parts) == 1 else np.concatenate(parts)).reshape(shape)


# ---------------------------------------------------------------------------------------------------------------
# The grid and the calibration that pays for it
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


def _round_to_grid(values: np.ndarray, r: float) -> np.ndarray:
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
    float64 decisions of :func:`_signed_geometric`, each on a probability ≥ e⁻⁴·(1 − e^(−β)), with numpy's ``exp``
    and ``log`` taken to be accurate to 4 ulp) whose effect on the privacy loss of d coordinates is at most
    ε·2⁻⁴⁸ + d·2⁻⁴²·⁷: the per-block error of G enters once per block the neighbours' shift crosses, i.e. about
    ε/(cβ) times. Calibrating to ε_c = (ε − d·2⁻⁴⁰)/(1 + 2⁻⁴⁰) covers it with a margin above 6. The cost is a
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


@functools.lru_cache(maxsize=1024)
def _laplace_grid(sensitivity: float, epsilon: float, dims: int) -> tuple[float, float, float]:
    r = grid_step(sensitivity / epsilon)
    eps_c = laplace_epsilon_reserve(epsilon, dims)
    rounded_sensitivity = _grid_rounding(sensitivity, r, dims, "l1")
    return r, eps_c, rounded_sensitivity


def grid_laplace(
    values: np.ndarray, sensitivity: float, epsilon: float, dims: int, rng: np.random.Generator
) -> np.ndarray:
    """Safe Laplace: ``values`` (any shape; ``dims`` values per release) plus discrete Laplace noise on a 2^k grid.

    The integer noise i has P(i) ∝ exp(−λ|i|) with λ = r·ε_c/(Δ + d·r) (Google's λ = rε/(Δ + r), with the
    rounding of d coordinates and the float reserve ε_c of :func:`laplace_epsilon_reserve`). The release is ε-DP;
    the noise is Laplace-like with scale (Δ + d·r)/ε_c = (Δ/ε)·(1 + O(d·2⁻⁴⁰/ε)).
    """
    r, eps_c, rounded_sensitivity = _laplace_grid(sensitivity, epsilon, dims)
    lam = r * eps_c / rounded_sensitivity
    if values.size == 1:
        k, beta = _block(lam)
        if 0 < k <= 52:
            return np.array(_one_signed_geometric(lam, k, beta, rng, r, float(values.flat[0]))).reshape(values.shape)
    return _signed_geometric(values.size, lam, rng, unit=r, offset=values.ravel()).reshape(values.shape)


def grid_laplace_noise(
    shape: tuple[int, ...], sensitivity: float, epsilon: float, dims: int, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """The noise :func:`grid_laplace` adds, drawn ahead for values of ``shape``, and its grid r.

    ``_round_to_grid(values, r) + noise`` has the law of ``grid_laplace(values, sensitivity, epsilon, dims, rng)``:
    the same integer sampler with the same λ, and the same two grid multiples added in one correctly rounded sum.
    Drawing ahead suits releases whose values are computed later (one call for many steps).
    """
    r, eps_c, rounded_sensitivity = _laplace_grid(sensitivity, epsilon, dims)
    noise = _signed_geometric(math.prod(shape), r * eps_c / rounded_sensitivity, rng, unit=r)
    return noise.reshape(shape), r


@functools.lru_cache(maxsize=1024)
def _laplace_scalar_plan(sensitivity: float, epsilon: float) -> tuple[_ScalarConstants, float] | None:
    """The scalar path of :func:`grid_laplace` for one value (``dims`` = 1): the constants of the call it makes to
    :func:`_one_signed_geometric` and the grid r, cached per (Δ, ε); None if it has no scalar path. Calling
    ``_one_signed_geometric_with(constants, rng, r, value)`` then gives the same float from the same stream as
    ``grid_laplace`` gives for an array of one value."""
    r, eps_c, rounded_sensitivity = _laplace_grid(sensitivity, epsilon, 1)
    lam = r * eps_c / rounded_sensitivity
    k, beta = _block(lam)
    return (_scalar_constants(lam, k, beta), r) if 0 < k <= 52 else None


def gaussian_grid_calibration(
    sigma_for: Callable[[float, float, float], float], sensitivity: float, epsilon: float, delta: float, dims: int
) -> tuple[float, float]:
    """The grid step and σ of safe Gaussian noise: calibrated to a reserved (ε_c, δ_c) and the rounded sensitivity.

    ``sigma_for(epsilon, delta, sensitivity)`` is the mechanism's calibration (analytic or classic).

    Notes
    -----
    The ideal integer noise is a continuous N(0, σ_g²) rounded to the nearest integer, so m + i is a
    post-processing of the continuous Gaussian mechanism on the integers m (L2 sensitivity (Δ + √d·r)/r) and has
    exactly its (ε, δ) curve. The discrete Gaussian sampled here differs from it by a relative 2⁻⁸⁰ (σ_g ≥ 2³⁹),
    and the float sampler (:func:`_discrete_gaussian_blocks`) adds a relative error η ≤ 2⁻³⁸·⁹ per coordinate on
    |i| ≤ 40σ_g (tail mass e⁻⁸⁰⁰). The
    release is therefore (ε_c + 2dη, e^{dη}δ_c + 2e^{ε−800}d)-DP; ε_c = ε − d·2⁻³⁷ and δ_c = δ·(1 − d·2⁻³⁶)
    keep that below the requested (ε, δ).
    """
    eps_c = epsilon - dims * 2.0**-37
    delta_c = delta * (1.0 - dims * 2.0**-36)
    if not (eps_c > epsilon * (1.0 - 2.0**-10) and delta_c > 0 and epsilon < 500):
        raise ValueError(
            f"Privacy parameters (epsilon={epsilon!r}, delta={delta!r}) leave no room for the safe sampler's float "
            f"error reserve on {dims} values (epsilon must exceed {dims}·2^-27 and be below 500). Use noise='exact' "
            "or larger parameters."
        )
    nominal = sigma_for(epsilon, delta, sensitivity)
    r = grid_step(nominal)
    sigma = sigma_for(eps_c, delta_c, _grid_rounding(sensitivity, r, dims, "l2"))
    return r, sigma


def grid_gaussian_scalar(value: float, r: float, sigma: float, rng: np.random.Generator) -> float | None:
    """:func:`grid_gaussian` of one value as a float, without the array wrapping; None if it has no scalar path (then
    call :func:`grid_gaussian`). The same call of :func:`_one_discrete_gaussian_block`, so the same float from the
    same stream."""
    sigma_grid = sigma / r
    if sigma_grid >= 2.0**20:
        return _one_discrete_gaussian_block(sigma_grid, rng, r, value)
    return None


def grid_gaussian(values: np.ndarray, r: float, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Safe Gaussian: ``values`` rounded to the grid ``r`` plus r·(discrete Gaussian of parameter σ/r)."""
    sigma_grid = sigma / r
    if sigma_grid >= 2.0**20:
        if values.size == 1:
            return np.array(_one_discrete_gaussian_block(sigma_grid, rng, r, float(values.flat[0]))).reshape(
                values.shape
            )
        flat = values.ravel()
        return _discrete_gaussian_blocks(flat.size, sigma_grid, rng, unit=r, offset=flat).reshape(values.shape)
    noise = _discrete_gaussian_float(values.shape, sigma_grid, rng)
    noise *= r
    noise += _round_to_grid(values, r)
    return noise


# ---------------------------------------------------------------------------------------------------------------
# Exact samplers: CKS20 on Python ints and Fractions (no floating point in the sampling)
# ---------------------------------------------------------------------------------------------------------------


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


def _randbelow(n: int, rng: np.random.Generator | _Bits) -> int:
    """A uniform integer in {0, …, n − 1} for any Python int n ≥ 1, from the Generator's bits."""
    return _as_bits(rng).below(n)


def _bernoulli_ratio(num: int, den: int, bits: _Bits) -> bool:
    return bits.below(den) < num


def _bernoulli_exp_small(num: int, den: int, bits: _Bits) -> bool:
    # Bernoulli(exp(−num/den)) for 0 ≤ num/den ≤ 1 (von Neumann; CKS20 Alg. 1): the first k with a failed
    # Bernoulli(γ/k) is odd with probability exp(−γ).
    k = 1
    while _bernoulli_ratio(num, den * k, bits):
        k += 1
    return k % 2 == 1


def _bernoulli_exp(gamma: Fraction, rng: np.random.Generator | _Bits) -> bool:
    """Bernoulli(exp(−γ)) for a rational γ ≥ 0, exactly (CKS20, Alg. 1)."""
    return _bernoulli_exp_ratio(gamma.numerator, gamma.denominator, _as_bits(rng))


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
