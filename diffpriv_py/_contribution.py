"""Per-person contribution bounding: keep at most ``max_groups`` groups and ``max_rows`` rows per group per person.

Which rows a person keeps is a function of that person's own rows and of one random 64-bit key, never of anyone
else's rows or of any value: each (person, group) pair and each row of a pair gets a pseudo-random priority from the
key and the person's and group's *labels* (hashed by value), and the smallest priorities are kept. The kept set is
therefore the same however the table is ordered across people or split into partitions, which is what lets a
distributed run reproduce an in-memory one.

Cost: one stable sort of the rows by (person, group) — a merge sort that runs in linear time on tables already
grouped by person, the common layout — then linear passes over the sorted runs; priorities are drawn, and sorted
within their runs, only for the people and pairs over a limit.
"""

from __future__ import annotations

import attrs
import numpy as np

__all__ = ["Bounded", "bound_contributions", "label_hashes", "mix64", "run_starts"]

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, vectorised: a bijection of uint64 whose outputs look independent and uniform."""
    with np.errstate(over="ignore"):
        z = x ^ (x >> np.uint64(30))
        z = z * _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    out: np.ndarray = z
    return out


def label_hashes(labels: np.ndarray) -> np.ndarray:
    """A uint64 hash of every label, by value: the same label gives the same hash in any array, order or process.

    Numbers hash their float64 value (integers exactly below 2⁵³; −0.0 and 0.0 alike, every NaN alike, as the group
    labels are canonical) or, for integers, their int64 value; strings hash their characters, one code point at a
    time. Used for the bounding's priorities only, so a collision merely ties two priorities."""
    a = np.asarray(labels)
    if a.dtype.kind in "iub":
        return mix64(a.astype(np.int64).view(np.uint64) ^ _GOLDEN)
    if a.dtype.kind == "f":
        v = np.where(np.isnan(a), np.nan, a.astype(np.float64) + 0.0)
        return mix64(v.view(np.uint64) ^ _GOLDEN)
    if a.dtype.kind != "U":
        a = a.astype(str)
    chars = a.view(np.uint32).reshape(a.shape[0], -1) if a.dtype.itemsize else np.zeros((a.shape[0], 0), np.uint32)
    h = np.full(a.shape[0], _GOLDEN, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in range(chars.shape[1]):  # a loop over the label's width, never over labels
            h = mix64(h * _GOLDEN + chars[:, col])
    return h


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the positions where the tuple of (already sorted) ``keys`` changes; True at position 0."""
    n = keys[0].shape[0]
    start = np.zeros(n, dtype=bool)
    if n:
        start[0] = True
        for key in keys:
            start[1:] |= key[1:] != key[:-1]
    return start


def _runs(sorted_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first position, length) of every run of equal values of a sorted array."""
    first = np.flatnonzero(run_starts(sorted_key))
    size: np.ndarray = np.diff(np.append(first, sorted_key.shape[0]))
    return first, size


def _rank_in_run(first: np.ndarray, size: np.ndarray) -> np.ndarray:
    """0, 1, … within every run (runs given by their first position and length, covering the whole array)."""
    rank: np.ndarray = np.arange(int(size.sum())) - np.repeat(first, size)
    return rank


PACKED = 1 << 32
"""Codes below this pack two to a 64-bit sort key; beyond it (tables of billions of rows) two-key sorts give the same
order, so the kept rows never depend on which is used."""


def _lowest(run: np.ndarray, priority: np.ndarray, limit: int) -> np.ndarray:
    """For elements sorted by ``run`` (non-decreasing integers), whether each is among the ``limit`` elements of its
    run with the smallest ``priority`` (ties: the earlier element). A stable sort by (run, top 32 bits of the
    priority), merge-sort fast as the runs are already in order."""
    top = priority >> np.uint64(32)
    if run.shape[0] and int(run[-1]) >= PACKED:  # the packed key would wrap: the same order from two keys
        order = np.lexsort((top, run))
    else:
        order = np.argsort((run.astype(np.uint64) << np.uint64(32)) | top, kind="stable")
    ok = np.empty(run.shape[0], dtype=bool)
    ok[order] = _rank_in_run(*_runs(run)) < limit  # the sort keeps every run at its positions
    return ok


@attrs.frozen(eq=False)
class Bounded:
    """The outcome of :func:`bound_contributions`.

    Attributes
    ----------
    keep : ndarray of bool
        Per row (input order): kept.
    pair_person, pair_group : ndarray of intp
        The person and group code of every kept (person, group) pair (each holds at least one kept row).
    """

    keep: np.ndarray
    pair_person: np.ndarray
    pair_group: np.ndarray


def bound_contributions(
    unit: np.ndarray,
    group: np.ndarray,
    max_groups: int,
    max_rows: int,
    key: int,
    unit_hash: np.ndarray,
    group_hash: np.ndarray,
) -> Bounded:
    """Keep at most ``max_groups`` groups per person and ``max_rows`` rows per (person, group) pair.

    Parameters
    ----------
    unit, group : ndarray of int
        Non-negative integer codes of the person and the group of each row. The group codes must number the group
        labels in an order fixed by the labels themselves (sorted, or the public keys' order: it breaks ties between
        equal priorities); the person codes may be any numbering.
    max_groups, max_rows : int
        The public contribution limits.
    key : int
        The release's random 64-bit key (drawn from its ``rng`` after the charge).
    unit_hash, group_hash : ndarray of uint64
        :func:`label_hashes` of the person and group labels, indexed by code.

    Returns
    -------
    Bounded
        The kept rows and the kept (person, group) pairs.

    Notes
    -----
    **The rule.** Pair (p, g) gets the priority π(p, g) = mix(K ⊕ mix(h(p) + mix(h(g)))), with h the labels' value
    hashes and mix a 64-bit bijective mixer (splitmix64's finaliser); a person with more than G pairs keeps the G of
    smallest priority (ties on its top 32 bits: the smaller group label). The j-th row of a pair (j counted in the
    table's order of that person's own rows) gets ρ = mix(K′ ⊕ mix(π(p, g) + j)); a pair with more than R rows keeps
    the R of smallest ρ (ties: the earlier row). People and pairs within the limits keep everything.

    **Privacy.** Fix the key K. Every priority of person p is a function of K, p's label, the labels of p's own
    groups and the order of p's own rows, so the rows p keeps are a function of p's rows and K alone. Replacing
    (or adding, or removing) one person x therefore leaves every other person's kept rows exactly as they were, for
    every K: the bounded tables of neighbours are neighbours (they differ in x's kept rows, at most G groups with at
    most R rows each), which is what every sensitivity of the group-by assumes. The coupling is deterministic given
    K, so the argument needs nothing of the key's distribution; K is drawn at random only so that the kept subset
    is a pseudo-random choice (uniform for a random mixer) rather than a fixed one a data holder could predict.

    **Independence of layout.** The kept set is a function of the labels, each person's row order and K, so any
    order of the people in the table and any partitioning of it by person gives the same set.
    """
    n = unit.shape[0]
    empty = np.zeros(0, dtype=np.intp)
    if n == 0:
        return Bounded(np.zeros(0, dtype=bool), empty, empty)
    k1 = mix64(np.array([key], dtype=np.uint64))
    k2 = mix64(k1 ^ _GOLDEN)
    n_groups = int(group.max()) + 1
    if (int(unit.max()) + 1) * n_groups < PACKED * PACKED // 2:  # person·G + group fits in int64
        composite = unit.astype(np.int64) * n_groups + group
        order = np.argsort(composite, kind="stable")  # by person, then group label, then table order
        first, size = _runs(composite[order])  # the pairs: first sorted row and number of rows
    else:  # the same order and pairs from two keys (a product beyond int64 would wrap and merge pairs)
        order = np.lexsort((group, unit))
        first = np.flatnonzero(run_starts(unit[order], group[order]))
        size = np.diff(np.append(first, n))
    pair_person = unit[order[first]].astype(np.intp)
    pair_group = group[order[first]].astype(np.intp)
    group_mix = mix64(group_hash)  # per group label, not per row

    def priorities(pairs: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return mix64(k1 ^ mix64(unit_hash[pair_person[pairs]] + group_mix[pair_group[pairs]]))

    keep_sorted = np.ones(n, dtype=bool)
    over = np.flatnonzero(size > max_rows)
    if over.size:  # the rows of the pairs over max_rows: keep each pair's max_rows of smallest ρ
        rows = np.repeat(first[over], size[over]) + _rank_in_run(np.cumsum(size[over]) - size[over], size[over])
        pairs = np.repeat(over, size[over])
        j = (rows - first[pairs]).astype(np.uint64)
        with np.errstate(over="ignore"):
            rho = mix64(k2 ^ mix64(np.repeat(priorities(over), size[over]) + j))
        keep_sorted[rows] = _lowest(pairs, rho, max_rows)
    pair_ok = np.ones(first.shape[0], dtype=bool)
    person_first, n_pairs = _runs(pair_person)
    crowded = np.flatnonzero(n_pairs > max_groups)
    if crowded.size:  # the pairs of the people over max_groups: keep each person's max_groups of smallest π
        chosen = np.repeat(person_first[crowded], n_pairs[crowded]) + _rank_in_run(
            np.cumsum(n_pairs[crowded]) - n_pairs[crowded], n_pairs[crowded]
        )
        pair_ok[chosen] = _lowest(np.repeat(crowded, n_pairs[crowded]), priorities(chosen), max_groups)
        keep_sorted &= np.repeat(pair_ok, size)
    keep = np.empty(n, dtype=bool)
    keep[order] = keep_sorted
    return Bounded(keep, pair_person[pair_ok], pair_group[pair_ok])
