"""A statistical privacy auditor: a valid lower bound on a mechanism's ε (and δ) from a pair of neighbouring datasets.

For an output event S, ε ≥ ln(P[M(D) ∈ S]/P[M(D′) ∈ S]) and δ ≥ P[M(D) ∈ S] − e^ε·P[M(D′) ∈ S] for any (ε, δ)
the mechanism satisfies. The auditor estimates both probabilities with one-sided Clopper–Pearson bounds, so a claim
it refutes is refuted with confidence 1 − α. The event is chosen on an *explore* sample and tested on a fresh
*confirm* sample (DP-Sniper's two-stage protocol), with Bonferroni over the events carried forward; the events
explored are thresholds, bins, categories and float-structure ("not a multiple of 2^j") events on the values, and
structural events (the output's layout, the keys it carries, a failure after the charge; see ``_structure``).
"""

from __future__ import annotations

import itertools
import math
import secrets
import warnings
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from .._datasets import n_records
from .._validation import check_choice, check_in_range, check_int
from ..events import RELATIONS
from ..mechanisms.base import DPMech, NumericMech, check_mechanism
from ..privacy import Eps
from ._stats import clopper_pearson_lower, clopper_pearson_upper
from ._structure import Layout, Raised, describe
from ._support import interpolation_lattice_level, lattice_points

__all__ = ["AuditReport", "audit", "check_sensitivity", "trailing_exponent"]

_EXPLORE_LEVEL = 0.05
_N_SELECTED = 4
_MAX_COORDINATES = 8
_QUANTILES = np.linspace(0.002, 0.998, 31)
_STRUCTURAL = ("float-structure", "lattice")


@attrs.frozen
class AuditReport:
    """The result of :func:`audit`.

    Attributes
    ----------
    passed : bool
        True if the claim was *not* refuted (no confirmed event violates it). Passing proves nothing: an audit only
        ever gives lower bounds.
    epsilon_lower_bound : float
        A lower bound on the mechanism's true ε, valid with probability ≥ 1 − α (0 if nothing was found).
    delta_lower_bound : float
        A lower bound on δ at the claimed ε, valid with probability ≥ 1 − α.
    event : str
        The confirmed event that gave the strongest evidence (the worst violation if the claim failed).
    counts : tuple of int
        Occurrences of that event among the confirm samples on the first and the second dataset.
    n : int
        Samples drawn per dataset (explore plus confirm).
    n_confirm : int
        Confirm samples per dataset (the bounds are computed on these).
    seed : int
        The seed of the audit: ``audit(..., rng=seed)`` reproduces it.
    alpha : float
        The overall error probability of the bounds.
    claim : Eps
        The guarantee audited (the mechanism's reported guarantee for the parameters given).
    curve_violation : str
        For Gaussian-type mechanisms, the first point (ε′, δ′) of the claimed privacy curve that was violated, or "".
    n_events : int
        Number of events explored; ``n_confirmed`` were tested on the confirm samples (the Bonferroni count).
    n_confirmed : int
        See ``n_events``.
    structural : bool
        True if ``event`` is about the output's structure (its layout, a key it carries, a failure after the charge)
        rather than its values.
    exact : bool
        True if the bounds are exact rather than statistical: the structure of a vectorised mechanism's releases is a
        function of the dataset alone, so a structure seen on one dataset and impossible on the other gives ε = ∞
        and δ ≥ 1 with certainty.
    """

    passed: bool
    epsilon_lower_bound: float
    delta_lower_bound: float
    event: str
    counts: tuple[int, int]
    n: int
    n_confirm: int
    seed: int
    alpha: float
    claim: Eps
    curve_violation: str = ""
    n_events: int = 0
    n_confirmed: int = 0
    structural: bool = False
    exact: bool = False

    def __str__(self) -> str:
        verdict = "passed (claim not refuted)" if self.passed else "FAILED (claim refuted)"
        curve = f"; curve violated at {self.curve_violation}" if self.curve_violation else ""
        if self.exact:
            return (
                f"Audit {verdict} exactly: ε = ∞, δ ≥ {self.delta_lower_bound:.3g} against claim {self.claim!r}. "
                f"Event: {self.event} (a function of the dataset, no sampling error); seed={self.seed}."
            )
        return (
            f"Audit {verdict}: ε ≥ {self.epsilon_lower_bound:.4g}, δ(ε={self.claim.epsilon:g}) ≥ "
            f"{self.delta_lower_bound:.3g} against claim {self.claim!r}{curve}. Event: {self.event} "
            f"(counts {self.counts[0]} vs {self.counts[1]} of {self.n_confirm}); n={self.n} per dataset, "
            f"{self.n_confirmed} of {self.n_events} events confirmed, α={self.alpha:g}, seed={self.seed}."
        )


# ---- grey-box sensitivity check --------------------------------------------------------------------------------


def check_sensitivity(mechanism: DPMech, X: Any, X_neighbour: Any, *, rtol: float = 1e-9) -> float:
    """Assert that the declared sensitivity bounds the target's observed change between two neighbours.

    A deterministic, sample-free check (after Re:cord-play's grey-box audit): it evaluates the non-private target on
    ``X`` and ``X_neighbour`` and measures the change in the mechanism's own norm. It catches sensitivities derived
    wrongly, e.g. diffprivlib's ``nanmean`` dividing by the length including NaNs.

    Parameters
    ----------
    mechanism : DPMech
        The mechanism with its declared sensitivity.
    X, X_neighbour : object
        Replace-one neighbouring datasets (the same number of records).
    rtol : float, default 1e-9
        Relative slack for float rounding in the target.

    Returns
    -------
    float
        The observed change ``mechanism.sensitivity_norm(X, X_neighbour)``.

    Raises
    ------
    AssertionError
        If the observed change exceeds the declared sensitivity.
    ValueError
        If the two datasets do not have the same number of records (not replace-one neighbours).
    """
    try:
        sizes = (n_records(X), n_records(X_neighbour))
    except TypeError:
        sizes = None
    if sizes is not None and sizes[0] != sizes[1]:
        raise ValueError(
            f"Replace-one neighbours have the same number of records; got {sizes[0]} and {sizes[1]}. Pass datasets "
            "that differ in one record."
        )
    tolerance = check_in_range(
        rtol, "rtol", 0.0, math.inf, low_closed=True, high_closed=False, owner="check_sensitivity",
        fix="Pass a small relative tolerance such as the default 1e-9.",
    )  # fmt: skip
    check_mechanism(mechanism, "mechanism", owner="check_sensitivity")
    observed = mechanism.sensitivity_norm(X, X_neighbour)
    declared = mechanism.sensitivity
    if not observed <= declared * (1 + tolerance):
        raise AssertionError(
            f"{type(mechanism).__name__} declares sensitivity {declared!r}, but its target changes by {observed!r} "
            "between the two neighbouring datasets: the declared sensitivity is too small."
        )
    return observed


# ---- sampling -----------------------------------------------------------------------------------------------------


def _is_vectorised(mechanism: DPMech) -> bool:
    return type(mechanism)._sample_many is not DPMech._sample_many  # it overrides the declared default


def _draw(
    mechanism: DPMech, X: Any, params: Eps, rngs: list[np.random.Generator], sizes: list[int]
) -> list[np.ndarray | list[Any]]:
    """Draw ``sizes[i]`` releases with ``rngs[i]`` on dataset X; the target is evaluated once.

    The public checks run first, as in a release, and a refusal there (before any budget is charged) propagates: the
    pair cannot be released on. A failure after the charge is an output like any other: it is recorded as a
    :class:`~diffpriv_py.testing._structure.Raised` in place of the release (for a vectorised mechanism, whose
    target is evaluated once, every draw of that dataset is that failure).
    """
    data = mechanism.check_dataset(X)
    mechanism._check_release(params, data)
    if _is_vectorised(mechanism):
        try:
            value = mechanism._evaluate(mechanism.target(data))
            return [
                np.asarray(mechanism._sample_many(value, params, rng, size))
                for rng, size in zip(rngs, sizes, strict=True)
            ]
        except Exception as exc:
            failed = Raised(type(exc).__name__, exc)
            return [[failed] * size for size in sizes]
    out: list[np.ndarray | list[Any]] = []
    for rng, size in zip(rngs, sizes, strict=True):
        seeds = rng.integers(0, 2**63, size=size)
        out.append([_release_or_failure(mechanism, params, X, int(s)) for s in seeds])
    return out


def _release_or_failure(mechanism: DPMech, params: Eps, X: Any, seed: int) -> Any:
    try:
        return mechanism.release_response(params, X, rng=seed).response
    except Exception as exc:  # after the public checks passed: a failure after the charge, which is an output
        return Raised(type(exc).__name__, exc)


def _as_numeric(samples: np.ndarray | list[Any], n: int) -> np.ndarray | None:
    """The (n, d) float matrix of a vectorised mechanism's draws, or None if they are not numeric."""
    arr = np.asarray(samples)
    if arr.dtype.kind not in "biuf" or arr.shape[:1] != (n,):
        return None
    return arr.astype(np.float64).reshape(n, -1)


def trailing_exponent(y: np.ndarray) -> np.ndarray:
    """The largest j with y a multiple of 2^j, elementwise (+inf for 0, NaN for NaN/±inf): the float structure."""
    y = np.asarray(y, dtype=np.float64)
    mant, exp = np.frexp(np.where(np.isfinite(y), y, 0.0))  # NaN/±inf have no float structure
    m = np.abs(np.ldexp(mant, 53)).astype(np.int64)
    low = m & -m
    tz = np.log2(np.where(m == 0, 1, low).astype(np.float64))
    return np.where(np.isfinite(y), np.where(m == 0, np.inf, exp - 53 + tz), np.nan)


# ---- events -------------------------------------------------------------------------------------------------------


@attrs.frozen
class _Event:
    statistic: int
    kind: str  # "ge", "le", "bin", "point", "nonfinite"
    low: float
    high: float = math.nan

    def describe(self, names: list[str]) -> str:
        s = names[self.statistic]
        if self.kind == "ge":
            return f"{s} ≥ {self.low:.6g}"
        if self.kind == "le":
            return f"{s} ≤ {self.low:.6g}"
        if self.kind == "bin":
            return f"{self.low:.6g} ≤ {s} < {self.high:.6g}"
        if self.kind == "nonfinite":
            return f"{s} is NaN or ±inf"
        return f"{s} = {self.low:g}"

    def count(self, values: np.ndarray) -> int:
        if self.kind == "ge":
            return int(np.count_nonzero(values >= self.low))
        if self.kind == "le":
            return int(np.count_nonzero(values <= self.low))
        if self.kind == "nonfinite":
            return int(np.count_nonzero(~np.isfinite(values)))
        if self.kind == "bin":
            return int(np.count_nonzero((values >= self.low) & (values < self.high)))
        return int(np.count_nonzero(values == self.low))


def _statistics(
    numeric_a: np.ndarray, numeric_b: np.ndarray, centre_a: np.ndarray, centre_b: np.ndarray
) -> tuple[list[str], Callable[[np.ndarray], list[np.ndarray]], list[np.ndarray]]:
    """Names, a function mapping an (n, d) sample to the list of scalar statistics, and each statistic's anchors."""
    d = numeric_a.shape[1]
    gap = np.abs(centre_a - centre_b)
    coords = list(np.argsort(-gap, kind="stable")[:_MAX_COORDINATES])
    direction = None
    if d > 1 and np.linalg.norm(centre_b - centre_a) > 0:
        direction = (centre_b - centre_a) / np.linalg.norm(centre_b - centre_a)
    names, anchors = [], []
    for c in coords:
        names.append(f"y[{c}]" if d > 1 else "y")
        anchors.append(np.array([centre_a[c], centre_b[c], 0.5 * (centre_a[c] + centre_b[c])]))
        names.append(f"float-structure(y[{c}])" if d > 1 else "float-structure(y)")
        anchors.append(np.array([]))
    if direction is not None:
        names.append("projection on f(D′) − f(D)")
        pa, pb = float(centre_a @ direction), float(centre_b @ direction)
        anchors.append(np.array([pa, pb, 0.5 * (pa + pb)]))

    def compute(sample: np.ndarray) -> list[np.ndarray]:
        out = []
        for c in coords:
            out.append(sample[:, c])
            out.append(trailing_exponent(sample[:, c]))
        if direction is not None:
            out.append(sample @ direction)
        return out

    return names, compute, anchors


def _with_lattices(
    mechanism: DPMech,
    datasets: tuple[Any, Any],
    d: int,
    statistics: tuple[list[str], Callable[[np.ndarray], list[np.ndarray]], list[np.ndarray]],
) -> tuple[list[str], Callable[[np.ndarray], list[np.ndarray]], list[np.ndarray]]:
    """Add the interpolation-lattice statistics of each 1-D dataset (see ``_support``): a data-dependent support."""
    names, compute, anchors = statistics
    lattices = [
        (label, pts)
        for label, data in zip(("D", "D′"), datasets, strict=True)
        if (pts := lattice_points(mechanism, data)) is not None
    ]
    coords = range(min(d, _MAX_COORDINATES))
    if not lattices:
        return statistics
    extra = [
        f"lattice of {label} (y[{c}])" if d > 1 else f"lattice of {label} (y)" for label, _ in lattices for c in coords
    ]

    def with_lattices(sample: np.ndarray) -> list[np.ndarray]:
        out = compute(sample)
        out.extend(interpolation_lattice_level(sample[:, c], pts) for _, pts in lattices for c in coords)
        return out

    return names + extra, with_lattices, anchors + [np.array([])] * len(extra)


def _candidate_events(pooled: list[np.ndarray], anchors: list[np.ndarray], names: list[str]) -> list[_Event]:
    events: list[_Event] = []
    for i, values in enumerate(pooled):
        finite = values[np.isfinite(values)]
        structural = names[i].startswith(_STRUCTURAL)
        if not structural:
            # A finite input that yields NaN or ±inf on one side only (a clip bypassed by overflow) is an event.
            events.append(_Event(i, "nonfinite", math.nan))
        if structural:
            levels = np.unique(finite)
            if levels.size > 200:
                levels = np.unique(np.quantile(finite, np.linspace(0, 1, 200), method="inverted_cdf"))
            cuts = np.concatenate([levels, levels + 1])
        elif finite.size:
            cuts = np.concatenate([np.quantile(finite, _QUANTILES), anchors[i]])
        else:
            cuts = anchors[i]
        cuts = np.unique(cuts[np.isfinite(cuts)])
        distinct = np.unique(finite)
        if not structural and distinct.size <= 100:
            events.extend(_Event(i, "point", float(v)) for v in distinct)
        for t in cuts:
            events.append(_Event(i, "ge", float(t)))
            events.append(_Event(i, "le", float(t)))
        for lo, hi in itertools.pairwise(cuts):
            events.append(_Event(i, "bin", float(lo), float(hi)))
    return events


def _counts(events: list[_Event], stats_values: list[np.ndarray]) -> np.ndarray:
    """Event counts, vectorised per statistic with sorted values."""
    out = np.empty(len(events), dtype=np.int64)
    sorted_values = [np.sort(v) for v in stats_values]
    for k, ev in enumerate(events):
        v = sorted_values[ev.statistic]
        n = v.size
        if ev.kind == "ge":
            out[k] = n - np.searchsorted(v, ev.low, side="left")
        elif ev.kind == "le":
            out[k] = np.searchsorted(v, ev.low, side="right")
        elif ev.kind == "bin":
            out[k] = np.searchsorted(v, ev.high, side="left") - np.searchsorted(v, ev.low, side="left")
        elif ev.kind == "nonfinite":
            out[k] = n - np.searchsorted(v, np.inf, side="left") + np.searchsorted(v, -np.inf, side="right")
        else:
            out[k] = np.searchsorted(v, ev.low, side="right") - np.searchsorted(v, ev.low, side="left")
    return out


# ---- structural events -------------------------------------------------------------------------------------------

_MAX_KEY_EVENTS = 64


def _category(sample: Any) -> Any:
    if isinstance(sample, Raised):
        return f"raised {sample.name}"
    return sample if _hashable(sample) else repr(sample)


def _layouts(samples: np.ndarray | list[Any]) -> list[Layout]:
    return [describe(s) for s in samples]


def _vectorised_form(samples: np.ndarray | list[Any]) -> str:
    """The structure of every draw of a vectorised mechanism on one dataset (a function of the dataset alone)."""
    if isinstance(samples, list):
        return f"raised {samples[0].name}" if samples else "no release"
    return f"ndarray{samples.shape[1:]} {samples.dtype.name}"


def _refuse_constant_failure(layouts: tuple[list[Layout], ...]) -> None:
    """A mechanism that fails every release on both datasets with one error cannot be audited: say why."""
    signatures = {layout.signature for side in layouts for layout in side}
    if len(signatures) == 1 and next(iter(signatures)).startswith("raised "):
        raise RuntimeError(
            f"Every release on both datasets {next(iter(signatures))} (after the public checks passed): there is "
            "nothing to audit. Check that the mechanism releases on these datasets."
        )


def _reference_form(layouts: list[Layout]) -> tuple[str, tuple[str, ...]]:
    """The most common form among the explore releases (ties: the first seen)."""
    counts: dict[tuple[str, tuple[str, ...]], int] = {}
    for layout in layouts:
        counts[layout.form] = counts.get(layout.form, 0) + 1
    return max(counts, key=lambda f: counts[f])


def _aligned(layouts: list[Layout], reference: tuple[str, tuple[str, ...]]) -> np.ndarray | None:
    """The numbers of each release of the reference form, one row each (NaN rows for other forms); None if the
    reference form carries no numbers."""
    width = next((lay.values.size for lay in layouts if lay.form == reference and lay.values is not None), None)
    if not width:
        return None
    out = np.full((len(layouts), width), np.nan)
    for i, layout in enumerate(layouts):
        if layout.form == reference and layout.values is not None:
            out[i] = layout.values
    return out


@attrs.frozen
class _Structure:
    names: list[str]
    events: list[_Event]
    labels: dict[tuple[int, float], str]
    signatures: dict[str, int]
    keys: list[str]
    count_keys: bool

    def compute(self, layouts: list[Layout]) -> list[np.ndarray]:
        out = [np.array([self.signatures.get(lay.signature, -1) for lay in layouts], dtype=np.float64)]
        if self.count_keys:
            out.append(np.array([len(lay.keys) for lay in layouts], dtype=np.float64))
        present = [frozenset(lay.keys) for lay in layouts]
        out.extend(np.array([key in p for p in present], dtype=np.float64) for key in self.keys)
        return out


def structure_statistics(layouts_a: list[Layout], layouts_b: list[Layout], *, offset: int) -> _Structure:
    """Structural statistics and events from the explore releases of both datasets.

    Events: "the output's layout is L" for each layout (types, shapes, dtypes, number of outputs) seen, or "the
    release raised E"; "the output has key K" and "... lacks key K" for the keys whose presence varies (the 64 whose
    frequencies differ most between the datasets); thresholds on the number of keys when it varies. Statistic
    indices start at ``offset``.
    """
    pooled = layouts_a + layouts_b
    signatures: dict[str, int] = {}
    for layout in pooled:
        signatures.setdefault(layout.signature, len(signatures))
    names = ["output layout"]
    events: list[_Event] = []
    labels: dict[tuple[int, float], str] = {}
    if len(signatures) > 1:
        for signature, code in signatures.items():
            events.append(_Event(offset, "point", float(code)))
            text = f"release {signature} (after the charge)" if signature.startswith("raised") else signature
            labels[(offset, float(code))] = f"output layout is {text}" if not signature.startswith("raised") else text
    sizes = np.array([len(layout.keys) for layout in pooled], dtype=np.float64)
    count_keys = bool(np.unique(sizes).size > 1)
    if count_keys:
        names.append("number of keys")
        found = _candidate_events([sizes], [np.array([])], ["number of keys"])
        events += [attrs.evolve(e, statistic=offset + 1) for e in found if e.kind != "nonfinite"]
    counts_a: dict[str, int] = {}
    counts_b: dict[str, int] = {}
    for layouts, counts in ((layouts_a, counts_a), (layouts_b, counts_b)):
        for layout in layouts:
            for key in set(layout.keys):
                counts[key] = counts.get(key, 0) + 1
    varying = [
        key
        for key in dict.fromkeys([*counts_a, *counts_b])
        if counts_a.get(key, 0) + counts_b.get(key, 0) < len(pooled)
    ]
    varying.sort(key=lambda key: -abs(counts_a.get(key, 0) - counts_b.get(key, 0)))
    keys = varying[:_MAX_KEY_EVENTS]
    first = offset + len(names)
    for j, key in enumerate(keys):
        events += [_Event(first + j, "point", 1.0), _Event(first + j, "point", 0.0)]
        text = f"output{key}" if key.startswith(("[", ".")) else f"output {key}"
        names.append(text)
        labels[(first + j, 1.0)] = text
        labels[(first + j, 0.0)] = f"not ({text})"
    return _Structure(names, events, labels, signatures, keys, count_keys)


def _exact_structural_report(
    forms: tuple[str, str], n: int, n_confirm: int, seed: int, alpha: float, claim: Eps
) -> AuditReport:
    """Two datasets on which a vectorised mechanism's releases differ in structure: P[S] = 1 on D, 0 on D′."""
    event = f"output structure {forms[0]} on D, {forms[1]} on D′ (every release)"
    return AuditReport(
        passed=False,
        epsilon_lower_bound=math.inf,
        delta_lower_bound=1.0,
        event=event,
        counts=(n_confirm, 0),
        n=n,
        n_confirm=n_confirm,
        seed=seed,
        alpha=alpha,
        claim=claim,
        n_events=1,
        n_confirmed=1,
        structural=True,
        exact=True,
    )


def _default_n(mechanism: DPMech) -> int:
    return 200_000 if _is_vectorised(mechanism) else 4_000


# ---- the auditor ------------------------------------------------------------------------------------------------


def audit(
    mechanism: DPMech,
    X: Any,
    X_neighbour: Any,
    privacy_params: Eps,
    *,
    alpha: float = 1e-6,
    n: int | None = None,
    rng: int | None = None,
    relation: str | None = None,
) -> AuditReport:
    """Audit a mechanism's claimed guarantee on one pair of neighbouring datasets.

    Parameters
    ----------
    mechanism : DPMech
        The mechanism under test (built-in or user-written). Mechanisms with a vectorised ``_sample_many`` hook
        (all built-in numeric mechanisms and Exponential) are sampled in bulk; others are released ``n`` times.
    X, X_neighbour : object
        Neighbouring datasets (replace-one unless ``relation`` says otherwise); the audit has power only if they
        realise (close to) the worst case.
    privacy_params : Eps
        The parameters to release at; the claim audited is ``mechanism.privacy_guarantee(privacy_params)`` for a
        pair of the mechanism's own :attr:`~diffpriv_py.mechanisms.DPMech.relation`, and its replace-one implication
        ``mechanism.charged_guarantee(privacy_params)`` for a replace-one pair of an add/remove mechanism.
    alpha : float, default 1e-6
        Probability that a correct mechanism is declared refuted (all bounds hold simultaneously with 1 − α).
    n : int, optional
        Samples per dataset: 200,000 for vectorised mechanisms, 4,000 otherwise. A quarter explores events, the
        rest confirms them.
    rng : int, optional
        Seed. ``None`` draws one at random and records it in the report, so every audit is reproducible.
    relation : {"replace_one", "add_remove"}, optional
        The relation of the pair: ``None`` (default) means the mechanism's own. An add/remove pair of a replace-one
        mechanism is refused (replace-one says nothing about it).

    Returns
    -------
    AuditReport
        With ``epsilon_lower_bound``, ``delta_lower_bound``, ``passed``, ``event``, ``counts``, ``n`` and ``seed``;
        ``structural`` and ``exact`` say whether the refuting event was about the structure and whether its bounds
        are exact.

    Raises
    ------
    Exception
        Whatever the mechanism's public checks raise on either dataset (a refusal before the charge), or the error of
        a mechanism that fails after the charge on every draw of both datasets (nothing to audit).

    Notes
    -----
    For each event S the confirm counts k, k′ of n₂ samples give one-sided Clopper–Pearson bounds p_lo on P[M(D) ∈ S]
    and q_hi on P[M(D′) ∈ S], each at level α/(2m) where m is the number of (event, direction) pairs confirmed. Then
    with probability ≥ 1 − α, simultaneously, ε ≥ ln(p_lo/q_hi) and δ(ε) ≥ p_lo − e^ε·q_hi. The claim (ε, δ) is
    refuted if some confirmed event has p_lo − e^ε·q_hi > δ; for Gaussian-type mechanisms also if it violates the
    whole claimed curve δ(ε′) (Balle & Wang's curve through the claim) at ε′ ∈ ε·{0, 1/8, 1/4, 1/2, 3/4, 1}
    (Delta-Siege's idea: weaker points of the curve are much cheaper to refute). A mechanism may declare its own
    curve by overriding ``DPMech.privacy_curve(claim) -> (ε′ ↦ δ′)``, which is then checked the same way. Events: ≥/≤
    thresholds and bins on each coordinate and on the projection onto f(D′) − f(D), categories for discrete
    outputs, and float-structure events {y not a multiple of 2^j}, which catch Mironov-type attacks on float noise.

    Structural events: each release is read as its layout (types, shapes, dtypes, number of outputs), the keys it
    names (mapping keys, pandas index and column labels, a group-by result's groups, class labels) and its numbers;
    "the layout is L", "the output has key K" (or lacks it), thresholds on the number of keys, and "the release
    raised E" for a failure after the charge are events like the others (the public checks run first, as in a
    release; a refusal there charges nothing and propagates). The numbers of the releases of the most common layout
    feed the value events. For a mechanism with ``_sample_many`` the structure of its draws is a function of the
    dataset alone, so one draw per dataset tells it, and a difference is an exact refutation: P[S] = 1 under one
    dataset and 0 under the other, so ε = ∞ and δ ≥ 1 with certainty (``exact=True``, no α spent).

    A passing audit is not a proof: events of probability below about 1/n are invisible.

    References
    ----------
    Ding et al. (2018), StatDP; Bichsel et al. (2021), DP-Sniper; Lokna et al. (2023), Delta-Siege;
    Clopper & Pearson (1934).
    """
    if not (isinstance(alpha, float | int) and not isinstance(alpha, bool) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a probability in (0, 1); got {alpha!r}.")
    check_mechanism(mechanism, "mechanism", owner="audit")
    params = mechanism.check_privacy_params(privacy_params)
    relation = mechanism.relation if relation is None else check_choice(relation, "relation", RELATIONS, owner="audit")
    if relation == mechanism.relation:
        claim = mechanism.privacy_guarantee(params)
    elif relation == "replace_one":  # an add/remove mechanism on a replace-one pair: the implied guarantee
        claim = mechanism.charged_guarantee(params)
    else:
        raise ValueError(
            f"audit got an add/remove pair (relation='add_remove') for {type(mechanism).__name__}, whose guarantee is "
            "stated for replace-one neighbours and says nothing about adding or removing a record. Audit it on a "
            "replace-one pair."
        )
    for name, dataset in (("X", X), ("X_neighbour", X_neighbour)):
        if dataset is None:
            raise TypeError(
                f"The '{name}' argument of audit is None. Pass a dataset: X and X_neighbour are the pair of "
                "neighbouring datasets the mechanism is released on."
            )
    why = "the n samples of both datasets and their event statistics are held in memory at once"
    n = _default_n(mechanism) if n is None else check_int(n, "n", minimum=1, maximum=10**7, why=why, owner="audit")
    if n < 40:
        raise ValueError(f"n must be at least 40 samples per dataset; got {n}.")
    seed = secrets.randbits(63) if rng is None else check_int(rng, "rng", minimum=0, owner="audit (a seed)")
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(5)]
    n_explore = max(20, n // 4)
    n_confirm = n - n_explore

    if _is_vectorised(mechanism):
        # The structure of a vectorised mechanism's draws is a function of the dataset: one draw each tells.
        probes = (
            _draw(mechanism, X, params, [streams[4]], [1])[0],
            _draw(mechanism, X_neighbour, params, [streams[4]], [1])[0],
        )
        forms = (_vectorised_form(probes[0]), _vectorised_form(probes[1]))
        if forms[0] != forms[1]:
            return _exact_structural_report(forms, n, n_confirm, seed, float(alpha), claim)
    explore_a, confirm_a = _draw(mechanism, X, params, streams[:2], [n_explore, n_confirm])
    explore_b, confirm_b = _draw(mechanism, X_neighbour, params, streams[2:4], [n_explore, n_confirm])

    if _is_vectorised(mechanism):
        for side in (explore_a, explore_b):
            if isinstance(side, list) and side and isinstance(side[0], Raised):
                raise side[0].error  # the same failure on both datasets: there is nothing to audit
        layouts = None
    else:
        layouts = tuple(_layouts(s) for s in (explore_a, explore_b, confirm_a, confirm_b))
        _refuse_constant_failure(layouts)

    labels: dict[tuple[int, float], str] = {}
    if layouts is None:
        num = [_as_numeric(s, size) for s, size in ((explore_a, n_explore), (explore_b, n_explore))]
        confirm_num = [_as_numeric(confirm_a, n_confirm), _as_numeric(confirm_b, n_confirm)]
    else:
        reference = _reference_form(layouts[0] + layouts[1])
        num = [_aligned(layouts[0], reference), _aligned(layouts[1], reference)]
        confirm_num = [_aligned(layouts[2], reference), _aligned(layouts[3], reference)]
    if num[0] is not None and num[1] is not None and num[0].shape[1] == num[1].shape[1]:
        if isinstance(mechanism, NumericMech):
            centre_a = mechanism._evaluate(mechanism.target(X)).ravel().astype(np.float64)
            centre_b = mechanism._evaluate(mechanism.target(X_neighbour)).ravel().astype(np.float64)
        else:
            with warnings.catch_warnings():  # a column with no release of the reference form has no median
                warnings.simplefilter("ignore", RuntimeWarning)
                centre_a, centre_b = np.nanmedian(num[0], axis=0), np.nanmedian(num[1], axis=0)
        names, compute, anchors = _with_lattices(
            mechanism, (X, X_neighbour), num[0].shape[1], _statistics(num[0], num[1], centre_a, centre_b)
        )
        explore_stats = (compute(num[0]), compute(num[1]))
        # The confirmation samples are draws of the same mechanism as the exploration ones, so numeric as well.
        assert confirm_num[0] is not None and confirm_num[1] is not None
        confirm_stats = (compute(confirm_num[0]), compute(confirm_num[1]))
        pooled = [np.concatenate([a, b]) for a, b in zip(*explore_stats, strict=True)]
        events = _candidate_events(pooled, anchors, names)
    else:
        names = ["output"]
        codes: dict[Any, int] = {}

        def encode(samples: Any) -> list[np.ndarray]:
            keys = [_category(s) for s in samples]
            return [np.array([codes.setdefault(k, len(codes)) for k in keys], dtype=np.float64)]

        explore_stats = (encode(explore_a), encode(explore_b))
        confirm_stats = (encode(confirm_a), encode(confirm_b))
        events = [_Event(0, "point", float(c)) for c in range(len(codes))]
        labels = {(0, float(v)): f"output = {k!r}" for k, v in codes.items()}
    if layouts is not None:
        structure = structure_statistics(layouts[0], layouts[1], offset=len(names))
        names = names + structure.names
        explore_stats = (
            explore_stats[0] + structure.compute(layouts[0]),
            explore_stats[1] + structure.compute(layouts[1]),
        )
        confirm_stats = (
            confirm_stats[0] + structure.compute(layouts[2]),
            confirm_stats[1] + structure.compute(layouts[3]),
        )
        events = events + structure.events
        labels.update(structure.labels)
        n_structural = len(structure.events)
    else:
        n_structural = 0

    curve = mechanism.privacy_curve(claim)  # the δ(ε′) curve claimed beyond the point (ε, δ), if any
    eps_grid = claim.epsilon * np.array([0.0, 0.125, 0.25, 0.5, 0.75, 1.0])

    # Stage 1: score every event in both directions on the explore samples.
    ka, kb = _counts(events, explore_stats[0]), _counts(events, explore_stats[1])
    selected: set[tuple[int, int]] = set()
    for direction, (k1, k2) in enumerate(((ka, kb), (kb, ka))):
        p_lows = clopper_pearson_lower(k1, n_explore, _EXPLORE_LEVEL)
        q_highs = clopper_pearson_upper(k2, n_explore, _EXPLORE_LEVEL)
        with np.errstate(divide="ignore"):
            eps_score = np.log(p_lows) - np.log(q_highs)
        scores = [eps_score, p_lows - math.exp(claim.epsilon) * q_highs]
        if curve is not None:
            deltas = np.array([curve(float(e)) for e in eps_grid])
            excess = p_lows[:, None] - np.exp(eps_grid)[None, :] * q_highs[:, None] - deltas[None, :]
            scores.append(excess.max(axis=1))
        for score in scores:
            for k in np.argsort(-score, kind="stable")[:_N_SELECTED]:
                if np.isfinite(score[k]):
                    selected.add((int(k), direction))
    chosen = sorted(selected)
    m = max(1, len(chosen))

    # Stage 2: confirm on fresh samples with Bonferroni over the chosen (event, direction) pairs.
    chosen_events = [events[k] for k, _ in chosen]
    ca, cb = _counts(chosen_events, confirm_stats[0]), _counts(chosen_events, confirm_stats[1])
    level = alpha / (2 * m)
    best = (-math.inf, "no event", (0, 0))
    worst_violation: tuple[float, tuple[str, tuple[int, int]] | None] = (-math.inf, None)
    worst_structural = False
    eps_lb, delta_lb, curve_violation = 0.0, 0.0, ""
    for idx, (k, direction) in enumerate(chosen):
        k1, k2 = (ca[idx], cb[idx]) if direction == 0 else (cb[idx], ca[idx])
        p_lo = float(clopper_pearson_lower(k1, n_confirm, level))
        q_hi = float(clopper_pearson_upper(k2, n_confirm, level))
        text = labels.get((events[k].statistic, events[k].low)) if events[k].kind == "point" else None
        text = events[k].describe(names) if text is None else text
        if layouts is not None and events[k].kind == "nonfinite":
            text += " (releases of another layout than the most common count as NaN)"
        text += " (on D vs D′)" if direction == 0 else " (on D′ vs D)"
        eps_here: float = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
        delta_here = p_lo - math.exp(claim.epsilon) * q_hi
        eps_lb = max(eps_lb, eps_here)
        delta_lb = max(delta_lb, delta_here)
        if eps_here > best[0]:
            best = (eps_here, text, (int(k1), int(k2)))
        violation = delta_here - claim.delta if claim.delta > 0 else eps_here - claim.epsilon * (1 + 1e-9)
        if curve is not None:
            for e in eps_grid:
                excess_here = p_lo - math.exp(e) * q_hi - curve(float(e))
                if excess_here > 0 and not curve_violation:
                    curve_violation = f"(ε′={e:.4g}, δ′={curve(float(e)):.3g}): {text}"
                violation = max(violation, excess_here)
        if violation > worst_violation[0]:
            worst_violation = (violation, (text, (int(k1), int(k2))))
            worst_structural = k >= len(events) - n_structural

    refuted = worst_violation[0] > 0
    if not chosen:
        event, counts = "no event", (0, 0)
    elif refuted and worst_violation[1] is not None:  # a positive violation always comes with its event
        event, counts = worst_violation[1]
    else:
        _, event, counts = best
    return AuditReport(
        passed=not refuted,
        epsilon_lower_bound=float(eps_lb),
        delta_lower_bound=float(max(0.0, delta_lb)),
        event=event,
        counts=counts,
        n=n,
        n_confirm=n_confirm,
        seed=seed,
        alpha=float(alpha),
        claim=claim,
        curve_violation=curve_violation,
        n_events=2 * len(events),
        n_confirmed=len(chosen),
        structural=refuted and worst_structural,
    )


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True
