"""The two-sided geometric (discrete Laplace) sampler, vectorised and as a scalar twin, and grid Laplace noise.

See :mod:`diffpriv_py.noise.grid` for why safe noise is an integer on a power-of-two grid, and
:func:`~diffpriv_py.noise.grid.laplace_epsilon_reserve` for the ε reserve that pays for the float decisions below.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .._rng import double_source
from .grid import _grid_rounding, bernoulli, grid_step, laplace_epsilon_reserve, round_to_grid

__all__ = [
    "grid_laplace",
    "grid_laplace_noise",
    "grid_laplace_scalar",
    "laplace_grid",
    "one_two_sided_geometric",
    "two_sided_geometric",
]


def _block_exponent(lam: float) -> tuple[int, float]:
    """The exponent k of the block size T = 2^k, and β = T·λ in (1/4, 1/2] (k = 0 and β = λ when λ > 1/4)."""
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
    k, beta = _block_exponent(lam)
    out = np.empty(n)
    if k == 0:
        todo = np.arange(n)
        while todo.size:
            draws = np.copysign(_geometric_blocks(todo.size, beta, rng) * unit, rng.random(todo.size) - 0.5)
            out[todo] = draws
            todo = todo[(draws == 0) & np.signbit(draws)]
        if offset is not None:
            out += round_to_grid(offset, unit)
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
            out[start:stop] += round_to_grid(offset[start:stop], unit)
    return out


# Scalar twin, kept: one value through _signed_geometric is 13× slower (bench_noise.py --twins).
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


class _ScalarConstants(NamedTuple):
    """What :func:`_one_signed_geometric_with` needs at one λ, computed once (a tuple: unpacked as fast as one)."""

    neg_lam: float  # −λ
    neg_inv_beta: float  # −1/β
    block: float  # the block size T = 2^k
    shift: int  # 64 − k: a 64-bit word shifted right by it is uniform on {0, …, T − 1}
    cap: float  # c = max(1, ⌊4/β⌋), where G's stage is capped
    beta: float  # β = T·λ


def _scalar_constants(lam: float, k: int, beta: float) -> _ScalarConstants:
    """−λ, −1/β, T = 2^k, 64 − k, the cap c and β: what :func:`_one_signed_geometric_with` needs, computed once."""
    return _ScalarConstants(-lam, -1.0 / beta, math.ldexp(1.0, k), 64 - k, float(max(1, int(4.0 / beta))), beta)


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
        # offset on the grid, as _one_round_to_grid (inline: a call is a tenth of this function's time)
        return noise + (float(round(offset * (1.0 / unit))) * unit if abs(offset) < 2.0**52 * unit else offset)


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


# Scalar twin, kept: _geometric_blocks(1) is 6.9× slower (bench_noise.py --twins).
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


# Scalar twin, kept: two_sided_geometric(1) is 9.7× slower (bench_noise.py --twins).
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
    if not 0.25 < lam <= 2.0:  # _block_exponent gives T = 1 and β = λ exactly here; _geometric_blocks compares uniforms
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


# ---------------------------------------------------------------------------------------------------------------
# Grid Laplace: values rounded to the grid plus the geometric noise, calibrated to the reserved ε
# ---------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def laplace_grid(sensitivity: float, epsilon: float, dims: int) -> tuple[float, float, float]:
    """The grid r, the reserved ε_c and the rounded L1 sensitivity Δ + d·r of :func:`grid_laplace`, cached.

    It runs exactly :func:`grid_step` (Δ/ε) and :func:`laplace_epsilon_reserve` (ε, d), so calling it checks, before
    any budget is charged, that a safe Laplace release at these public values is possible: a failure raises (and is
    not cached), a success is one dictionary look-up the next time.
    """
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
    r, eps_c, rounded_sensitivity = laplace_grid(sensitivity, epsilon, dims)
    lam = r * eps_c / rounded_sensitivity
    if values.size == 1:
        k, beta = _block_exponent(lam)
        if 0 < k <= 52:
            return np.array(_one_signed_geometric(lam, k, beta, rng, r, float(values.flat[0]))).reshape(values.shape)
    return _signed_geometric(values.size, lam, rng, unit=r, offset=values.ravel()).reshape(values.shape)


def grid_laplace_noise(
    shape: tuple[int, ...], sensitivity: float, epsilon: float, dims: int, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """The noise :func:`grid_laplace` adds, drawn ahead for values of ``shape``, and its grid r.

    ``round_to_grid(values, r) + noise`` has the law of ``grid_laplace(values, sensitivity, epsilon, dims, rng)``:
    the same integer sampler with the same λ, and the same two grid multiples added in one correctly rounded sum.
    Drawing ahead suits releases whose values are computed later (one call for many steps).
    """
    r, eps_c, rounded_sensitivity = laplace_grid(sensitivity, epsilon, dims)
    noise = _signed_geometric(math.prod(shape), r * eps_c / rounded_sensitivity, rng, unit=r)
    return noise.reshape(shape), r


@functools.lru_cache(maxsize=1024)
def _laplace_scalar_plan(sensitivity: float, epsilon: float) -> tuple[_ScalarConstants, float] | None:
    """The scalar path of :func:`grid_laplace` for one value (``dims`` = 1): the constants of the call it makes to
    :func:`_one_signed_geometric` and the grid r, cached per (Δ, ε); None if it has no scalar path. Calling
    ``_one_signed_geometric_with(constants, rng, r, value)`` then gives the same float from the same stream as
    ``grid_laplace`` gives for an array of one value."""
    r, eps_c, rounded_sensitivity = laplace_grid(sensitivity, epsilon, 1)
    lam = r * eps_c / rounded_sensitivity
    k, beta = _block_exponent(lam)
    return (_scalar_constants(lam, k, beta), r) if 0 < k <= 52 else None


# Scalar twin, kept: grid_laplace of an array of one is 1.8× slower (bench_noise.py --twins).
def grid_laplace_scalar(value: float, sensitivity: float, epsilon: float, rng: np.random.Generator) -> float | None:
    """:func:`grid_laplace` of one value (``dims`` = 1) as a float, from a cached plan; None if it has no scalar path
    (then call :func:`grid_laplace`). The same draw from the same stream as ``grid_laplace`` of an array of one."""
    plan = _laplace_scalar_plan(sensitivity, epsilon)
    return None if plan is None else _one_signed_geometric_with(plan[0], rng, plan[1], value)
