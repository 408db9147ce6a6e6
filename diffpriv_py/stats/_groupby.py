"""DP group-by: count, sum, mean, variance and standard deviation per group, with per-person contribution bounds and
private partition selection (the set of released groups is itself private unless the keys are public)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .._arguments import quantile_levels as _quantile_levels
from .._blockwise import is_out_of_core, map_reduce
from .._contribution import Bounding, bound_table, label_hashes, person_order
from .._extras import require
from .._fixed_point import (
    GRID_SLACK,
    UNIT_ROUNDOFF,
    Grid,
    rounding_allowance,
    square_bits,
    sum_bits,
    to_units,
)
from .._rng import RNGLike
from .._validation import as_rectangular, check_alpha, check_int
from ..events import RELATIONS, Relation
from ..exceptions import TargetOutputError
from ..mechanisms import DiscreteLaplace, Gaussian, Laplace
from ..mechanisms.base import DPMech, NumericMech, check_callable_target
from ..mechanisms.composed import ComposedMech, Part
from ..mechanisms.geometric import discrete_laplace_half_width
from ..mechanisms.response import half_width
from ..noise import laplace_epsilon_reserve, two_sided_geometric
from ..privacy import Del, Eps
from ._common import MECHANISMS, MechanismName, check_bounds, check_choice
from ._group_sums import _group_sums
from ._labels import (
    _check_keys_type,
    _Coded,
    _column,
    _factorize,
    _group_labels,
    _label_kind,
    _labels,
    _lazy_column,
    _materialise,
)
from ._multikey import CompositeLabels, LazyColumns, combine_partition, is_several_columns, tuples
from ._quantile import _cached_grid, _draw_candidates_grouped, _GroupedCells, _n_candidates, default_n_candidates
from ._selection import SELECTIONS, TruncatedGeometric, WeightedGaussian

__all__ = ["GROUPBY_STATISTICS", "GroupBy", "GroupByResult", "groupby"]

GROUPBY_STATISTICS = ("count", "sum", "mean", "var", "std")


def _error_bar(mech: DPMech, params: Eps, value: np.ndarray, allowance: float = 0.0) -> Callable[[float], np.ndarray]:
    # A closure per measurement: the half-width of its error bar at level alpha, one per group, plus the public
    # ``allowance`` for how far the computed vector may lie from the exact sums of the clipped values.
    return lambda alpha: np.broadcast_to(
        np.asarray(half_width(mech, params, value, alpha), dtype=np.float64) + allowance, value.shape
    )


def _identity(data: Any) -> Any:
    return data


def _statistics(value: Any, where: str = "") -> tuple[str, ...]:
    try:
        names = (value,) if isinstance(value, str) else tuple(value)
    except TypeError:
        names = ()
    if not names or any(not isinstance(s, str) or s not in GROUPBY_STATISTICS for s in names):
        raise ValueError(
            f"The 'statistics'{where} of dp.stats.groupby must be a non-empty selection of {GROUPBY_STATISTICS}; "
            f"got {value!r}. Pass e.g. statistics=('count', 'mean')."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"The 'statistics'{where} of dp.stats.groupby must not repeat a statistic; got {value!r}.")
    return names


def _statistics_spec(value: Any) -> tuple[str, ...] | dict[str, tuple[str, ...]]:
    """The statistics of every value column, or a mapping {column: statistics} (checked against the columns later)."""
    if isinstance(value, Mapping):
        return {name: _statistics(stats, f" of column {name!r}") for name, stats in value.items()}
    return _statistics(value)


def _columns(value: Any) -> tuple[str, ...] | None:
    """The public names of several value columns (``None``: one unnamed column, today's output)."""
    if value is None:
        return None
    names = tuple(value) if not isinstance(value, str) else (value,)
    if not names or any(not isinstance(c, str) or not c for c in names) or len(set(names)) != len(names):
        raise TypeError(
            f"The value columns of dp.stats.groupby must be named by distinct non-empty strings (they prefix the "
            f"result's columns, e.g. 'age_mean'); got {list(names)!r:.200}. Pass values={{'age': ..., 'income': ...}}."
        )
    return names


def _levels(value: Any) -> tuple[float, ...]:
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return ()
    try:
        return _quantile_levels(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(
            f"The 'quantiles' of dp.stats.groupby must be a level in [0, 1] or a sequence of them (e.g. "
            f"quantiles=[0.5, 0.9]); got {value!r}. {exc}"
        ) from None


def _keys(value: Any) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if (
        isinstance(value, (str, bytes))
        or not hasattr(value, "__iter__")
        or (isinstance(value, np.ndarray) and value.ndim == 0)  # iterable by type, but iter() raises
    ):
        raise TypeError(
            f"The 'keys' of dp.stats.groupby must be a sequence of public group labels (or None to select groups "
            f"privately); got {value!r}. Pass e.g. keys=['Paris', 'Lyon']."
        )
    keys = tuple(as_rectangular(list(value), "keys", owner="dp.stats.groupby").tolist())
    if not keys:
        raise ValueError("The 'keys' of dp.stats.groupby must not be empty; pass keys=None to select groups privately.")
    if len(set(keys)) != len(keys):
        raise ValueError(f"The 'keys' of dp.stats.groupby must be distinct labels; got {value!r}.")
    return keys


@attrs.frozen(eq=False)
class GroupByResult:
    """The released groups and, per statistic, the private values and their error bars (public arrays).

    ``keys`` is an array of the released labels, or the pandas MultiIndex of the released tuples when several
    grouping columns were combined where the data live (dask)."""

    keys: Any
    values: dict[str, np.ndarray]
    accuracy: dict[str, np.ndarray]
    alpha: float

    def to_frame(self, name: Any = None) -> Any:
        """A pandas DataFrame indexed by the released groups, with a ``<statistic>_accuracy`` column per statistic."""
        pd = require("pandas", feature="GroupByResult.to_frame")

        columns: dict[str, np.ndarray] = {}
        for stat, vals in self.values.items():
            columns[stat] = vals
            # Quantile bars are in ranks (values to move), the others in the statistic's own units. With several value
            # columns the statistic is prefixed by its column ('age_q0.5'): statistic names hold no '_'.
            rank = stat.rpartition("_")[2].startswith("q")
            columns[f"{stat}_rank_accuracy" if rank else f"{stat}_accuracy"] = self.accuracy[stat]
        index = self.keys if isinstance(self.keys, pd.MultiIndex) else pd.Index(self.keys, name=name)
        frame = pd.DataFrame(columns, index=index)
        frame.attrs["alpha"] = self.alpha
        return frame


@attrs.frozen(kw_only=True)
class _Measurement:
    """One noised vector of per-group sums: its per-row bound M and how it counts towards the sensitivities."""

    name: str
    bound: float  # |contribution of one row| ≤ bound, in released units
    signed: bool  # False for counts (non-negative contributions)
    grid: Grid | None = None  # the public fixed-point grid of the values (None for counts)
    column: str | None = None  # the value column summed (None: the one column, or the count shared by all)


@attrs.frozen(kw_only=True)
class GroupBy(ComposedMech):
    """Release statistics per group of a table whose people may own several rows.

    The dataset is a tuple ``(by, values, unit)`` of equal-length 1-D arrays: the group label of each row, its value
    (or ``None`` for counts only; with ``columns``, a mapping {column: values}) and the person it belongs to (or
    ``None``: every row is a different person). Use
    :func:`diffpriv_py.stats.groupby` or ``DataFrame.private.groupby``; this class is the mechanism they release
    through (and what :func:`diffpriv_py.testing.audit` audits).

    Parameters
    ----------
    statistics : sequence of {"count", "sum", "mean", "var", "std"}, or mapping
        What to release per group; with ``columns``, the same for every column or a mapping naming every column.
    bounds : (lower, upper), mapping or None
        Public clipping bounds of the values (required for sum, mean, var, std); with ``columns``, one pair for all
        or a mapping {column: (lower, upper)}.
    keys : sequence or None
        Public group labels: every key is released (empty ones too) and no other. ``None``: groups are selected
        privately among those that hold a person after bounding.
    max_groups, max_rows : int, default 1
        Public limits: each person contributes to at most ``max_groups`` groups with at most ``max_rows`` rows each
        (more are dropped by a pseudo-random choice keyed by one random draw, never by the values; see
        :func:`~diffpriv_py._contribution.bound_contributions`). Must be 1 without an identifier.
    noise : {"laplace", "gaussian"}, default "laplace"
        Noise of the aggregates (Laplace-type: discrete Laplace for counts; Gaussian needs ``Del``).
    alpha : float, default 0.05
        Level of the error bars reported with every value.
    quantiles : sequence of float, default ()
        Quantile levels to release per group (each gets an equal share of ε, like the noised vectors).
    n_candidates : int, optional
        Points of the public grid between the bounds that quantiles are drawn from. Default: sized at release from
        public numbers, :func:`~diffpriv_py.stats.default_n_candidates` of n_people·R values, ε per level and rank
        sensitivity 2GR (1025 up to 2²² + 1 points), so at large groups the privacy noise, not the step, sets the
        error. The number of people is public, so neighbours draw from the same grid (under add/remove the grid is
        sized from ``max_people`` instead, and the rank sensitivity is GR).
    columns : sequence of str or None, default None
        Public names of several value columns released together (results ``<column>_<statistic>``); ``None``: one
        unnamed value column (results ``<statistic>``).
    selection : {"auto", "threshold", "weighted_gaussian", "truncated_geometric"}, default "auto"
        Partition-selection policy (private keys only): the noisy count of people per group against a threshold,
        set-union selection by weighted Gaussian, or the truncated geometric keep probabilities (see Notes);
        "auto" chooses from public numbers only.
    neighbouring : {"replace_one", "add_remove"}, default "replace_one"
        The neighbouring relation of the guarantee (see Notes).
    max_people : int or None, default None
        Under add/remove only: a public upper bound on the number of people (None: 2⁴⁰), see Notes.

    Notes
    -----
    **Neighbouring relation: replace one person** (all of their rows), the library's relation lifted from rows to
    people; without an identifier a person is one row. The number of people is public; the number of rows, the
    groups a person is in and which groups exist are private. After bounding, removing a person changes at most
    G = ``max_groups`` groups by at most R = ``max_rows`` rows, and replacing a person is one removal plus one
    addition, so the add/remove sensitivities are doubled: with per-row bound M (1 for counts, max(|lo|, |hi|) for
    sums, ½ and ⅛ for the centred sums Σu and Σ(u² − ⅛), u = (clip(x) − c)/(hi − lo)), the L1 sensitivity is
    2·G·R·M and the L2 sensitivity R·√(2G) for counts, 2·R·M·√G for signed sums (a group touched by both people
    can move by 2RM).

    **Neighbouring relation: add or remove one person** (``neighbouring="add_remove"``, the relation of OpenDP,
    Tumult Analytics and PipelineDP): the number of people is private too. Removing (or adding) a person changes at
    most G groups by at most R rows, so every sensitivity above is halved: L1 = G·R·M, L2 = R·M·√G (counts and
    signed sums alike: one person's contribution to a group lies in [−RM, RM]). Only G coordinates can differ, so
    the float allowances are paid on G coordinates, from the public bound ``max_people`` (:meth:`people_bound`;
    2⁴⁰ when not given) instead of the number of people, which is no longer public: the guarantee holds for tables
    of at most that many people. The same bound sizes the sums' error bars and the quantiles' grid. Partition
    selection pays for lone groups on one side only (see the proofs below). The Response records
    ``relation="add_remove"`` with the (ε, δ) given; an :class:`~diffpriv_py.Accountant`, which composes in
    replace-one terms, is charged the implied replace-one guarantee (2ε, (1 + e^ε)δ)
    (:func:`~diffpriv_py.events.guarantee_event`: replacing a person is removing one and adding another).

    **Budget.** The (ε, δ) given is the guarantee of the whole query and is charged to the accountant once. ε is
    split equally over the noised vectors: private partition selection (if ``keys`` is None), the row count (if
    count, mean, var or std is asked for), the sum, Σu (mean, var, std) and Σ(u² − ⅛) (var, std); mean, variance
    and standard deviation are post-processing of these. With Laplace noise all of δ goes to partition selection
    (which needs δ > 0); with Gaussian noise δ is split like ε.

    **Several value columns** (``columns``). Contribution bounding and partition selection run once; every column
    is aggregated over the same kept rows of the same released groups. The noised vectors are, in this order: the
    row count (once, shared by every column that needs it), then each column's own sums as above, then each
    column's quantile draws; ε (and δ, as above) is split equally over them and the selection. Privacy: selection
    is (ε_s, δ_s)-DP (below) whatever the number of columns, as it reads only the people per group; given the
    released groups, each column's vectors have the one-column sensitivities, because the shared bounding leaves
    one person in at most G groups with at most R rows each in every column; sequential (adaptive) composition of
    the selection and all measurements gives (Σε_i, Σδ_i) = (ε, δ). Reporting the one noisy count with every
    column, and every derived statistic, is post-processing. With one column, the release is the one-column
    release with prefixed names, bit for bit for a seed.

    **Partition selection** (Korolova et al. 2009; Wilson et al. 2020), when the keys are private. The candidates
    are the groups that still hold a person after bounding (that person keeps at least one row there, as R ≥ 1),
    never the labels of the raw data; without ``privacy_unit`` every row is a person, bounding drops nothing, and the
    candidates are the labels of the rows. Each candidate's number of people N_g ≥ 1 gets two-sided geometric noise
    K with P(K = k) ∝ exp(−t|k|), t = ε_s/(2G), and is released iff N_g + K ≥ τ, with τ = h + 2, h the smallest
    integer with P(|K| > h) ≤ 2δ₀ and δ₀ = δ_s/((1 + e^{ε_s})·G). The released groups are listed in sorted label
    order, a function of the released set alone.

    Proof. Let D hold person x where D′ holds person y. Bounding keeps each person's groups and rows as a function of
    their own rows and the key alone, so for every key the others' kept rows are the same in D and D′; fix the key,
    and with it x's and y's kept rows: the bound below holds for every key, hence for the mixture. After bounding x
    is in at most G groups, so at most G candidates of D are not candidates of D′ — the groups where x is alone,
    N_g = 1 — however many labels x has in the raw data (those the bounding emptied are not candidates); likewise
    at most G for y. On the common candidates A the people counts differ by at most 1 in at most 2G groups, so their
    noisy comparisons, M_A, are ε_s-DP. A candidate of one side only is released with probability
    P(1 + K ≥ τ) = P(K > h) ≤ δ₀ (K is symmetric), so by the union bound over the ≤ G of them none is released
    except on an event of probability ≤ G·δ₀. The noises are independent per group, hence for every set S of
    outputs P[M(D) ∈ S] ≤ G·δ₀ + P[M_A(D) ∈ S] ≤ G·δ₀ + e^{ε_s}·P[M_A(D′) ∈ S] ≤ G·δ₀ + e^{ε_s}·(P[M(D′) ∈ S] +
    G·δ₀), the last step since P[M(D′) ∈ S] ≥ P[M_A(D′) ∈ S]·(1 − G·δ₀). Selection is therefore
    (ε_s, (1 + e^{ε_s})·G·δ₀ = δ_s)-DP: the threshold pays for the G groups one person can create alone, on each
    side. The aggregates compose on top: for any fixed set of released groups the noised vectors over it have the
    sensitivities above (a group without rows sums to 0, and one person still touches at most G groups by at most
    R rows), so they are (ε_a, δ_a)-DP given the set, and adaptive composition adds the two. (Were the raw labels
    the candidates, a person with M labels of their own and G = 1 would leave M − 1 candidates with N_g = 0 that
    exist in D only, each released at rate P(K ≥ τ): δ would grow with M instead of G.) The sampler's float
    reserve is calibrated for the 2G coordinates that can differ, a public number, and the threshold for
    δ₀·(1 − 2⁻³⁰), which covers the sampler's relative error (below 2⁻⁴⁰) in the tail probability.

    Under add/remove (D = D′ plus person x): only G counts differ, by 1 each, so t = ε_s/G, and only D has lone
    groups (at most G), so δ₀ = δ_s/G: P[M(D) ∈ S] ≤ G·δ₀ + e^{ε_s}·P[M(D′) ∈ S] directly, and in the other
    direction P[M(D′) ∈ S] ≤ e^{ε_s}·P[M_A(D) ∈ S] ≤ e^{ε_s}·P[M(D) ∈ S] (D′ has no lone group): (ε_s, δ_s)-DP.

    **Set-union selection** (``selection="weighted_gaussian"``; the weighted Gaussian of Gopi, Gulhane, Kulkarni,
    Shen, Shokouhi & Yekhanin, "Differentially Private Set Union", ICML 2020, there for adding or removing one
    user), for the same (ε_s, δ_s). Each person owner kept t ≥ 1 groups gives each of them the weight
    w_t = k_t·2⁻²⁰ with k_t = ⌊2²⁰/√t⌋ (an integer, computed as ⌊√⌊2⁴⁰/t⌋⌋), so t·w_t² ≤ 1: their weight vector
    has L2 norm ≤ 1. Each candidate's weight W_g (the exact integer sum of the k's, converted to float64 once) gets
    the library's safe Gaussian noise (integer noise on the power-of-two grid r ≈ σ·2⁻⁴⁰, as in
    :class:`~diffpriv_py.mechanisms.Gaussian`) calibrated to (ε_s, δ_s/2) and L2 sensitivity √2 (plus the float
    conversion's allowance on 2G coordinates), and the group is released iff the noisy weight is ≥ ρ, with
    ρ = max over t = 1 … G of (w_t + σ·Φ⁻¹((1 − p′)^{1/t})) + 2r, p′ = p·(1 − 2⁻²⁰), p = δ_s/(2(1 + e^{ε_s}))
    (Φ⁻¹ computed as −ndtri(1 − (1 − p′)^{1/t}) by expm1/log1p, enlarged by a relative 2⁻³⁰ and ρ rounded up).
    Everything is vectorised: one hash of the kept (person, group) pairs, two bincounts and one noise batch.

    Proof (replace one person). Fix the bounding's realisation as above; x keeps a ≤ G groups, y keeps b ≤ G. The
    candidates of one side only are groups where x (resp. y) is alone: at most a of D, each of weight exactly
    w_a, and at most b of D′. (1) On the common candidates A the weight vectors differ by (v_x − v_y) restricted
    to A, where v_x, v_y are the two people's weight vectors; both are non-negative with norm ≤ 1, so
    ‖v_x − v_y‖² = ‖v_x‖² + ‖v_y‖² − 2⟨v_x, v_y⟩ ≤ 2: L2 sensitivity √2 (under add/remove it would be 1). The
    float conversion moves each of the ≤ 2G differing coordinates by at most ``rounding_allowance(n_people)``
    (a group weighs at most n_people), which the calibrated sensitivity includes; comparisons with ρ are
    post-processing, so the noisy comparisons on A, M_A, are (ε_s, δ_s/2)-DP. (2) A lone group's value is
    (round_r(w_a)/r + Y)·r, computed exactly, with Y the sampler's integer, whose law is within a relative 2⁻³⁸
    of a N(0, (σ/r)²) rounded to the nearest integer on |Y| ≤ 40σ/r (tail mass e⁻⁸⁰⁰; see
    ``gaussian_grid_calibration``). So it is released with probability at most (1 + 2⁻³⁸)·q_a + e⁻⁸⁰⁰, where
    q_a = P(N(0, σ²) ≥ ρ − w_a − r) ≤ 1 − (1 − p′)^{1/a} by the choice of ρ (the 2r margin covers the rounding
    of w_a to the grid and the nearest-integer rounding). With independent noise, and f(q) = 1 − (1 − q)^a
    concave with f(0) = 0, none of the ≤ a lone groups is released except with probability at most
    (1 + 2⁻³⁸)·p′ + a·e⁻⁸⁰⁰ ≤ p. (3) The threshold policy's argument, with the pure ε_s of M_A replaced by
    (ε_s, δ_s/2): P[M(D) ∈ S] ≤ p + P[M_A(D) ∈ S] ≤ p + e^{ε_s}·P[M_A(D′) ∈ S] + δ_s/2
    ≤ p + δ_s/2 + e^{ε_s}·(P[M(D′) ∈ S] + p). Selection is therefore (ε_s, δ_s/2 + (1 + e^{ε_s})·p = δ_s)-DP.
    Relative to the paper's add/remove statement the replace-one relation changes the sensitivity from 1 to √2
    and the lone-group term from p to (1 + e^{ε_s})·p (lone groups exist on both sides). Under add/remove
    (``neighbouring="add_remove"``) the paper's numbers hold: the weight vectors differ by v_x alone (norm ≤ 1, on
    ≤ G coordinates), and p = δ_s/2 for the lone groups of the one side that has them. The aggregates compose
    on top as above (the bounding, not the selection, limits one person to G groups and R rows each).

    **Choosing the policy** (``selection="auto"``, the default): a function of (G, ε_s, δ_s) alone, so the choice
    reveals nothing. At G = 1 it is the threshold (a person is one unit of one group: the geometric threshold is
    the sharper one, and releases stay as before). For G > 1 it is the weighted Gaussian iff ρ·√G < τ: a group
    whose people each fill all G groups reaches the median release at ρ·√G people under the weighted Gaussian
    and at τ people under the threshold (people in fewer groups weigh more, which only favours the weighted
    Gaussian). For Del(1, 10⁻⁶) and count + mean (ε_s = ½): τ = 120, 316, 658 and ρ·√G = 88, 143, 206 at
    G = 2, 5, 10. Under add/remove, "auto" takes the fewest such people among the threshold, the weighted
    Gaussian and the truncated geometric (below), whatever G.

    **Truncated geometric selection** (``selection="truncated_geometric"``; Desfontaines, Voss, Gipson &
    Mandayam, "Differentially private partition selection", PoPETs 2022). A candidate with N_g people is released
    with probability π(N_g): π(0) = 0, π(n) = min(e^ε·π(n−1) + δ′, 1 − e^{−ε}(1 − π(n−1) − δ′), 1), at
    (ε, δ) = (ε_s/G, δ_s/G) under add/remove and (ε_s/(2G), δ_s/((1 + e^{ε_s/2})G)) under replace-one, with
    δ′ = δ − 8(e^ε + 1)·2⁻⁵². Proof (add/remove): a person changes at most G counts by one; for one count n − 1
    against n, π(n) ≤ e^ε·π(n−1) + δ and 1 − π(n−1) ≤ e^ε(1 − π(n)) + δ (and the reverse inequalities, π being
    non-decreasing), so each group's decision is (ε, δ)-DP — a group the person alone makes exist is the case
    n = 1, π(1) ≤ δ — and the ≤ G affected decisions, independent given the counts, compose to (ε_s, δ_s). For what
    is sampled, ``rng.random() < π`` has probability in [π, π + 2⁻⁵³), and the recursion is computed within a few
    ulps: the shaved δ′ covers both (:func:`~diffpriv_py.stats._selection._keep_table`). Replace-one is a removal
    and an addition: group privacy turns the add/remove pair above into (ε_s, δ_s).

    **Public keys.** Every key is released, in the order given (an absent one as an empty group), and no other
    label, whatever the data; no budget goes to selection. Rows whose label is not a key are dropped *before*
    bounding: whether a row is dropped depends on its own label and the public keys alone, so each person's
    remaining rows are a function of their own rows (neighbours stay neighbours), and a person's G groups are spent
    on groups that are released (bounding first could spend them on a label that is then dropped). The released
    keys' dtype is that of the labels (of the public keys with ``keys``); a fixed-width string dtype is as wide as
    the longest *released* label, never the longest label of the data. A float group's label is canonical (0.0 for
    −0.0, one NaN for every NaN payload), never the bits of one of its rows.

    **Exact sums.** Values are mapped to integer indices on a public fixed-point grid across the bounds
    (:mod:`diffpriv_py._fixed_point`) and summed exactly as integers; each released coordinate is one rounding of
    an exact integer, paid for by ``rounding_allowance`` in the sensitivities. The sums do not depend on the order
    or blocking of the rows, so a dask table gives the in-memory release bit for bit for a seed: bounded where the
    data live (:meth:`_release_distributed`: rows shuffled by person, per-partition bounding and integer totals
    added exactly by label) or, for quantiles and other layouts, with the label columns read into memory and the
    values streamed block by block.

    **Quantiles** (see ``_quantiles``): per group and level, a grid point drawn with probability
    ∝ exp(ε_q·u/(4GR)) (add/remove: exp(ε_q·u/(2GR))) for the rank utility u, which costs ε_q for all groups
    together; their bars are in ranks.
    The rank counts come from exact per-(group, grid cell) counts made in the same block pass as the sums, so a
    dask value column is streamed for quantiles too, and all groups are drawn in one batch per level.

    The release is a :class:`~diffpriv_py.mechanisms.composed.ComposedMech`: :meth:`composed_of` lists the selection,
    the noised vectors and the quantile draws with their shares. ``sensitivity=`` is deprecated and unused (each
    noised vector has its own, above).

    **Error bars** cover the exact statistic of the clipped values that survive bounding. Counts: the exact (1 − α)
    noise quantile (:meth:`diffpriv_py.Response.accuracy`); sums: that plus the grid's quantisation of at most
    n_people·R rows (:meth:`_sum_allowance`). Mean, variance, std: intervals from the union bound over the noised
    vectors they use (each at α/k), Σu and Σ(u² − ⅛) widened by the grid's quantisation of at most the count's
    upper end of rows, pushed through the public formulas by interval arithmetic (plus 2⁻⁴⁰ for float rounding),
    reported as the half-width around the value; they assume the group is non-empty. Per group and per statistic,
    not simultaneous.
    """

    target: Callable[[Any], Any] = attrs.field(default=_identity, validator=check_callable_target)
    # With several columns these become dicts, left out of the hash: the per-column parts (``_subs``) carry them.
    statistics: tuple[str, ...] | dict[str, tuple[str, ...]] = attrs.field(
        default=("count",), converter=_statistics_spec, hash=False
    )
    bounds: tuple[float, float] | dict[str, tuple[float, float]] | None = attrs.field(default=None, hash=False)
    keys: tuple[Any, ...] | None = attrs.field(default=None, converter=_keys)
    max_groups: int = attrs.field(default=1)
    max_rows: int = attrs.field(default=1)
    noise: str = attrs.field(default="laplace")
    alpha: float = attrs.field(default=0.05)
    quantiles: tuple[float, ...] = attrs.field(default=(), converter=_levels)
    n_candidates: int | None = attrs.field(default=None, converter=attrs.converters.optional(_n_candidates))
    columns: tuple[str, ...] | None = attrs.field(default=None, converter=_columns)
    selection: str = attrs.field(default="auto")
    neighbouring: Relation = attrs.field(default="replace_one")
    max_people: int | None = attrs.field(default=None)
    _subs: tuple[GroupBy, ...] = attrs.field(init=False, default=(), repr=False)

    def __attrs_post_init__(self) -> None:
        check_choice(self.noise, "noise", MECHANISMS, owner="dp.stats.groupby")
        check_choice(self.selection, "selection", SELECTIONS, owner="dp.stats.groupby")
        check_choice(self.neighbouring, "neighbouring", RELATIONS, owner="dp.stats.groupby")
        if self.max_people is not None:
            check_int(self.max_people, "max_people", minimum=1, owner="dp.stats.groupby")
            if self.neighbouring == "replace_one":
                raise ValueError(
                    f"dp.stats.groupby got max_people={self.max_people} with neighbouring='replace_one', where the "
                    "number of people is public and read from the data. max_people bounds the (private) number of "
                    "people under neighbouring='add_remove'; pass that, or leave max_people unset."
                )
        check_alpha(self.alpha, owner="dp.stats.groupby")
        for name in ("max_groups", "max_rows"):
            check_int(getattr(self, name), name, minimum=1, owner="dp.stats.groupby")
        if self.columns is not None:
            self._init_columns(self.columns)
            return
        for field in ("statistics", "bounds"):
            if isinstance(getattr(self, field), Mapping):
                raise TypeError(
                    f"The '{field}' of dp.stats.groupby is a mapping {{column: ...}}, which needs several named value "
                    f"columns: pass values={{'age': ..., 'income': ...}} (or a pair/sequence for the one column)."
                )
        if self.needs_values and self.bounds is None:
            raise TypeError(
                "dp.stats.groupby needs public bounds=(lower, upper) for sum, mean, var, std and quantiles: values "
                "are clipped to them and the noise is calibrated to them. They are never derived from the data."
            )
        if self.bounds is not None:  # checked even when unused, so a mistake is never silently ignored
            lo, hi = check_bounds(self.bounds, None, owner="dp.stats.groupby")
            object.__setattr__(self, "bounds", (float(lo), float(hi)))

    def _init_columns(self, columns: tuple[str, ...]) -> None:
        """Several value columns: each column's statistics and bounds, checked against the public column names, and
        one single-column GroupBy per column that computes and reports that column's measurements."""
        stats = self.statistics if isinstance(self.statistics, dict) else dict.fromkeys(columns, self.statistics)
        bounds = self.bounds if isinstance(self.bounds, Mapping) else dict.fromkeys(columns, self.bounds)
        for field, given, complete in (("statistics", stats, True), ("bounds", bounds, False)):
            unknown = [c for c in given if c not in columns]
            missing = [c for c in columns if c not in given] if complete else []
            if unknown or missing:
                raise ValueError(
                    f"The '{field}' mapping of dp.stats.groupby must name the value columns {list(columns)!r}; got "
                    f"unknown {unknown!r} and missing {missing!r}. Pass one entry per column of values=, or one "
                    f"{field} for all of them."
                )
        subs = []
        for c in columns:
            pair = bounds.get(c)
            if pair is None and (self.quantiles or any(s != "count" for s in stats[c])):
                raise TypeError(
                    f"dp.stats.groupby needs public bounds for the value column {c!r} (for sum, mean, var, std and "
                    f"quantiles): pass bounds=(lower, upper) for every column or bounds={{{c!r}: (lower, upper), ...}}."
                )
            if pair is not None:
                lo, hi = check_bounds(pair, None, owner=f"dp.stats.groupby (column {c!r})")
                pair = (float(lo), float(hi))
            sub = GroupBy(
                statistics=stats[c],
                quantiles=self.quantiles,
                n_candidates=self.n_candidates,
                bounds=pair,
                keys=self.keys,
                max_groups=self.max_groups,
                max_rows=self.max_rows,
                noise=self.noise,
                alpha=self.alpha,
                neighbouring=self.neighbouring,
                max_people=self.max_people,
            )
            subs.append(sub)
        object.__setattr__(self, "statistics", {c: sub.wanted for c, sub in zip(columns, subs, strict=True)})
        object.__setattr__(self, "bounds", {c: sub.pair for c, sub in zip(columns, subs, strict=True) if sub.pair})
        object.__setattr__(self, "_subs", tuple(subs))

    # ---- public plan -----------------------------------------------------------------------------------------------

    @property
    def wanted(self) -> tuple[str, ...]:
        """The statistics of the one value column (a GroupBy with several columns has one per column)."""
        assert not isinstance(self.statistics, dict), "a GroupBy with several columns asks its parts"
        return self.statistics

    @property
    def pair(self) -> tuple[float, float] | None:
        """The bounds of the one value column (a GroupBy with several columns has one pair per column)."""
        assert not isinstance(self.bounds, dict), "a GroupBy with several columns asks its parts"
        return self.bounds

    def parts(self) -> list[tuple[str | None, GroupBy]]:
        """(column name, single-column GroupBy) per value column: ``[(None, self)]`` for the one unnamed column."""
        if self.columns is None:
            return [(None, self)]
        return list(zip(self.columns, self._subs, strict=True))

    @property
    def needs_values(self) -> bool:
        if self.columns is not None:
            return any(sub.needs_values for sub in self._subs)
        return bool(self.quantiles) or any(s != "count" for s in self.wanted)

    def measurements(self) -> list[_Measurement]:
        """The noised vectors of per-group sums this query releases (its budget is split over them).

        With several value columns: one row count shared by all (every column sums the same kept rows), then each
        column's value sums, column by column (``column`` names the column; None for the count).
        """
        if self.columns is not None:
            per_column = [(c, sub.measurements()) for c, sub in self.parts()]
            shared = [m for _, ms in per_column for m in ms if m.name == "count"][:1]
            own = [attrs.evolve(m, column=c) for c, ms in per_column for m in ms if m.name != "count"]
            return shared + own
        wanted = set(self.wanted)
        out = []
        if wanted & {"count", "mean", "var", "std"}:
            out.append(_Measurement(name="count", bound=1.0, signed=False))
        if not self.needs_values:
            return out
        assert self.pair is not None  # for type checkers: needs_values implies bounds (checked at construction)
        lo, hi = (np.asarray(b, dtype=np.float64) for b in self.pair)
        if "sum" in wanted:
            # Indices k on a grid spanning [min(lo, 0), max(hi, 0)]; k − (index of 0) is released in units of 2ᵇ.
            grid = Grid.over(lo, hi, sum_bits(1), pooled=False, offset="zero", owner="dp.stats.groupby")
            reach = float(max(grid.high - grid.offset, grid.offset - grid.low)) / 2.0**grid.bits
            out.append(_Measurement(name="sum", bound=reach, signed=True, grid=grid))
        if wanted & {"mean", "var", "std"}:
            # u = (k − 2ᵇ⁻¹)/2ᵇ ∈ [−½, ½] on a grid across [lo, hi]; one grid for Σu and Σu² (square bits).
            bits = square_bits(1) if wanted & {"var", "std"} else sum_bits(1)
            grid = Grid.over(lo, hi, bits, pooled=False, offset="centre", owner="dp.stats.groupby")
            out.append(_Measurement(name="sum_u", bound=0.5, signed=True, grid=grid))
            if wanted & {"var", "std"}:
                out.append(_Measurement(name="sum_u2", bound=0.125, signed=True, grid=grid))
        return out

    def split(self, privacy_params: Eps) -> tuple[Eps | None, list[Eps]]:
        """The parameters of partition selection (None with public keys) and of each measurement."""
        parts = len(self.measurements()) + len(self.quantiles) * len(self.parts()) + (self.keys is None)
        eps = privacy_params.epsilon / parts
        if self.noise == "gaussian":
            each = Del(eps, privacy_params.delta / parts)
            return (each if self.keys is None else None), [each] * (parts - (self.keys is None))
        select = Del(eps, privacy_params.delta) if self.keys is None else None
        return select, [Eps(eps)] * (parts - (self.keys is None))

    def composed_of(self, privacy_params: Eps) -> tuple[Part, ...]:
        """The release's parts in the order they run: partition selection (private keys only), the noised vectors
        (:meth:`measurements`), then each column's quantile levels, with the shares :meth:`split` gives them."""
        select, shares = self.split(privacy_params)
        names = [m.name if m.column is None else f"{m.column}_{m.name}" for m in self.measurements()]
        names += [f"q{q:g}" if c is None else f"{c}_q{q:g}" for c, _ in self.parts() for q in self.quantiles]
        head = (Part(name="selection", privacy_params=select),) if select is not None else ()
        return head + tuple(Part(name=n, privacy_params=p) for n, p in zip(names, shares, strict=True))

    @property
    def relation(self) -> Relation:
        """The neighbouring relation of the guarantee: ``neighbouring`` (see the class Notes)."""
        return self.neighbouring

    @property
    def _sides(self) -> int:
        """How many people differ between neighbours: 2 under replace-one (one out, one in), 1 under add/remove."""
        return 2 if self.neighbouring == "replace_one" else 1

    def people_bound(self, n_people: int) -> int:
        """The public bound on the number of people that the float allowances and the quantile grid are sized from:
        ``n_people`` under replace-one (public there), ``max_people`` under add/remove, or :data:`PEOPLE_CAP`
        (2⁴⁰) when it is not given."""
        if self.neighbouring == "replace_one":
            return n_people
        return PEOPLE_CAP if self.max_people is None else self.max_people

    def sensitivities(self, m: _Measurement, n_people: int) -> tuple[float, float]:
        """(L1, L2) of one measurement under the neighbouring relation (see the class Notes).

        The exact integer sums are converted to float64 once per group; that rounding moves each of the ≤ 2G
        (add/remove: G) coordinates neighbours differ in by at most ``rounding_allowance`` of the largest possible
        sum (:meth:`people_bound`·G·R rows of bound M), which is added (zero for counts, which are exact integers).
        """
        g, r = self.max_groups, self.max_rows
        if self.neighbouring == "add_remove":
            l1, l2 = g * r * m.bound, r * m.bound * math.sqrt(g)
        else:
            l1 = 2.0 * g * r * m.bound
            l2 = r * m.bound * (math.sqrt(2.0 * g) if not m.signed else 2.0 * math.sqrt(g))
        if m.grid is not None:
            touched = self._sides * g
            allowance = float(rounding_allowance(self.people_bound(n_people) * g * r * m.bound))
            l1, l2 = l1 + touched * allowance, l2 + math.sqrt(touched) * allowance
        return l1, l2

    def threshold(self, select: Eps) -> tuple[float, int]:
        """(t, τ): the selection noise parameter and the release threshold on the noisy number of people."""
        g, touched = self.max_groups, self._sides * self.max_groups
        t = laplace_epsilon_reserve(select.epsilon, touched) / touched
        # Lone groups exist on both sides under replace-one (hence 1 + e^ε), on one side under add/remove.
        lone = (1.0 + math.exp(select.epsilon)) * g if self.neighbouring == "replace_one" else float(g)
        delta0 = select.delta / lone
        # The safe sampler's integer probabilities are within a relative 2⁻⁴⁰ of the geometric law (see noise), so
        # its tail is too: the threshold is set for a δ₀ shaved by 2⁻³⁰, which covers that for what is sampled.
        return t, discrete_laplace_half_width(t, 2.0 * delta0 * (1.0 - 2.0**-30)) + 2

    def selection_policy(self, select: Eps) -> str:
        """The partition-selection policy used with selection parameters ``select``: ``selection`` itself, or for
        "auto" the one needing fewer people for a group to be released with probability ½, from public numbers
        only (G, ε_s, δ_s, the relation): under replace-one "threshold" at G = 1 (bit for bit the release before
        set-union selection existed), else "weighted_gaussian" iff ρ·√G < τ (ρ·√G people of weight 1/√G each reach
        ρ; τ people reach τ); under add/remove the fewest such people among the three policies."""
        if self.selection != "auto":
            return self.selection
        if self.max_groups == 1 and self.neighbouring == "replace_one":
            return "threshold"
        plans: dict[str, Callable[[], float]] = {
            "threshold": lambda: float(self.threshold(select)[1]),
            "weighted_gaussian": lambda: WeightedGaussian.of(
                select, self.max_groups, 1, self.neighbouring
            ).people_at_half(),
        }
        if self.neighbouring == "add_remove":
            plans["truncated_geometric"] = lambda: TruncatedGeometric.of(
                select, self.max_groups, "add_remove"
            ).people_at_half()
        at_half = {}
        for name, plan in plans.items():
            try:
                at_half[name] = plan()
            except (OverflowError, ValueError):  # beyond a policy's range (e.g. the safe Gaussian at ε_s ≥ 500)
                continue
        # Ties: the first listed. None in range: the threshold, whose check before the charge then says why.
        return min(at_half, key=lambda name: at_half[name], default="threshold")

    # ---- template hooks ----------------------------------------------------------------------------------------------

    def _check_params(self, privacy_params: Eps) -> None:
        if self.noise == "gaussian" and not (isinstance(privacy_params, Del) and privacy_params.delta > 0):
            raise TypeError(
                f"dp.stats.groupby with mechanism='gaussian' needs Del privacy parameters with delta > 0; got "
                f"{privacy_params!r}. Pass e.g. dp.Del(1.0, 1e-6)."
            )
        if self.keys is None and not privacy_params.delta > 0:
            raise ValueError(
                f"dp.stats.groupby without public keys selects the groups privately, which needs delta > 0 (a group "
                f"of one person is released with probability at most delta); got {privacy_params!r}. Pass "
                "dp.Del(epsilon, delta) with a small delta (e.g. 1e-6), or pass the public keys=[...]."
            )
        select = self.split(privacy_params)[0]
        if select is not None:
            laplace_epsilon_reserve(select.epsilon, 2 * self.max_groups)
            try:  # τ and ρ depend on public parameters only: computed here so that they never fail after the charge
                self.threshold(select)
                policy = self.selection_policy(select)
                if policy == "weighted_gaussian":
                    WeightedGaussian.of(select, self.max_groups, 1, self.neighbouring)  # smallest σ: strictest check
            except (OverflowError, ValueError):
                raise ValueError(
                    f"dp.stats.groupby cannot select groups privately with {privacy_params!r}: the selection's share "
                    f"{select!r} puts the threshold's e^epsilon or delta_0 beyond float64 (or, with "
                    f"selection='weighted_gaussian', outside the safe Gaussian's range). Pass a smaller epsilon "
                    "(the selection's threshold stops improving long before that) or the public keys=[...]."
                ) from None
            if policy == "truncated_geometric":  # its own error names the limit and the fix
                TruncatedGeometric.of(select, self.max_groups, self.neighbouring)

    def _check_dataset(self, X: Any) -> Any:
        owner = "dp.stats.groupby"
        if not isinstance(X, tuple):
            X = (X, None, None)  # the label column alone: counts per group, every row a person
        if len(X) != 3:
            raise TypeError(
                f"The dataset X of GroupBy must be a tuple (by, values, unit) of columns, or the label column alone; "
                f"got a tuple of {len(X)} items."
            )
        by, values, unit = X
        if self.columns is not None:
            if not isinstance(values, Mapping) or set(values) != set(self.columns):
                got = list(values) if isinstance(values, Mapping) else type(values).__name__
                raise TypeError(
                    f"The values of {owner} must be a mapping {{column: values}} of the columns "
                    f"{list(self.columns)!r}; got {got!r:.200}."
                )
            columns = [values[c] for c in self.columns]
        else:
            columns = [values]
        lazy = isinstance(by, LazyColumns)  # several dask grouping columns, checked by LazyColumns.of
        out_of_core = lazy or any(is_out_of_core(c) for c in [by, *columns, unit] if c is not None)
        # Out of core (dask): lengths are known only after a pass over the data, so they are checked after the
        # charge; the types and dtypes are public metadata and are checked here.
        n = None
        if not lazy:
            by = _group_labels(by, owner) if not is_out_of_core(by) else _lazy_column(by, "by", owner)
            if self.keys is not None:
                _check_keys_type(self.keys, _label_kind(by.dtype), owner)
            n = None if out_of_core else by.shape[0]
        checked = [
            sub._check_values(column, "values" if c is None else f"values[{c!r}]", n, out_of_core)
            for (c, sub), column in zip(self.parts(), columns, strict=True)
        ]
        values = checked[0] if self.columns is None else dict(zip(self.columns, checked, strict=True))
        if unit is not None:
            unit = _labels(unit, "privacy_unit", owner, n=n) if not out_of_core else _lazy_column(unit, "unit", owner)
        elif self.max_groups != 1 or self.max_rows != 1:
            raise ValueError(
                f"{owner} got max_groups={self.max_groups}, max_rows={self.max_rows} but no privacy_unit: without an "
                "identifier every row is a different person (one group, one row). Pass privacy_unit= (the column "
                "naming the person behind each row), or leave max_groups and max_rows at 1."
            )
        return by, values, unit

    def _check_values(self, values: Any, name: str, n: int | None, out_of_core: bool) -> Any:
        """One value column checked (None when its statistics do not read it): numeric, 1-D, one entry per row."""
        owner = "dp.stats.groupby"
        if not self.needs_values:
            return None
        if values is None:
            wanted = [s for s in self.wanted if s != "count"] + [f"quantiles={list(self.quantiles)}"] * bool(
                self.quantiles
            )
            raise TypeError(f"{owner} needs values for {', '.join(wanted)}; pass values= (a numeric column).")
        values = _column(values, name, owner, n=n) if not out_of_core else _lazy_column(values, name, owner)
        if values.dtype.kind not in "iuf":
            raise TypeError(
                f"The '{name}' of {owner} must be numeric; got dtype {values.dtype}. Convert them first (e.g. "
                "x.astype(float))."
            )
        return values

    def _evaluate(self, output: Any) -> Any:
        by, values, unit = output
        columns = list(values.values()) if isinstance(values, dict) else [values]
        if isinstance(by, LazyColumns) or any(is_out_of_core(c) for c in [by, *columns, unit] if c is not None):
            table = _DaskTable.of(by, values, unit, self)
            if table is not None:
                return table
            # Otherwise the label columns are read into memory (one integer code per row); the values stay out of
            # core and are streamed block by block in _exact_sums.
            by = _group_labels(_materialise(by), "dp.stats.groupby")
            unit = None if unit is None else _labels(_materialise(unit), "privacy_unit", "dp.stats.groupby")
            if unit is not None and unit.shape[0] != by.shape[0]:
                raise ValueError(
                    f"The 'privacy_unit' of dp.stats.groupby has {unit.shape[0]} rows, 'by' {by.shape[0]}."
                )
            return by, values, unit
        if any(c is not None and np.isnan(np.asarray(c, dtype=np.float64)).any() for c in columns):
            raise TargetOutputError(_NAN)
        return output

    def half_width(self, privacy_params: Eps, noised: Any, alpha: float) -> Any:
        raise NotImplementedError(
            f"A group-by release carries its error bars as the '<statistic>_accuracy' columns of its table (at "
            f"alpha={self.alpha}); pass alpha= to dp.stats.groupby for another level."
        )

    def _release(self, value: Any, privacy_params: Eps, rng: np.random.Generator) -> GroupByResult:
        select, parts = self.split(privacy_params)
        if isinstance(value, _DaskTable):
            return self._release_distributed(value, select, parts, rng)
        by, values, unit = value
        # The bounding's key: the first draw after the charge (see _contribution.bound_contributions).
        key = None if unit is None else int(rng.integers(0, 2**63, dtype=np.int64))
        labels, bounding, n_people = self._bounded(by, unit, key, select)
        n_groups = labels.size
        released = self._select(select, n_people, bounding.people, bounding.weight, rng)
        # Per-group sums of the released groups only (the others are never looked at again): the slot of every
        # row, one extra slot (released.size) for rows dropped by the keys, the bounding or the selection.
        slot = np.full(n_groups + 1, released.size, dtype=bounding.row_group.dtype)
        slot[released] = np.arange(released.size)
        row_slot = _Slots(bounding.row_group, slot)
        keys = _released_labels(labels, released)
        return self._sized(n_people, parts)._aggregate(keys, row_slot, values, released.size, parts, n_people, rng)

    def _release_distributed(
        self, table: _DaskTable, select: Eps | None, parts: list[Eps], rng: np.random.Generator
    ) -> GroupByResult:
        """The release on a dask table, bounded where the data live: the rows are shuffled by person (dask's own
        shuffle), each partition bounds its people and makes its groups' exact integer totals, people and
        selection weights (:meth:`_partition_totals`), and only those per-group tables travel; they are added
        exactly by label, and selection and noise run as in memory. The kept rows are those of the in-memory
        release (the bounding depends on each person's own rows and the key only), the totals are exact integers
        and the draws come in the same order, so the release is the in-memory one bit for bit for a seed."""
        from dask.base import compute
        from dask.delayed import delayed

        key = int(rng.integers(0, 2**63, dtype=np.int64))  # the first draw, as in memory
        frame = table.frame().shuffle(on="unit")
        sized = self
        if self.quantiles and self.n_candidates is None:
            # The quantile grid is sized from the number of people (public under replace-one): counted first, on
            # the shuffled table kept where it lives, by the partitions (each holds whole people).
            n_people = 0
            if self.neighbouring == "replace_one":
                frame = frame.persist()
                n_people = sum(compute(*[delayed(_count_people)(d) for d in frame.to_delayed()]))
            sized = self._sized(n_people, parts)
        several = (len(table.by.columns), table.by.keys) if isinstance(table.by, LazyColumns) else None
        tasks = [delayed(sized._partition_totals)(d, key, select, several) for d in frame.to_delayed()]
        pieces = [p for p in compute(*tasks) if p]
        if not pieces:
            raise ValueError("dp.stats.groupby needs at least one row; got an empty 'by' column.")
        combined = None  # several columns: the integer label of every tuple, and back
        if self.keys is not None:
            labels = np.asarray(self.keys)  # every part's labels are the public keys, in their order
            where = [np.arange(labels.size)] * len(pieces)
            if isinstance(table.by, LazyColumns):
                combined = table.by.key_labels
        else:
            found = [p["labels"] for p in pieces]
            if isinstance(table.by, LazyColumns):  # the partitions' distinct tuples, combined once more
                sizes = [f[0].size for f in found]
                combined = CompositeLabels.of(
                    [np.concatenate(level) for level in zip(*found, strict=True)], None, _OWNER
                )
                flat = combined.codes
            else:
                sizes, flat = [f.size for f in found], np.concatenate(found)
            labels, codes = _factorize(flat)
            where = np.split(codes, np.cumsum(sizes)[:-1])
        n_groups = labels.size
        people = np.zeros(n_groups, dtype=np.int64)
        weight = None if pieces[0]["weight"] is None else np.zeros(n_groups, dtype=np.int64).astype(object)
        totals: dict[str | None, dict[str, Any]] = {
            c: {name: np.zeros(n_groups, dtype=np.int64).astype(object) for name in pieces[0]["totals"][c]}
            for c, _ in self.parts()
        }
        cells: dict[str | None, list[_GroupedCells]] = {c: [] for c, _ in self.parts()}
        for piece, at in zip(pieces, where, strict=True):  # a loop over partitions: exact integer additions
            people[at] += piece["people"]
            if weight is not None:
                weight[at] += piece["weight"]
            for c, named in piece["totals"].items():
                for name, value in named.items():
                    if name == "cells":
                        cells[c].append(value.relabel(at, n_groups))
                    else:
                        totals[c][name][at] += value
        n_people = sum(p["n_people"] for p in pieces)
        released = self._select(select, n_people, people, weight, rng)
        chosen: dict[str | None, dict[str, Any]] = {
            c: {name: v[released] for name, v in named.items() if name != "cells"} for c, named in totals.items()
        }
        slot = np.full(n_groups, -1)
        slot[released] = np.arange(released.size)
        for c, found in cells.items():
            if found:  # the released groups' cells, renumbered as their rows would be in memory
                chosen[c]["cells"] = _GroupedCells.merge(found).relabel(slot, released.size)
        keys = _released_labels(labels, released)
        sized = sized._sized(n_people, parts)
        result = sized._aggregate(keys, None, None, released.size, parts, n_people, rng, totals=chosen)
        if combined is None:
            return result
        assert isinstance(table.by, LazyColumns)  # for type checkers: combined labels come with several columns
        return attrs.evolve(result, keys=combined.index(result.keys, table.by.names))

    def _partition_totals(
        self, part: Any, key: int, select: Eps | None, several: tuple[int, Any] | None = None
    ) -> dict[str, Any] | None:
        """One partition of the shuffled table (whole people): its groups' labels, people, selection weights and
        exact integer totals (:meth:`_block_sums` per value column), and its number of people; None if empty.
        With ``several`` = (number of grouping columns, public key tuples), its rows' tuples are combined first and
        its labels are the groups' tuples, one array per column."""
        if len(part) == 0:
            return None
        part = part.sort_values("_row", kind="stable")  # each person's rows in the table's order
        owner = "dp.stats.groupby"
        unit = _labels(part["unit"], "privacy_unit", owner)
        labels: np.ndarray | list[np.ndarray]
        if several is None:
            labels, bounding, n_people = self._bounded(_group_labels(part["by"], owner), unit, key, select)
        else:
            local = combine_partition(part, *several, owner)
            mech = self if local.keys is None else attrs.evolve(self, keys=local.keys)
            codes, bounding, n_people = mech._bounded(local.coded, unit, key, select)
            labels = tuples(local, codes)
        k = bounding.people.size
        row_slot = bounding.row_group
        rows = np.arange(len(part))
        values = {
            c: part[table_column(c)].to_numpy(dtype=np.float64) if sub.needs_values else None for c, sub in self.parts()
        }
        if any(v is not None and np.isnan(v).any() for v in values.values()):
            raise TargetOutputError(_NAN)  # any row, kept or not, as in memory
        totals = {c: sub._block_sums((values[c], rows), row_slot, k, checked=True) for c, sub in self.parts()}
        return {
            "labels": labels,
            "people": bounding.people,
            "weight": bounding.weight,
            "totals": totals,
            "n_people": n_people,
        }

    def _bounded(self, by: Any, unit: Any, key: int | None, select: Eps | None) -> tuple[np.ndarray, Bounding, int]:
        """The rows' groups after the public keys and the bounding: (labels, :class:`Bounding`, the number of
        people), with the groups' set-union weights when the selection (parameters ``select``) needs them. The same
        for a whole table and, row for row, for each part of it holding whole people (see
        :func:`~diffpriv_py._contribution.bound_table`)."""
        labels, codes = _factorize(by)
        if labels.dtype.kind == "f":
            # A group's label is the label of one of its rows, and which one must not show: −0.0 and 0.0 (or NaNs
            # with different payloads) are one group, released as 0.0 (the canonical NaN) whatever its rows hold.
            labels = np.where(np.isnan(labels), np.nan, labels + 0.0)
        if self.keys is not None:
            # Rows of groups outside the public keys are dropped before bounding: per row, by its label and the
            # public keys, so neighbours stay neighbours, and a person's max_groups go to groups that are released.
            key_arr = np.asarray(self.keys)
            pos = np.searchsorted(labels, key_arr)
            pos = np.minimum(pos, labels.size - 1)
            found = labels[pos] == key_arr
            if labels.dtype.kind == key_arr.dtype.kind == "f":
                found |= np.isnan(labels[pos]) & np.isnan(key_arr)  # a key NaN is the group of missing labels
            to_key = np.full(labels.size, -1)
            to_key[pos[found]] = np.flatnonzero(found)
            codes, labels = to_key[codes], key_arr
        weighted = select is not None and self.selection_policy(select) == "weighted_gaussian"
        shares = WeightedGaussian.share_weights(self.max_groups) if weighted else None
        if unit is None or key is None:  # every row is a person, in one group
            people = np.bincount(codes[codes >= 0], minlength=labels.size).astype(np.int64)
            weight = None if shares is None else people * shares[1]
            return labels, Bounding(codes, people, weight), by.shape[0]
        person, hashes, order, n_people = _people(unit)
        group_hash = label_hashes(labels) if getattr(by, "hashes", None) is None else by.hashes[labels]
        bounding = bound_table(
            person, codes, labels.size, self.max_groups, self.max_rows, key, hashes, group_hash, order, shares
        )
        return labels, bounding, n_people

    def _select(
        self,
        select: Eps | None,
        n_people: int,
        people: np.ndarray,
        weight: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """The released group codes (ascending), from each group's number of people after bounding and, for the
        weighted Gaussian, its total weight (see :class:`~diffpriv_py._contribution.Bounding`). The candidates are
        the groups that still hold a person (hence a kept row: max_rows ≥ 1) after bounding, never the raw labels:
        a label whose rows were all dropped by the bounding exists in one neighbour only, and noising it would
        release it at the rate of its noise alone, without the union bound over the ≤ G groups one person can
        create (see the class Notes)."""
        if select is None:
            return np.arange(people.shape[0])
        policy = self.selection_policy(select)
        if policy == "weighted_gaussian":
            union = WeightedGaussian.of(select, self.max_groups, self.people_bound(n_people), self.neighbouring)
            assert weight is not None  # for type checkers: _bounded adds the weights for this policy
            return union.release(weight, people, rng)
        if policy == "truncated_geometric":
            return TruncatedGeometric.of(select, self.max_groups, self.neighbouring).release(people, rng)
        candidates = np.flatnonzero(people > 0)
        t, tau = self.threshold(select)
        noisy = people[candidates] + two_sided_geometric(candidates.shape, t, rng)
        released: np.ndarray = candidates[noisy >= tau]
        return released

    def _block_sums(
        self, block: Any, row_slot: np.ndarray | _Slots, k: int, *, checked: bool = False
    ) -> dict[str, Any]:
        """Exact integer per-group sums of one block ``(values, rows)`` (Python-int arrays; ``rows`` indexes
        ``row_slot``: original row numbers or a slice of them), and for quantiles the block's sparse (group, grid
        cell) counts (``"cells"``). Rows of slot k or −1 are dropped: summed into one extra group, then left out."""
        x_block, rows = block
        codes = row_slot[rows]
        if codes.min(initial=0) < 0:
            codes = np.where(codes >= 0, codes, k)
        sums: dict[str, Any] = {"count": _group_sums(codes, None, k + 1)[:k]}
        if x_block is None:
            return sums
        x = np.asarray(x_block, dtype=np.float64)
        if not checked and np.isnan(x).any():  # ``checked``: the caller already refused NaN in the whole column
            raise TargetOutputError(_NAN)  # any row, kept or not, as in memory
        v = np.empty_like(x)
        for m in self.measurements():
            if m.grid is not None:
                m.grid.index(x, v)
                v -= m.grid.offset  # integer-valued, |v| ≤ 2ᵇ
                sums[m.name] = _group_sums(codes, v * v if m.name == "sum_u2" else v, k + 1)[:k]
        if self.quantiles:
            kept = np.flatnonzero(codes < k)
            sums["cells"] = _GroupedCells.of(codes[kept], x[kept], k, self._quantile_grid())
        return sums

    def _sized(self, n_people: int, parts: list[Eps]) -> GroupBy:
        """This release's mechanism with its quantile grid fixed: ``n_candidates`` if given, else sized from public
        numbers alone by :func:`~diffpriv_py.stats.default_n_candidates` (a group holds at most n_people·R values,
        one level's draw has ε_q = ``parts[-1].epsilon`` and rank sensitivity 2GR)."""
        if self.n_candidates is not None or not self.quantiles:
            return self
        reach = self.max_groups * self.max_rows
        size = default_n_candidates(self.people_bound(n_people) * self.max_rows, parts[-1].epsilon, self._sides * reach)
        return attrs.evolve(self, n_candidates=size)

    def _quantile_grid(self) -> np.ndarray:
        # For type checkers: quantiles need bounds (checked at construction) and a grid size (fixed by _sized).
        assert self.pair is not None and self.n_candidates is not None
        return _cached_grid(self.pair[0], self.pair[1], self.n_candidates)

    def _exact_sums(self, row_slot: np.ndarray | _Slots, values: Any, k: int) -> tuple[dict[str, np.ndarray], Any]:
        """The exact per-group vectors of every measurement, as float64 (one rounding of an exact integer each), and
        the (group, grid cell) counts of the quantiles (None without quantiles).

        The values are read block by block (a dask collection's own blocks, an array's spans of 2²⁰ rows) and the
        per-block integer sums and cell counts added exactly, so the result is the same bit for bit however the data
        are split, and the value column is never held in memory whole.
        """
        n = row_slot.shape[0]
        if values is None:
            totals = self._block_sums((None, slice(None)), row_slot, k)
        elif is_out_of_core(values):
            import dask.array as da

            rows = da.arange(n, chunks=n)  # rechunked to the values' blocks by map_reduce
            totals = map_reduce((values, rows), lambda b: self._block_sums(b, row_slot, k), combine=_add_block_sums)
        else:  # spans of SPAN_ROWS rows: few Python-int additions, temporaries of a few MB (NaN: see _evaluate)
            spans = [slice(start, start + SPAN_ROWS) for start in range(0, n, SPAN_ROWS)]
            totals = _add_block_sums([self._block_sums((values[s], s), row_slot, k, checked=True) for s in spans])
        return self._exact(totals)

    def _exact(self, totals: dict[str, Any]) -> tuple[dict[str, np.ndarray], Any]:
        """The exact integer totals of :meth:`_block_sums` as float64 vectors in released units (one rounding of an
        exact integer each), and the quantiles' cells (None without quantiles)."""
        totals = dict(totals)
        cells = totals.pop("cells", None)
        exact: dict[str, np.ndarray] = {}
        counts = totals["count"]
        for m in self.measurements():
            if m.grid is None:
                exact[m.name] = counts.astype(np.float64)
            elif m.name == "sum_u2":
                # Σ(u² − ⅛) = (Σv² − count·2²ᵇ⁻³)/2²ᵇ: exact integer arithmetic, then one rounding.
                bits = m.grid.bits
                exact[m.name] = to_units(totals[m.name] - counts * (1 << (2 * bits - 3)), 2 * bits)
            else:
                exact[m.name] = to_units(totals[m.name], m.grid.bits)
        return exact, cells

    def _aggregate(
        self,
        keys: np.ndarray,
        row_slot: np.ndarray | _Slots | None,
        values: Any,
        k: int,
        parts: list[Eps],
        n_people: int,
        rng: Any,
        totals: dict[str | None, dict[str, Any]] | None = None,
    ) -> GroupByResult:
        columns = self.parts()
        # Every column sums the same kept rows (one bounding, one selection): its exact sums and quantile cells
        # (from the per-column integer ``totals`` of the released groups when a distributed pass made them).
        if totals is None:
            assert row_slot is not None  # for type checkers: in memory the rows' slots come with the values
            sums = {c: sub._exact_sums(row_slot, values if c is None else values[c], k) for c, sub in columns}
        else:
            sums = {c: sub._exact(totals[c]) for c, sub in columns}
        noisy: dict[str | None, dict[str, np.ndarray]] = {c: {} for c, _ in columns}
        bars: dict[str | None, dict[str, Callable[[float], np.ndarray]]] = {c: {} for c, _ in columns}
        measurements = self.measurements()
        for m, params in zip(measurements, parts[: len(measurements)], strict=True):
            mech = self._mechanism(m, k, n_people)
            # The count (column None) is noised once and reported with every column.
            owners = [m.column] if m.column is not None or self.columns is None else list(self.columns)
            exact = sums[owners[0]][0][m.name]
            if k == 0:
                noise, bar = np.zeros(0), (lambda a: np.zeros(0))
            else:
                resp = mech.release_response(params, exact, rng=rng)
                noise = np.atleast_1d(np.asarray(resp.response, dtype=np.float64))
                bar = _error_bar(mech, params, noise, self._sum_allowance(m, n_people))
            for c in owners:
                noisy[c][m.name], bars[c][m.name] = noise, bar
        rest = parts[len(measurements) :]
        results = []
        for i, (c, sub) in enumerate(columns):
            units = {m.name: m.grid for m in measurements if m.grid is not None and m.column == c}
            result = sub._report(keys, noisy[c], bars[c], units)
            if self.quantiles:
                share = rest[i * len(self.quantiles) : (i + 1) * len(self.quantiles)]
                levels = sub._quantiles(sums[c][1], k, share, rng)
                result.values.update(levels[0])
                result.accuracy.update(levels[1])
            results.append((c, result))
        if self.columns is None:
            return results[0][1]
        return GroupByResult(
            keys=keys,
            values={f"{c}_{s}": v for c, r in results for s, v in r.values.items()},
            accuracy={f"{c}_{s}": v for c, r in results for s, v in r.accuracy.items()},
            alpha=self.alpha,
        )

    def _quantiles(
        self, cells: _GroupedCells, k: int, parts: list[Eps], rng: np.random.Generator
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Per released group and level, a grid point drawn by the exponential mechanism with a rank utility.

        The score of candidate c in a group of n values is u(c) = −max(0, L(c) − q·n, q·n − R(c)), with L, R the
        numbers of values < c and ≤ c (as :class:`~diffpriv_py.stats.Quantile`, n now private). Adding or removing
        one row moves L(c) − q·n and q·n − R(c) by at most max(q, 1 − q) ≤ 1, so replacing a person moves the scores
        of a group touched by both people by at most 2R and the sum over groups of the largest changes is at most
        2·G·R. Sampling each group ∝ exp(ε_q·u/(4GR)) therefore costs ε_q in total (each group's loss is at most
        ε_q·Δ_g/(2GR)). With probability ≥ 1 − α the drawn point's rank error is at most −max u + 4GR·ln(m/α)/ε_q.
        Under add/remove one person moves the scores of at most G groups by at most R each (sum GR), so the draw is
        ∝ exp(ε_q·u/(2GR)) and the bar 2GR·ln(m/α)/ε_q.

        All groups at once, with no loop over them: the scores are piecewise constant on the grid, changing only
        at the cells of the group's values, so they are computed at those change points alone (from the sparse
        (group, cell) counts, :class:`~diffpriv_py.stats._quantile._GroupedCells`) and each level makes one
        batched draw (:func:`~diffpriv_py.stats._quantile._draw_candidates_grouped`): per group the same
        probabilities, computed by the same float operations, as the one-column quantile's sampler on the dense
        scores.
        """
        grid, grid_size = self._quantile_grid(), self.n_candidates
        assert grid_size is not None  # fixed by _sized before the release reads the data
        out: dict[str, np.ndarray] = {}
        acc: dict[str, np.ndarray] = {}
        group_ptr, points, less, at_most, n = cells.rank_points()
        n_at = np.repeat(n.astype(np.float64), np.diff(group_ptr))
        reach = 2.0 * self._sides * self.max_groups * self.max_rows
        for q, params in zip(self.quantiles, parts, strict=True):
            scale = params.epsilon / reach
            qn = q * n_at
            scores = -np.maximum(np.maximum(less - qn, qn - at_most), 0.0)
            drawn = (
                grid[_draw_candidates_grouped(points, scores, group_ptr, grid.size, scale, rng)] if k else np.empty(0)
            )
            name = f"q{q:g}"
            out[name] = drawn
            acc[name] = np.full(k, math.log(grid_size / self.alpha) / scale)
        return out, acc

    def _mechanism(self, m: _Measurement, k: int, n_people: int) -> NumericMech:
        l1, l2 = self.sensitivities(m, n_people)
        target = np.asarray
        if self.noise == "gaussian":
            return Gaussian(target=target, sensitivity=l2, dims=max(k, 1))
        if m.name == "count":
            return DiscreteLaplace(target=target, sensitivity=l1, dims=max(k, 1))
        return Laplace(target=target, sensitivity=l1, dims=max(k, 1))

    def _sum_allowance(self, m: _Measurement, n_people: int) -> float:
        """How far the computed per-group ``sum`` may lie from the exact sum of the clipped values, in released units.

        A group holds at most n_people·R rows (R = ``max_rows`` per person); each row's index is within
        ``grid.error`` steps of its exact position (:class:`~diffpriv_py._fixed_point.Grid`) and the exact total is
        rounded once (u·|total| ≤ u·rows·M). The other measurements need none (counts are exact) or get a tighter
        one from the noisy count in :meth:`_report`.
        """
        if m.name != "sum" or m.grid is None:
            return 0.0
        rows = float(self.people_bound(n_people) * self.max_rows)
        return rows * (m.grid.error * 2.0**-m.grid.bits + UNIT_ROUNDOFF * m.bound)

    def _report(
        self,
        keys: np.ndarray,
        noisy: dict[str, np.ndarray],
        bars: dict[str, Callable[[float], np.ndarray]],
        grids: dict[str, Grid],
    ) -> GroupByResult:
        alpha = self.alpha
        lo, hi = self.pair if self.pair is not None else (0.0, 0.0)
        values: dict[str, np.ndarray] = {}
        acc: dict[str, np.ndarray] = {}
        wanted = self.wanted
        if "count" in noisy:
            count = np.maximum(np.rint(noisy["count"]), 0.0)
            if "count" in wanted:
                values["count"] = count.astype(np.int64)
                acc["count"] = np.floor(bars["count"](alpha) + 0.5)
        if "sum" in wanted:
            unit = float(grids["sum"].unit())  # data units per released unit (the grid's width)
            values["sum"] = noisy["sum"] * unit
            # |unit − W| ≤ 3.0001u·W of the exact sum (≤ |value| + bar on the event) and the product's rounding:
            # inside the 2⁻⁴⁰ terms.
            bar = bars["sum"](alpha) * unit
            acc["sum"] = bar * (1.0 + 2.0 * GRID_SLACK) + GRID_SLACK * np.abs(values["sum"])
        if set(wanted) & {"mean", "var", "std"}:
            grid = grids["sum_u"]
            width = float(grid.unit())
            centre = float(grid.origin) + width / 2
            k_used = 3 if set(wanted) & {"var", "std"} else 2
            a = alpha / k_used  # union bound over the noised vectors a statistic is computed from
            c, s = noisy["count"], noisy["sum_u"]
            n_hat = np.maximum(c, 1.0)
            mean_u = np.clip(s / n_hat, -0.5, 0.5)
            n_lo = np.maximum(c - bars["count"](a), 1.0)
            n_hi = np.maximum(c + bars["count"](a), n_lo)
            # The true number of rows N is at most n_hi (on the union event); each row's v = k − 2ᵇ⁻¹ is within
            # e = grid.error steps of its exact centred position y (|v|, |y| ≤ 2ᵇ⁻¹), so the computed Σu is within
            # N·(e·2⁻ᵇ + u/2) of the exact one (one rounding of |Σu| ≤ N/2) and Σ(u² − ⅛) within N·(e·2⁻ᵇ + u/8)
            # (|v² − y²| = |v − y|·|v + y| ≤ e·2ᵇ). Widening the noise bars by that makes the intervals below hold
            # for the exact statistics of the clipped values.
            step = grid.error * 2.0**-grid.bits
            hs = bars["sum_u"](a) + n_hi * (step + UNIT_ROUNDOFF / 2)
            m_lo, m_hi = _ratio_interval(s - hs, s + hs, n_lo, n_hi, -0.5, 0.5)
            # Every quantity that survives the clips below is at most ½ in magnitude, so its float roundings cost a
            # few u absolute: 2⁻⁴⁰ (in widths, or widths²) covers them, those of centre and width against the
            # exact lo + W/2 and W (≤ 2⁻⁴⁰·(|lo| + |hi|) in data units), and the bars' own evaluation.
            slack = GRID_SLACK * (abs(lo) + abs(hi))
            if "mean" in wanted:
                values["mean"] = np.clip(centre + width * mean_u, lo, hi)
                spread = np.maximum(mean_u - m_lo, m_hi - mean_u)
                acc["mean"] = width * (spread * (1.0 + GRID_SLACK) + GRID_SLACK) + slack
            if set(wanted) & {"var", "std"}:
                q = noisy["sum_u2"]
                hq = bars["sum_u2"](a) + n_hi * (step + UNIT_ROUNDOFF / 8)
                e_lo, e_hi = _ratio_interval(q - hq, q + hq, n_lo, n_hi, -0.125, 0.125)
                sq_lo = np.where((m_lo <= 0) & (m_hi >= 0), 0.0, np.minimum(m_lo**2, m_hi**2))
                sq_hi = np.maximum(m_lo**2, m_hi**2)
                v_lo = np.clip(e_lo + 0.125 - sq_hi, 0.0, 0.25)
                v_hi = np.clip(e_hi + 0.125 - sq_lo, 0.0, 0.25)
                var_u = np.clip(q / n_hat + 0.125 - mean_u**2, 0.0, 0.25)
                w2 = width * width
                if "var" in wanted:
                    values["var"] = w2 * var_u
                    spread = np.maximum(var_u - v_lo, v_hi - var_u)
                    acc["var"] = w2 * (spread * (1.0 + GRID_SLACK) + GRID_SLACK)
                if "std" in wanted:
                    sd = width * np.sqrt(var_u)
                    values["std"] = sd
                    spread = np.maximum(sd - width * np.sqrt(v_lo), width * np.sqrt(v_hi) - sd)
                    acc["std"] = spread * (1.0 + GRID_SLACK) + GRID_SLACK * width
        ordered = {s: values[s] for s in wanted if s in values}
        return GroupByResult(keys=keys, values=ordered, accuracy={s: acc[s] for s in ordered}, alpha=alpha)


def table_column(column: str | None) -> str:
    """The column of a :class:`_DaskTable` frame holding the value column ``column`` (None: the one column)."""
    return "values" if column is None else f"values_{column}"


@attrs.frozen(eq=False)
class _DaskTable:
    """A dask table released with distributed bounding: the label, person and value columns, all dask Series of
    the same partitioning (see :meth:`GroupBy._release_distributed`)."""

    by: Any
    values: Any
    unit: Any

    @classmethod
    def of(cls, by: Any, values: Any, unit: Any, mech: GroupBy) -> _DaskTable | None:
        """The table when the distributed path applies (dask Series sharing known divisions, a privacy unit), else
        None. Several grouping columns (:class:`LazyColumns`) are given only when it applies (see
        :func:`distributable`)."""
        if isinstance(by, _Coded) or not distributable([by, unit, values]):
            return None
        return cls(by, values, unit)

    def frame(self) -> Any:
        """One dask DataFrame of the columns, with each row's place in the table (``_row``, increasing)."""
        import dask.dataframe as dd

        several = isinstance(self.by, LazyColumns)
        named = {f"by{j}": c for j, c in enumerate(self.by.columns)} if several else {"by": self.by}
        named["unit"] = self.unit
        if isinstance(self.values, dict):
            named.update({table_column(c): v for c, v in self.values.items()})
        elif self.values is not None:
            named[table_column(None)] = self.values
        frame = dd.concat([c.rename(name) for name, c in named.items()], axis=1)
        # Each row's place in the table: (its partition, its position there) packed into one integer, made by every
        # partition on its own (a running count would chain the partitions one after another).
        meta = frame._meta.assign(_row=np.zeros(0, dtype=np.int64))
        return frame.map_partitions(_number_rows, meta=meta)


def _number_rows(part: Any, partition_info: dict[str, Any] | None = None) -> Any:
    """One partition with ``_row`` = its number · 2⁴⁰ + the row's position in it: ordered as the table's rows."""
    number = 0 if partition_info is None else int(partition_info["number"])
    return part.assign(_row=(number << 40) + np.arange(len(part), dtype=np.int64))


def distributable(columns: list[Any]) -> bool:
    """Whether the group-by of these columns (``[by, unit, values]``: ``by`` one column or :class:`LazyColumns`,
    ``values`` None, one column or a mapping of them) is bounded where the data live: a privacy unit, and every
    column a dask Series of the same known partitioning."""
    by, unit, values = columns
    if unit is None:
        return False
    flat = [*(by.columns if isinstance(by, LazyColumns) else [by]), unit] + (
        [] if values is None else list(values.values()) if isinstance(values, Mapping) else [values]
    )
    if not all(hasattr(c, "to_frame") and getattr(c, "known_divisions", False) for c in flat):
        return False
    return all(c.divisions == flat[0].divisions for c in flat)


def _people(
    unit: np.ndarray | _Coded,
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], np.ndarray | None, int]:
    """The privacy unit as :func:`bound_table` reads it: (a per-row person value, the map from those values to the
    people's label hashes, the order making each person's rows contiguous or None, the number of people).

    Integer labels already grouped in ascending order (a table sorted by person) are used as they are, hashed by
    value; any other column is factorised (codes by first appearance) and its distinct labels hashed once."""
    if isinstance(unit, np.ndarray) and unit.dtype.kind in "iu" and bool((unit[1:] >= unit[:-1]).all()):
        return unit, label_hashes, None, int(np.count_nonzero(unit[1:] != unit[:-1])) + 1
    uniques, codes = _factorize(unit, sort=False)
    n_people = int(uniques.shape[0])
    return codes, label_hashes(uniques).__getitem__, person_order(codes, n_people), n_people


@attrs.frozen(eq=False)
class _Slots:
    """Each row's slot among the released groups, ``slot[row_group]``, looked up block by block as the sums read
    the rows (never made for the whole table)."""

    row_group: np.ndarray
    slot: np.ndarray

    @property
    def shape(self) -> Any:  # as an array's
        return self.row_group.shape

    def __getitem__(self, rows: Any) -> np.ndarray:
        found: np.ndarray = self.slot[self.row_group[rows]]
        return found


def _count_people(part: Any) -> int:
    """The number of people of one partition of a table shuffled by person (each person in one partition)."""
    return 0 if len(part) == 0 else int(_factorize(_labels(part["unit"], "privacy_unit", _OWNER), sort=False)[0].size)


def _released_labels(labels: np.ndarray, released: np.ndarray) -> np.ndarray:
    keys: np.ndarray = labels[released]
    if keys.dtype.kind in "US":
        # A fixed-width string dtype is as wide as the longest label of the column, released or not: rebuilt from
        # the released labels alone, so the result's dtype says nothing about the groups that were not released.
        keys = np.array(keys.tolist(), dtype=keys.dtype.kind)
    return keys


SPAN_ROWS = 1 << 20
"""Rows per span of the in-memory exact sums (each span's sums are exact in any case; see :func:`_group_sums`)."""

_OWNER = "dp.stats.groupby"

PEOPLE_CAP = 2**40
"""Under add/remove the number of people is private; without ``max_people`` the float allowances are sized for this
many people (about 1.1·10¹², beyond what a table can hold in memory: 8 TB per int64 column). The guarantee is stated
for tables of at most that many people."""

_NAN = (
    "The values passed to dp.stats.groupby contain NaN. Impute them with a public value first (dropping rows "
    "yourself is fine here: the number of rows is private under per-person neighbours)."
)


def _add_sums(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-block exact sums added key by key (Python ints: exact, so the order of the blocks does not matter)."""
    total = dict(parts[0])
    for part in parts[1:]:
        for name, value in part.items():
            total[name] = total[name] + value
    return total


def _add_block_sums(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`_add_sums`, with the quantiles' cell counts of all blocks merged in one sort."""
    if "cells" not in parts[0]:
        return _add_sums(parts)
    cells = _GroupedCells.merge([p["cells"] for p in parts])
    total = _add_sums([{name: v for name, v in p.items() if name != "cells"} for p in parts])
    total["cells"] = cells
    return total


def _ratio_interval(
    a: np.ndarray, b: np.ndarray, n_lo: np.ndarray, n_hi: np.ndarray, low: float, high: float
) -> tuple[np.ndarray, np.ndarray]:
    """Range of s/n over s ∈ [a, b], n ∈ [n_lo, n_hi] (n > 0), intersected with the feasible [low, high]."""
    lo = np.minimum(a / n_lo, a / n_hi)
    hi = np.maximum(b / n_lo, b / n_hi)
    return np.clip(lo, low, high), np.clip(hi, low, high)


def groupby(
    by: Any,
    privacy_params: Eps,
    *,
    values: Any = None,
    statistics: str | Sequence[str] = ("count",),
    quantiles: Any = (),
    n_candidates: int | None = None,
    bounds: Any = None,
    keys: Any = None,
    privacy_unit: Any = None,
    max_groups: int = 1,
    max_rows: int = 1,
    mechanism: MechanismName = "laplace",
    selection: str = "auto",
    neighbouring: str = "replace_one",
    max_people: int | None = None,
    alpha: float = 0.05,
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    name: Any = None,
) -> Any:
    """Differentially private statistics per group, with error bars, as a pandas DataFrame.

    Parameters
    ----------
    by : array_like
        The group label of each row (1-D; any sortable labels: strings, integers). ``by``, ``values`` and
        ``privacy_unit`` may be dask Series or arrays (out of core, same result as in memory for a seed; dask
        Series of one table with a ``privacy_unit`` are bounded on the workers, see :class:`GroupBy`).
    privacy_params : Eps or Del
        The guarantee of the whole query (charged once). Without public ``keys`` it must be ``Del`` with δ > 0.
    values : array_like or mapping, optional
        The numeric value of each row (needed for sum, mean, var, std). A mapping ``{name: column}`` of several
        named value columns releases them all in one query, with one contribution bounding and one partition
        selection shared by all (see Notes); the result's columns are then ``<name>_<statistic>``. A DataFrame is
        read as the mapping of its columns.
    statistics : str or sequence of str, or mapping, default ("count",)
        Any of "count", "sum", "mean", "var", "std"; with several value columns, the same for all of them or a
        mapping ``{name: statistics}`` naming every column.
    quantiles : float or sequence of float, optional
        Quantile levels q ∈ [0, 1] to release per group (columns ``q0.5`` …): a point of the public grid of
        points between the bounds (sized from the number of people and ε, see :class:`GroupBy`), drawn by the
        exponential mechanism; its error bar
        ``q0.5_rank_accuracy`` is in ranks (how many values would have to move), see :class:`GroupBy`.
    n_candidates : int, optional
        The number of points of the quantiles' public grid (at least 2); ``None`` (default) sizes it from public
        numbers alone (:func:`~diffpriv_py.stats.default_n_candidates` of the number of people times
        ``max_rows``, ε per level and the rank sensitivity).
    bounds : (lower, upper) or mapping, optional
        Public clipping bounds of the values (required for value statistics); with several value columns, one pair
        for all of them or a mapping ``{name: (lower, upper)}`` (a count-only column may be left out).
    keys : sequence, optional
        Public group labels, of the labels' type. Every key is released (in this order), missing ones as empty
        groups, and no other label; rows of other groups are dropped before contribution bounding. ``None``
        (default): the groups are chosen privately among those that still hold a person after bounding (partition
        selection; rare groups are dropped).
    privacy_unit : array_like, optional
        The person behind each row. ``None``: every row is a different person.
    max_groups, max_rows : int, default 1
        Public per-person limits: at most ``max_groups`` groups and ``max_rows`` rows per group are kept per person
        (a pseudo-random choice keyed by one draw from ``rng``, the same for every other person whoever is replaced).
        Larger limits keep more data but add proportionally more noise.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Noise of the aggregates (integer-valued for counts with Laplace).
    selection : {"auto", "threshold", "weighted_gaussian", "truncated_geometric"}, default "auto"
        Partition-selection policy when ``keys`` is None (see :class:`GroupBy`): a noisy count of people per group
        against a threshold, set-union selection (each person spreads an L2 weight of 1 over their kept groups,
        Gaussian noise, a threshold), which releases more groups when ``max_groups`` > 1, or the truncated
        geometric (each group kept with the largest probability its number of people allows). "auto" picks from
        public numbers only (``max_groups``, ε, δ, ``neighbouring``): under replace-one "threshold" at
        ``max_groups`` = 1, else the one whose group of people in ``max_groups`` groups each is released at a
        smaller size (under add/remove, among all three).
    neighbouring : {"replace_one", "add_remove"}, default "replace_one"
        The neighbouring relation ``privacy_params`` are stated for: one person's rows replaced by another's (the
        number of people is public; the library's relation), or one person's rows added or removed (the number of
        people is private too; the relation of OpenDP, Tumult Analytics and PipelineDP). Under add/remove the
        sensitivities are halved and the threshold pays for lone groups on one side only, so more groups are
        released at the same numbers; an :class:`~diffpriv_py.Accountant` is charged the implied replace-one
        guarantee (2ε, (1 + e^ε)δ). See :class:`GroupBy`.
    max_people : int, optional
        Under ``neighbouring="add_remove"`` only: a public upper bound on the number of people (the guarantee is
        stated for tables of at most that many), which sizes the float allowances, the sums' error bars and the
        quantiles' grid. ``None``: 2⁴⁰.
    alpha : float, default 0.05
        Level of the ``<statistic>_accuracy`` columns: each value is within that half-width of the exact
        statistic of the bounded, clipped data with probability ≥ 1 − α (per group and statistic).
    rng : None, int or numpy.random.Generator, optional
        ``None`` (default) draws cryptographically strong noise; a seed is for tests only.
    accountant : Accountant, optional
        Charged once with ``privacy_params``, before the data are read.
    full_response : bool, default False
        Return the :class:`~diffpriv_py.Response` (its ``response`` is the DataFrame).
    name : object, optional
        Name of the DataFrame's index.

    Returns
    -------
    pandas.DataFrame or Response
        Indexed by the released groups (sorted, or in the order of ``keys``), one column per statistic and one
        ``<statistic>_accuracy`` column each (with a mapping of values, ``<name>_<statistic>`` and
        ``<name>_<statistic>_accuracy``, column by column); ``frame.attrs["alpha"]`` records α. The index's type
        follows the ``by`` column's dtype (pandas nullable numeric, boolean and numeric categorical columns give
        float64 labels, other extension dtypes strings), never its values; see :class:`GroupBy`.

    Notes
    -----
    (ε, δ)-DP under replace-one-person neighbours (one person's rows replaced by another's), the library's
    replace-one relation with people as records, or with ``neighbouring="add_remove"`` under add/remove-one-person
    neighbours; see :class:`GroupBy` for the sensitivities, the budget split, the partition-selection threshold and
    its proof, and the error bars.

    **Several value columns** (``values`` a mapping): one contribution bounding and one partition selection shared
    by all columns, one noisy row count shared by all, then each column's sums. ε is split equally over the
    selection (private keys only), the shared count (if any column needs it), every column's noised sums and every
    column's quantile draws; δ goes to selection (Laplace) or is split like ε (Gaussian). The whole query is
    (ε, δ)-DP by sequential composition of these measurements, the selection counted once; each column's sums have
    the one-column sensitivities since all columns share the kept rows.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> city = np.array(["Paris"] * 300 + ["Lyon"] * 200 + ["Nice"])
    >>> age = np.linspace(20, 70, city.size)
    >>> table = dp.stats.groupby(city, dp.Del(1.0, 1e-6), values=age, statistics=("count", "mean"),
    ...                          bounds=(0, 100), rng=0)
    >>> list(table.index)  # the group of one person is (almost surely) not released
    ['Lyon', 'Paris']
    >>> income = np.linspace(1e3, 9e4, city.size)
    >>> both = dp.stats.groupby(city, dp.Del(1.0, 1e-6), values={"age": age, "income": income},
    ...                         statistics=["mean"], bounds={"age": (0, 100), "income": (0, 1e5)}, rng=0)
    >>> list(both.columns)
    ['age_mean', 'age_mean_accuracy', 'income_mean', 'income_mean_accuracy']
    """
    owner = "dp.stats.groupby"
    require("pandas", feature=f"{owner} (its result is a pandas DataFrame)")  # before the charge
    if not isinstance(privacy_params, Eps):
        raise TypeError(f"{owner} needs privacy parameters such as dp.Del(1.0, 1e-6); got {privacy_params!r}.")
    if not isinstance(full_response, (bool, np.bool_)):
        raise TypeError(f"The 'full_response' of {owner} must be True or False. Got {full_response!r}.")
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, owner=owner)
    try:
        hash(name)  # pandas needs a hashable index name; checked here, before the charge
    except TypeError:
        raise TypeError(
            f"The 'name' of {owner} names the result's index, so it must be hashable (a string, a number or None); "
            f"got {name!r} (type {type(name).__name__})."
        ) from None
    columns = None
    if getattr(values, "ndim", 1) == 2 and hasattr(values, "columns"):  # a (pandas or dask) DataFrame of value columns
        values = {c: values[c] for c in values.columns}
    if isinstance(values, Mapping):
        if not values:
            raise ValueError(f"The 'values' mapping of {owner} is empty; pass {{'age': ages, ...}} or one column.")
        columns = tuple(values)
    several = is_several_columns(by)
    mech = GroupBy(
        statistics=statistics,
        quantiles=quantiles,
        n_candidates=n_candidates,
        bounds=bounds,
        columns=columns,
        keys=None if several else keys,
        max_groups=max_groups,
        max_rows=max_rows,
        noise=mechanism,
        alpha=alpha,
        selection=selection,
        neighbouring=neighbouring,  # type: ignore[arg-type]  # checked by GroupBy
        max_people=max_people,
    )
    composite = None
    if several and distributable([LazyColumns(tuple(by), None, None, ()), privacy_unit, values]):
        # Several dask columns: combined where the data live, partition by partition (see _multikey.LazyColumns).
        by = LazyColumns.of(by, keys, owner)
        if by.key_labels is not None:
            mech = attrs.evolve(mech, keys=by.key_labels.keys)
    elif several:  # a public relabelling: each row's tuple of labels becomes one integer label (see _multikey)
        composite = CompositeLabels.of(by, keys, owner)
        by = composite.coded
        if keys is not None:
            mech = attrs.evolve(mech, keys=composite.keys)
    response = mech.release_response(privacy_params, (by, values, privacy_unit), rng=rng, accountant=accountant)
    if name is None:
        name = getattr(by, "name", None)
    frame = response.response.to_frame(None if composite or several else name)
    if composite is not None:
        frame.index = composite.index(frame.index, name)
    elif several and name is not None:
        frame.index = frame.index.set_names(list(name))
    if full_response:
        return attrs.evolve(response, response=frame)
    return frame
