"""The accountant's running totals: every sum its bounds need, each extended in O(1) per charge.

A ledger's guarantee is the best of several bounds (basic and Kairouz–Oh–Viswanath on the claims; the events' pure
sum, exact μ-GDP and Rényi DP), and each of them is a function of a few sums over the ledger. :class:`_Totals` keeps
those sums as exact running sums (the same bits as ``math.fsum`` over the ledger), so that a charge costs the same
whatever the length of the ledger. Only the numerical privacy-loss distribution needs the events themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ..privacy import Eps
from ._composition import _composed_mu, _gdp_delta, _gdp_epsilon, _kov_epsilon, _rdp_curve, _safe, _up
from ._events import Event, GaussianEvent
from ._pld import ComposedPLD
from ._sums import ExactSum
from .rdp import _ACCOUNTANT_ORDERS, _fixed_orders_epsilon_from_rdp


def _tanh_term(e: float) -> float:
    # εᵢ·tanh(εᵢ/2) with numpy's tanh, as kov_composition computes it on arrays (math.tanh differs in the last bit).
    return float(e * np.tanh(e / 2))


def _add_up(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b elementwise, rounded up wherever the rounded sum is below the exact one (TwoSum error > 0)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
        result: np.ndarray = np.where(err > 0, np.nextafter(s, np.inf), s)
        return result


class _RdpSum:
    """The ledger's summed Rényi curve, added lazily: a chain of increments summed (in order) when first needed.

    Extending costs O(1) (no array arithmetic); a read sums the increments since the last read, so a ledger that is
    read after every charge pays one array addition per charge, and one that never needs Rényi DP pays nothing.
    """

    __slots__ = ("_parent", "_step", "_value")

    def __init__(self, parent: _RdpSum | None, step: np.ndarray):
        self._parent = parent
        self._step = step
        self._value = step if parent is None else None

    def value(self) -> np.ndarray:
        chain = []
        node: _RdpSum = self
        while node._value is None:
            chain.append(node)
            node = node._parent  # type: ignore[assignment]
        total = node._value
        for n in reversed(chain):
            total = _add_up(total, n._step)
        self._value = total
        return total


@attrs.frozen
class _KeyInfo:
    """What the running totals need of one distinct event (computed once per distinct event)."""

    max_loss: float
    mu2: float | None  # μ² of a GaussianEvent, else None
    curve: np.ndarray | None  # Rényi curve at the accountant's orders, else None

    @classmethod
    def of(cls, key: Event) -> _KeyInfo:
        mu2 = _up(key.mu * key.mu) if isinstance(key, GaussianEvent) else None  # μ·μ: inf rather than OverflowError
        return cls(float(key.max_loss), mu2, _rdp_curve(key))


class _Totals:
    """Running totals of a ledger, each O(1) to extend by one charge: everything the bounds need but the PLD.

    Claims: Σεᵢ, Σεᵢ², Σεᵢtanh(εᵢ/2), Σln(1 − δᵢ), Σδᵢ, Σγᵢ as exact sums (the same bits as ``math.fsum`` over
    the ledger). Events (merged by key with counts): Σ countₖ·max_lossₖ and Σ countₖ·μₖ² as exact sums (a key's
    term is replaced when its count grows), and the Rényi curves' sum, rounded up wherever rounding happened.
    Immutable once built: ``extend`` returns a new one, so a refused charge leaves nothing behind.
    """

    __slots__ = (
        "delta",
        "drift",
        "eps",
        "eps_sq",
        "gamma",
        "gdp",
        "log1m",
        "n",
        "n_keys",
        "no_rdp",
        "non_gaussian",
        "pure",
        "rdp",
        "unbounded",
    )

    def __init__(self) -> None:
        self.n = 0
        self.eps, self.eps_sq, self.drift = ExactSum(), ExactSum(), ExactSum()
        self.log1m, self.delta, self.gamma = ExactSum(), ExactSum(), ExactSum()
        self.pure, self.gdp = ExactSum(), ExactSum()
        self.unbounded = self.non_gaussian = self.no_rdp = self.n_keys = 0
        self.rdp = _RdpSum(None, np.zeros(_ACCOUNTANT_ORDERS.size))

    def extend(self, claim: Eps, repeat: int, changes: Sequence[tuple[_KeyInfo, int, int]]) -> _Totals:
        """The totals with ``repeat`` more claims ``claim`` and event counts moved from old to new per key."""
        out = object.__new__(_Totals)
        for name in _Totals.__slots__:
            setattr(out, name, getattr(self, name))
        out.n = self.n + repeat
        e, d, g = claim.epsilon, claim.delta, claim.gamma
        terms = [("eps", e), ("eps_sq", e * e), ("drift", _tanh_term(e))]  # Python floats overflow to inf quietly
        if d:
            terms += [("log1m", float(np.log1p(-d))), ("delta", d)]
        if g:
            terms.append(("gamma", g))
        for name, term in terms:  # copy on write: a sum that does not change is shared with the previous totals
            total = getattr(self, name).copy()
            if repeat == 1:
                total.add(term)
            elif term:  # a what-if of several equal releases (remaining_per_release): their sum, rounded outwards
                total.add(math.nextafter(repeat * term, math.copysign(math.inf, term)))
            setattr(out, name, total)
        if changes:
            out.pure, out.gdp = self.pure.copy(), self.gdp.copy()
        for info, old, new in changes:
            if old == 0:
                out.n_keys += 1
            if math.isfinite(info.max_loss):
                if old:
                    out.pure.add(-(old * info.max_loss))
                out.pure.add(new * info.max_loss)
            elif old == 0:
                out.unbounded += 1
            if info.mu2 is not None:
                if old:
                    out.gdp.add(-_up(old * info.mu2))
                out.gdp.add(_up(new * info.mu2))
            elif old == 0:
                out.non_gaussian += 1
            if info.curve is None:
                out.no_rdp += old == 0
            else:
                added = new - old
                if added == 1:
                    step = info.curve
                else:
                    with np.errstate(over="ignore"):
                        step = np.nextafter(added * info.curve, np.inf)
                out.rdp = _RdpSum(out.rdp, step)
        return out

    # ---- the bounds --------------------------------------------------------------------------------------------

    def basic(self) -> tuple[float, float]:
        return _up(self.eps.value), min(1.0, _up(self.delta.value))

    @property
    def gamma_total(self) -> float:
        return min(1.0, _up(self.gamma.value))

    def pure_epsilon(self) -> float:
        """ε at δ = 0: the claims' sum if they are all pure, or the events' largest losses summed."""
        eps_b, delta_b = self.basic()
        claims = eps_b if delta_b == 0 else math.inf
        events = (math.inf if self.unbounded else _up(self.pure.value)) if self.n_keys else 0.0
        return min(claims, events)

    def epsilon_at(
        self, delta: float, events: Any, *, cheap_enough: float | None = None, pld: bool = True
    ) -> tuple[float, str]:
        """The tightest valid ε at ``delta``: from the claims (basic, Kairouz–Oh–Viswanath) and the events.

        ``events()`` gives the merged events (only called for the numerical PLD). With ``cheap_enough``, the
        numerical composition is skipped when a closed form already gives ≤ it; with ``pld=False`` it is never
        computed (an upper bound still, a little looser).
        """
        if not self.n:
            return 0.0, "none"
        candidates = []
        if min(1.0, self.delta.upper()) <= delta:  # an exact sum is compared as it is (one Del(ε, δ) fits δ)
            candidates.append((_up(self.eps.value), "basic"))
        if delta > 0:
            # The slack δ̃ with 1 − (1 − δ̃)Π(1 − δᵢ) = δ, shaved so rounding cannot push the total past δ.
            slack = -math.expm1(math.log1p(-delta) - self.log1m.value) * (1 - 1e-9)
            if slack > 0:
                kov = _safe(_kov_epsilon, self.eps.value, self.eps_sq.value, self.drift.value, slack)
                candidates.append((kov, "advanced"))
        if cheap_enough is not None and candidates and min(candidates)[0] <= cheap_enough:
            return min(candidates)
        candidates.append(self._events_epsilon(delta, events, cheap_enough, pld))
        return min(candidates)

    def _events_epsilon(self, delta: float, events: Any, cheap_enough: float | None, pld: bool) -> tuple[float, str]:
        if not self.n_keys:
            return 0.0, "none"
        candidates = [(math.inf if self.unbounded else _up(self.pure.value), "pure")]
        if delta > 0:
            gaussian = self.non_gaussian == 0
            if gaussian:
                mu = _composed_mu(self.gdp.value)
                # δ_μ is decreasing in ε: "ε ≤ c" is "δ_μ(c) ≤ δ", one evaluation instead of a root-find.
                if cheap_enough is not None and _safe(_gdp_delta, mu, cheap_enough) <= delta:
                    candidates.append((cheap_enough, "gdp"))
                else:
                    candidates.append((_safe(_gdp_epsilon, mu, delta), "gdp"))
            if self.no_rdp == 0:
                candidates.append((_safe(_fixed_orders_epsilon_from_rdp, self.rdp.value(), delta), "rdp"))
            best = min(candidates)
            if gaussian or not pld or (cheap_enough is not None and best[0] <= cheap_enough):
                return best
            candidates.append((_safe(lambda: ComposedPLD(events()).epsilon(delta)), "pld"))
        return min(candidates)
