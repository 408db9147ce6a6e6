"""DP-SGD accounting: ε of a run of the Poisson-sampled Gaussian, and the noise multiplier for a target (ε, δ)."""

from __future__ import annotations

import functools
import math

from .._validation import check_in_range, refuse_subnormal
from ..events import Relation, SubsampledGaussianEvent, check_count
from ._pld import ComposedPLD, LossRangeError
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp, rdp_sampled_gaussian

__all__ = ["dpsgd_epsilon", "noise_multiplier_for"]

_MIN_RTOL = 1e-12
"""The finest relative precision of the calibrated noise multiplier (a few hundred ulps: bisection stops there)."""
_MAX_BISECTIONS = 200


def _check_options(neighbouring: str, method: str, sampling_rate: float) -> None:
    # isinstance first: an array would be compared element-wise (numpy's "truth value is ambiguous" error).
    if not isinstance(neighbouring, str) or neighbouring not in ("replace_one", "add_remove"):
        raise ValueError(
            f"neighbouring must be 'replace_one' (the library's relation) or 'add_remove' (the DP-SGD literature's). "
            f"Got {neighbouring!r}."
        )
    if not isinstance(method, str) or method not in ("pld", "rdp"):
        raise ValueError(f"method must be 'pld' (tightest) or 'rdp' (Rényi DP, as Opacus/TF Privacy). Got {method!r}.")
    if method == "rdp" and neighbouring == "replace_one" and sampling_rate < 1:
        raise ValueError(
            "The Rényi accountant of the Poisson-sampled Gaussian is for add/remove neighbours only (Mironov, Talwar "
            "& Zhang 2019). Use method='pld' for replace-one, or neighbouring='add_remove'."
        )


@functools.lru_cache(maxsize=4096)
def _epsilon(sigma: float, q: float, steps: int, delta: float, neighbouring: Relation, method: str) -> float:
    if method == "rdp":
        rdp = steps * rdp_sampled_gaussian(q, sigma, DEFAULT_ORDERS)
        return epsilon_from_rdp(DEFAULT_ORDERS, rdp, delta)[0]
    event = SubsampledGaussianEvent(noise_multiplier=sigma, sampling_rate=q, relation=neighbouring, count=steps)
    return ComposedPLD([event]).epsilon(delta)


def dpsgd_epsilon(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    neighbouring: str = "replace_one",
    method: str = "pld",
) -> float:
    """The ε of ``steps`` steps of DP-SGD (Poisson sampling at rate q, noise multiplier σ) at ``delta``.

    Parameters
    ----------
    noise_multiplier : float
        σ > 0: the Gaussian noise's standard deviation divided by the clipping norm.
    sampling_rate : float
        q in (0, 1]: the probability that a record joins a step's sample (expected batch size / n).
    steps : int
        Number of noisy steps T.
    delta : float
        δ in (0, 1).
    neighbouring : {"replace_one", "add_remove"}, default "replace_one"
        The neighbouring relation of the guarantee. Replace-one is the library's relation (and costs more ε);
        add/remove is the one DP-SGD papers and Opacus report.
    method : {"pld", "rdp"}, default "pld"
        ``"pld"``: numerical privacy-loss distribution, tight. ``"rdp"``: Rényi DP at orders 2..256 with the
        improved conversion, as Google's ``dp_accounting`` ``RdpAccountant`` (add/remove only).

    Returns
    -------
    float
        An upper bound on ε.

    Examples
    --------
    >>> from diffpriv_py.accounting import dpsgd_epsilon
    >>> round(dpsgd_epsilon(1.1, 256 / 60000, 14062, 1e-5, neighbouring="add_remove", method="rdp"), 3)
    2.597
    """
    sigma = check_in_range(
        noise_multiplier, "noise_multiplier", 0.0, math.inf, low_closed=False, high_closed=False, owner="dpsgd_epsilon"
    )
    refuse_subnormal(sigma, "noise_multiplier", owner="dpsgd_epsilon")
    q = check_in_range(
        sampling_rate, "sampling_rate", 0.0, 1.0, low_closed=False, high_closed=True, owner="dpsgd_epsilon"
    )
    t = check_count(steps, "steps", owner="dpsgd_epsilon")
    d = check_in_range(delta, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="dpsgd_epsilon")
    refuse_subnormal(d, "delta", owner="dpsgd_epsilon")
    refuse_subnormal(q, "sampling_rate", owner="dpsgd_epsilon")
    _check_options(neighbouring, method, q)
    return _epsilon(sigma, q, t, d, neighbouring, method)


@functools.lru_cache(maxsize=1024)
def _calibrate(
    epsilon: float, delta: float, q: float, steps: int, neighbouring: str, method: str, rtol: float
) -> float:
    def eps(sigma: float) -> float:
        try:
            return _epsilon(sigma, q, steps, delta, neighbouring, method)
        except LossRangeError:  # a loss too wide for the grid: its ε is beyond any target, treat it as too small
            return math.inf

    hi = 1.0
    while eps(hi) > epsilon:
        hi *= 2.0
        if hi > 1e6:
            raise ValueError(
                f"No noise multiplier up to 1e6 gives ε ≤ {epsilon} at δ = {delta} over {steps} steps at sampling_rate "
                f"{q}. Use fewer steps, a smaller sampling_rate, or a larger epsilon."
            )
    lo = hi / 2.0
    while eps(lo) <= epsilon:
        hi, lo = lo, lo / 2.0
        if lo < 1e-3:
            return hi
    # Each halving of log(hi/lo) takes one step: ~60 steps reach rtol = 1e-12 from a factor-2 bracket; the cap
    # and the fixed-point test stop a search that floating point cannot refine any further.
    for _ in range(_MAX_BISECTIONS):
        if not hi / lo - 1.0 > rtol:
            break
        mid = math.sqrt(lo * hi)
        if not lo < mid < hi:
            break
        if eps(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return hi


def noise_multiplier_for(
    epsilon: float,
    delta: float,
    sampling_rate: float,
    steps: int,
    *,
    neighbouring: str = "replace_one",
    method: str = "pld",
    rtol: float = 1e-3,
) -> float:
    """The smallest noise multiplier σ (to a relative ``rtol``, rounded up) giving (ε, δ)-DP after ``steps`` steps.

    Bisection on log σ of the decreasing function σ ↦ :func:`dpsgd_epsilon`; the upper end of the final bracket is
    returned, so the guarantee is always met. Parameters as :func:`dpsgd_epsilon`.

    Examples
    --------
    >>> from diffpriv_py.accounting import dpsgd_epsilon, noise_multiplier_for
    >>> sigma = noise_multiplier_for(8.0, 1e-5, 0.05, 200)
    >>> dpsgd_epsilon(sigma, 0.05, 200, 1e-5) <= 8.0
    True
    """
    e = check_in_range(
        epsilon, "epsilon", 0.0, math.inf, low_closed=False, high_closed=False, owner="noise_multiplier_for"
    )
    d = check_in_range(delta, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="noise_multiplier_for")
    refuse_subnormal(d, "delta", owner="noise_multiplier_for")
    q = check_in_range(
        sampling_rate, "sampling_rate", 0.0, 1.0, low_closed=False, high_closed=True, owner="noise_multiplier_for"
    )
    refuse_subnormal(q, "sampling_rate", owner="noise_multiplier_for")
    t = check_count(steps, "steps", owner="noise_multiplier_for")
    r = check_in_range(
        rtol,
        "rtol",
        _MIN_RTOL,
        0.5,
        low_closed=True,
        high_closed=True,
        owner="noise_multiplier_for",
        fix=f"Pass a relative precision between {_MIN_RTOL:g} and 0.5 (the default 1e-3 is plenty).",
    )
    _check_options(neighbouring, method, q)
    return _calibrate(e, d, q, t, neighbouring, method, r)
