"""Per-person contribution bounding: keep at most ``max_groups`` groups and ``max_rows`` rows per group per person.

Which rows a person keeps is a function of that person's own rows and of one random 64-bit key, never of anyone
else's rows or of any value: each (person, group) pair and each row of a pair gets a pseudo-random priority from the
key and the person's and group's *labels* (hashed by value), and the smallest priorities are kept. The kept set is
therefore the same however the table is ordered across people or split into partitions, which is what lets a
distributed run reproduce an in-memory one.

Cost: linear in the rows. :func:`bound_table` brings each person's rows together (a radix order unless they
already are) and bounds slices of about 2¹⁶ rows of whole people one at a time, so every pass stays in cache; in a
slice, :func:`bound_contributions` makes one stable sort of the rows by (person, group) and linear passes over the
sorted runs, small limits taking one minimum per run and pass instead of a second sort.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
import numpy as np

__all__ = [
    "Bounded",
    "Bounding",
    "bound_contributions",
    "bound_table",
    "label_hashes",
    "mix64",
    "person_order",
    "run_starts",
]

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, vectorised: a bijection of uint64 whose outputs look independent and uniform."""
    with np.errstate(over="ignore"):
        z = x >> np.uint64(30)
        z ^= x
        z *= _M1
        t = z >> np.uint64(27)
        z ^= t
        z *= _M2
        np.right_shift(z, np.uint64(31), out=t)
        z ^= t
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

SMALL_LIMIT = 8
"""Limits up to this are met by one minimum per run and pass (``limit`` linear passes); larger ones by a sort."""

_TOP = np.uint64(0xFFFFFFFF00000000)
_LAST = np.uint64(0xFFFFFFFFFFFFFFFF)


def _lowest(first: np.ndarray, size: np.ndarray, priority: np.ndarray, limit: int) -> np.ndarray:
    """For elements in runs (given by their first position and length, in order, covering the array), whether each
    is among the ``limit`` elements of its run with the smallest ``priority`` — ordered by the top 32 bits of the
    priority, ties to the earlier element. Runs within the limit keep everything.

    Small limits take ``limit`` passes of one minimum per run over the key (top 32 bits of the priority, position),
    each taking the smallest key not yet taken; larger ones a stable sort by (run, top 32 bits), merge-sort fast as
    the runs are already in order. Both pick the same elements: the keys are distinct and ordered as the sort."""
    n = priority.shape[0]
    big = size > limit
    if not big.any():
        return np.ones(n, dtype=bool)
    if limit <= SMALL_LIMIT and n < PACKED:
        ok = np.repeat(~big, size)
        key = priority & _TOP
        key |= np.arange(n, dtype=np.uint64)
        crowded = np.flatnonzero(big)
        for _ in range(limit):
            at = (np.minimum.reduceat(key, first)[crowded] & ~_TOP).astype(np.intp)
            ok[at] = True
            key[at] = _LAST
        return ok
    run = np.repeat(np.arange(first.shape[0]), size)
    top = priority >> np.uint64(32)
    if first.shape[0] >= PACKED:  # the packed key would wrap: the same order from two keys
        order = np.lexsort((top, run))
    else:
        order = np.argsort((run.astype(np.uint64) << np.uint64(32)) | top, kind="stable")
    ok = np.empty(n, dtype=bool)
    ok[order] = _rank_in_run(first, size) < limit  # the sort keeps every run at its positions
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
    rule = _Rule.of(key, group_hash)
    keep, pair_person, pair_group, pair_ok = rule.bound(unit, group, max_groups, max_rows, unit_hash)
    kept = np.flatnonzero(pair_ok)
    return Bounded(keep, pair_person[kept], pair_group[kept])


@attrs.frozen(eq=False)
class _Rule:
    """The bounding rule of one release (see :func:`bound_contributions`): its two derived keys and the mixed group
    hashes, computed once per table."""

    k1: np.ndarray
    k2: np.ndarray
    group_mix: np.ndarray

    @classmethod
    def of(cls, key: int, group_hash: np.ndarray) -> _Rule:
        k1 = mix64(np.array([key], dtype=np.uint64))
        return cls(k1, mix64(k1 ^ _GOLDEN), mix64(group_hash))

    def bound(
        self, unit: np.ndarray, group: np.ndarray, max_groups: int, max_rows: int, unit_hash: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(kept rows in input order, every (person, group) pair's person and group, sorted by person then group
        label, whether the pair is kept) — :func:`bound_contributions` without compressing its outputs."""
        n = unit.shape[0]
        if n == 0:
            empty = np.zeros(0, dtype=np.intp)
            return np.zeros(0, dtype=bool), empty, empty, np.zeros(0, dtype=bool)
        n_groups = self.group_mix.shape[0]
        n_people = int(unit.max()) + 1
        if n_people * n_groups < PACKED * PACKED // 2:  # person·G + group fits in int64 (uint32: a faster sort)
            kind = np.uint32 if n_people * n_groups <= PACKED else np.int64
            composite = unit.astype(kind)
            composite *= kind(n_groups)
            composite += group.astype(kind, copy=False)
            order = np.argsort(composite, kind="stable")  # by person, then group label, then table order
            first, size = _runs(composite[order])  # the pairs: first sorted row and number of rows
        else:  # the same order and pairs from two keys (a product beyond int64 would wrap and merge pairs)
            order = np.lexsort((group, unit))
            first = np.flatnonzero(run_starts(unit[order], group[order]))
            size = np.diff(np.append(first, n))
        at = order[first]
        pair_person, pair_group = unit[at].astype(np.intp, copy=False), group[at].astype(np.intp, copy=False)

        def priorities(pairs: np.ndarray | slice) -> np.ndarray:
            h = self.group_mix[pair_group[pairs]]
            with np.errstate(over="ignore"):
                h += unit_hash[pair_person[pairs]]
                h = mix64(h)
                h ^= self.k1
            return mix64(h)

        keep_sorted = None
        over = np.flatnonzero(size > max_rows)
        if over.size:  # the rows of the pairs over max_rows: keep each pair's max_rows of smallest ρ
            run_first, run_size = np.cumsum(size[over]) - size[over], size[over]
            j = _rank_in_run(run_first, run_size)  # each row's place among its pair's rows
            with np.errstate(over="ignore"):
                rho = mix64(self.k2 ^ mix64(np.repeat(priorities(over), run_size) + j.astype(np.uint64)))
            keep_sorted = np.ones(n, dtype=bool)
            keep_sorted[np.repeat(first[over], run_size) + j] = _lowest(run_first, run_size, rho, max_rows)
        if n_people <= first.shape[0]:  # few codes (as bound_table's, dense): counted directly; a code without
            # pairs is an empty run, never over the limit
            n_pairs = np.bincount(pair_person, minlength=n_people)
            person_first = np.cumsum(n_pairs) - n_pairs
        else:
            person_first, n_pairs = _runs(pair_person)
        if (n_pairs > max_groups).any():  # people over max_groups: keep each one's max_groups pairs of smallest π
            pair_ok = _lowest(person_first, n_pairs, priorities(slice(None)), max_groups)
            by_pair = np.repeat(pair_ok, size)
            keep_sorted = by_pair if keep_sorted is None else keep_sorted & by_pair
        else:
            pair_ok = np.ones(first.shape[0], dtype=bool)
        if keep_sorted is None:
            return np.ones(n, dtype=bool), pair_person, pair_group, pair_ok
        keep = np.empty(n, dtype=bool)
        keep[order] = keep_sorted
        return keep, pair_person, pair_group, pair_ok


CHUNK_ROWS = 1 << 16
"""Rows per chunk of :func:`bound_table` (each chunk's sort and passes stay in cache)."""


@attrs.frozen(eq=False)
class Bounding:
    """The outcome of :func:`bound_table` for a whole table.

    Attributes
    ----------
    row_group : ndarray of int
        Per row (table order): its group code if kept, else −1 (dropped by the bounding, or outside the groups).
    people : ndarray of int64
        Per group: the number of people who kept a row in it.
    weight : ndarray of int64 or None
        Per group: the exact sum over its kept (person, group) pairs of ``share_weights[t]``, t the number of groups
        that pair's person kept; None without ``share_weights``.
    """

    row_group: np.ndarray
    people: np.ndarray
    weight: np.ndarray | None


def person_order(codes: np.ndarray, n_people: int) -> np.ndarray | None:
    """None if every person's rows are contiguous (``codes`` numbered by first appearance, as by a factorisation
    without sorting, are then non-decreasing); else the stable order that makes them so — a radix sort on 16-bit
    digits (numpy sorts those by counting), linear in the rows."""
    if codes.shape[0] < 2 or bool((codes[1:] >= codes[:-1]).all()):
        return None
    digits = [
        ((codes >> (16 * i)) & 0xFFFF).astype(np.uint16) for i in range(max(1, -(-(n_people - 1).bit_length() // 16)))
    ]
    order: np.ndarray = np.lexsort(digits) if len(digits) > 1 else np.argsort(digits[0], kind="stable")
    return order


def _chunks(person: np.ndarray, rows: int) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive slices of about ``rows`` rows that never split a run of equal ``person``."""
    n, start = person.shape[0], 0
    while start < n:
        stop = min(start + rows, n)
        while stop < n and person[stop] == person[stop - 1]:  # extend to the end of that person's rows
            ahead = np.flatnonzero(person[stop : stop + rows] != person[stop - 1])
            stop = stop + int(ahead[0]) if ahead.size else min(stop + rows, n)
        yield start, stop
        start = stop


def bound_table(
    person: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    max_groups: int,
    max_rows: int,
    key: int,
    person_hashes: Callable[[np.ndarray], np.ndarray],
    group_hash: np.ndarray,
    order: np.ndarray | None = None,
    share_weights: np.ndarray | None = None,
) -> Bounding:
    """:func:`bound_contributions` on a whole table, chunk by chunk of whole people.

    Parameters
    ----------
    person : ndarray
        Per row, a value equal for the rows of one person and different between people (their labels, or codes).
        Each person's rows must be contiguous in ``order``.
    group : ndarray of int
        Per row, the group code (numbering the ``n_groups`` labels in an order fixed by the labels, as for
        :func:`bound_contributions`), or −1 for a row outside the groups (never kept, never counted).
    n_groups : int
        The number of group codes.
    max_groups, max_rows, key :
        As for :func:`bound_contributions`.
    person_hashes : callable
        Maps ``person`` values to the :func:`label_hashes` of those people's labels.
    group_hash : ndarray of uint64
        :func:`label_hashes` of the group labels, indexed by code.
    order : ndarray of int, optional
        The rows in an order keeping each person's rows contiguous and in table order (see :func:`person_order`);
        None: the table's order already does.
    share_weights : ndarray of int64, optional
        Indexed by t = 1 … ``max_groups``: what a pair of a person who kept t groups adds to its group's weight
        (non-negative, below 2³²).

    Returns
    -------
    Bounding
        Each row's kept group (or −1), and each group's people and weight.

    Notes
    -----
    The rows a person keeps are a function of that person's own rows and the key (see
    :func:`bound_contributions`), so bounding slices of whole people one at a time keeps exactly the rows bounding
    the whole table would: linear time overall, each slice's passes in cache, extra memory one int32 per row. The
    people and weights are added per slice as exact integers (int64 holds 2³¹ pairs of weight below 2³²).
    """
    n = group.shape[0]
    outside = bool((group < 0).any())
    # Every row is written below, but rows outside the groups only by this −1.
    kind = np.int32 if n_groups < 2**31 else np.int64
    row_group = np.full(n, -1, dtype=kind) if outside else np.empty(n, dtype=kind)
    people = np.zeros(n_groups, dtype=np.int64)
    weight = None if share_weights is None else np.zeros(n_groups, dtype=np.int64)
    in_order = person if order is None else person[order]
    rule = _Rule.of(key, group_hash)
    for start, stop in _chunks(in_order, CHUNK_ROWS):
        rows: slice | np.ndarray = slice(start, stop) if order is None else order[start:stop]
        g, p = group[rows], in_order[start:stop]
        if outside:
            inside = np.flatnonzero(g >= 0)
            rows = (np.arange(start, stop) if isinstance(rows, slice) else rows)[inside]
            g, p = g[inside], p[inside]
            if not g.size:
                continue
        starts = run_starts(p)
        keep, pair_person, pair_group, pair_ok = rule.bound(
            np.cumsum(starts) - 1, g, max_groups, max_rows, person_hashes(p[np.flatnonzero(starts)])
        )
        row_group[rows] = np.where(keep, g, -1)
        np.add.at(people, pair_group, pair_ok.astype(np.int64))  # int64 values: numpy's fast path
        if weight is not None and share_weights is not None:
            kept_groups = np.minimum(np.bincount(pair_person), max_groups)  # per person: the groups they keep
            np.add.at(weight, pair_group, share_weights[kept_groups[pair_person]] * pair_ok)
    return Bounding(row_group, people, weight)
