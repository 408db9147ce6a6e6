"""Per-person contribution bounding: keep at most ``max_groups`` groups and ``max_rows`` rows per group per person.

The rule is data-independent in the sense DP needs: which rows survive is decided by a fresh uniformly random order
drawn from the release's ``rng``, never by the values, so a person's kept rows are a uniformly random subset of their
rows of the allowed size, and what one person keeps does not depend on anyone else's rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bound_contributions", "run_starts"]


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the positions where the tuple of (already sorted) ``keys`` changes; True at position 0."""
    n = keys[0].shape[0]
    start = np.zeros(n, dtype=bool)
    if n:
        start[0] = True
        for key in keys:
            start[1:] |= key[1:] != key[:-1]
    return start


def _rank_within_runs(start: np.ndarray) -> np.ndarray:
    """0, 1, 2, … restarting at every True of ``start`` (positions in sorted order)."""
    index = np.arange(start.shape[0])
    return index - np.maximum.accumulate(np.where(start, index, 0))


def bound_contributions(
    unit: np.ndarray, group: np.ndarray, max_groups: int, max_rows: int, rng: np.random.Generator
) -> np.ndarray:
    """Mask of the rows kept so that every person touches at most ``max_groups`` groups with ``max_rows`` rows each.

    Parameters
    ----------
    unit, group : ndarray of int
        Integer codes (e.g. from ``np.unique(..., return_inverse=True)``) of the person and the group of each row.
    max_groups, max_rows : int
        The public contribution limits.
    rng : numpy.random.Generator
        Source of the random order: the kept subset is uniformly random among the allowed ones.

    Returns
    -------
    ndarray of bool
        ``True`` for kept rows, in the input order.

    Notes
    -----
    Rows are put in uniformly random order and stably sorted by (person, group); the first ``max_rows`` of each
    (person, group) are kept. The pairs are likewise shuffled and stably sorted by person, and the first
    ``max_groups`` pairs of each person are kept. Both steps are one integer sort each (no loop per person or row).
    After bounding, adding or removing one person changes at most ``max_groups`` groups by at most ``max_rows`` rows
    each — the basis of every sensitivity of
    :func:`diffpriv_py.stats.groupby`.
    """
    n = unit.shape[0]
    keep = np.zeros(n, dtype=bool)
    if n == 0:
        return keep
    # A uniformly random permutation followed by a *stable* sort on the (person, group) key orders the rows of each
    # pair uniformly at random: the same as sorting by i.i.d. priorities, with one integer sort instead of three keys.
    n_groups = int(group.max()) + 1
    pair_key = unit.astype(np.int64) * n_groups + group
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(pair_key[shuffled], kind="stable")]
    key = pair_key[order]
    pair_start = run_starts(key)
    row_ok = _rank_within_runs(pair_start) < max_rows
    pair_id = np.cumsum(pair_start) - 1  # the (person, group) pair of each sorted row
    pair_unit = unit[order][pair_start]
    shuffled_pairs = rng.permutation(pair_unit.shape[0])
    pair_order = shuffled_pairs[np.argsort(pair_unit[shuffled_pairs], kind="stable")]
    pair_ok_sorted = _rank_within_runs(run_starts(pair_unit[pair_order])) < max_groups
    pair_ok = np.empty_like(pair_ok_sorted)
    pair_ok[pair_order] = pair_ok_sorted
    keep[order] = row_ok & pair_ok[pair_id]
    return keep
