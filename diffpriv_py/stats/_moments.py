"""DP count, sum, mean, variance, standard deviation and covariance of bounded data (replace-one neighbours).

The public functions: each checks its public arguments, builds (or reuses) the statistic's plan
(:mod:`diffpriv_py.stats._plans`) and releases it once through a library mechanism (:func:`~._common.release`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._blockwise import first_block, is_out_of_core, n_rows
from .._rng import RNGLike
from ..privacy import Eps
from ._common import (
    MECHANISMS,
    NAN_POLICIES,
    Axis,
    MechanismName,
    NanPolicy,
    as_data,
    check_axis,
    check_bool,
    check_bounds,
    check_choice,
    check_ddof,
    check_params,
    release,
    scalar_bounds,
)
from ._plans import _cached_plan, _covariance_plan, _plan, _Shape
from ._targets import AXIS1_OUT_OF_CORE

# The targets lived in this module before it was split by concept; re-exported for code that imports them from here.
from ._targets import SMALL as SMALL
from ._targets import ClippedStatistic as ClippedStatistic
from ._targets import CovarianceTarget as CovarianceTarget

__all__ = ["count", "covariance", "mean", "std", "sum", "var"]


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
    owner: str,
    keepdims: Any = False,
    dtype: Any = None,
) -> Any:
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, owner=owner)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, owner=owner)
    check_params(privacy_params, mechanism, owner=owner)
    full_response = check_bool(full_response, "full_response", owner=owner)
    keepdims = check_bool(keepdims, "keepdims", owner=owner)
    out_dtype = None if dtype is None else _check_dtype(dtype, owner)
    out_of_core = type(x) is not np.ndarray and is_out_of_core(x)
    # Out-of-core data (dask, Chunks): the first block gives the layout and dtype, one cheap pass the public n.
    data = as_data(first_block(x) if out_of_core else x, owner=owner, allow_bool=statistic == "count")
    ax = None if axis is None else check_axis(axis, data.ndim, owner=owner)
    if out_of_core and ax == 1:
        raise ValueError(AXIS1_OUT_OF_CORE.format(owner=owner))
    two_d = data.ndim == 2
    n, d = n_rows(x) if out_of_core else data.shape[0], data.shape[1] if two_d else 1
    policy = "omit" if nan_policy == "omit" and data.dtype.kind == "f" else "raise"
    pair: tuple[float, float] | None = None
    arrays: tuple[np.ndarray, np.ndarray] | None = None
    if statistic != "count":
        # A twin kept on measurement: scalar_bounds is check_bounds' cheap path for a pair of valid scalars (and gives
        # the hashable key of the plan cache); check_bounds alone made dp.stats.mean/var of 10 values 2.4-2.6x slower.
        pair = scalar_bounds(bounds)
        if pair is None:
            arrays = check_bounds(bounds, d if two_d else None, owner=owner)
    if statistic in ("var", "std") or policy == "omit":
        ddof = check_ddof(ddof, n if ax == 0 else (d if ax == 1 else n * d), owner=owner)
    if arrays is None:
        # Everything a plan depends on is public and hashable here, so repeated releases reuse one plan and its
        # mechanism (the same objects a fresh build would give).
        plan = _cached_plan(statistic, policy, n, d, ax, two_d, pair, ddof, owner, keepdims, out_dtype)
    else:
        plan = _plan(
            statistic, policy, _Shape(n=n, d=d, axis=ax, two_d=two_d), *arrays, ddof, owner, keepdims, out_dtype
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


def _check_dtype(dtype: Any, owner: str) -> np.dtype[Any]:
    try:
        out: np.dtype[Any] | None = np.dtype(dtype)
    except TypeError:
        out = None
    if out is None or out.kind not in "iuf":
        raise TypeError(
            f"The 'dtype' of {owner} must be an integer or floating-point dtype, as numpy's; got {dtype!r}. Pass e.g. "
            "dtype=int for an integer result, or leave dtype=None for float64."
        )
    return out


def mean(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
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
    axis : {None, 0, 1} or tuple of them, default None
        Records are rows. ``None`` pools every value into one statistic; ``0`` gives one statistic per column of
        2-D data, released together as one vector; ``1`` gives one per record (row). A tuple has numpy's meaning:
        ``(0, 1)`` pools every value of 2-D data (as ``None``), ``(0,)`` is ``0``.
    keepdims : bool, default False
        As in numpy: keep the reduced axes with length one, so the result broadcasts against the data (an array
        of shape ``(1,)``, ``(1, 1)``, ``(1, d)`` or ``(n, 1)``, never a bare float).
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
    privacy).

    Exact in floating point: values are clipped and mapped to integers on a public grid of 2³⁵ steps across the
    bounds, summed exactly, and divided once (correctly rounded); the sensitivity, in units of hi − lo, is 1/n plus
    2⁻⁵² for that rounding, so it holds for the computed float64 value, not only for real numbers (Casacuberta et al.
    2022). Each value moves by at most about (hi − lo)·2⁻³⁶. See ``docs/security.md``, "Exact aggregation".

    The error bar of a full response (``Response.accuracy``) covers the exact mean of the clipped data: it adds
    that quantisation (and the target's rounding) to the noise's bar (see ``_LinearError`` and ``docs/accuracy.md``).

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
        keepdims=keepdims,
        owner="dp.stats.mean",
    )


def sum(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
    dtype: Any = None,
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
    axis : {None, 0, 1} or tuple of them, default None
        Records are rows. ``None`` pools every value into one statistic; ``0`` gives one statistic per column of
        2-D data, released together as one vector; ``1`` gives one per record (row). A tuple has numpy's meaning:
        ``(0, 1)`` pools every value of 2-D data (as ``None``), ``(0,)`` is ``0``.
    keepdims : bool, default False
        As in numpy: keep the reduced axes with length one, so the result broadcasts against the data (an array
        of shape ``(1,)``, ``(1, 1)``, ``(1, d)`` or ``(n, 1)``, never a bare float).
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
    dtype : dtype, optional
        numpy's ``dtype=`` for the result: an integer dtype (e.g. ``dtype=int``) gives the noisy sum rounded to
        the nearest integer and clipped into the dtype's range (post-processing); a float dtype casts. With a dtype
        a scalar result is a numpy scalar of it (as ``np.sum``). Default: float64, a scalar as a Python float.

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

    Exact in floating point: the clipped values are integers on a public grid of 2³⁵ steps across the bounds, summed
    exactly; the one rounding of the exact sum to float64 is added to the sensitivity (2⁻⁵² of the largest possible
    sum), so the guarantee holds for the computed value (Casacuberta et al. 2022). The error bar of a full response
    covers the exact sum of the clipped data: it adds m·(hi − lo)·2⁻³⁶ (about) for the quantisation of m values.
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
        keepdims=keepdims,
        dtype=dtype,
        owner="dp.stats.sum",
    )


def var(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    ddof: int = 0,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
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
    axis : {None, 0, 1} or tuple of them, default None
        Records are rows. ``None`` pools every value into one statistic; ``0`` gives one statistic per column of
        2-D data, released together as one vector; ``1`` gives one per record (row). A tuple has numpy's meaning:
        ``(0, 1)`` pools every value of 2-D data (as ``None``), ``(0,)`` is ``0``.
    keepdims : bool, default False
        As in numpy: keep the reduced axes with length one, so the result broadcasts against the data (an array
        of shape ``(1,)``, ``(1, 1)``, ``(1, d)`` or ``(n, 1)``, never a bare float).
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

    Exact in floating point: values are integers on a public grid of 2¹⁸ steps across the bounds, n·Σk² − (Σk)² is
    an exact integer and the variance is one correctly rounded division; the sensitivity adds 2⁻⁵² of the largest
    possible variance for that rounding. Each value moves by at most about r·2⁻¹⁹, the variance by up to about
    2⁻¹⁹·r² (2e·√V·2⁻ᵇ·√(n/(n − ddof)) + …, V the variance in units of r²).

    The error bar of a full response covers the exact variance of the clipped data: it adds that quantisation,
    bounded from the released value, to the noise's bar (proof in ``_VarianceError``; ``docs/accuracy.md``), so at
    very large n·ε it levels off near 2⁻¹⁹·r² instead of shrinking like 1/(n·ε).
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
        keepdims=keepdims,
        owner="dp.stats.var",
    )


def std(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    axis: Axis = None,
    ddof: int = 0,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
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
    axis : {None, 0, 1} or tuple of them, default None
        Records are rows. ``None`` pools every value into one statistic; ``0`` gives one statistic per column of
        2-D data, released together as one vector; ``1`` gives one per record (row). A tuple has numpy's meaning:
        ``(0, 1)`` pools every value of 2-D data (as ``None``), ``(0,)`` is ``0``.
    keepdims : bool, default False
        As in numpy: keep the reduced axes with length one, so the result broadcasts against the data (an array
        of shape ``(1,)``, ``(1, 1)``, ``(1, d)`` or ``(n, 1)``, never a bare float).
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

    Returns
    -------
    float, ndarray or Response
        The private standard deviation. With ``full_response=True`` the Response's mechanism is the variance
        release and its ``response`` the square root.

    Notes
    -----
    Same guarantee and sensitivity as :func:`var`; the square root of the clipped noisy variance is post-processing.
    The error bar covers the exact standard deviation of the clipped data (the variance's interval, grid quantisation
    included, mapped through the square root), so at very large n·ε it levels off near r·2⁻¹⁹.
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
        keepdims=keepdims,
        owner="dp.stats.std",
    )


def count(
    x: Any,
    privacy_params: Eps,
    *,
    axis: Axis = None,
    mechanism: MechanismName = "laplace",
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    keepdims: bool = False,
) -> Any:
    """Differentially private count of the present (non-NaN) values, or of the True values of a boolean array.

    Parameters
    ----------
    x : array_like or pandas object
        The private data. Numeric: NaN marks a missing value (like ``pandas.Series.count``). Boolean: a predicate
        evaluated per record, e.g. ``ages > 65``.
    privacy_params : Eps or Del
        The privacy level of the release.
    axis : {None, 0, 1} or tuple of them, default None
        ``None`` counts over all values; ``0`` per column; ``1`` per record; ``(0, 1)`` as ``None``.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Integer-valued Laplace-type noise, or Gaussian noise (needs ``Del``) rounded to an integer.
    rng, accountant, full_response, keepdims
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
    integer-valued: discrete Laplace (two-sided geometric) for ``mechanism="laplace"``, Gaussian noise rounded to an
    integer (post-processing) for ``"gaussian"``; the result is clipped into [0, number of values].
    """
    owner = "dp.stats.count"
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
        keepdims=keepdims,
        owner=owner,
    )


def covariance(
    x: Any,
    privacy_params: Eps,
    *,
    bounds: Any = None,
    ddof: int = 1,
    nan_policy: NanPolicy = "raise",
    mechanism: MechanismName = "laplace",
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

    Exact in floating point: u is an integer on a public grid of 2¹⁸ steps (divided by 2¹⁸), the sums Σu and Σuuᵀ are
    exact (BLAS on integer-valued blocks), the scatter n·Σuuᵀ − ΣuΣuᵀ is an exact integer, and each released entry
    is rounded once; the sensitivities include 2⁻⁵² of each entry's largest value for that rounding.
    """
    owner = "dp.stats.covariance"
    nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, owner=owner)
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, owner=owner)
    check_params(privacy_params, mechanism, owner=owner)
    full_response = check_bool(full_response, "full_response", owner=owner)
    out_of_core = is_out_of_core(x)
    data = as_data(first_block(x) if out_of_core else x, owner=owner)
    if data.ndim != 2:
        raise ValueError(
            f"{owner} needs 2-D data with one record per row; got shape {data.shape}. Use dp.stats.var for one column."
        )
    n, d = (n_rows(x), data.shape[1]) if out_of_core else data.shape
    lo, hi = check_bounds(bounds, d, owner=owner)
    omit = nan_policy == "omit" and data.dtype.kind == "f"
    plan = _covariance_plan(n, d, lo, hi, ddof, omit, owner)
    return release(
        plan,
        privacy_params,
        x if out_of_core else data,
        mechanism=mechanism,
        rng=rng,
        accountant=accountant,
        full_response=full_response,
    )
