"""The privacy budget of a whole analysis: charged before every release, tight composition, fail-closed."""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import attrs
import numpy as np

from .._validation import check_in_range, check_int, check_real
from ..events import ApproxDPEvent, Event
from ..exceptions import BudgetExceededError
from ..privacy import Del, Eps, Gam
from . import _composition
from ._composition import Composition, _merge, _safe, as_events
from ._detached import CROSS_PROCESS
from ._totals import _KeyInfo, _Totals

__all__ = ["Accountant", "Charge"]

_SLACK = 1e-12
"""Relative slack of budget comparisons: absorbs binary representation (ten releases at 0.1 fit a budget of 1.0)."""


def _params(epsilon: float, delta: float = 0.0, gamma: float = 0.0) -> Eps:
    """The privacy-parameter object for a report; ε = 0 (nothing spent or nothing left) is allowed here only.

    The constructors refuse ε = 0 because no release can be made at it; a report of "nothing" still needs one. A
    report never raises: values the constructors refuse (ε = 0, an infinite bound, or a subnormal leftover of a tiny
    budget) are stored as they are.
    """
    epsilon = max(0.0, epsilon)
    cls = Gam if gamma > 0 else Del if delta > 0 else Eps
    normal = all(v == 0 or v >= sys.float_info.min for v in (epsilon, delta, gamma))
    if 0 < epsilon < math.inf and 0 <= delta < 1 and 0 <= gamma < 1 and normal:
        return Gam(epsilon, delta, gamma) if cls is Gam else Del(epsilon, delta) if cls is Del else Eps(epsilon)
    obj = object.__new__(cls)
    object.__setattr__(obj, "epsilon", float(epsilon))
    if cls is not Eps:
        object.__setattr__(obj, "delta", float(delta))
    if cls is Gam:
        object.__setattr__(obj, "gamma", float(gamma))
    return obj


def _fmt_values(epsilon: float, delta: float = 0.0, gamma: float = 0.0) -> str:
    parts = [f"ε={epsilon:.6g}"]
    if delta:
        parts.append(f"δ={delta:.3g}")
    if gamma:
        parts.append(f"γ={gamma:.3g}")
    return ", ".join(parts)


def _fmt(p: Eps) -> str:
    return _fmt_values(p.epsilon, p.delta, p.gamma)


# ---- the ledger ---------------------------------------------------------------------------------------------------


@attrs.frozen
class Charge:
    """One entry of an accountant's ledger: who was charged, for what, and when.

    Attributes
    ----------
    index : int
        Position in the ledger (1-based).
    label : str
        Who: the label given (``Accountant.scope`` or ``spend(label=…)``) or the mechanism and its target.
    guarantee : Eps
        The guarantee the release claimed (``Gam`` for a sampled sensitivity).
    events : tuple of Event
        What the accountant composed for it (the mechanism's exact noise where it could tell).
    time : float
        Unix time of the charge.
    """

    index: int
    label: str
    guarantee: Eps
    events: tuple[Event, ...]
    time: float

    def describe(self) -> str:
        """One line: label, guarantee and events."""
        what = " + ".join(e.describe() for e in self.events) or "no privacy loss"
        return f"{self.index:>3}  {self.label:<34.34}  {_fmt(self.guarantee):<28}  {what}"


def _who(mechanism: Any) -> str:
    if mechanism is None:
        return "manual charge"
    name = type(mechanism).__name__
    target = getattr(mechanism, "target", None)
    tname = getattr(target, "__name__", None) or getattr(getattr(target, "func", None), "__name__", None)
    public = tname and tname.isidentifier() and not tname.startswith("_")
    return f"{name}({tname})" if public else name


def _events_for(guarantee: Eps, mechanism: Any, privacy_params: Any) -> tuple[Event, ...]:
    """What a release really costs: the mechanism's own description (``DPMech.privacy_events``), or the claim."""
    if mechanism is None or privacy_params is None:
        return (ApproxDPEvent(epsilon=guarantee.epsilon, delta=guarantee.delta),)
    events = tuple(mechanism.privacy_events(privacy_params))
    for e in events:
        if not isinstance(e, Event):
            raise TypeError(
                f"{type(mechanism).__name__}.privacy_events() must return diffpriv_py.accounting events; got {e!r}."
            )
    return events


_EVENTS_SLACK = 1e-9
"""Relative slack when explicit events are checked against the claim (absorbs their bounds' upward rounding)."""
_IMPLY_CACHE: dict[tuple[tuple[Event, ...], Eps], str] = {}


def _check_events_imply(events: tuple[Event, ...], claim: Eps) -> None:
    """Refuse explicit events that do not describe the claimed (ε, δ): the ledger would otherwise charge too little.

    The accountant bounds the analysis by the smaller of what the claims and what the events compose to, which is
    only sound if each release really is both. Events weaker than the claim (Laplace ε = 5 claimed as ε = 0.5) are a
    contradiction; events much *stronger* than the claim (Laplace ε = 0.001 claimed as ε = 10) are one too — they are
    meant to describe this very release, and trusting the smaller of two inconsistent descriptions would under-charge
    if the events are the wrong one. Both are refused before anything is charged.
    """
    key = (events, claim)
    verdict = _IMPLY_CACHE.get(key)
    if verdict is None:
        verdict = _events_verdict(events, claim)
        if len(_IMPLY_CACHE) > 4096:
            _IMPLY_CACHE.clear()
        _IMPLY_CACHE[key] = verdict
    if verdict == "ok":
        return
    described = " + ".join(e.describe() for e in events)
    if verdict == "weaker":
        raise ValueError(
            f"The events given to spend() must imply the claimed guarantee {_fmt(claim)}: composed, they must be "
            f"(ε, δ)-DP at the claim's δ with ε ≤ {claim.epsilon:g}. Got {described}, which does not. Nothing was "
            "charged. Pass the events of this very release, or claim the guarantee they give."
        )
    raise ValueError(
        f"The events given to spend() describe a much stronger release than the claimed guarantee {_fmt(claim)}: "
        f"composed, {described} give ε well below {claim.epsilon:g} at the claim's δ. Events and claim describe the "
        "same release, so one of them is wrong, and charging the smaller would under-charge if it is the events. "
        "Nothing was charged. Claim the guarantee the events give, or pass the events of this very release."
    )


_STRONGER_SLACK = 1e-6
"""Relative amount by which explicit events may be stronger than their claim (calibration tolerances)."""


def _events_verdict(events: tuple[Event, ...], claim: Eps) -> str:
    """ "ok" if the events compose to the claimed ε at its δ (up to tolerances), "weaker" or "stronger" if not."""
    if not events:
        return "ok"  # no privacy loss at all: a release that costs nothing
    target = claim.epsilon * (1 + _EVENTS_SLACK)
    merged = _merge(events)
    comp = Composition(events=tuple(merged))
    pairs = [e for e in merged if isinstance(e, ApproxDPEvent)]
    eps = math.inf
    if len(pairs) == len(merged):  # their own (ε, δ) claims, composed by basic composition
        with np.errstate(over="ignore"):
            basic = _composition._fsum([e.count * e.epsilon for e in pairs])
            delta = _composition._fsum([e.count * e.delta for e in pairs])
        if delta <= claim.delta * (1 + _EVENTS_SLACK):
            eps = basic
    eps = min(eps, _safe(comp.pure_epsilon))
    if claim.delta > 0 and eps > target:
        eps = min(eps, _safe(lambda: comp.epsilon_with_method(claim.delta)[0]))
    if eps > target:
        return "weaker"
    if eps < claim.epsilon * (1 - _STRONGER_SLACK):
        return "stronger"
    return "ok"


def _check_guarantee(guarantee: Any) -> Eps:
    if not isinstance(guarantee, Eps):
        raise TypeError(
            f"An accountant is charged with privacy parameters (Eps, Del or Gam); got {guarantee!r}. "
            "Pass e.g. Eps(0.5) or Del(0.5, 1e-6)."
        )
    for name in ("epsilon", "delta", "gamma"):
        value = getattr(guarantee, name)
        if type(value) is not float:
            value = check_real(value, name, owner="the charged guarantee")
        if not math.isfinite(value) or value < 0 or (name != "epsilon" and value >= 1):
            raise ValueError(
                f"A charge must have a finite epsilon > 0 and delta, gamma in [0, 1); got {name}={value!r}. "
                "Nothing was charged."
            )
    if not guarantee.epsilon > 0:
        raise ValueError(f"A charge must have epsilon > 0; got {guarantee!r}. Nothing was charged.")
    return guarantee


class RemainingBudget(Eps):
    """The budget left as a privacy-parameter object that can also be called: ``acc.remaining(k)``.

    A value of the budget's class (``Eps``, ``Del`` or ``Gam``) with the same fields, equality, hash and repr as the
    plain object; calling it with ``k`` gives what each of ``k`` equal further releases may spend
    (:meth:`Accountant.remaining_per_release`).
    """

    __slots__ = ()  # the subclasses below hold the one extra slot, so that they can also derive from Del and Gam
    _per_release: Any  # Accountant.remaining_per_release

    def __call__(self, k: int = 1) -> Eps:
        return self._per_release(k)  # type: ignore[no-any-return]

    def _plain(self) -> Eps:
        return _params(self.epsilon, self.delta, self.gamma)

    def __eq__(self, other: object) -> bool:
        return self._plain() == (other._plain() if isinstance(other, RemainingBudget) else other)

    def __hash__(self) -> int:
        return hash(self._plain())

    def __repr__(self) -> str:
        return repr(self._plain())

    def __reduce__(self) -> Any:  # a copy or a pickle is the plain value: the accountant stays behind
        return self._plain().__reduce__()


class _RemainingEps(RemainingBudget):
    __slots__ = ("_per_release",)


class _RemainingDel(RemainingBudget, Del):  # isinstance(acc.remaining, dp.Del) holds for a Del budget
    __slots__ = ("_per_release",)


class _RemainingGam(RemainingBudget, Gam):
    __slots__ = ("_per_release",)


def _remaining_budget(params: Eps, per_release: Any) -> RemainingBudget:
    kind = _RemainingGam if type(params) is Gam else _RemainingDel if type(params) is Del else _RemainingEps
    obj = object.__new__(kind)
    for field in attrs.fields(type(params)):
        object.__setattr__(obj, field.name, getattr(params, field.name))
    object.__setattr__(obj, "_per_release", per_release)
    return obj


class Accountant:
    """The privacy budget of one analysis: every release is charged to it before any noise is drawn.

    Parameters
    ----------
    budget : Eps, Del or Gam
        The total guarantee the analysis may give. ``Eps`` allows only pure-ε releases; ``Del`` allows δ (the
        whole analysis is then measured at the budget's δ); ``Gam`` also allows random-DP releases (sampled
        sensitivities) whose γ add up to at most the budget's γ.
    composition : {"tight", "basic"}, default "tight"
        ``"tight"`` composes what was actually released as tightly as is known (see Notes); ``"basic"`` adds
        the claimed ε and δ (sequential composition), as most DP libraries do.

    Attributes
    ----------
    spent : Eps
        The guarantee of everything charged so far (ε = 0 before the first charge).
    remaining : Eps
        The budget left (see Notes for its exact meaning); what each of k further releases may spend is
        :meth:`remaining_per_release` (diffprivlib's ``remaining(k)``).
    ledger : tuple of Charge
        Every charge, in order: who, what guarantee, which events.

    Notes
    -----
    **Fail closed.** ``spend`` (called by every ``release_response(..., accountant=acc)`` after validating the
    parameters and *before* evaluating the target or drawing noise) computes the guarantee the analysis would
    have with the new release; if that exceeds the budget it raises
    :class:`~diffpriv_py.exceptions.BudgetExceededError` and charges nothing. A charge that succeeds is never
    refunded, even if the release then fails, because a failure can depend on the data. The check and the
    charge happen under one lock, so concurrent releases can never jointly overspend. NaN, negative or infinite
    charges are refused. All arithmetic rounds toward the conservative side; the comparison with the budget
    allows a relative 10⁻¹² so that, e.g., ten releases at ε = 0.1 fit a budget of 1.0 although the binary
    value of 0.1 is a little above 1/10.

    **A safe filter.** A well-formed charge either fits or raises ``BudgetExceededError``, whatever its values
    (any mix of Eps, Del, Gam from 1e-300 to 1e300): every bound is guarded, and a method that fails is skipped,
    never trusted. A malformed charge (wrong type, NaN, events of another relation, explicit events that do not
    imply the claimed guarantee) raises ``TypeError``/``ValueError`` before anything is charged. The reports
    (``spent``, ``remaining``, ``epsilon``, ``summary``, ``repr``, ``ledger``) never raise.

    **Cost.** ``spend`` is amortised O(1) in the length of the ledger: the sums the bounds need are kept as
    exact running sums (the same bits as ``math.fsum`` over the ledger), the Rényi curves' sum is updated
    lazily, and a Gaussian ledger is tested with one evaluation of its privacy curve. Only the numerical PLD,
    run when no closed form fits the budget, costs O(number of distinct events).

    **What composes how.** The accountant records *events*, the dominating pair of each release:
    a :class:`~diffpriv_py.Laplace` release is recorded as its Laplace noise, a :class:`~diffpriv_py.Gaussian`
    release as μ = Δ/σ, a mechanism with a ``privacy_events(privacy_params)`` method (e.g. DP-SGD) as what it
    returns, and anything else as its claimed (ε, δ). With ``composition="tight"`` the composed ε at the
    budget's δ is the minimum of: the pure sum (δ = 0); basic composition of the claims; the heterogeneous
    advanced composition theorem of Kairouz, Oh & Viswanath (2017) on the claims; exact μ-GDP composition
    μ = √(Σμᵢ²) when every release is Gaussian (Dong, Roth & Su 2022); Rényi DP with the improved conversion
    (Mironov 2017; Canonne, Kamath & Steinke 2020); and the numerical privacy-loss distribution (PLD) of all
    events, an upper bound within ~0.05 % of the exact optimum (Doroshenko et al. 2022). The PLD is only
    computed when the cheaper bounds do not already fit the budget.

    **Neighbouring relation.** Replace-one (datasets of equal size differing in one record), the library's
    relation. Composition theorems hold for any one relation; every event here is stated for replace-one
    (DP-SGD, analysed under add/remove, records its replace-one pair).

    **Random DP.** A release whose sensitivity was sampled is (ε, δ)-DP except with probability γ. The
    accountant composes the (ε, δ) parts as above and the γ by the union bound (γ = Σγᵢ): with probability at
    least 1 − γ every such release is private, and then the composition holds. ``spent`` is then a ``Gam``;
    only a ``Gam`` budget accepts γ > 0.

    **spent and remaining.** With ``"tight"``: ``spent`` is ``Eps(ε)`` while the pure sum is the best bound,
    otherwise ``Del(ε(δ_B), δ_B)``: the composed ε at the budget's δ. ``remaining`` is ``budget.epsilon −
    spent.epsilon`` at the budget's δ: a further pure-ε release of at most that ε is always accepted; releases
    with δ > 0 are accepted when the tight composition with them still fits (ask with :meth:`check`). With
    ``"basic"``: ``spent = (Σε, Σδ)`` and ``remaining`` is the difference, coordinate by coordinate.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> acc = dp.Accountant(budget=dp.Del(1.0, 1e-6))
    >>> x = np.linspace(0, 1, 1000)
    >>> mech = dp.Laplace(target=np.mean, sensitivity=1 / 1000)
    >>> for _ in range(10):
    ...     _ = mech.release_response(dp.Eps(0.1), x, rng=1, accountant=acc)
    >>> spent = acc.spent  # ten Laplace releases at 0.1, composed tightly at the budget's δ
    >>> round(spent.epsilon, 4), spent.delta
    (0.999, 1e-06)
    >>> mech.release_response(dp.Eps(0.1), x, rng=1, accountant=acc)
    Traceback (most recent call last):
    ...
    diffpriv_py.exceptions.BudgetExceededError: ...
    """

    def __init__(self, budget: Eps, *, composition: Literal["tight", "basic"] = "tight"):
        if not isinstance(budget, Eps):
            raise TypeError(
                f"The budget must be privacy parameters (Eps, Del or Gam); got {budget!r}. Pass e.g. "
                "budget=dp.Del(epsilon=1.0, delta=1e-6)."
            )
        if not isinstance(composition, str) or composition not in ("tight", "basic"):
            raise ValueError(f"composition must be 'tight' or 'basic'; got {composition!r}.")
        self._budget = _check_guarantee(budget)
        self._composition = composition
        self._lock = threading.RLock()
        self._charges: list[Charge] = []
        self._counts: dict[Event, int] = {}  # merged events: key (count 1) → count, in order of first charge
        self._infos: dict[Event, _KeyInfo] = {}
        self._totals = _Totals()
        self._cache: tuple[int, tuple[Eps, str]] | None = None  # the last report (a PLD ledger's costs ~ms to redo)
        self._local = threading.local()

    # ---- read-only views -----------------------------------------------------------------------------------

    @property
    def budget(self) -> Eps:
        """The total guarantee the analysis may give."""
        return self._budget

    @property
    def composition(self) -> str:
        """``"tight"`` or ``"basic"``."""
        return self._composition

    @property
    def ledger(self) -> tuple[Charge, ...]:
        """Every charge so far, in order (an immutable snapshot)."""
        with self._lock:
            return tuple(self._charges)

    @property
    def spent(self) -> Eps:
        """The guarantee of everything charged so far (see the class Notes)."""
        return self._report()[0]

    @property
    def remaining(self) -> RemainingBudget:
        """The budget left, a privacy-parameter object (see the class Notes); call it for the per-release share.

        ``acc.remaining`` is an :class:`~diffpriv_py.Eps` / ``Del`` / ``Gam`` (equal to the plain object with the same
        values), and ``acc.remaining(k)`` is :meth:`remaining_per_release` — what each of ``k`` equal further
        releases may spend, as diffprivlib's ``remaining(k)``.
        """
        return _remaining_budget(self._remaining(self.spent), self.remaining_per_release)

    def _remaining(self, spent: Eps) -> Eps:
        b = self._budget
        eps = max(0.0, b.epsilon - spent.epsilon)
        if self._composition == "basic":
            return _params(eps, max(0.0, b.delta - spent.delta), max(0.0, b.gamma - spent.gamma))
        return _params(eps, b.delta, max(0.0, b.gamma - spent.gamma))

    def remaining_per_release(self, k: int = 1) -> Eps:
        """What each of ``k`` equal further releases may spend: ``k`` releases at it are all accepted.

        ``acc.remaining(k)`` is the same call (diffprivlib's name); ``acc.remaining`` itself stays the budget left, a
        privacy-parameter object.

        Parameters
        ----------
        k : int, default 1
            The number of further releases, all at the same parameters.

        Returns
        -------
        Eps
            With ``composition="basic"``: ``((ε_B − Σε)/k, (δ_B − Σδ)/k)`` rounded down. With ``"tight"``: the
            largest pure ε (to ~1e-15 relative) such that ``k`` more pure ε-DP releases fit the budget by the
            closed-form bounds (basic, Kairouz–Oh–Viswanath, Rényi DP, exact Gaussian DP; the numerical
            privacy-loss distribution, which may allow a little more, is not searched). With a ``Gam`` budget
            the γ left is shared equally too. ``ε = 0`` when nothing is left.

        Examples
        --------
        >>> import diffpriv_py as dp
        >>> acc = dp.Accountant(budget=dp.Eps(1.0))
        >>> _ = acc.spend(dp.Eps(0.4))
        >>> share = acc.remaining_per_release(3)
        >>> round(share.epsilon, 12)
        0.2
        >>> for _ in range(3):
        ...     _ = acc.spend(share)
        """
        k = check_int(k, "k", minimum=1, owner="Accountant.remaining_per_release")
        b = self._budget
        with self._lock:
            totals, counts, infos = self._totals, dict(self._counts), dict(self._infos)
        spent_gamma = totals.gamma_total
        gamma = math.nextafter(max(0.0, b.gamma - spent_gamma) / k, 0.0) if b.gamma > 0 else 0.0
        delta = 0.0
        if self._composition == "basic":
            delta_b = totals.basic()[1]
            delta = math.nextafter(max(0.0, b.delta - delta_b) / k, 0.0) if b.delta > 0 else 0.0
        # The largest ε whose k-fold what-if passes the very test that spend() applies (without the PLD).

        def fits(x: float) -> bool:
            claim = _params(x, delta, gamma)
            event = ApproxDPEvent(epsilon=x, delta=delta)
            old = counts.get(event, 0)
            info = infos.get(event) or _KeyInfo.of(event)
            state = totals.extend(claim, k, [(info, old, old + k)])
            return not self._problems(state, claim, lambda: (), pld=False)

        hi = b.epsilon
        if fits(hi):
            return _params(hi, delta, gamma)
        lo = 0.0
        for _ in range(80):  # bisection to the last few bits of ε (each step halves the bracket)
            mid = (lo + hi) / 2
            if not lo < mid < hi:
                break
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        # spend() tolerates ε_B·1e-12 over the budget (binary rounding); the advice leaves that tolerance unused.
        return _params(max(0.0, lo - 2 * b.epsilon * _SLACK / k), delta, gamma)

    def epsilon(self, delta: float) -> float:
        """The composed ε of everything charged so far at any ``delta`` (tight, an upper bound)."""
        d = check_in_range(delta, "delta", 0.0, 1.0, low_closed=True, high_closed=False, owner="Accountant.epsilon")
        totals, events = self._snapshot()
        try:
            return totals.epsilon_at(d, events)[0] if d > 0 else totals.pure_epsilon()
        except Exception:  # pragma: no cover - defensive: a report never raises; every method above is guarded
            return math.inf

    # ---- charging --------------------------------------------------------------------------------------------

    def spend(
        self,
        guarantee: Eps,
        *,
        mechanism: Any = None,
        privacy_params: Eps | None = None,
        label: str | None = None,
        events: Sequence[Event] | None = None,
    ) -> Charge:
        """Charge one release atomically, or raise ``BudgetExceededError`` and charge nothing.

        Parameters
        ----------
        guarantee : Eps
            The guarantee the release gives (``Response.privacy_params``).
        mechanism : DPMech, optional
            The mechanism about to release; inspected for its exact noise (see the class Notes).
        privacy_params : Eps, optional
            The parameters it releases at (needed to inspect the mechanism).
        label : str, optional
            Who is charged, for the ledger; defaults to the current :meth:`scope` or the mechanism's name.
        events : sequence of Event, optional
            Describe the release explicitly (overrides inspection). They must imply the claimed ``guarantee``
            (composed, they are (ε, δ)-DP at its δ with ε ≤ its ε); otherwise ``ValueError``, nothing charged.

        Returns
        -------
        Charge
            The ledger entry.

        Raises
        ------
        TypeError, ValueError
            The charge itself is malformed (not privacy parameters, NaN, events of another type or relation, or
            events weaker than the claim): raised before anything is charged.
        BudgetExceededError
            The charge is well formed but does not fit the budget; nothing is charged. This is the only error a
            well-formed charge can raise, whatever its values (1e-300 or 1e300, any mix of Eps, Del and Gam).
        """
        guarantee, evs, who = self._prepare(guarantee, mechanism, privacy_params, label, events)
        with self._lock:
            charge = Charge(len(self._charges) + 1, who, guarantee, evs, time.time())
            state, changes, events_fn = self._extend(charge)
            self._verify(state, charge, events_fn)
            for key, info, _, new in changes:
                self._counts[key] = new
                self._infos.setdefault(key, info)
            self._charges.append(charge)
            self._totals = state
        return charge

    def check(
        self,
        guarantee: Eps,
        *,
        mechanism: Any = None,
        privacy_params: Eps | None = None,
        events: Sequence[Event] | None = None,
    ) -> Eps:
        """What ``spent`` would become with this release; raises ``BudgetExceededError`` if it would not fit.

        Charges nothing (a later ``spend`` may still be refused if other releases are charged in between).
        """
        guarantee, evs, who = self._prepare(guarantee, mechanism, privacy_params, None, events)
        with self._lock:
            charge = Charge(len(self._charges) + 1, who, guarantee, evs, time.time())
            state, _, events_fn = self._extend(charge)
            self._verify(state, charge, events_fn)
            events = events_fn()
        return self._compute_report(state, lambda: events)[0]

    @contextlib.contextmanager
    def scope(self, label: str) -> Iterator[Accountant]:
        """Label every charge made in this block (and this thread) as ``label``, e.g. ``"table 2"``."""
        previous = getattr(self._local, "label", None)
        self._local.label = str(label)
        try:
            yield self
        finally:
            self._local.label = previous

    # ---- reporting -------------------------------------------------------------------------------------------

    def summary(self) -> str:
        """A readable account: the budget, every charge, what was spent and how it was composed."""
        spent, method = self._report()
        with self._lock:
            charges = list(self._charges)
            totals = self._totals
        lines = [
            f"Privacy accountant: budget {_fmt(self._budget)} ({self._composition} composition, replace-one "
            "neighbours)",
            f"{'#':>3}  {'who':<34}  {'guarantee':<28}  composed as",
        ]
        lines += [c.describe() for c in charges] or ["     (nothing charged yet)"]
        eps_b, delta_b = totals.basic()
        how = {
            "none": "nothing charged",
            "pure": "sum of pure ε",
            "basic": "basic composition",
            "advanced": "advanced composition (Kairouz–Oh–Viswanath)",
            "gdp": "exact Gaussian DP",
            "rdp": "Rényi DP",
            "pld": "privacy-loss distribution",
        }.get(method, method)
        lines.append(f"Spent:     {_fmt(spent)}  [{how}; basic composition would say ε={eps_b:.6g}, δ={delta_b:.3g}]")
        lines.append(f"Remaining: {_fmt(self._remaining(spent))}")
        if spent.gamma:
            lines.append(
                f"γ = {spent.gamma:.3g}: with probability ≥ 1 − γ every sampled sensitivity held (union bound); "
                "the (ε, δ) above holds on that event."
            )
        return "\n".join(lines)

    def __copy__(self) -> Accountant:
        # A copy with its own ledger would let two copies spend the same budget twice: copies share this one
        # (scikit-learn's clone deep-copies parameters, so a cloned estimator keeps charging the same budget).
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Accountant:
        return self

    def __reduce__(self) -> Any:
        # An object holding an accountant may pickle itself with a DetachedAccountant in its place (the scikit-learn
        # facades do), so that a copy in a worker process fails in the worker with this reason, where joblib
        # reports it, instead of in joblib's pickler, which replaces it with "Could not pickle the task".
        raise TypeError(
            f"An Accountant cannot be pickled (sent to another process or saved to a file). {CROSS_PROCESS}"
        )

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget!r}, spent={self.spent!r}, charges={len(self._charges)})"

    # ---- internals -------------------------------------------------------------------------------------------

    def _prepare(
        self, guarantee: Any, mechanism: Any, privacy_params: Any, label: str | None, events: Any
    ) -> tuple[Eps, tuple[Event, ...], str]:
        """Everything about a charge that needs no lock: its checked guarantee, its events and its label."""
        guarantee = _check_guarantee(guarantee)
        if events is not None:
            evs = as_events(events, owner="the accountant", after=" Nothing was charged.")
        else:
            evs = _events_for(guarantee, mechanism, privacy_params)
        for e in evs:
            if getattr(e, "relation", "replace_one") != "replace_one":
                raise ValueError(
                    f"The accountant composes replace-one events (the library's relation); got {e.describe()}. "
                    "Composition across neighbouring relations is not valid: convert the event to replace-one."
                )
        if events is not None:
            _check_events_imply(evs, guarantee)
        who = label or getattr(self._local, "label", None) or _who(mechanism)
        return guarantee, evs, str(who)

    def _extend(self, charge: Charge) -> tuple[_Totals, list[tuple[Event, _KeyInfo, int, int]], Any]:
        """The totals with ``charge`` added (nothing mutated), the per-key count changes, and the merged events."""
        added: dict[Event, int] = {}
        for e in charge.events:
            key = e._key()
            added[key] = added.get(key, 0) + e.count
        changes: list[tuple[Event, _KeyInfo, int, int]] = []
        for key, more in added.items():
            info = self._infos.get(key) or _KeyInfo.of(key)
            old = self._counts.get(key, 0)
            changes.append((key, info, old, old + more))
        state = self._totals.extend(charge.guarantee, 1, [(info, old, new) for _, info, old, new in changes])
        counts, new_counts = self._counts, {key: new for key, _, _, new in changes}

        def events() -> tuple[Event, ...]:  # O(distinct events): only the numerical PLD needs them
            merged = {**counts, **new_counts}
            return tuple(attrs.evolve(k, count=c) for k, c in merged.items())

        return state, changes, events

    def _snapshot(self) -> tuple[_Totals, Any]:
        with self._lock:
            totals = self._totals
            counts = dict(self._counts)
        return totals, lambda: tuple(attrs.evolve(k, count=c) for k, c in counts.items())

    def _epsilon(
        self, state: _Totals, events: Any, *, cheap_enough: float | None = None, pld: bool = True
    ) -> tuple[float, str]:
        """The ε the analysis has, measured as the budget measures it."""
        b = self._budget
        if self._composition == "basic":
            return state.basic()[0], "basic"
        pure = state.pure_epsilon()
        if b.delta == 0:
            return pure, "pure"
        eps, method = state.epsilon_at(b.delta, events, cheap_enough=cheap_enough, pld=pld)
        return (pure, "pure") if pure <= eps else (eps, method)

    def _report(self) -> tuple[Eps, str]:
        with self._lock:
            cached = self._cache
            n = len(self._charges)
            if cached is not None and cached[0] == n:
                return cached[1]
            totals, events = self._snapshot()
        out = self._compute_report(totals, events)
        with self._lock:
            if len(self._charges) == n:
                self._cache = (n, out)
        return out

    def _compute_report(self, state: _Totals, events: Any) -> tuple[Eps, str]:
        """spent and the method that gave it; never raises (falls back on basic composition of the claims)."""
        try:
            if not state.n:
                return _params(0.0), "none"
            if self._composition == "basic":
                eps, delta = state.basic()
                return _params(eps, delta, state.gamma_total), "basic"
            eps, method = self._epsilon(state, events)
            delta = 0.0 if method in ("pure", "none") else self._budget.delta
            return _params(eps, delta, state.gamma_total), method
        except Exception:  # pragma: no cover - defensive: every bound above is guarded; a report never raises
            eps, delta = state.basic()
            return _params(eps, delta, state.gamma_total), "basic"

    def _problems(self, state: _Totals, claim: Eps, events: Any, *, pld: bool = True) -> list[str]:
        """Why ``state`` would not fit the budget (empty if it fits); never raises."""
        b = self._budget
        gamma = state.gamma_total
        problems = []
        if gamma > b.gamma * (1 + _SLACK):
            if b.gamma == 0:
                problems.append(
                    f"it is only random DP (γ={claim.gamma:g}, a sampled sensitivity) and the budget "
                    "allows no γ; set budget=dp.Gam(epsilon, delta, gamma=...) to accept random DP"
                )
            else:
                problems.append(f"the γ would add up to {gamma:.3g} > the budget's γ={b.gamma:g}")
        if self._composition == "basic":
            eps, delta = state.basic()
            if not delta <= b.delta * (1 + _SLACK):
                problems.append(f"the δ would add up to {delta:.3g} > the budget's δ={b.delta:g}")
        else:
            eps, _ = self._epsilon(state, events, cheap_enough=b.epsilon * (1 + _SLACK), pld=pld)
        if not eps <= b.epsilon * (1 + _SLACK):
            needs_delta = b.delta == 0 and not math.isfinite(eps)
            problems.append(
                "it needs δ > 0 and the budget is pure ε-DP (pass budget=dp.Del(epsilon, delta))"
                if needs_delta
                else f"the analysis would then be ({_fmt_values(eps, b.delta)})-DP, over the budget's ε={b.epsilon:g}"
            )
        return problems

    def _verify(self, state: _Totals, charge: Charge, events: Any) -> None:
        try:
            problems = self._problems(state, charge.guarantee, events)
        except Exception as exc:  # pragma: no cover - defensive: fail closed, and say so
            problems = [f"its composition could not be computed ({type(exc).__name__}: {exc})"]
        if problems:
            b = self._budget
            try:
                spent = self._report()[0]
                where = f"spent so far {_fmt(spent)}; remaining {_fmt(self._remaining(spent))}"
            except Exception:  # pragma: no cover - defensive: the refusal itself must not fail
                where = f"{len(self._charges)} charges so far"
            raise BudgetExceededError(
                f"Refused {charge.label} at {_fmt(charge.guarantee)}: {'; and '.join(problems)}. Budget "
                f"{_fmt(b)}; {where}. Nothing was charged and no noise was drawn. Release at a smaller epsilon, or "
                "plan the analysis with a larger budget."
            )
