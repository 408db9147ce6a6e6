"""What one release costs, described exactly enough to compose tightly: a dominating pair per event type.

Every event knows its privacy curve (the hockey-stick divergence δ(ε) of its dominating pair, used by the
privacy-loss-distribution accountant), and where available its Rényi-DP curve and its largest privacy loss.
Events are frozen values; ``count`` says how many times the same release is composed.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal, SupportsFloat

import attrs
import numpy as np
import numpy.typing as npt

from ._validation import check_in_range, check_int, refuse_subnormal


def log_ndtr(x: npt.ArrayLike) -> npt.NDArray[np.float64]:
    from scipy.special import log_ndtr  # lazy: scipy.special costs ~0.25 s at import

    result: npt.NDArray[np.float64] = log_ndtr(x)
    return result


Relation = Literal["replace_one", "add_remove"]
"""A neighbouring relation: replace one record, or add/remove one record."""

RELATIONS: tuple[Relation, ...] = ("replace_one", "add_remove")

__all__ = [
    "ApproxDPEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "SubsampledGaussianEvent",
    "guarantee_event",
]

DEFAULT_ORDERS: np.ndarray = np.arange(2, 257, dtype=np.float64)
"""Integer Rényi orders 2..256, enough for the usual DP-SGD settings (the orders dp_accounting's RdpAccountant uses)."""


def check_orders(orders: Any) -> np.ndarray:
    """Validate Rényi orders: a non-empty 1-d array of finite numbers > 1."""
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ValueError(f"Rényi orders must be finite numbers > 1. Got {orders!r}.")
    return a


def rdp_sampled_gaussian(sampling_rate: float, noise_multiplier: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """Rényi DP of one step of the Poisson-sampled Gaussian mechanism (add/remove neighbours), per order.

    Parameters
    ----------
    sampling_rate : float
        q in [0, 1]: the probability that a record joins the sample.
    noise_multiplier : float
        σ > 0: noise standard deviation divided by the L2 sensitivity (the clipping norm).
    orders : array of int
        Integer Rényi orders α ≥ 2 (any order > 1 when q = 1).

    Returns
    -------
    ndarray
        ε(α) of one step; multiply by the number of steps to compose.

    Notes
    -----
    Mironov, Talwar & Zhang (2019), Sec. 3.3 / Abadi et al. (2016): for integer α,
    A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k exp((k²−k)/(2σ²)) and ε(α) = ln(A_α)/(α−1), evaluated with
    log-sum-exp and ``gammaln`` so large orders neither overflow nor lose precision. The analysis is for
    add/remove neighbours; see :mod:`diffpriv_py.accounting` for the replace-one relation.
    """
    q = check_in_range(sampling_rate, "sampling_rate", 0.0, 1.0, low_closed=True, high_closed=True)
    sigma = check_in_range(noise_multiplier, "noise_multiplier", 0.0, math.inf, low_closed=False, high_closed=False)
    a = check_orders(orders)
    if q == 0:
        return np.zeros_like(a)
    if q == 1:
        return a / (2 * sigma**2)
    if not np.allclose(a, np.round(a)):
        raise ValueError(f"The sampled Gaussian's Rényi curve is implemented for integer orders; got {orders!r}.")
    ai = np.round(a).astype(np.int64)
    k = np.arange(int(ai.max()) + 1, dtype=np.float64)
    alpha = ai[:, None].astype(np.float64)
    from scipy.special import gammaln, logsumexp  # lazy: scipy.special costs ~0.25 s at import

    log_comb = gammaln(alpha + 1) - gammaln(k + 1) - gammaln(np.maximum(alpha - k, 0) + 1)
    terms = log_comb + k * math.log(q) + (alpha - k) * math.log1p(-q) + (k * k - k) / (2 * sigma**2)
    terms = np.where(k[None, :] <= alpha, terms, -np.inf)
    result: np.ndarray = logsumexp(terms, axis=1) / (ai - 1)
    return result


# The P-mass a noise distribution may leave outside the grid on which its privacy loss is discretised (it is
# accounted for exactly by the discretisation, see ``_pld``; this only decides where the grid ends).
_TAIL_SIGMAS = 10.0


def _positive(value: SupportsFloat, name: str, *, allow_zero: bool = False) -> float:
    return check_in_range(
        value, name, 0.0, math.inf, low_closed=allow_zero, high_closed=False, owner="the privacy event"
    )


# One named converter per field: mypy's attrs plugin types a constructor argument only from a named function.
def _approx_epsilon(value: SupportsFloat) -> float:
    return _positive(value, "epsilon", allow_zero=True)


def _epsilon(value: SupportsFloat) -> float:
    return _positive(value, "epsilon")


def _mu(value: SupportsFloat) -> float:
    return _positive(value, "mu")


def _noise_multiplier(value: SupportsFloat) -> float:
    return refuse_subnormal(_positive(value, "noise_multiplier"), "noise_multiplier", owner="the privacy event")


def _delta(value: SupportsFloat) -> float:
    return check_in_range(value, "delta", 0.0, 1.0, low_closed=True, high_closed=False, owner="the privacy event")


def _sampling_rate(value: SupportsFloat) -> float:
    return check_in_range(
        value, "sampling_rate", 0.0, 1.0, low_closed=False, high_closed=True, owner="the privacy event"
    )


MAX_COUNT = 2**53
"""Most compositions of one event: the composed privacy loss, count times the event's, is exact in floating point
only up to 2^53 (a count above it is a typo or an overflow, not a training run)."""


def check_count(value: Any, name: str = "count", *, owner: str = "the privacy event") -> int:
    """A number of compositions (``count``, DP-SGD's ``steps``): an integer in [1, :data:`MAX_COUNT`]."""
    why = "the composed privacy loss, count times the event's, is exact in floating point only up to 2^53"
    return check_int(value, name, minimum=1, maximum=MAX_COUNT, why=why, owner=owner)


def _count(value: Any) -> int:
    return check_count(value)


@attrs.frozen(kw_only=True)
class Event:
    """Base of the privacy events: one release (composed ``count`` times) described by a dominating pair.

    Notes
    -----
    A dominating pair (P, Q) of a mechanism M is a pair of distributions whose hockey-stick divergence
    H_{e^ε}(P‖Q) = δ_{P,Q}(ε) bounds that of M(D) and M(D') for every neighbouring D, D' and every ε (Zhu, Dong
    & Wang 2022). Composition of mechanisms composes dominating pairs, which is what makes accounting with
    privacy-loss distributions tight. Subclasses give ``_delta`` (the curve) and ``_loss_range`` (where the
    privacy loss L = ln(dP/dQ) lives under P); ``_rdp`` and ``max_loss`` when they have closed forms.
    """

    count: int = attrs.field(default=1, converter=_count)

    symmetric: ClassVar[bool] = True
    """Whether (P, Q) and (Q, P) have the same curve; otherwise both directions are composed separately."""

    @property
    def max_loss(self) -> float:
        """The largest privacy loss of one occurrence (its pure ε); ``inf`` when there is none."""
        return math.inf

    @property
    def infinite_mass(self) -> float:
        """P-probability of an infinite privacy loss in one occurrence (the δ that no ε covers)."""
        return 0.0

    def _delta(self, epsilon: np.ndarray, direction: str) -> np.ndarray:
        raise NotImplementedError

    def _loss_range(self, direction: str) -> tuple[float, float]:
        raise NotImplementedError

    def _rdp(self, orders: np.ndarray) -> np.ndarray | None:
        """Rényi divergence of one occurrence at each order (max over both directions), or None if unknown."""
        return None

    def _key(self) -> Event:
        return self if self.count == 1 else attrs.evolve(self, count=1)

    def describe(self) -> str:
        """A short human-readable description, used by the accountant's summary."""
        base = self._describe()
        return base if self.count == 1 else f"{self.count} × {base}"

    def _describe(self) -> str:
        return type(self).__name__


def _pure_rdp_cap(value: np.ndarray, epsilon: float, orders: np.ndarray) -> np.ndarray:
    """A Rényi curve of an ε-DP pair, capped by the bounds every ε-DP pair meets: min(ε, αε²/2).

    D_α ≤ D_∞ = ε, and ε-DP implies ε²/2-zCDP, i.e. D_α ≤ αε²/2 (Bun & Steinke 2016, Prop. 3.3). For tiny ε the
    closed forms cancel catastrophically (they can even come out negative or NaN); the cap is then the answer,
    an upper bound that is never below the true divergence.
    """
    with np.errstate(over="ignore"):  # rounded up, so that an underflow to 0 still leaves a positive bound
        cap = np.minimum(epsilon, np.nextafter(orders * (epsilon * epsilon) / 2, np.inf))
    valid = np.isfinite(value) & (value > 0)
    return np.where(valid, np.minimum(value, cap), cap)


@attrs.frozen(kw_only=True)
class ApproxDPEvent(Event):
    """A release known only by its (ε, δ)-DP guarantee (pure ε-DP when δ = 0).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of one occurrence.
    delta : float, default 0.0
        δ in [0, 1) of one occurrence.
    count : int, default 1
        How many times the release is composed.

    Notes
    -----
    Uses the dominating pair of every (ε, δ)-DP mechanism (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan
    2016): P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0), Q = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ). Composing
    these pairs numerically is the optimal composition of (ε, δ)-DP mechanisms.
    """

    epsilon: float = attrs.field(converter=_approx_epsilon)
    delta: float = attrs.field(default=0.0, converter=_delta)

    @property
    def max_loss(self) -> float:
        return self.epsilon if self.delta == 0 else math.inf

    @property
    def infinite_mass(self) -> float:
        return self.delta

    def _delta(self, epsilon: np.ndarray, direction: str) -> np.ndarray:
        e, d = self.epsilon, self.delta
        x = np.exp(np.minimum(epsilon, 700.0))
        big = (1.0 - d) / (1.0 + math.exp(-e))  # (1−δ)e^ε/(1+e^ε)
        # (1−δ)/(1+e^ε); past ε = 700 e^ε overflows and 1 + e^−ε rounds to 1, so the ratio is (1−δ)e^−ε.
        small = (1.0 - d) / (1.0 + math.exp(e)) if e <= 700.0 else (1.0 - d) * math.exp(-e)
        result: np.ndarray = d + np.maximum(big - x * small, 0.0) + np.maximum(small - x * big, 0.0)
        return result

    def _loss_range(self, direction: str) -> tuple[float, float]:
        return -self.epsilon, self.epsilon

    def _rdp(self, orders: np.ndarray) -> np.ndarray | None:
        if self.delta > 0:
            return None
        e = self.epsilon
        # Rényi divergence of the randomised-response pair: ln((e^{αε} + e^{(1−α)ε})/(1 + e^ε))/(α − 1).
        a = orders
        with np.errstate(over="ignore"):
            num = np.logaddexp(a * e, (1.0 - a) * e) - np.logaddexp(0.0, e)
        return _pure_rdp_cap(num / (a - 1.0), e, a)

    def _describe(self) -> str:
        return f"(ε={self.epsilon:.4g}, δ={self.delta:.3g})-DP" if self.delta else f"{self.epsilon:.4g}-DP"


def guarantee_event(epsilon: float, delta: float, relation: Relation = "replace_one") -> ApproxDPEvent:
    """The accounting event of an (ε, δ) guarantee stated for ``relation``, in the accountant's replace-one terms.

    The accountant composes replace-one events (the library's relation). A replace-one guarantee is its own event.
    An add/remove-one guarantee is converted by group privacy: replacing one record (or person) is removing it and
    then adding another, so two add/remove steps D → D − x → D − x + y give (ε₁ + ε₂, δ₁ + e^{ε₁}δ₂) with
    ε₁ = ε₂ = ε and δ₁ = δ₂ = δ: add/remove (ε, δ)-DP implies replace-one (2ε, (1 + e^ε)δ)-DP. (The converse does
    not hold: a replace-one release may reveal the number of records.) The conversion keeps only the guarantee, so a
    mechanism's tighter events (its noise's exact privacy curve) are not used for add/remove releases.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee.
    relation : {"replace_one", "add_remove"}, default "replace_one"
        The neighbouring relation it is stated for.

    Returns
    -------
    ApproxDPEvent
        ``ApproxDPEvent(ε, δ)``, or ``ApproxDPEvent(2ε, min(1, (1 + e^ε)δ))`` for add/remove (δ capped below 1
        by the next float down: a δ of 1 says nothing and is not a valid event).
    """
    if relation == "replace_one":
        return ApproxDPEvent(epsilon=epsilon, delta=delta)
    if relation != "add_remove":
        raise ValueError(f"relation must be 'replace_one' or 'add_remove'; got {relation!r}.")
    factor = 1.0 + math.exp(epsilon) if epsilon < 700.0 else math.inf  # e^ε overflows beyond 709
    converted = delta if delta == 0 else min(math.nextafter(1.0, 0.0), factor * delta)
    return ApproxDPEvent(epsilon=2.0 * epsilon, delta=converted)


@attrs.frozen(kw_only=True)
class LaplaceEvent(Event):
    """A Laplace release: noise of scale b for an L1 sensitivity Δ, i.e. ``epsilon`` = Δ/b.

    Notes
    -----
    Dominating pair (Lap(0, b), Lap(Δ, b)) with curve δ(ε) = 1 − e^{(ε−ε₀)/2} for |ε| ≤ ε₀ (0 above, 1 − e^ε
    below). For a vector release with L1 sensitivity Δ the one-coordinate shift is the worst case (Zhu, Dong &
    Wang 2022); the test suite checks numerically that splitting the shift over coordinates never increases δ.
    Rényi curve from Mironov (2017), Prop. 6.
    """

    epsilon: float = attrs.field(converter=_epsilon)

    @property
    def max_loss(self) -> float:
        return self.epsilon

    def _delta(self, epsilon: np.ndarray, direction: str) -> np.ndarray:
        e0 = self.epsilon
        inside = -np.expm1(np.minimum(epsilon - e0, 0.0) / 2.0)
        below = -np.expm1(np.minimum(epsilon, 0.0))
        return np.where(epsilon >= e0, 0.0, np.where(epsilon <= -e0, below, inside))

    def _loss_range(self, direction: str) -> tuple[float, float]:
        return -self.epsilon, self.epsilon

    def _rdp(self, orders: np.ndarray) -> np.ndarray:
        e, a = self.epsilon, orders
        # ln(α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε})/(α−1), in log space.
        with np.errstate(over="ignore"):
            val = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * e, np.log((a - 1) / (2 * a - 1)) - a * e)
        return _pure_rdp_cap(val / (a - 1), e, a)

    def _describe(self) -> str:
        return f"Laplace(ε={self.epsilon:.4g})"


@attrs.frozen(kw_only=True)
class GaussianEvent(Event):
    """A Gaussian release: noise N(0, σ²) for an L2 sensitivity Δ, i.e. ``mu`` = Δ/σ (μ-Gaussian DP).

    Notes
    -----
    Dominating pair (N(0, σ²), N(Δ, σ²)), curve δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018;
    Dong, Roth & Su 2022). k such releases compose exactly into one with μ = √(Σμᵢ²). Rényi curve αμ²/2.
    """

    mu: float = attrs.field(converter=_mu)

    @classmethod
    def from_noise(cls, sigma: float, sensitivity: float = 1.0, *, count: int = 1) -> GaussianEvent:
        """The event of N(0, σ²) noise on a target of L2 sensitivity Δ."""
        return cls(mu=sensitivity / sigma, count=count)

    def _delta(self, epsilon: np.ndarray, direction: str) -> np.ndarray:
        return gaussian_curve(epsilon, self.mu)

    def _loss_range(self, direction: str) -> tuple[float, float]:
        m = self.mu
        return m * m / 2 - _TAIL_SIGMAS * m, m * m / 2 + _TAIL_SIGMAS * m

    def _rdp(self, orders: np.ndarray) -> np.ndarray | None:
        return orders * self.mu**2 / 2

    def _describe(self) -> str:
        return f"Gaussian(μ={self.mu:.4g})"


def gaussian_curve(epsilon: Any, mu: float) -> np.ndarray:
    """δ(ε) of μ-Gaussian DP, Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), in log space (no overflow, no cancellation)."""
    eps = np.asarray(epsilon, dtype=np.float64)
    log_a = log_ndtr(-eps / mu + mu / 2)
    log_b = log_ndtr(-eps / mu - mu / 2) + eps
    return np.where(log_b < log_a, np.exp(log_a) * -np.expm1(np.minimum(log_b - log_a, 0.0)), 0.0)


def _relation(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or value not in ("replace_one", "add_remove"):
        raise ValueError(
            f"relation must be 'replace_one' (datasets of equal size differing in one record) or 'add_remove' (one "
            f"record added or removed). Got {value!r}."
        )


@attrs.frozen(kw_only=True)
class SubsampledGaussianEvent(Event):
    """One step of DP-SGD: a Gaussian sum of clipped contributions over a Poisson sample (rate q).

    Parameters
    ----------
    noise_multiplier : float
        σ: the noise standard deviation divided by the clipping norm C.
    sampling_rate : float
        q in (0, 1]: each record joins the sample independently with probability q.
    relation : {"replace_one", "add_remove"}, default "replace_one"
        The neighbouring relation the pair is for.
    count : int, default 1
        Number of steps.

    Notes
    -----
    Dominating pairs, in units of C (Mironov, Talwar & Zhang 2019; Google's ``dp_accounting``):

    * add/remove, remove direction: P = (1−q)N(0, σ²) + qN(1, σ²), Q = N(0, σ²); the add direction swaps
      them. Both directions are composed and the worse curve is reported.
    * replace-one: P = (1−q)N(0, σ²) + qN(−1, σ²), Q = (1−q)N(0, σ²) + qN(1, σ²): the replaced record's
      clipped contribution moves from one point of the ball of radius C to the opposite one (the test suite
      checks numerically that other positions in the plane are dominated by this pair).
    """

    noise_multiplier: float = attrs.field(converter=_noise_multiplier)
    sampling_rate: float = attrs.field(converter=_sampling_rate)
    relation: Relation = attrs.field(default="replace_one", validator=_relation)

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return self.relation == "replace_one" or self.sampling_rate == 1.0

    def _pair_shift(self) -> float:
        return 2.0 if self.relation == "replace_one" and self.sampling_rate == 1.0 else 1.0

    # ---- privacy curves in closed form -------------------------------------------------------------------------

    def _delta(self, epsilon: np.ndarray, direction: str) -> np.ndarray:
        s, q = self.noise_multiplier, self.sampling_rate
        if q == 1.0:
            return gaussian_curve(epsilon, self._pair_shift() / s)
        if self.relation == "replace_one":
            return _replace_curve(epsilon, s, q)
        return _remove_curve(epsilon, s, q) if direction == "remove" else _add_curve(epsilon, s, q)

    def _loss_range(self, direction: str) -> tuple[float, float]:
        s, q = self.noise_multiplier, self.sampling_rate
        if q == 1.0:
            m = self._pair_shift() / s
            return m * m / 2 - _TAIL_SIGMAS * m, m * m / 2 + _TAIL_SIGMAS * m
        t = _TAIL_SIGMAS * s
        if self.relation == "replace_one":
            ys = np.array([-1.0 - t, t])
            loss = _replace_loss(ys, s, q)
        else:
            # ln(1 + q(e^z − 1)) = ln((1 − q) + q e^z), z = (2y − 1)/(2s²): in log space, so a small σ (z in the
            # thousands) gives a large finite loss instead of overflowing.
            ys = np.array([-t, 1.0 + t]) if direction == "remove" else np.array([-t, t])
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                z = (2 * ys - 1) * (0.5 / s / s)
                loss = np.logaddexp(math.log1p(-q), math.log(q) + z)
            loss = loss if direction == "remove" else -loss
        return float(loss.min()), float(loss.max())

    def _rdp(self, orders: np.ndarray) -> np.ndarray | None:
        if self.relation != "add_remove" and self.sampling_rate < 1.0:
            return None
        shift = self._pair_shift()
        if self.sampling_rate == 1.0:
            return orders * (shift / self.noise_multiplier) ** 2 / 2
        integer = np.isclose(orders, np.round(orders)) & (orders >= 2)
        out = np.full(orders.shape, np.inf)
        if integer.any():
            out[integer] = rdp_sampled_gaussian(self.sampling_rate, self.noise_multiplier, np.round(orders[integer]))
        return out

    def _describe(self) -> str:
        rel = "replace-one" if self.relation == "replace_one" else "add/remove"
        return f"subsampled Gaussian(σ={self.noise_multiplier:.4g}, q={self.sampling_rate:.4g}, {rel})"


def _log_diff(log_pos: np.ndarray, log_neg: np.ndarray) -> np.ndarray:
    """e^{log_pos} − e^{log_neg}, clipped at 0, without cancellation problems for tiny values."""
    with np.errstate(invalid="ignore"):
        out = np.exp(log_pos) * -np.expm1(np.minimum(log_neg - log_pos, 0.0))
    return np.where(log_neg < log_pos, out, 0.0)


def _remove_curve(epsilon: np.ndarray, s: float, q: float) -> np.ndarray:
    # P = (1−q)N(0,s²) + qN(1,s²), Q = N(0,s²); p/q = 1 − q + q·exp((2y − 1)/(2s²)) increases in y.
    out = -np.expm1(np.minimum(epsilon, 0.0))  # H = 1 − x when p ≥ xq everywhere (x = e^ε ≤ 1 − q)
    high = epsilon > math.log1p(-q)
    if np.any(high):
        e = epsilon[high]
        # ln(x − (1 − q)) = ln(q + expm1(ε)), kept accurate for small ε; past ε = 700 (a small σ) written as
        # ε + ln(1 − (1 − q)e^−ε), which does not overflow.
        log_excess = np.where(
            e > 700.0,
            e + np.log1p(-(1.0 - q) * np.exp(-np.maximum(e, 700.0))),
            np.log(q + np.expm1(np.minimum(e, 700.0))),
        )
        y = s * s * (log_excess - math.log(q)) + 0.5
        log_pos = math.log(q) + log_ndtr(-(y - 1.0) / s)
        log_neg = log_excess + log_ndtr(-y / s)
        out[high] = _log_diff(log_pos, log_neg)
    result: np.ndarray = out
    return result


def _add_curve(epsilon: np.ndarray, s: float, q: float) -> np.ndarray:
    # P = N(0,s²), Q = (1−q)N(0,s²) + qN(1,s²); p/q decreases in y; {p > xq} = {y < y*} when 1/x > 1 − q.
    out = np.zeros_like(epsilon, dtype=np.float64)
    live = epsilon < -math.log1p(-q)
    if np.any(live):
        e = epsilon[live]
        x = np.exp(e)
        # 1/x − (1 − q) = q − expm1(−ε) ... = q + expm1(−ε)
        log_excess = np.log(q + np.expm1(-e))
        y = s * s * (log_excess - math.log(q)) + 0.5
        log_pos = np.log1p(-x * (1.0 - q)) + log_ndtr(y / s)  # 1 − x(1 − q) > 0 here
        log_neg = e + math.log(q) + log_ndtr((y - 1.0) / s)
        out[live] = _log_diff(log_pos, log_neg)
    return out


def _replace_loss(y: np.ndarray, s: float, q: float) -> np.ndarray:
    """ln(p/q) of the replace-one pair at y: ln((1−q) + c e^{−y/s²}) − ln((1−q) + c e^{y/s²}), c = q e^{−1/(2s²)}."""
    inv = 0.5 / s / s  # 1/(2s²), +inf (not ZeroDivisionError) for a tiny s: the range is then refused by the PLD
    log_c = math.log(q) - inv
    log1q = math.log1p(-q)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.logaddexp(log1q, log_c - 2.0 * inv * y) - np.logaddexp(log1q, log_c + 2.0 * inv * y)


def _replace_curve(epsilon: np.ndarray, s: float, q: float) -> np.ndarray:
    # p/q decreases in y; {p > xq} = {u < u*} with u = e^{y/s²} the positive root of x c u² + (x−1)(1−q)u − c = 0,
    # x = e^ε, c = q e^{−1/(2s²)}. Solved in log space: c² underflows for σ below about 0.04 (c itself soon after),
    # and x overflows for ε > 709; either silently gave δ = 0, and so ε = 0.
    log_c = math.log(q) - 0.5 / s / s
    log1q = math.log1p(-q)
    log_q = math.log(q)
    finite = np.isfinite(epsilon)
    e = np.where(finite, epsilon, 0.0)
    with np.errstate(divide="ignore"):
        # ln|x − 1| = ln|expm1(ε)|, accurate for small |ε| and finite for large ε (−inf at ε = 0).
        log_xm1 = np.where(e > 0, e + np.log(-np.expm1(-np.maximum(e, 0.0))), np.log(-np.expm1(np.minimum(e, 0.0))))
    log_b = log_xm1 + log1q  # ln|b|, b = (x − 1)(1 − q)
    log_root = 0.5 * np.logaddexp(2.0 * log_b, math.log(4.0) + e + 2.0 * log_c)  # ln √(b² + 4xc²)
    # Stable root: u = 2c/(b + root) when b > 0 (rationalised), u = (root + |b|)/(2xc) when b ≤ 0.
    log_u = np.where(
        e > 0,
        math.log(2.0) + log_c - np.logaddexp(log_b, log_root),
        np.logaddexp(log_root, log_b) - math.log(2.0) - e - log_c,
    )
    y = s * s * log_u
    phi0 = log_ndtr(y / s)
    phi_plus = log_ndtr((y + 1.0) / s)
    phi_minus = log_ndtr((y - 1.0) / s)
    # H = (1 − x)(1 − q)Φ(y/s) + qΦ((y+1)/s) − x q Φ((y−1)/s), split into its positive and negative parts.
    first = log_xm1 + log1q + phi0  # ln(|1 − x|(1 − q)Φ(y/s)): positive part when x < 1, negative when x > 1
    pos = np.where(e < 0, np.logaddexp(first, log_q + phi_plus), log_q + phi_plus)
    neg_tail = e + log_q + phi_minus
    neg = np.where(e < 0, neg_tail, np.logaddexp(first, neg_tail))
    out = _log_diff(pos, neg)
    return np.where(finite, out, np.where(epsilon < 0, 1.0, 0.0))
