"""Composition: closed-form theorems (basic, advanced, Kairouz–Oh–Viswanath, μ-GDP, zCDP) and :func:`compose`.

Every function returns an upper bound rounded *up* (``math.fsum`` then ``math.nextafter``), so floating-point
rounding never makes a guarantee look better than it is. :func:`compose` gives the privacy curve of a list of events
as the best of these bounds, Rényi DP and the numerical privacy-loss distribution.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from .._validation import check_in_range, check_int, check_real, check_size
from ..events import Event, GaussianEvent, gaussian_curve
from ._pld import ComposedPLD
from .rdp import _ACCOUNTANT_ORDERS, _fixed_orders_epsilon_from_rdp

__all__ = [
    "Composition",
    "advanced_composition",
    "basic_composition",
    "compose",
    "gdp_delta",
    "gdp_epsilon",
    "kov_composition",
    "zcdp_epsilon",
]


def _up(x: float) -> float:
    return math.nextafter(x, math.inf) if 0 < x < math.inf else x


_MAX_STEPS = 4096
"""Cap on the iterations of every search here: a search that has not converged by then raises a clear error."""


def _sequence(value: Any, name: str, owner: str) -> list[Any]:
    """A list of the items of a 1-d sequence of numbers; refuses strings, scalars and other non-sequences."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(
            f"The '{name}' parameter of {owner} must be a sequence of numbers (a list or a 1-d array). Got "
            f"{value!r} (type {type(value).__name__}). Pass e.g. {name}=[0.1, 0.2]."
        )
    items = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
    return items


def _eps_list(epsilons: Sequence[float], deltas: Sequence[float] | None, owner: str) -> tuple[list[float], list[float]]:
    eps = [
        check_in_range(e, "epsilons", 0.0, math.inf, low_closed=True, high_closed=False, owner=owner)
        for e in _sequence(epsilons, "epsilons", owner)
    ]
    if deltas is None:
        dels = [0.0] * len(eps)
    else:
        dels = [
            check_in_range(d, "deltas", 0.0, 1.0, low_closed=True, high_closed=True, owner=owner)
            for d in _sequence(deltas, "deltas", owner)
        ]
    if len(dels) != len(eps):
        raise ValueError(
            f"The 'epsilons' and 'deltas' parameters of {owner} must have the same length; got {len(eps)} and "
            f"{len(dels)}. Pass one delta per epsilon (or deltas=None for pure ε-DP releases)."
        )
    return eps, dels


def basic_composition(epsilons: Sequence[float], deltas: Sequence[float] | None = None) -> tuple[float, float]:
    """Sequential composition: (Σεᵢ, Σδᵢ) (Dwork, McSherry, Nissim & Smith 2006; Dwork & Lei 2009).

    Valid for adaptive composition under any neighbouring relation shared by all releases.
    """
    eps, dels = _eps_list(epsilons, deltas, "basic_composition")
    return _basic(np.asarray(eps), np.asarray(dels))


def _basic(eps: np.ndarray, dels: np.ndarray) -> tuple[float, float]:
    return _up(math.fsum(eps)), min(1.0, _up(math.fsum(dels)))


def advanced_composition(epsilon: float, delta: float, k: int, delta_slack: float) -> tuple[float, float]:
    """k-fold adaptive composition of (ε, δ)-DP releases (Dwork, Rothblum & Vadhan 2010; Dwork & Roth Thm 3.20).

    Returns (ε', kδ + δ') with ε' = ε√(2k ln(1/δ')) + kε(e^ε − 1), and never more than kε.
    """
    owner = "advanced_composition"
    e = check_in_range(epsilon, "epsilon", 0.0, math.inf, low_closed=True, high_closed=False, owner=owner)
    d = check_in_range(delta, "delta", 0.0, 1.0, low_closed=True, high_closed=True, owner=owner)
    k = check_size(k, "k", maximum=2**53, owner=owner)
    s = check_in_range(delta_slack, "delta_slack", 0.0, 1.0, low_closed=False, high_closed=False, owner=owner)
    # e^ε − 1 overflows for ε > 709; the bound is then kε anyway (the min below), which is the answer.
    growth = math.expm1(e) if e < 709.0 else math.inf
    eps = e * math.sqrt(2 * k * math.log(1 / s)) + k * e * growth
    return _up(min(eps, k * e)), min(1.0, _up(k * d + s))


def kov_composition(
    epsilons: Sequence[float], deltas: Sequence[float] | None, delta_slack: float
) -> tuple[float, float]:
    """Heterogeneous advanced composition of Kairouz, Oh & Viswanath (2017), Thm 3.5, as diffprivlib implements it.

    ε = min{Σεᵢ, Σεᵢtanh(εᵢ/2) + √(2Σεᵢ² ln(e + √(Σεᵢ²)/δ̃)), Σεᵢtanh(εᵢ/2) + √(2Σεᵢ² ln(1/δ̃))} and
    δ = 1 − (1 − δ̃)Π(1 − δᵢ), with slack δ̃ = ``delta_slack``.
    """
    eps, dels = _eps_list(epsilons, deltas, "kov_composition")
    s = check_in_range(
        delta_slack, "delta_slack", 0.0, 1.0, low_closed=False, high_closed=False, owner="kov_composition"
    )
    return _kov(np.asarray(eps), np.asarray(dels), s)


def _kov(eps: np.ndarray, dels: np.ndarray, s: float) -> tuple[float, float]:
    with np.errstate(over="ignore"):
        terms = (math.fsum(eps), _fsum(eps * eps), math.fsum(eps * np.tanh(eps / 2)))
    delta_total = -math.expm1(math.fsum(np.log1p(-dels)) + math.log1p(-s))
    return _kov_epsilon(*terms, s), min(1.0, _up(delta_total))


def _fsum(values: Any) -> float:
    try:
        return math.fsum(values)
    except OverflowError:  # an infinite (overflowed) term or partial sum: the sum is +inf for these ≥ 0 terms
        return math.inf


def _kov_epsilon(total: float, sq: float, drift: float, s: float) -> float:
    """The ε of :func:`kov_composition` from its sums Σεᵢ, Σεᵢ² and Σεᵢtanh(εᵢ/2) (kept running by the accountant)."""
    options = [total]
    if sq > 0:
        options.append(drift + math.sqrt(2 * sq * math.log(math.e + math.sqrt(sq) / s)))
        options.append(drift + math.sqrt(2 * sq * math.log(1 / s)))
    return _up(min(options))


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-Gaussian DP (Dong, Roth & Su 2022, Cor. 2.13): exact for Gaussian releases with Δ/σ = μ."""
    m = check_in_range(mu, "mu", 0.0, math.inf, low_closed=True, high_closed=False, owner="gdp_delta")
    e = check_real(epsilon, "epsilon", owner="gdp_delta")
    if math.isnan(e):
        raise ValueError(f"The 'epsilon' parameter of gdp_delta must be a number (±inf allowed), not NaN. Got {e!r}.")
    return _gdp_delta(m, e)


def _gdp_delta(m: float, e: float) -> float:
    if m == 0:
        return 0.0 if e >= 0 else -math.expm1(e)
    return float(gaussian_curve(e, m))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest ε ≥ 0 with δ_μ(ε) ≤ δ for μ-Gaussian DP (bisection to 1e-12, rounded up).

    Composition of Gaussian releases is exact in this form: μ = √(Σμᵢ²) (Dong, Roth & Su 2022, Cor. 3.3).
    """
    m = check_in_range(mu, "mu", 0.0, math.inf, low_closed=True, high_closed=False, owner="gdp_epsilon")
    d = check_in_range(delta, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="gdp_epsilon")
    return _gdp_epsilon(m, d)


def _gdp_epsilon(m: float, d: float) -> float:
    from scipy.optimize import brentq  # lazily: scipy.optimize is heavy and most imports never calibrate

    if m == 0 or _gdp_delta(m, 0.0) <= d:
        return 0.0
    hi = max(1.0, m * m / 2 + 10 * m)
    if not math.isfinite(hi):  # ε ≈ μ²/2 (+ O(μ)) is beyond float64: no finite ε to report
        raise ValueError(
            f"The 'mu' of μ-Gaussian DP is {m!r}: its ε at δ = {d!r} is about μ²/2, beyond the largest float. Such a "
            "release gives no meaningful guarantee; use more noise (μ = sensitivity / σ)."
        )
    for _ in range(_MAX_STEPS):
        if not _gdp_delta(m, hi) > d:
            break
        hi *= 2
    else:  # pragma: no cover - δ_μ(ε) → 0 as ε → ∞, so doubling always ends well before the cap
        raise ArithmeticError(f"gdp_epsilon: no ε up to {hi:g} meets δ = {d!r} for μ = {m!r}.")
    root: float = brentq(lambda e: _gdp_delta(m, e) - d, 0.0, hi, xtol=1e-13, rtol=1e-13, maxiter=_MAX_STEPS)
    # Narrow [lo, hi] by bisection on the doubles until they are adjacent, with δ(lo) > d ≥ δ(hi): the reported ε is
    # the smallest double at which the curve is met, whatever path brentq took (so it does not depend on the scipy
    # version), and it is never below the root.
    lo, hi = max(0.0, root * (1 - 1e-9)), root * (1 + 1e-9) + 1e-300
    for _ in range(_MAX_STEPS):
        if _gdp_delta(m, hi) <= d:
            break
        lo, hi = hi, hi * 2
    for _ in range(_MAX_STEPS):
        if lo == 0.0 or _gdp_delta(m, lo) > d:
            break
        lo, hi = lo / 2, lo
    for _ in range(_MAX_STEPS):
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:
            return hi
        if _gdp_delta(m, mid) > d:
            lo = mid
        else:
            hi = mid
    raise ArithmeticError(f"gdp_epsilon: could not meet δ = {d!r} for μ = {m!r}.")  # pragma: no cover


def zcdp_epsilon(rho: float, delta: float) -> float:
    """(ε, δ) from ρ-zCDP through its Rényi curve ρα and the improved conversion (Canonne, Kamath & Steinke 2020).

    Slightly better than Bun & Steinke's ρ + 2√(ρ ln(1/δ)); minimised over the order α numerically.
    """
    from .rdp import epsilon_from_rdp

    r = check_in_range(rho, "rho", 0.0, math.inf, low_closed=True, high_closed=False, owner="zcdp_epsilon")
    check_in_range(delta, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="zcdp_epsilon")
    if r == 0:
        return 0.0
    orders = np.concatenate([np.linspace(1.02, 2, 50), np.geomspace(2, 1e6, 2000)])
    return epsilon_from_rdp(orders, r * orders, delta)[0]


# ---- composition of a list of events ------------------------------------------------------------------------------


def _composed_mu(terms: float) -> float:
    """μ = √(Σ countᵢ·μᵢ²) rounded up: a larger μ only weakens the reported guarantee, never overstates it."""
    return _up(math.sqrt(_up(terms)))


def _safe(compute: Any, *args: Any) -> float:
    """A candidate bound, or ``inf`` if computing it fails (a failed method never makes the answer smaller)."""
    try:
        value = float(compute(*args))
    except (ArithmeticError, ValueError, MemoryError, FloatingPointError):
        return math.inf
    return value if value >= 0 else math.inf  # NaN and negative answers are not bounds: ignore them


def _rdp_curve(key: Event) -> np.ndarray | None:
    """The Rényi curve of one event at the accountant's orders; ``+inf`` where its evaluation failed; or None."""
    try:
        curve = key._rdp(_ACCOUNTANT_ORDERS)
    except (ArithmeticError, ValueError, MemoryError):  # pragma: no cover - defensive: RDP is then unused
        return None
    if curve is None:
        return None
    curve = np.asarray(curve, dtype=np.float64)
    # A NaN or negative divergence is a failed evaluation: +inf there (that order is then never used).
    result: np.ndarray = np.where(np.isnan(curve) | (curve < 0), np.inf, curve)
    return result


def _merge(events: Sequence[Event]) -> list[Event]:
    counts: dict[Event, int] = {}
    for e in events:
        key = e._key()
        counts[key] = counts.get(key, 0) + e.count
    return [attrs.evolve(k, count=c) for k, c in counts.items()]


@attrs.frozen(eq=False)
class Composition:
    """The composed privacy curve of a list of events: ``epsilon(delta)`` and ``delta(epsilon)``, upper bounds.

    ``epsilon(delta)`` is the minimum over every valid method: the pure sum, exact μ-GDP (all Gaussian), Rényi
    DP with the improved conversion, and the numerical privacy-loss distribution (always applicable); the
    method that won is returned by :meth:`epsilon_with_method`. Build one with :func:`compose`.
    """

    events: tuple[Event, ...]
    n_points: int = 2**14

    def pure_epsilon(self) -> float:
        """Σ of the events' largest losses: the ε at δ = 0 (``inf`` if some event has none)."""
        total = math.fsum(e.count * e.max_loss for e in self.events) if self.events else 0.0
        return _up(total)

    @functools.cached_property
    def _pld(self) -> ComposedPLD:
        """The numerical privacy-loss distribution, built once: ``epsilon`` and ``delta`` at several points reuse it."""
        return ComposedPLD(self.events, n_points=self.n_points)

    def epsilon_with_method(self, delta: float, *, cheap_enough: float | None = None) -> tuple[float, str]:
        """(ε, method) at ``delta``; with ``cheap_enough``, skip the numerical method once a bound ≤ it is found."""
        if not self.events:
            return 0.0, "none"
        delta = _check_delta(delta, "Composition.epsilon_with_method")
        candidates: list[tuple[float, str]] = [(_safe(self.pure_epsilon), "pure")]
        if delta > 0:
            gaussians = [e for e in self.events if isinstance(e, GaussianEvent)]
            if len(gaussians) == len(self.events):
                # μ·μ (not μ**2) and _fsum: a huge μ gives an infinite μ, not an OverflowError.
                mu = _composed_mu(_fsum([_up(e.count * _up(e.mu * e.mu)) for e in gaussians]))
                candidates.append((_safe(_gdp_epsilon, mu, delta), "gdp"))
            curves = [c for e in self.events if (c := _rdp_curve(e._key())) is not None]
            if len(curves) == len(self.events):
                with np.errstate(over="ignore", invalid="ignore"):
                    total = np.sum([e.count * c for e, c in zip(self.events, curves, strict=True)], axis=0)
                candidates.append((_safe(_fixed_orders_epsilon_from_rdp, total, delta), "rdp"))
            best = min(candidates)
            if "gdp" in {m for _, m in candidates} or (cheap_enough is not None and best[0] <= cheap_enough):
                return best
            candidates.append((_safe(lambda: self._pld.epsilon(delta)), "pld"))
        return min(candidates)

    def epsilon(self, delta: float) -> float:
        """An upper bound on the composed ε at ``delta`` (``inf`` if no ε is valid)."""
        return self.epsilon_with_method(_check_delta(delta, "Composition.epsilon"))[0]

    def delta(self, epsilon: float) -> float:
        """An upper bound on the composed δ at ``epsilon`` (exact μ-GDP for Gaussians, else the numerical PLD)."""
        epsilon = check_in_range(
            epsilon, "epsilon", 0.0, math.inf, low_closed=True, high_closed=False, owner="Composition.delta"
        )
        if not self.events or epsilon >= self.pure_epsilon():
            return 0.0
        gaussians = [e for e in self.events if isinstance(e, GaussianEvent)]
        if len(gaussians) == len(self.events):
            mu = _composed_mu(_fsum([_up(e.count * _up(e.mu * e.mu)) for e in gaussians]))
            return gdp_delta(mu, epsilon)
        return self._pld.delta(epsilon)


def as_events(events: Any, *, owner: str, after: str = "") -> tuple[Event, ...]:
    """``events`` as a tuple of privacy events, or a TypeError naming ``owner`` (and ending with ``after``)."""
    if (
        isinstance(events, (Event, str, bytes))
        or not hasattr(events, "__iter__")
        or (isinstance(events, np.ndarray) and events.ndim == 0)  # iterable by type, but iter() raises
    ):
        raise TypeError(
            f"The 'events' parameter of {owner} must be a sequence of privacy events; got {events!r}. Pass e.g. "
            f"events=[LaplaceEvent(epsilon=0.1)].{after}"
        )
    out = tuple(events)
    for e in out:
        if not isinstance(e, Event):
            raise TypeError(f"{owner} takes privacy events (e.g. LaplaceEvent(epsilon=0.1)); got {e!r}.{after}")
    return out


def compose(events: Sequence[Event], *, n_points: int = 2**14) -> Composition:
    """Compose privacy events (identical ones are merged) into a :class:`Composition`.

    Examples
    --------
    >>> from diffpriv_py.accounting import LaplaceEvent, compose
    >>> round(compose([LaplaceEvent(epsilon=0.1, count=100)]).epsilon(1e-6), 2)
    4.69
    """
    events = as_events(events, owner="compose()")
    n = check_int(n_points, "n_points", minimum=_MIN_POINTS, owner="compose")
    if n > _MAX_POINTS:
        raise ValueError(
            f"The 'n_points' parameter of compose() must be an integer in [{_MIN_POINTS}, {_MAX_POINTS}]. Got {n}. "
            "The default 2**14 is accurate to ~0.05 % of ε; more points cost memory and time for little gain."
        )
    return Composition(events=tuple(_merge(events)), n_points=n)


_MIN_POINTS = 64
_MAX_POINTS = 2**22


def _check_delta(delta: Any, owner: str) -> float:
    return check_in_range(delta, "delta", 0.0, 1.0, low_closed=True, high_closed=False, owner=owner)
