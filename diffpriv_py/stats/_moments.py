"""DP count, sum, mean, variance, standard deviation and covariance of bounded data (replace-one neighbours)."""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np

from .._blockwise import first_block, is_out_of_core, map_reduce, n_rows
from .._rng import RNGLike
from ..privacy import Eps
from ._common import (
    MECHANISMS,
    NAN_POLICIES,
    Plan,
    as_data,
    check_axis,
    check_bool,
    check_bounds,
    check_choice,
    check_ddof,
    check_params,
    finish,
    nan_error,
    release,
    sensitivities,
)
from ._kernels import clipped_moments, clipped_sum, non_missing, omit_moments

__all__ = ["count", "covariance", "mean", "std", "sum", "var"]

# Worst change of the normalised sufficient statistics of one value under nan_policy="omit" (see _omit_plan):
# a value u ∈ [−½, ½] turning into NaN moves (count, Σu, Σu²) by (1, ½, ¼).
_OMIT_L1 = {1: 1.5, 2: 1.75}
_OMIT_L2 = {1: math.sqrt(1.25), 2: math.sqrt(1.3125)}


@attrs.frozen(eq=False)
class ClippedStatistic:
    """Target of a DP moment statistic: clip to the public bounds, compute, and scale by a public constant.

    Calling it on a dataset gives the exact (non-private) value that the mechanism noises; it raises on NaN under
    ``nan_policy="raise"``. It is public so that tests and the sensitivity sampler can evaluate it on neighbours.
    """

    statistic: str
    lower: np.ndarray
    upper: np.ndarray
    axis: int | None = None
    nan_policy: str = "raise"
    ddof: int = 0
    scale: Any = 1.0
    who: str = "dp.stats"

    def __call__(self, data: Any) -> np.ndarray:
        if is_out_of_core(data):
            value = self._blockwise(data)
            if self.nan_policy == "raise" and np.isnan(value).any():
                raise nan_error(self.who)
            return value / self.scale
        x = as_data(data, who=self.who, allow_bool=self.statistic == "count")
        if self.statistic == "count":
            value = non_missing(x, self.axis)
        elif self.nan_policy == "omit":
            value = self._omit(x)
        elif self.statistic in ("sum", "mean"):
            value = clipped_sum(x, self.lower, self.upper, self.axis)
            if self.statistic == "mean":
                value = value / _values_per_statistic(x, self.axis)
        else:
            _, m2, m = clipped_moments(x, self.lower, self.upper, self.axis)
            value = m2 / (m - self.ddof)
        if self.nan_policy == "raise" and np.isnan(value).any():
            raise nan_error(self.who)
        return value / self.scale

    def _block(self, block: Any) -> np.ndarray:
        return as_data(block, who=self.who, allow_bool=self.statistic == "count")

    def _blockwise(self, data: Any) -> np.ndarray:
        """The same value for dask data or Chunks, from per-block sums (per-block moments for the variance)."""
        if self.axis == 1:
            raise ValueError(_AXIS1_OUT_OF_CORE.format(who=self.who))
        if self.statistic == "count":
            return map_reduce(data, lambda b: non_missing(self._block(b), self.axis))
        if self.nan_policy == "omit":
            return map_reduce(data, lambda b: self._omit(self._block(b)))
        if self.statistic in ("sum", "mean"):
            total, m = map_reduce(data, self._block_sum)
            return total if self.statistic == "sum" else total / m
        m2, m = map_reduce(data, self._block_moments, combine=_chan)
        return m2 / (m - self.ddof)

    def _block_sum(self, block: Any) -> tuple[np.ndarray, int]:
        x = self._block(block)
        return clipped_sum(x, self.lower, self.upper, self.axis), _values_per_statistic(x, self.axis)

    def _block_moments(self, block: Any) -> tuple[int, np.ndarray, np.ndarray]:
        x = self._block(block)
        mean, m2, _ = clipped_moments(x, self.lower, self.upper, self.axis)
        return _values_per_statistic(x, self.axis), np.atleast_1d(mean), np.atleast_1d(m2)

    def _omit(self, x: np.ndarray) -> np.ndarray:
        centre, width = _centre_width(self.lower, self.upper, self.axis)
        order = 2 if self.statistic == "var" else 1
        stats = omit_moments(x, self.lower, self.upper, centre, width, self.axis, order)
        if self.statistic == "sum":
            # Σ clip(x) over the present values = centre·count + width·Σu (exact algebra, no extra pass).
            return centre * stats[0] + width * stats[1]
        return stats.ravel()


_AXIS1_OUT_OF_CORE = (
    "{who} with axis=1 releases one value per record, which does not fit the blockwise (out-of-core) path; "
    "use axis=None or axis=0 on dask data or Chunks, or compute per-record statistics in memory."
)


def _chan(parts: list[tuple[int, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, int]:
    """Total M2 and count from per-block (count, mean, M2), by Chan, Golub & LeVeque's update (as in the kernel)."""
    counts = np.array([float(c) for c, _, _ in parts])
    means = np.stack([mu for _, mu, _ in parts])
    total = counts.sum()
    mean = (counts[:, None] * means).sum(axis=0) / total
    m2 = np.stack([q for _, _, q in parts]).sum(axis=0) + (counts[:, None] * np.square(means - mean)).sum(axis=0)
    return (m2 if m2.size > 1 else np.asarray(m2[0])), int(total)


def _values_per_statistic(x: np.ndarray, axis: int | None) -> int:
    if x.ndim == 1:
        return x.shape[0]
    return {None: x.size, 0: x.shape[0], 1: x.shape[1]}[axis]


def _centre_width(lo: np.ndarray, hi: np.ndarray, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    if axis is None:
        a, b = lo.min(), hi.max()
        return np.asarray((a + b) / 2), np.asarray(b - a)
    return (lo + hi) / 2, hi - lo


def _popoviciu(m: int) -> float:
    """Largest sum of squared deviations of m values in an interval of width 1: ⌊m/2⌋⌈m/2⌉/m (Popoviciu 1935)."""
    return (m // 2) * ((m + 1) // 2) / m


@attrs.frozen
class _Shape:
    n: int
    d: int
    axis: int | None
    two_d: bool

    @property
    def per_statistic(self) -> int:
        """Number of values each released statistic aggregates."""
        if self.axis == 0:
            return self.n
        if self.axis == 1:
            return self.d
        return self.n * self.d

    @property
    def together(self) -> bool:
        return self.axis != 1


def _shape(x: np.ndarray, axis: int | None) -> _Shape:
    return _Shape(n=x.shape[0], d=1 if x.ndim == 1 else x.shape[1], axis=axis, two_d=x.ndim == 2)


def _ranges(lo: np.ndarray, hi: np.ndarray, d: int) -> np.ndarray:
    return np.broadcast_to(hi - lo, (d,)).astype(np.float64)


def _raise_plan(statistic: str, s: _Shape, lo: np.ndarray, hi: np.ndarray, ddof: int, who: str) -> Plan:
    """Plans under nan_policy="raise": the number of values is public, so it appears in the sensitivity."""
    r = _ranges(lo, hi, s.d)
    lo_d, hi_d = np.broadcast_to(lo, (s.d,)), np.broadcast_to(hi, (s.d,))
    span = float(hi_d.max() - lo_d.min())
    m = s.per_statistic
    scale: Any = 1.0
    if statistic in ("sum", "mean"):
        # A replaced record moves each of its clipped values by at most the width of its column's bounds.
        if s.axis == 0:
            scale = r if statistic == "sum" else r.copy()
            per = np.full(s.d, 1.0 if statistic == "sum" else 1.0 / s.n)
            low, high = (s.n * lo_d, s.n * hi_d) if statistic == "sum" else (lo_d, hi_d)
        else:
            total = float(r.sum())
            per = np.full(s.n if s.axis == 1 else 1, total if statistic == "sum" else total / m)
            if statistic == "sum":
                low, high = (lo_d.sum(), hi_d.sum()) if s.axis == 1 else (s.n * lo_d.sum(), s.n * hi_d.sum())
            else:
                low, high = lo_d.mean(), hi_d.mean()

        def post(v: np.ndarray, low: Any = low, high: Any = high, scale: Any = scale) -> np.ndarray:
            return np.clip(v * scale, low, high)

    else:  # var
        ddof = check_ddof(ddof, m, who=who)
        if s.axis == 0:
            # Chan's update: SS(y ∪ rest) = SS(rest) + (n−1)/n·(y − mean(rest))², so one value moves SS by at
            # most (n−1)/n·r²; in units of r_j² every column moves by (n−1)/(n(n−ddof)).
            scale = np.square(r)
            per = np.full(s.d, (s.n - 1) / (s.n * (s.n - ddof)))
            cap = _popoviciu(m) / (m - ddof)
        elif s.axis == 1:
            # One record's row variance ranges over [0, Popoviciu bound]; only its own coordinate moves.
            per = np.full(s.n, _popoviciu(m) * span**2 / (m - ddof))
            cap = per[0]
        else:
            # d values of one record replaced among N = n·d: SS moves by at most
            # min(d, ⌊d²/4⌋/d + d(N−d)/N)·span² (block version of Chan's update; d = 1 gives (N−1)/N).
            k = s.d
            ss = min(k, _popoviciu(k) + k * (m - k) / m) * span**2
            per = np.array([ss / (m - ddof)])
            cap = _popoviciu(m) * span**2 / (m - ddof)

        def post(v: np.ndarray, scale: Any = scale, cap: float = cap) -> np.ndarray:
            return np.clip(v, 0.0, cap) * scale

    l1, l2 = sensitivities(per, together=s.together)
    target = ClippedStatistic(statistic, lo, hi, axis=s.axis, ddof=ddof, scale=scale, who=who)
    return Plan(target=target, l1=l1, l2=l2, dims=per.size, postprocess=post, accuracy=_scaled_error(scale))


def _scaled_error(scale: Any) -> Any:
    """Error map of a statistic reported as clip(scale·v) (or clip(v)·scale): the public factor multiplies the
    noise's half-width, and clipping into a range that holds the exact value never moves the estimate further."""
    return lambda h, v: h * np.abs(scale)


def _std_error(var_error: Any, var_post: Any, h: np.ndarray, v: np.ndarray) -> np.ndarray:
    var = np.asarray(var_post(v), dtype=np.float64)
    width = np.asarray(var_error(h, v), dtype=np.float64)
    root = np.sqrt(var)
    return np.maximum(root - np.sqrt(np.maximum(var - width, 0.0)), np.sqrt(var + width) - root)


def _omit_plan(statistic: str, s: _Shape, lo: np.ndarray, hi: np.ndarray, ddof: int, who: str) -> Plan:
    """Plans under nan_policy="omit": the number of present values is private, so it is released too (or avoided).

    Each value is normalised to u = (clip(x) − c)/w ∈ [−½, ½] (c, w the centre and width of its bounds). Mean and
    variance release the vector (count, Σu[, Σu²]) per group and divide afterwards; one value turning into NaN
    moves it by at most (1, ½, ¼), and a value changing by at most (0, 1, ¼) — so L1 ≤ 1.5 (mean) or 1.75 (var)
    per value. The sum needs no count: a missing value contributes 0, so each record moves it by at most
    max(hi, 0) − min(lo, 0).
    """
    if s.axis == 1:
        raise ValueError(
            f"{who} supports nan_policy='omit' with axis=None or axis=0 only; with axis=1 use nan_policy='raise' "
            "after imputing missing values with a public value."
        )
    ddof = check_ddof(ddof, s.per_statistic, who=who)
    centre, width = _centre_width(lo, hi, s.axis)
    groups = 1 if s.axis is None else s.d
    cells = s.d if s.axis is None else 1  # values of one record inside one group
    lo_d, hi_d = np.broadcast_to(lo, (s.d,)), np.broadcast_to(hi, (s.d,))
    if statistic == "sum":
        reach = np.maximum(hi_d, 0.0) - np.minimum(lo_d, 0.0)
        if s.axis is None:
            scale: Any = 1.0
            per = np.array([float(reach.sum())])
            low, high = s.n * float(np.minimum(lo_d, 0).sum()), s.n * float(np.maximum(hi_d, 0).sum())
        else:
            scale = reach
            per = np.ones(s.d)
            low, high = s.n * np.minimum(lo_d, 0.0), s.n * np.maximum(hi_d, 0.0)

        def post(v: np.ndarray) -> np.ndarray:
            return np.clip(v * scale, low, high)

        l1, l2 = sensitivities(per, together=True)
        target = ClippedStatistic("sum", lo, hi, axis=s.axis, nan_policy="omit", scale=scale, who=who)
        return Plan(target=target, l1=l1, l2=l2, dims=per.size, postprocess=post, accuracy=_scaled_error(scale))

    order = 2 if statistic == "var" else 1
    if s.axis is None:
        l1, l2 = cells * _OMIT_L1[order], cells * _OMIT_L2[order]
    else:
        l1, l2 = groups * _OMIT_L1[order], math.sqrt(groups) * _OMIT_L2[order]
    max_count = s.n * cells

    def post(v: np.ndarray) -> np.ndarray:
        stats = v.reshape(order + 1, groups)
        count = np.clip(stats[0], 1.0, max_count)
        mean_u = np.clip(stats[1] / count, -0.5, 0.5)
        if statistic == "mean":
            low, high = (lo_d.min(), hi_d.max()) if s.axis is None else (lo_d, hi_d)
            return np.clip(centre + width * mean_u, low, high)
        count = np.maximum(count, ddof + 1.0)
        var_u = np.clip(stats[2] / count - mean_u**2, 0.0, 0.25) * count / (count - ddof)
        return var_u * np.square(width)

    target = ClippedStatistic(statistic, lo, hi, axis=s.axis, nan_policy="omit", ddof=ddof, who=who)
    return Plan(target=target, l1=l1, l2=l2, dims=(order + 1) * groups, postprocess=post)


def _count_plan(s: _Shape, who: str) -> Plan:
    # One record changes whether each of its d values is present (or True): at most 1 per value.
    if s.axis is None:
        per, cap = np.array([float(s.d)]), s.n * s.d
    elif s.axis == 0:
        per, cap = np.ones(s.d), s.n
    else:
        per, cap = np.full(s.n, float(s.d)), s.d
    l1, l2 = sensitivities(per, together=s.together)

    def post(v: np.ndarray) -> np.ndarray:
        return np.clip(np.rint(v), 0, cap).astype(np.int64)

    def error(h: np.ndarray, v: np.ndarray) -> np.ndarray:
        # The exact count c is an integer: |v − c| ≤ h implies |rint(v) − c| ≤ ⌊h + ½⌋ (h itself for integer noise).
        return np.floor(h + 0.5)

    target = ClippedStatistic("count", np.asarray(0.0), np.asarray(1.0), axis=s.axis, who=who)
    return Plan(target=target, l1=l1, l2=l2, dims=per.size, postprocess=post, integer=True, accuracy=error)


def _run(
    statistic: str,
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any,
    axis: Any,
    nan_policy: str,
    mechanism: str,
    ddof: int,
    rng: RNGLike,
    accountant: Any,
    full_response: Any,
    who: str,
) -> Any:
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, who=who)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, who=who)
    check_params(privacy_params, mechanism, who=who)
    full_response = check_bool(full_response, "full_response", who=who)
    out_of_core = is_out_of_core(x)
    # Out-of-core data (dask, Chunks): the first block gives the layout and dtype, one cheap pass the public n.
    data = as_data(first_block(x) if out_of_core else x, who=who, allow_bool=statistic == "count")
    ax = check_axis(axis, data.ndim, who=who)
    if out_of_core and ax == 1:
        raise ValueError(_AXIS1_OUT_OF_CORE.format(who=who))
    s = _shape(data, ax) if not out_of_core else attrs.evolve(_shape(data, ax), n=n_rows(x))
    if statistic == "count":
        plan = _count_plan(s, who)
    else:
        lo, hi = check_bounds(bounds, s.d if s.two_d else None, who=who)
        stat = "var" if statistic == "std" else statistic
        if nan_policy == "omit" and data.dtype.kind == "f":
            plan = _omit_plan(stat, s, lo, hi, ddof, who)
        else:
            plan = _raise_plan(stat, s, lo, hi, ddof, who)
    if statistic == "std":
        var_post = plan.postprocess
        plan = attrs.evolve(plan, postprocess=lambda v, p=plan.postprocess: np.sqrt(p(v)))
        if plan.accuracy is not None:
            # The exact variance lies in [v − h, v + h] ∩ [0, ∞) (v the reported variance), so the exact std lies in
            # [√max(v − h, 0), √(v + h)]; the half-width is the larger distance from √v to its ends.
            plan = attrs.evolve(plan, accuracy=functools.partial(_std_error, plan.accuracy, var_post))
    scalar = not s.two_d or ax is None
    plan = attrs.evolve(plan, postprocess=lambda v, p=plan.postprocess: finish(np.asarray(p(v)), scalar))
    if plan.accuracy is not None:
        plan = attrs.evolve(
            plan, accuracy=lambda h, v, e=plan.accuracy: finish(np.asarray(e(h, v), dtype=float), scalar)
        )
    return release(
        plan,
        privacy_params,
        x if out_of_core else data,
        mechanism=mechanism,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
    )


_COMMON_PARAMS = """
    axis : {None, 0, 1}, default None
        Records are rows. ``None`` pools every value into one statistic; ``0`` gives one statistic per column of
        2-D data, released together as one vector; ``1`` gives one per record (row).
    nan_policy : {"raise", "omit"}, default "raise"
        ``"raise"`` refuses data containing NaN (a curator-side error: the accountant, if any, has already been
        charged). ``"omit"`` leaves NaN out, with a sensitivity that accounts for the data-dependent count (see
        Notes).
    mechanism : {"laplace", "gaussian"}, default "laplace"
        The noise: Laplace (L1 sensitivity, any privacy parameters) or Gaussian (L2 sensitivity, needs ``Del``).
    rng : None, int or numpy.random.Generator, optional
        ``None`` (default) draws cryptographically strong noise; a seed is for tests only.
    accountant : Accountant, optional
        Charged with the guarantee before the data are read.
    full_response : bool, default False
        Return the :class:`~diffpriv_py.Response` (its ``response`` holds the post-processed value) instead of the
        bare value.
"""


def _doc(func: Any) -> Any:
    func.__doc__ = func.__doc__.replace("    {common}\n", _COMMON_PARAMS.strip("\n") + "\n")
    return func


@_doc
def mean(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: int | None = None,
    nan_policy: str = "raise",
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private mean of bounded data.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D (one value per record) or 2-D (one record per row).
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public bounds; data are clipped to them. Scalars, or one value per column for 2-D data. Required: they
        are never derived from the data.
    {common}

    Returns
    -------
    float, ndarray or Response
        The private mean (a float for 1-D data or ``axis=None``, an array otherwise).

    Notes
    -----
    ε-DP with Laplace noise, (ε, δ)-DP with Gaussian noise, under replace-one neighbours (the number of records n
    is public). The mean of n values clipped to [lo, hi] changes by at most (hi − lo)/n when one record is
    replaced (Dwork, McSherry, Nissim & Smith 2006); with ``axis=0`` the column means are one vector release of
    L1 sensitivity Σ_j (hi_j − lo_j)/n, computed in units of each column's width so every column gets noise
    proportional to its own range (equivalent to splitting ε equally across columns). ``axis=None`` on 2-D data
    changes d values at once: sensitivity Σ_j (hi_j − lo_j)/(n·d).

    ``nan_policy="omit"``: the count of present values is then private, so (count, Σu) with
    u = (clip(x) − c)/(hi − lo) ∈ [−½, ½] is released as one vector (L1 sensitivity 1.5 per value, from a value
    turning into NaN) and the mean is c + (hi − lo)·Σu/count. This fixes diffprivlib's ``nanmean``, which divides
    a sensitivity by the total length while averaging only the present values.

    The noisy mean is clipped back into [lo, hi] (post-processing: it never increases the error and costs no
    privacy). Floating-point rounding of the sum is not accounted for (Casacuberta et al. 2022).

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> ages = np.array([23, 35, 41, 52, 67, 30, 44])
    >>> m = dp.stats.mean(ages, dp.Eps(1.0), bounds=(0, 100), rng=0)
    """
    return _run(
        "mean",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=0,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        who="dp.stats.mean",
    )


@_doc
def sum(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: int | None = None,
    nan_policy: str = "raise",
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private sum of bounded data.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds (scalars, or one value per column). Required.
    {common}

    Returns
    -------
    float, ndarray or Response
        The private sum.

    Notes
    -----
    ε-DP (Laplace) or (ε, δ)-DP (Gaussian) under replace-one neighbours: replacing one record moves the clipped
    sum by at most hi − lo per value (Σ_j (hi_j − lo_j) for a 2-D record). With ``nan_policy="omit"`` a missing
    value contributes 0, so the sensitivity is max(hi, 0) − min(lo, 0) per value. The result is clipped into the
    range of possible sums (post-processing).
    """
    return _run(
        "sum",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=0,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        who="dp.stats.sum",
    )


@_doc
def var(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: int | None = None,
    ddof: int = 0,
    nan_policy: str = "raise",
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private variance of bounded data.

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds (scalars, or one value per column). Required.
    ddof : int, default 0
        Delta degrees of freedom, as numpy: the divisor is (number of values − ddof).
    {common}

    Returns
    -------
    float, ndarray or Response
        The private variance, in [0, (hi − lo)²·⌊m/2⌋⌈m/2⌉/(m(m − ddof))] for m values.

    Notes
    -----
    One release of the clipped variance itself (no budget split). Under replace-one neighbours the sum of squared
    deviations of n values in an interval of width r moves by at most (n − 1)/n·r²: with m and SS the mean and
    sum of squares of the other n − 1 values, SS_total = SS + (n − 1)/n·(y − m)² (Chan, Golub & LeVeque 1979)
    and (y − m)² ∈ [0, r²]. Hence the sensitivity (n − 1)·r²/(n·(n − ddof)), slightly below the common bound
    r²/n. The noisy value is clipped into the feasible range (post-processing).

    ``nan_policy="omit"`` releases (count, Σu, Σu²) with u = (clip(x) − c)/r ∈ [−½, ½] (L1 sensitivity 1.75 per
    value) and computes the variance from them.
    """
    return _run(
        "var",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=ddof,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        who="dp.stats.var",
    )


@_doc
def std(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: int | None = None,
    ddof: int = 0,
    nan_policy: str = "raise",
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private standard deviation: the square root of :func:`var` (post-processing).

    Parameters
    ----------
    x : array_like or pandas object
        The private data: 1-D, or 2-D with one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds (scalars, or one value per column). Required.
    ddof : int, default 0
        Delta degrees of freedom of the variance.
    {common}

    Returns
    -------
    float, ndarray or Response
        The private standard deviation. With ``full_response=True`` the Response's mechanism is the variance
        release and its ``response`` the square root.

    Notes
    -----
    Same guarantee and sensitivity as :func:`var`; the square root of the clipped noisy variance is post-processing.
    """
    return _run(
        "std",
        x,
        privacy_params,
        bounds=bounds,
        axis=axis,
        nan_policy=nan_policy,
        mechanism=mechanism,
        ddof=ddof,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        who="dp.stats.std",
    )


def count(
    x: Any,
    privacy_params: Eps,
    *,
    axis: int | None = None,
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private count of the present (non-NaN) values, or of the True values of a boolean array.

    Parameters
    ----------
    x : array_like or pandas object
        The private data. Numeric: NaN marks a missing value (like ``pandas.Series.count``). Boolean: a predicate
        evaluated per record, e.g. ``ages > 65``.
    privacy_params : Eps or Del
        The privacy level of the release.
    axis : {None, 0, 1}, default None
        ``None`` counts over all values; ``0`` per column; ``1`` per record.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Integer-valued Laplace-type noise, or Gaussian noise (needs ``Del``) rounded to an integer.
    rng, accountant, full_response
        As in :func:`mean`.

    Returns
    -------
    float, ndarray or Response
        The private count, a whole number in [0, number of values].

    Notes
    -----
    Under replace-one neighbours the number of records n is public, so "how many records" needs no privacy and
    this function does not pretend to answer it privately. What is private is *which* values are present, or which
    records satisfy a predicate: replacing one record changes each of its values' presence by at most one, so the
    sensitivity is 1 per value (d for a 2-D record pooled, L1 d / L2 √d per column vector). Noise is
    integer-valued (discrete Laplace when available, otherwise Laplace followed by rounding, which is
    post-processing); the result is clipped into [0, number of values].
    """
    who = "dp.stats.count"
    return _run(
        "count",
        x,
        privacy_params,
        bounds=None,
        axis=axis,
        nan_policy="omit",
        mechanism=mechanism,
        ddof=0,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
        who=who,
    )


@attrs.frozen(eq=False)
class CovarianceTarget:
    """Target of :func:`covariance`: the upper triangle of the clipped covariance, each entry divided by r_j·r_k."""

    lower: np.ndarray
    upper: np.ndarray
    ddof: int = 1
    nan_policy: str = "raise"
    who: str = "dp.stats.covariance"

    def __call__(self, data: Any) -> np.ndarray:
        if is_out_of_core(data):
            if self.nan_policy == "omit":  # (count, Σu, Σuuᵀ) are plain sums over records
                return map_reduce(data, self)
            scatter, n = map_reduce(data, self._block_scatter, combine=_chan_scatter)
            return scatter / (n - self.ddof)
        x = as_data(data, who=self.who)
        d = x.shape[1]
        r = np.broadcast_to(self.upper - self.lower, (d,))
        iu = np.triu_indices(d)
        u = np.clip(x, self.lower, self.upper).astype(np.float64, copy=False)
        u = (u - (self.lower + self.upper) / 2) / r  # u ∈ [−½, ½]; the copy from clip is reused
        if self.nan_policy == "omit":
            present = ~np.isnan(u).any(axis=1)
            u = np.where(present[:, None], u, 0.0)
            c = np.array([present.sum(dtype=np.float64)])
            return np.concatenate([c, u.sum(axis=0), (u.T @ u)[iu]])
        if np.isnan(u).any():
            raise nan_error(self.who)
        u -= u.mean(axis=0)
        return (u.T @ u)[iu] / (x.shape[0] - self.ddof)

    def _block_scatter(self, block: Any) -> tuple[int, np.ndarray, np.ndarray]:
        """(count, mean of u, upper triangle of the scatter of u) of one block, for :func:`_chan_scatter`."""
        x = as_data(block, who=self.who)
        u = np.clip(x, self.lower, self.upper).astype(np.float64, copy=False)
        u = (u - (self.lower + self.upper) / 2) / np.broadcast_to(self.upper - self.lower, (x.shape[1],))
        if np.isnan(u).any():
            raise nan_error(self.who)
        mean = u.mean(axis=0)
        u -= mean
        return x.shape[0], mean, (u.T @ u)[np.triu_indices(x.shape[1])]


def _chan_scatter(parts: list[tuple[int, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, int]:
    """Scatter matrix (upper triangle) of the union of blocks: Σ S_k + Σ n_k (m_k − m)(m_k − m)ᵀ."""
    counts = np.array([float(c) for c, _, _ in parts])
    means = np.stack([mu for _, mu, _ in parts])
    total = counts.sum()
    delta = means - (counts[:, None] * means).sum(axis=0) / total
    iu = np.triu_indices(means.shape[1])
    between = np.einsum("k,ki,kj->ij", counts, delta, delta)[iu]
    return np.stack([s for _, _, s in parts]).sum(axis=0) + between, int(total)


def covariance(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    ddof: int = 1,
    nan_policy: str = "raise",
    mechanism: str = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
) -> Any:
    """Differentially private covariance matrix of bounded data (records are rows, as ``np.cov(x, rowvar=False)``).

    Parameters
    ----------
    x : array_like, shape (n, d)
        The private data, one record per row.
    privacy_params : Eps or Del
        The privacy level of the release.
    bounds : (lower, upper)
        Public clipping bounds, scalars or one value per column. Required.
    ddof : int, default 1
        As ``numpy.cov``: the divisor is n − ddof.
    nan_policy : {"raise", "omit"}, default "raise"
        ``"omit"`` leaves out records with any NaN (listwise), releasing their count privately.
    mechanism, rng, accountant, full_response
        As in :func:`mean`.

    Returns
    -------
    ndarray of shape (d, d) or Response
        A symmetric positive semi-definite private covariance matrix.

    Notes
    -----
    The d(d+1)/2 entries of the upper triangle are released as one vector, each in units of r_j·r_k
    (r = hi − lo), so each column's noise is proportional to its range. Replacing one record y moves the scatter
    matrix by (n − 1)/n·[(y − m)(y − m)ᵀ − (y′ − m)(y′ − m)ᵀ] (m the mean of the others), and each entry of
    that difference is at most r_j·r_k in absolute value, so each released entry has sensitivity
    (n − 1)/(n(n − ddof)): L1 = d(d+1)/2 times that, L2 = √(d(d+1)/2) times that. The noisy matrix is symmetrised
    and projected onto the positive semi-definite cone (post-processing; it never increases the Frobenius error).

    ``nan_policy="omit"`` releases (count, Σu, Σuuᵀ) over the complete records with u = (clip(x) − c)/r, whose
    L1 sensitivity is the larger of 1 + d/2 + d(d+1)/8 (a record becoming incomplete) and d + d/4 + d(d−1)/4 (a
    complete record changing).
    """
    who = "dp.stats.covariance"
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, who=who)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, who=who)
    check_params(privacy_params, mechanism, who=who)
    full_response = check_bool(full_response, "full_response", who=who)
    out_of_core = is_out_of_core(x)
    data = as_data(first_block(x) if out_of_core else x, who=who)
    if data.ndim != 2:
        raise ValueError(
            f"{who} needs 2-D data with one record per row; got shape {data.shape}. Use dp.stats.var for one column."
        )
    n, d = (n_rows(x), data.shape[1]) if out_of_core else data.shape
    lo, hi = check_bounds(bounds, d, who=who)
    r = np.broadcast_to(hi - lo, (d,)).astype(np.float64)
    iu = np.triu_indices(d)
    entries = iu[0].size
    omit = nan_policy == "omit" and data.dtype.kind == "f"
    if omit:
        check_ddof(ddof, 2, who=who)
        l1 = max(1 + d / 2 + d * (d + 1) / 8, d + d / 4 + d * (d - 1) / 4)
        l2 = max(math.sqrt(1 + d / 4 + d * (d + 1) / 32), math.sqrt(d + d / 16 + d * (d - 1) / 8))
        dims = 1 + d + entries
    else:
        ddof = check_ddof(ddof, n, who=who)
        per = (n - 1) / (n * (n - ddof))
        l1, l2, dims = entries * per, math.sqrt(entries) * per, entries

    def post(v: np.ndarray) -> np.ndarray:
        if omit:
            c = max(float(v[0]), ddof + 1.0)
            s1, s2 = v[1 : 1 + d], v[1 + d :]
            tri = (s2 - (s1[iu[0]] * s1[iu[1]]) / c) / (c - ddof)
        else:
            tri = v
        m = np.zeros((d, d))
        m[iu] = tri
        m = m + np.triu(m, 1).T
        w, vecs = np.linalg.eigh(m)
        m = (vecs * np.maximum(w, 0.0)) @ vecs.T
        m = (m + m.T) / 2
        return m * np.outer(r, r)

    target = CovarianceTarget(lo, hi, ddof=ddof, nan_policy="omit" if omit else "raise", who=who)
    plan = Plan(target=target, l1=l1, l2=l2, dims=dims, postprocess=post)
    return release(
        plan,
        privacy_params,
        x if out_of_core else data,
        mechanism=mechanism,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
    )
