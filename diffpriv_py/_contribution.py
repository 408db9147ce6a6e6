"""Per-person contribution bounding: keep at most ``max_groups`` groups and ``max_rows`` rows per group per person.

The rule is data-independent in the sense DP needs: which rows survive is decided by fresh uniformly random orders
drawn from the release's ``rng``, never by the values, so a person's kept rows are a uniformly random subset of their
rows of the allowed size, and what one person keeps does not depend on anyone else's rows.

Everything is a constant number of linear passes over integer codes: hash factorisations, ``bincount``s, and — only
for the rows of the (person, group) pairs and the pairs of the people that exceed a limit — a random permutation and
a least-significant-digit radix sort on 16-bit digits (numpy's stable sort of 16-bit integers is a counting sort).
"""

from __future__ import annotations

import numpy as np

__all__ = ["bound_contributions", "factorize_codes", "people_per_group", "run_starts"]


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the positions where the tuple of (already sorted) ``keys`` changes; True at position 0."""
    n = keys[0].shape[0]
    start = np.zeros(n, dtype=bool)
    if n:
        start[0] = True
        for key in keys:
            start[1:] |= key[1:] != key[:-1]
    return start


def _hashed(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values) of the integers of ``key``: pandas' hash factorisation (first appearance, no sort),
    or without pandas (the bare ``GroupBy`` mechanism needs none) ``np.unique``'s sort — another numbering of the
    same partition, which the bounding rule's law does not depend on."""
    try:
        import pandas as pd
    except ImportError:
        uniques, codes = np.unique(key, return_inverse=True)
        return codes.reshape(-1).astype(np.intp, copy=False), uniques
    codes, uniques = pd.factorize(key, sort=False)
    return codes.astype(np.intp, copy=False), np.asarray(uniques)


def factorize_codes(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes 0, 1, … of the distinct integers of ``key`` (in order of first appearance, by hashing: no sort) and
    how many there are."""
    codes, uniques = _hashed(key)
    return codes, int(uniques.shape[0])


def _radix_argsort(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """A stable argsort of non-negative integer ``codes`` < ``n_codes``, in O(n) per 16 bits of ``n_codes``.

    Least-significant digit first: each pass is numpy's stable sort of 16-bit integers (a counting sort), so the
    order of equal codes is the input order — the property the random ranks below rely on."""
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while (n_codes - 1) >> shift:
        digit = ((codes[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def _ranks_below(codes: np.ndarray, n_codes: int, limit: int, rng: np.random.Generator) -> np.ndarray:
    """For every element, whether its rank among the elements with the same code, in a uniformly random order, is
    below ``limit``: a mask keeping a uniformly random ``min(limit, size)``-subset of every code's elements.

    Codes with at most ``limit`` elements keep them all without drawing anything; the elements of the other codes
    are put in a uniformly random order (one permutation) and stably sorted by code, which leaves the elements of each
    code in that random order."""
    sizes = np.bincount(codes, minlength=n_codes)
    ok: np.ndarray = sizes[codes] <= limit
    over = np.flatnonzero(~ok)
    if over.size:
        over = over[rng.permutation(over.size)]
        sub = codes[over]
        order = _radix_argsort(sub, n_codes)
        # In the sorted order, the elements of one code are a run starting at the start of their code: rank = position
        # minus that start (the runs' starts from the sizes, restricted to the codes present here).
        sub_sorted = sub[order]
        start = np.cumsum(sizes * (sizes > limit)) - sizes * (sizes > limit)
        rank = np.arange(over.size) - start[sub_sorted]
        ok[over[order]] = rank < limit
    return ok


def bound_contributions(
    unit: np.ndarray, group: np.ndarray, max_groups: int, max_rows: int, rng: np.random.Generator
) -> np.ndarray:
    """Mask of the rows kept so that every person touches at most ``max_groups`` groups with ``max_rows`` rows each.

    Parameters
    ----------
    unit, group : ndarray of int
        Non-negative integer codes of the person and the group of each row (any numbering: e.g. from a
        factorisation).
    max_groups, max_rows : int
        The public contribution limits.
    rng : numpy.random.Generator
        Source of the random orders: the kept subset is uniformly random among the allowed ones.

    Returns
    -------
    ndarray of bool
        ``True`` for kept rows, in the input order.

    Notes
    -----
    The rule, in two independent steps:

    1. *Rows of a (person, group) pair.* A pair with at most ``max_rows`` rows keeps them all. The rows of the other
       pairs are put in a uniformly random order (one permutation of those rows) and stably sorted by pair; each
       such pair keeps its first ``max_rows`` rows.
    2. *Pairs of a person.* A person with at most ``max_groups`` pairs keeps them all. The pairs of the other people
       are put in a uniformly random order and stably sorted by person; each such person keeps their first
       ``max_groups`` pairs. A row is kept if step 1 keeps it and step 2 keeps its pair.

    *Law.* A uniformly random permutation restricted to any fixed set of elements orders that set uniformly at
    random, and a stable sort by code does not change the relative order of equal codes, so the rows of each
    overflowing pair end up in a uniformly random order of their own; its first ``max_rows`` are a uniformly random
    ``max_rows``-subset of the pair's rows. Likewise each overflowing person keeps a uniformly random
    ``max_groups``-subset of their groups, drawn independently of step 1. Which elements enter a permutation (the
    overflowing pairs and people) depends on the data, but the subset a given person keeps depends only on that
    person's own rows and on the random order, never on another person's rows or on any value: other people's
    elements only interleave in the permutation, whose restriction to this person's elements is uniform whatever
    they are. After bounding, adding or removing one person changes at most ``max_groups`` groups by at most
    ``max_rows`` rows each — the basis of every sensitivity of :func:`diffpriv_py.stats.groupby`.

    *Cost.* Linear: a hash factorisation of the (person, group) pairs, ``bincount``s, and for the overflowing
    elements only a permutation and a radix sort on 16-bit digits (no comparison sort of the table).
    """
    n = unit.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    n_groups = int(group.max()) + 1
    pair, n_pairs = factorize_codes(unit.astype(np.int64) * n_groups + group)
    row_ok = _ranks_below(pair, n_pairs, max_rows, rng)
    pair_unit = np.empty(n_pairs, dtype=np.intp)
    pair_unit[pair] = unit  # the person of each pair (every row of a pair has the same person)
    pair_ok = _ranks_below(pair_unit, int(unit.max()) + 1, max_groups, rng)
    keep: np.ndarray = row_ok & pair_ok[pair]
    return keep


def people_per_group(unit: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of distinct people of every group 0 … ``n_groups`` − 1 (int64), by hashing the (person, group) pairs
    (no sort)."""
    pairs = _hashed(unit.astype(np.int64) * n_groups + group)[1]
    return np.bincount(pairs % n_groups, minlength=n_groups).astype(np.int64)
