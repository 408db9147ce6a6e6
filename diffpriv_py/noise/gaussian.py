"""The discrete Gaussian sampler (alias-table blocks, vectorised and as a scalar twin), grid Gaussian noise and its
calibration.

See :mod:`diffpriv_py.noise.grid` for why safe noise is an integer on a power-of-two grid;
:func:`gaussian_grid_calibration` states the (ε, δ) reserve that pays for the float decisions below.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from .._rng import random_words, word_source
from .geometric import _geometric_blocks, _stage_ascending, _two_sided_geometric_float
from .grid import _grid_rounding, _one_round_to_grid, _raw_bits, bernoulli, grid_step, round_to_grid

__all__ = ["discrete_gaussian", "gaussian_grid_calibration", "grid_gaussian", "grid_gaussian_scalar"]


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


# Scalar twin, kept: the arrays alone make grid_gaussian of 10²–10³ values 1.1–1.3× slower (bench_noise.py --twins).
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
                again += round_to_grid(offset, unit)
            return again
        out = np.empty(size)  # too few accepted (rare): the refill continues from the first unfilled position
        out[: again.size] = again * unit
        if offset is not None:
            out[: again.size] += round_to_grid(offset[: again.size], unit)
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
            out[start:stop] += round_to_grid(offset[start:stop], unit)
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
                again += round_to_grid(offset[filled], unit)
            out[filled] = again
            pending.append(where[again.size :])
        todo = np.concatenate(pending)


# Scalar twin, kept: one value through _discrete_gaussian_blocks is 17× slower (bench_noise.py --twins).
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
            return (-g if negative else g) * unit + _one_round_to_grid(offset, unit)


class _GaussianConstants(NamedTuple):
    """What :func:`_one_discrete_gaussian_block` needs at one σ, computed once (a tuple: unpacked as fast as one)."""

    shifted: list[int]  # the keep thresholds shifted past the 11 low bits (even indices; see _gaussian_alias_lookup)
    outcomes: list[float]  # G·T: the alias at 2s, the slot's own at 2s + 1 (K·T marks the tail)
    slot_mask: int  # bits 1 … b of a word: twice the alias slot
    r_mask: int  # the low k bits: the offset R within the block
    lead_shift: int  # 64 − a: the leading a bits of a word, the lazy acceptance test
    scale: float  # −1/(2σ²)
    two_a: float  # 2^a
    tail_g: float  # the alias outcome that sends the draw to the tail, K·T
    rho: float  # ρ = σ/T
    k: int  # K, the first block of the tail
    block: float  # the block size T


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
    return _GaussianConstants(
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
# Grid Gaussian: values rounded to the grid plus the discrete Gaussian, calibrated to a reserved (ε, δ)
# ---------------------------------------------------------------------------------------------------------------


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


# Scalar twin, kept: grid_gaussian of an array of one is 1.5× slower (bench_noise.py --twins).
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
    noise += round_to_grid(values, r)
    return noise
