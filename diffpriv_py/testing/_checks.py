"""The shared invariants of every mechanism, one ``check_<invariant>`` function each, run on a :class:`MechCase`."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import numpy as np

from ..events import Event
from ..exceptions import SensitivityError
from ..mechanisms.base import DPMech, NumericMech
from ..mechanisms.response import Response
from ..privacy import Del, Eps, Gam

__all__ = [
    "KS_P_THRESHOLD",
    "MechCase",
    "check_audit_passes",
    "check_half_width_is_consistent",
    "check_infinite_sensitivity_is_refused",
    "check_noise_matches_distribution",
    "check_noise_scale_shrinks_as_epsilon_grows",
    "check_privacy_events_are_accounting_events",
    "check_release_is_reproducible_with_seed",
    "check_release_leaves_dataset_unmodified",
    "check_release_returns_response",
    "check_response_reports_actual_guarantee",
    "check_sampler_sets_gamma_sensitivity",
    "check_search_audit_passes",
    "check_sensitivity_bounds_neighbour_change",
    "check_sensitivity_norm_is_semimetric",
    "check_wrong_privacy_params_type_is_refused",
    "check_zero_sensitivity_adds_no_noise",
    "mechanism_checks",
]

KS_P_THRESHOLD = 1e-20
"""p-value below which a distribution test fails: a correct mechanism fails with probability below 1e-20."""

SLOW_CHECKS = frozenset(
    {"check_noise_matches_distribution", "check_sampler_sets_gamma_sensitivity", "check_search_audit_passes"}
)
"""Checks that draw many samples or run the sensitivity sampler (marked ``slow`` by parametrize_with_checks)."""

DISTRIBUTIONAL_CHECKS = frozenset(
    {"check_noise_matches_distribution", "check_audit_passes", "check_search_audit_passes"}
)
"""Checks that need many releases; skipped for a case with ``distributional=False`` (e.g. an estimator)."""


def _names(value: Any) -> frozenset[str]:
    return frozenset([value]) if isinstance(value, str) else frozenset(value)


def _default_id(case: MechCase) -> str:
    mech = case.mechanism
    setting = getattr(mech, "noise", None) or getattr(mech, "method", None)
    return type(mech).__name__ + (f"[{setting}]" if setting else "")


@attrs.frozen(kw_only=True)
class MechCase:
    """One example of a mechanism for the conformance kit: the mechanism, parameters and a neighbouring pair.

    Parameters
    ----------
    mechanism : DPMech
        The mechanism, with its sensitivity set.
    privacy_params : Eps
        Parameters a release is made at (of the mechanism's :attr:`~DPMech.privacy_params_type`).
    dataset, neighbour : object
        Replace-one neighbouring datasets. For :func:`~diffpriv_py.testing.audit` the pair should realise the
        worst case (the target's change equals the declared sensitivity).
    id : str, optional
        Name used in test ids; defaults to the class name and its noise/method setting.
    oracle : callable, optional
        ``oracle(n, rng)`` drawing ``n`` records for the sensitivity-sampler check; by default records are
        resampled from ``dataset`` (fine for a test).
    distributional : bool, default True
        Whether the checks that need many releases (noise distribution, audit) apply. Set to False for
        mechanisms whose release is expensive (estimators) or has no cheap vectorised sampler.
    slow : bool, default False
        Mark every check of this case as ``slow`` (``parametrize_with_checks`` adds ``pytest.mark.slow``).
    skip : frozenset of str
        Names of checks that do not apply to this case (e.g. ``{"check_audit_passes"}`` for an opt-in float sampler),
        each a deliberate, documented exception.
    audit_n : int, optional
        Samples per dataset for the audit check (default: the auditor's default for the mechanism).
    search : bool, default False
        Opt in to ``check_search_audit_passes``: :func:`~diffpriv_py.testing.search_audit` over neighbours of
        ``dataset`` made from the records of the case (so a target that assumes a data domain is searched inside it).
    """

    mechanism: DPMech
    privacy_params: Eps
    dataset: Any
    neighbour: Any
    id: str | None = None
    oracle: Callable[..., Any] | None = None
    distributional: bool = True
    slow: bool = False
    skip: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    audit_n: int | None = None
    search: bool = False

    @property
    def name(self) -> str:
        """The case's name in test ids."""
        return self.id or _default_id(self)


# ---- helpers ------------------------------------------------------------------------------------------------------


def _release(case: MechCase, mech: DPMech | None = None, *, rng: Any = 0, dataset: Any = None) -> Response:
    mech = case.mechanism if mech is None else mech
    return mech.release_response(case.privacy_params, case.dataset if dataset is None else dataset, rng=rng)


def _same(a: Any, b: Any) -> bool:
    """Structural equality for release outputs: arrays, scalars, tuples/lists, objects with a ``coeffs`` array."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    arr_a: np.ndarray | None
    arr_b: np.ndarray | None
    try:
        arr_a, arr_b = np.asarray(a), np.asarray(b)
    except Exception:
        arr_a = arr_b = None
    if arr_a is not None and arr_b is not None and arr_a.dtype.kind in "biufc" and arr_b.dtype.kind in "biufc":
        return arr_a.shape == arr_b.shape and bool(np.array_equal(arr_a, arr_b))
    for attr in ("coeffs", "coef_", "components_", "response"):
        if hasattr(a, attr) and hasattr(b, attr):
            return _same(getattr(a, attr), getattr(b, attr))
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _snapshot(data: Any) -> Any:
    if hasattr(data, "copy") and hasattr(data, "iloc"):
        return data.copy(deep=True)
    return copy.deepcopy(data)


def _equal_data(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_equal_data(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "equals"):
        return bool(a.equals(b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
    return bool(a == b)


def _resampling_oracle(dataset: Any) -> Callable[[int, np.random.Generator], Any]:
    def oracle(n: int, rng: np.random.Generator) -> Any:
        from .._datasets import n_records

        idx = rng.integers(n_records(dataset), size=n)
        if isinstance(dataset, tuple):
            return tuple(_take(part, idx) for part in dataset)
        return _take(dataset, idx)

    return oracle


def _take(data: Any, idx: np.ndarray) -> Any:
    if isinstance(data, np.ndarray):
        return data[idx]
    if hasattr(data, "iloc"):
        return data.iloc[idx]
    return [data[i] for i in idx]


def _expect_raises(kinds: tuple[type[BaseException], ...], fn: Callable[[], Any], what: str) -> BaseException:
    try:
        fn()
    except kinds as exc:
        return exc
    except Exception as exc:
        raise AssertionError(
            f"{what}: expected {[k.__name__ for k in kinds]}, got {type(exc).__name__}: {exc}"
        ) from exc
    raise AssertionError(f"{what}: expected {[k.__name__ for k in kinds]}, but nothing was raised.")


# ---- the checks ---------------------------------------------------------------------------------------------------


def check_release_returns_response(case: MechCase) -> None:
    """A release returns a Response carrying the mechanism, its sensitivity and the guarantee it states."""
    mech = case.mechanism
    r = _release(case)
    assert isinstance(r, Response), f"release_response returned {type(r).__name__}, not Response"
    assert r.mechanism is mech, "Response.mechanism is not the mechanism that released"
    assert r.sensitivity == mech.sensitivity, f"Response.sensitivity {r.sensitivity} != {mech.sensitivity}"
    assert isinstance(r.privacy_params, Eps), "Response.privacy_params is not a privacy-parameter object"
    assert r.privacy_params == mech.privacy_guarantee(case.privacy_params), "Response does not state the guarantee"
    assert r.privacy_params.epsilon >= case.privacy_params.epsilon, "the reported epsilon is below the one spent"
    assert r.privacy_params.delta >= case.privacy_params.delta, "the reported delta is below the one spent"


def check_response_reports_actual_guarantee(case: MechCase) -> None:
    """With a sampled sensitivity (gamma_sensitivity set) the Response reports random DP, a Gam with that γ; on a
    mechanism whose sensitivity is derived, a hand-set gamma_sensitivity is refused (only the sampler sets it)."""
    if case.mechanism.sensitivity_is_derived:
        try:
            attrs.evolve(case.mechanism, gamma_sensitivity=0.1)
        except (ValueError, TypeError):
            return
        raise AssertionError("a hand-set gamma_sensitivity was accepted on a mechanism whose sensitivity is derived")
    sampled = attrs.evolve(case.mechanism, gamma_sensitivity=0.1)
    r = _release(case, sampled)
    assert isinstance(r.privacy_params, Gam), f"expected a Gam after sampling, got {r.privacy_params!r}"
    assert r.privacy_params.gamma == 0.1
    assert r.privacy_params.epsilon >= case.privacy_params.epsilon
    assert r.privacy_params.delta >= case.privacy_params.delta
    plain = _release(case)
    assert not isinstance(plain.privacy_params, Gam) or case.mechanism.gamma_sensitivity is not None


def check_zero_sensitivity_adds_no_noise(case: MechCase) -> None:
    """Sensitivity 0 either releases the exact answer deterministically, or is refused every time with ValueError."""
    try:
        zero = attrs.evolve(case.mechanism, sensitivity=0.0)
    except (ValueError, TypeError):
        return  # refused at construction: consistent
    outcomes = []
    for seed in (1, 2):
        try:
            outcomes.append(_release(case, zero, rng=seed).response)
        except ValueError:
            outcomes.append(ValueError)
    if outcomes[0] is ValueError or outcomes[1] is ValueError:
        assert outcomes[0] is outcomes[1], "sensitivity 0 is refused on one call and released on another"
        return
    assert _same(outcomes[0], outcomes[1]), "sensitivity 0 still adds randomness (two seeds gave different releases)"
    if isinstance(zero, NumericMech):
        exact = zero._evaluate(zero.target(case.dataset))
        got = np.asarray(outcomes[0])
        assert np.array_equal(got, exact.reshape(got.shape)), "sensitivity 0 did not release the exact value"


def check_infinite_sensitivity_is_refused(case: MechCase) -> None:
    """An unset (inf) sensitivity refuses to release (SensitivityError); NaN or negative ones cannot be set."""
    unset = attrs.evolve(case.mechanism, sensitivity=math.inf)
    _expect_raises((SensitivityError,), lambda: _release(case, unset), "release with sensitivity=inf")
    for bad in (math.nan, -1.0, -math.inf):
        _expect_raises(
            (ValueError,), functools.partial(attrs.evolve, case.mechanism, sensitivity=bad), f"sensitivity={bad}"
        )
    _expect_raises((TypeError,), lambda: attrs.evolve(case.mechanism, sensitivity=True), "sensitivity=True")


def check_wrong_privacy_params_type_is_refused(case: MechCase) -> None:
    """Anything but the required privacy-parameter class (a bare float, None, a too-weak class) raises TypeError."""
    mech = case.mechanism
    not_params: tuple[Any, ...] = (1.0, None, (1.0, 1e-6), {"epsilon": 1.0})  # deliberately ill-typed
    for bad in not_params:
        _expect_raises(
            (TypeError,), functools.partial(mech.release_response, bad, case.dataset, rng=0), f"params={bad}"
        )
    if issubclass(mech.privacy_params_type, Del) and not issubclass(Eps, mech.privacy_params_type):
        weak = Eps(case.privacy_params.epsilon)
        _expect_raises((TypeError,), lambda: mech.release_response(weak, case.dataset, rng=0), "Eps params")


def check_release_is_reproducible_with_seed(case: MechCase) -> None:
    """The same integer seed gives the same release; a Generator is used as given."""
    a = _release(case, rng=12345).response
    b = _release(case, rng=12345).response
    assert _same(a, b), "two releases with rng=12345 differ"
    c = _release(case, rng=np.random.default_rng(12345)).response
    assert _same(a, c), "rng=12345 and rng=default_rng(12345) differ"


def check_release_leaves_dataset_unmodified(case: MechCase) -> None:
    """A release (and the sensitivity norm) never mutates the dataset it is given."""
    before = _snapshot(case.dataset)
    before_nb = _snapshot(case.neighbour)
    _release(case)
    case.mechanism.sensitivity_norm(case.dataset, case.neighbour)
    assert _equal_data(case.dataset, before), "the release mutated the dataset"
    assert _equal_data(case.neighbour, before_nb), "sensitivity_norm mutated the neighbour"


def check_sensitivity_norm_is_semimetric(case: MechCase) -> None:
    """sensitivity_norm is ≥ 0 and finite, zero on equal inputs and symmetric."""
    mech = case.mechanism
    d_ab = mech.sensitivity_norm(case.dataset, case.neighbour)
    d_ba = mech.sensitivity_norm(case.neighbour, case.dataset)
    d_aa = mech.sensitivity_norm(case.dataset, case.dataset)
    assert isinstance(d_ab, float), f"sensitivity_norm returned {type(d_ab).__name__}, not float"
    assert math.isfinite(d_ab) and d_ab >= 0, f"sensitivity_norm is {d_ab}"
    assert d_aa == 0, f"sensitivity_norm(D, D) = {d_aa}, not 0"
    assert math.isclose(d_ab, d_ba, rel_tol=1e-12, abs_tol=1e-300), f"not symmetric: {d_ab} vs {d_ba}"


def check_sensitivity_bounds_neighbour_change(case: MechCase) -> None:
    """Grey-box: the target's change between the case's neighbours is within the declared sensitivity."""
    from ._audit import check_sensitivity

    check_sensitivity(case.mechanism, case.dataset, case.neighbour)


def check_noise_scale_shrinks_as_epsilon_grows(case: MechCase) -> None:
    """For additive-noise mechanisms the noise scale is positive and does not grow with ε."""
    mech = case.mechanism
    if not isinstance(mech, NumericMech):
        return
    p = case.privacy_params
    more = attrs.evolve(p, epsilon=p.epsilon * 2)
    s1, s2 = mech.noise_scale(p), mech.noise_scale(more)
    assert math.isfinite(s1) and s1 > 0, f"noise_scale is {s1}"
    assert s2 <= s1, f"noise scale grew with epsilon: {s1} -> {s2}"


def check_privacy_events_are_accounting_events(case: MechCase) -> None:
    """``privacy_events`` returns accounting events that imply the claimed guarantee, and the accountant composes
    exactly them for a release (so its totals read the mechanism's own description)."""
    from ..accounting import Accountant  # the kit is above the library; accounting loads on first use

    mech, params = case.mechanism, case.privacy_params
    events = mech.privacy_events(params)
    assert isinstance(events, tuple), f"privacy_events() returned {type(events).__name__}, not a tuple of events"
    for e in events:
        assert isinstance(e, Event), f"privacy_events() returned {e!r}, which is not a diffpriv_py.accounting event"
        assert getattr(e, "relation", "replace_one") == "replace_one", (
            f"{e.describe()}: the library's events are for replace-one neighbours"
        )
    guarantee = mech.privacy_guarantee(params)
    huge = Del(epsilon=1e6, delta=0.5)
    try:  # spend() refuses explicit events that do not describe the claim (weaker, or far stronger)
        Accountant(budget=huge).spend(guarantee, events=events)
    except ValueError as exc:
        raise AssertionError(f"privacy_events() do not describe the claimed guarantee {guarantee!r}: {exc}") from exc
    acc = Accountant(budget=huge)
    mech.release_response(params, case.dataset, rng=0, accountant=acc)
    charged = acc.ledger[-1].events
    assert charged == events, f"the accountant composed {charged!r} for a release, not privacy_events() {events!r}"


def check_half_width_is_consistent(case: MechCase) -> None:
    """The error bar (``half_width``, read by ``Response.accuracy``) is deterministic, non-negative, widens as α
    shrinks and for simultaneous coverage, and has the release's shape; a mechanism without one raises
    NotImplementedError from both ``half_width`` and ``Response.accuracy``."""
    mech = case.mechanism
    r = _release(case)
    try:
        bar = r.accuracy(0.05)
    except NotImplementedError:
        if r.error_bound is None:
            _expect_raises(
                (NotImplementedError,),
                lambda: mech.half_width(r.privacy_params, r.response, 0.05),
                "half_width without a closed-form bar",
            )
        return
    widths = np.asarray(bar, dtype=np.float64)
    assert np.all(widths >= 0) and not np.isnan(widths).any(), f"accuracy(0.05) = {bar!r} is not a half-width"
    assert _same(bar, r.accuracy(0.05)), "accuracy(0.05) is not deterministic (it must be post-processing)"
    if r.error_bound is None:
        direct = mech.half_width(r.privacy_params, r.response, 0.05)
        assert _same(bar, direct), f"Response.accuracy {bar!r} is not the mechanism's half_width {direct!r}"
    assert np.all(np.asarray(r.accuracy(0.01), dtype=np.float64) >= widths), "the bar narrows as α shrinks"
    assert np.all(np.asarray(r.accuracy(0.05, simultaneous=True), dtype=np.float64) >= widths), (
        "the simultaneous bar is narrower than the per-coordinate one"
    )
    if mech.accuracy_units == "value" and np.ndim(bar) > 0:
        assert np.shape(bar) == np.shape(r.response), (
            f"bar of shape {np.shape(bar)} for a release {np.shape(r.response)}"
        )


def _distribution_pvalue(draws: np.ndarray, dist: Any) -> float:
    from scipy import stats

    if hasattr(dist, "pmf"):
        from ._stats import chisquare_pvalue

        return chisquare_pvalue(draws, dist.pmf)
    return float(stats.kstest(draws, dist.cdf).pvalue)


def check_noise_matches_distribution(case: MechCase, *, n: int = 20_000) -> None:
    """Additive noise follows ``noise_distribution`` (p > 1e-20), and the test rejects the scale × 0.7 and × 1.3."""
    mech = case.mechanism
    if not isinstance(mech, NumericMech):
        return
    rng = np.random.default_rng(2026)
    value = mech._evaluate(mech.target(case.dataset))
    draws = mech._sample_many(value, case.privacy_params, rng, n) - value
    draws = np.asarray(draws, dtype=np.float64).ravel()
    dist = mech.noise_distribution(case.privacy_params)
    p = _distribution_pvalue(draws, dist)
    assert p > KS_P_THRESHOLD, f"noise does not match {dist.dist.name}: p = {p:.3g}"
    for factor in (0.7, 1.3):
        wrong = _rescaled(dist, factor)
        assert _distribution_pvalue(draws, wrong) < KS_P_THRESHOLD, f"the test cannot see a scale error × {factor}"


def _rescaled(dist: Any, factor: float) -> Any:
    args, kwds = list(dist.args), dict(dist.kwds)
    if dist.dist.name == "dlaplace":
        a = kwds.pop("a", args[0] if args else None)
        return dist.dist(a / factor)
    kwds["scale"] = kwds.get("scale", 1.0) * factor
    return dist.dist(*args, **kwds)


def check_sampler_sets_gamma_sensitivity(case: MechCase) -> None:
    """sensitivity_sampler returns a new mechanism with a finite sensitivity and γ set; the original is unchanged."""
    mech = case.mechanism
    oracle = case.oracle or _resampling_oracle(case.dataset)
    from .._datasets import n_records

    sampled = mech.sensitivity_sampler(oracle, n=n_records(case.dataset), m=20, rng=3)
    assert sampled is not mech and type(sampled) is type(mech)
    assert mech.sensitivity == case.mechanism.sensitivity, "the sampler mutated the mechanism"
    assert math.isfinite(sampled.sensitivity) and sampled.sensitivity >= 0
    assert sampled.gamma_sensitivity is not None and 0 < sampled.gamma_sensitivity < 1
    record = sampled.sampling
    assert record is not None and record.describes(sampled), "the sampler did not attach its record of the sampling"
    if sampled.sensitivity > 0:
        r = _release(case, sampled)
        assert isinstance(r.privacy_params, Gam) and r.privacy_params.gamma == sampled.gamma_sensitivity


def check_audit_passes(case: MechCase) -> None:
    """The statistical auditor does not refute the claimed guarantee on the case's neighbouring pair (α = 1e-6)."""
    from ._audit import audit

    report = audit(case.mechanism, case.dataset, case.neighbour, case.privacy_params, n=case.audit_n, rng=7)
    assert report.passed, f"the auditor refuted the claim: {report}"


def _observed_records(case: MechCase) -> list[Any] | None:
    """The distinct records of the case's two datasets (at most 16): replacements inside the case's data domain."""
    a, b = case.dataset, case.neighbour
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim in (1, 2) and a.shape[1:] == b.shape[1:]:
        return list(np.unique(np.concatenate([a, b]), axis=0)[:16])
    if isinstance(a, list) and isinstance(b, list):
        try:
            return list(dict.fromkeys([*a, *b]))[:16]
        except TypeError:
            return None
    return None


def check_search_audit_passes(case: MechCase) -> None:
    """The searching auditor finds no neighbour of the case's dataset, built from the case's own records (1e-9/ulp
    moves and swaps), on which the claim is refuted (α = 1e-6, a 5-second budget). Opt-in: ``MechCase(search=True)``."""
    from ._search import search_audit

    report = search_audit(
        case.mechanism,
        case.dataset,
        case.privacy_params,
        rng=7,
        time_budget=5.0,
        explore_pairs=4,
        replacements=_observed_records(case),
    )
    assert report.passed, f"the searching auditor refuted the claim: {report}"


ALL_CHECKS: tuple[Callable[[MechCase], None], ...] = (
    check_release_returns_response,
    check_response_reports_actual_guarantee,
    check_zero_sensitivity_adds_no_noise,
    check_infinite_sensitivity_is_refused,
    check_wrong_privacy_params_type_is_refused,
    check_release_is_reproducible_with_seed,
    check_release_leaves_dataset_unmodified,
    check_sensitivity_norm_is_semimetric,
    check_sensitivity_bounds_neighbour_change,
    check_noise_scale_shrinks_as_epsilon_grows,
    check_privacy_events_are_accounting_events,
    check_half_width_is_consistent,
    check_noise_matches_distribution,
    check_sampler_sets_gamma_sensitivity,
    check_audit_passes,
    check_search_audit_passes,
)


def mechanism_checks(case: MechCase) -> Iterator[Callable[[MechCase], None]]:
    """Yield the checks that apply to ``case``: every shared invariant minus its ``skip`` and distributional opt-out."""
    for check in ALL_CHECKS:
        name = check.__name__
        if name in case.skip:
            continue
        if not case.distributional and name in DISTRIBUTIONAL_CHECKS:
            continue
        if name == "check_search_audit_passes" and not case.search:
            continue
        yield check
