"""Privacy-parameter value classes: pure ε-DP, (ε, δ)-DP and (ε, δ, γ)-random DP (R: ``DPParams*``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import SupportsFloat

import attrs

from ._validation import check_in_range, refuse_subnormal

__all__ = ["Del", "Eps", "Gam"]


def _epsilon(value: SupportsFloat) -> float:
    epsilon = check_in_range(
        value,
        "epsilon",
        0.0,
        float("inf"),
        low_closed=False,
        high_closed=False,
        owner="the privacy parameters",
        fix="epsilon is the privacy loss: pass a finite positive number such as 1.0.",
    )
    return refuse_subnormal(epsilon, "epsilon", owner="the privacy parameters")


def _unit(name: str, meaning: str) -> Callable[[SupportsFloat], float]:
    def convert(value: SupportsFloat) -> float:
        probability = check_in_range(
            value,
            name,
            0.0,
            1.0,
            low_closed=True,
            high_closed=False,
            owner="the privacy parameters",
            fix=f"{name} is {meaning}: pass a probability such as 1e-6.",
        )
        return refuse_subnormal(probability, name, owner="the privacy parameters")

    return convert


# Named converters (not the factory calls inline): mypy's attrs plugin only reads a named function's parameter type,
# so Del(1.0, "x") is flagged by a type checker as well as at run time.
def _delta(value: SupportsFloat) -> float:
    return _unit("delta", "the probability the ε bound fails")(value)


def _gamma(value: SupportsFloat) -> float:
    return _unit("gamma", "the probability the sampled sensitivity fails")(value)


@attrs.frozen
class Eps:
    """Privacy level for pure ε-differential privacy.

    Parameters
    ----------
    epsilon : float
        The privacy loss ε; finite and strictly positive.

    Notes
    -----
    R equivalent: ``DPParamsEps``. Unlike R there is no default ε: a privacy level is never chosen for you.
    Values are validated at construction (NaN, infinities, bools and non-scalars raise). Objects are frozen;
    use :func:`attrs.evolve` to change a value.

    Examples
    --------
    >>> Eps(1.0)
    Eps(epsilon=1.0)
    >>> Eps(0.5).to_gamma(0.1)
    Gam(epsilon=0.5, delta=0.0, gamma=0.1)
    """

    epsilon: float = attrs.field(converter=_epsilon)

    @property
    def delta(self) -> float:
        """The δ of the guarantee: 0 for pure ε-DP."""
        return 0.0

    @property
    def gamma(self) -> float:
        """The γ of the guarantee: 0 unless the sensitivity was sampled."""
        return 0.0

    def to_gamma(self, gamma: float) -> Gam:
        """Return the random-DP parameters with this ε (and δ) and the given γ (R: ``toGamma``)."""
        return Gam(self.epsilon, self.delta, gamma)

    def __str__(self) -> str:
        return f"Differential privacy level ε={self.epsilon:g}"


@attrs.frozen
class Del(Eps):
    """Privacy level for approximate (ε, δ)-differential privacy.

    Parameters
    ----------
    epsilon : float
        The privacy loss ε; finite and strictly positive.
    delta : float, default 0.0
        The failure probability δ, in [0, 1).

    Notes
    -----
    R equivalent: ``DPParamsDel``. ``Del`` is a subclass of :class:`Eps`, so a ``Del`` is accepted wherever
    pure ε parameters are (its δ is then reported in the guarantee).

    Examples
    --------
    >>> Del(1.0, 1e-6)
    Del(epsilon=1.0, delta=1e-06)
    """

    delta: float = attrs.field(default=0.0, converter=_delta)

    def __str__(self) -> str:
        return f"Differential privacy level ε={self.epsilon:g}, δ={self.delta:g}"


@attrs.frozen
class Gam(Del):
    """Privacy level for (ε, δ, γ)-random differential privacy (Hall, Rinaldo & Wasserman 2013).

    With probability at least 1 − γ over neighbouring datasets drawn from the oracle's population (and the
    sensitivity sampler's randomness), the release is (ε, δ)-DP. This is what a mechanism whose sensitivity was
    estimated by :meth:`DPMech.sensitivity_sampler` guarantees.

    Parameters
    ----------
    epsilon : float
        The privacy loss ε; finite and strictly positive.
    delta : float, default 0.0
        δ in [0, 1).
    gamma : float, default 0.05
        γ in [0, 1), as R's default.

    Notes
    -----
    R equivalent: ``DPParamsGam``. "Random DP" here is not Rényi DP.
    """

    gamma: float = attrs.field(default=0.05, converter=_gamma)

    def __str__(self) -> str:
        return f"Random differential privacy level ε={self.epsilon:g}, δ={self.delta:g}, γ={self.gamma:g}"
