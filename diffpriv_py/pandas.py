"""The ``.private`` accessor on pandas Series and DataFrames, registered when this module is imported.

>>> import numpy as np, pandas as pd, diffpriv_py as dp
>>> import diffpriv_py.pandas  # registers Series.private and DataFrame.private
>>> df = pd.DataFrame({"longitude": np.linspace(0, 10, 5), "latitude": np.linspace(0, 20, 5)})
>>> m = df.longitude.private.mean(dp.Eps(1.0), bounds=(0, 10))          # a new private sample on every call
>>> noisy = df.private.noise(dp.Eps(1.0), bounds={"longitude": (0, 10), "latitude": (0, 20)})

Every method is a thin layer over :mod:`diffpriv_py.stats` (or, for :meth:`PrivateFrameAccessor.noise`, one
Laplace/Gaussian release of the whole clipped frame), so the guarantees, sensitivities and NaN policies are the
ones documented there. pandas is an optional dependency: ``pip install "diffpriv-py[pandas]"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from ._extras import require

try:
    import pandas as pd
except ImportError:  # pragma: no cover - exercised only without pandas (tests/test_extras.py, in a subprocess)
    require("pandas", feature="diffpriv_py.pandas (the .private accessor)")  # raises the message naming the extra
    raise

from . import stats
from ._arguments import (
    MECHANISMS,
    NAN_POLICIES,
    MechanismName,
    NanPolicy,
    check_bool,
    check_bounds,
    check_params,
    nan_error,
    split_params,
)
from ._fixed_point import GRID_SLACK, GRID_TINY
from ._rng import RNGLike, as_generator
from ._validation import check_choice
from .accuracy import half_width
from .mechanisms import Gaussian, Laplace
from .mechanisms.base import check_accountant
from .privacy import Del, Eps

__all__ = ["PrivateFrameAccessor", "PrivateSeriesAccessor"]


def _series_values(series: pd.Series, owner: str) -> np.ndarray:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        label = "the Series" if series.name is None else f"Series {series.name!r}"
        raise TypeError(
            f"{owner} needs a numeric Series; {label} has dtype {dtype}. Convert it first (e.g. "
            "s.astype(float)); count True values with s.private.count()."
        )
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        result: np.ndarray = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return result
    result = series.to_numpy()
    return result


class PrivateSeriesAccessor:
    """``series.private``: differentially private statistics of one column (see :mod:`diffpriv_py.stats`).

    Every method takes the privacy parameters first and public ``bounds=(lower, upper)``; each call is a new
    release that spends its own budget (pass ``accountant=`` to track it). Variance and standard deviation use
    pandas' default ``ddof=1``.
    """

    def __init__(self, series: pd.Series) -> None:
        self._series = series

    def _values(self, owner: str) -> np.ndarray:
        return _series_values(self._series, owner)

    def mean(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private mean; keywords as :func:`diffpriv_py.stats.mean` (``nan_policy``, ``mechanism``, ``rng``, …)."""
        return stats.mean(self._values("Series.private.mean"), privacy_params, bounds=bounds, **kwargs)

    def sum(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private sum; keywords as :func:`diffpriv_py.stats.sum`."""
        return stats.sum(self._values("Series.private.sum"), privacy_params, bounds=bounds, **kwargs)

    def var(self, privacy_params: Eps, *, bounds: Any = None, ddof: int = 1, **kwargs: Any) -> Any:
        """Private variance (``ddof=1`` as pandas); keywords as :func:`diffpriv_py.stats.var`."""
        return stats.var(self._values("Series.private.var"), privacy_params, bounds=bounds, ddof=ddof, **kwargs)

    def std(self, privacy_params: Eps, *, bounds: Any = None, ddof: int = 1, **kwargs: Any) -> Any:
        """Private standard deviation (``ddof=1`` as pandas); keywords as :func:`diffpriv_py.stats.std`."""
        return stats.std(self._values("Series.private.std"), privacy_params, bounds=bounds, ddof=ddof, **kwargs)

    def count(self, privacy_params: Eps, **kwargs: Any) -> Any:
        """Private number of non-missing values (True values for a boolean Series); see :func:`stats.count`."""
        s = self._series
        if pd.api.types.is_bool_dtype(s.dtype):
            values = s.to_numpy(dtype=bool, na_value=False)
        elif pd.api.types.is_numeric_dtype(s.dtype):
            values = self._values("Series.private.count")
        else:
            values = s.notna().to_numpy()
        return stats.count(values, privacy_params, **kwargs)

    def quantile(self, q: Any, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private quantile(s): a float for one level, a Series indexed by the levels for several."""
        out = stats.quantile(self._values("Series.private.quantile"), q, privacy_params, bounds=bounds, **kwargs)
        if np.ndim(q) == 0 or kwargs.get("full_response"):
            return out
        return pd.Series(out, index=pd.Index(np.asarray(q, dtype=float)), name=self._series.name)

    def median(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private median; see :func:`diffpriv_py.stats.median`."""
        return stats.median(self._values("Series.private.median"), privacy_params, bounds=bounds, **kwargs)

    def histogram(self, privacy_params: Eps, *, bins: Any, range: Any = None, **kwargs: Any) -> Any:
        """Private histogram over fixed bins as a Series of counts indexed by the bins (last bin closed).

        Keywords as :func:`diffpriv_py.stats.histogram`; with ``full_response=True`` returns ``(Response, edges)``.
        """
        counts, edges = stats.histogram(
            self._values("Series.private.histogram"), privacy_params, bins=bins, range=range, **kwargs
        )
        if kwargs.get("full_response"):
            return counts, edges
        index = pd.IntervalIndex.from_breaks(edges, closed="left")
        return pd.Series(counts, index=index, name="count")

    def noise(
        self,
        privacy_params: Eps,
        *,
        bounds: Any = None,
        mechanism: MechanismName = "laplace",
        rng: RNGLike = None,
        accountant: Any = None,
    ) -> pd.Series:
        """Input perturbation: every value clipped to ``bounds`` plus noise; see :meth:`PrivateFrameAccessor.noise`."""
        frame = self._series.to_frame()
        out = frame.private.noise(privacy_params, bounds=bounds, mechanism=mechanism, rng=rng, accountant=accountant)
        return out.iloc[:, 0].rename(self._series.name)


def _numeric_columns(frame: pd.DataFrame) -> list[Any]:
    if frame.columns.has_duplicates:
        duplicated = list(dict.fromkeys(frame.columns[frame.columns.duplicated()]))
        raise ValueError(
            f"DataFrame.private needs unique column names; the frame has duplicated columns {duplicated!r}. Rename "
            "them (e.g. frame.columns = [...]) so every statistic and bound names one column."
        )
    # Real numbers only: booleans are not quantities, and complex values have no order to clip or bound.
    return [
        c
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c].dtype)
        and not pd.api.types.is_bool_dtype(frame[c].dtype)
        and not pd.api.types.is_complex_dtype(frame[c].dtype)
    ]


def _checked_bounds(bounds: Any, columns: list[Any], owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-column ``(lower, upper)`` arrays from one pair for all columns or a mapping column → pair."""
    if bounds is None:
        raise TypeError(
            f"{owner} needs public bounds: bounds=(lower, upper) for every column, or a dict column -> (lower, upper). "
            "They are never derived from the private data."
        )
    if isinstance(bounds, Mapping):
        missing = [c for c in columns if c not in bounds]
        extra = [c for c in bounds if c not in columns]
        if missing or extra:
            raise ValueError(
                f"The bounds of {owner} must name exactly the numeric columns {columns}; missing {missing}, unknown "
                f"{extra}."
            )
        pairs = [bounds[c] for c in columns]
    elif isinstance(bounds, (tuple, list)) and len(bounds) == 2 and all(np.ndim(v) == 0 for v in bounds):
        pairs = [bounds] * len(columns)
    else:
        raise TypeError(
            f"The bounds of {owner} must be (lower, upper) or a dict column -> (lower, upper). Got {bounds!r}."
        )
    checked = [
        check_bounds(pair, None, owner=f"{owner} (column {c!r})") for c, pair in zip(columns, pairs, strict=True)
    ]
    lower, upper = np.array([float(a) for a, _ in checked]), np.array([float(b) for _, b in checked])
    with np.errstate(over="ignore"):
        width = upper - lower
    if not np.all(np.isfinite(width)):
        i = int(np.flatnonzero(~np.isfinite(width))[0])
        raise ValueError(
            f"The bounds of {owner} for column {columns[i]!r} are ({float(lower[i])!r}, {float(upper[i])!r}): "
            "their width overflows to inf, so a sensitivity computed from it (and the released std) would be "
            "infinite. Use bounds whose difference is a finite float (|upper - lower| < 1.8e308)."
        )
    return lower, upper


class PrivateFrameAccessor:
    """``frame.private``: differentially private statistics of the numeric columns, and input perturbation.

    A statistic of several columns is one joint release (records are rows, so every column of a record changes
    together); each column's noise is proportional to the width of its own bounds. ``bounds`` is one pair for every
    column or a dict ``{column: (lower, upper)}``.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def _matrix(self, bounds: Any, owner: str) -> tuple[np.ndarray, list[Any], tuple[np.ndarray, np.ndarray]]:
        columns = _numeric_columns(self._frame)
        if not columns:
            raise TypeError(f"{owner} found no real numeric (non-boolean, non-complex) columns in the frame.")
        values = self._frame[columns].to_numpy(dtype=np.float64, na_value=np.nan)
        return values, columns, _checked_bounds(bounds, columns, owner)

    def _per_column(self, func: Any, owner: str, privacy_params: Eps, bounds: Any, **kwargs: Any) -> Any:
        values, columns, (lo, hi) = self._matrix(bounds, owner)
        out = func(values, privacy_params, bounds=(lo, hi), axis=0, **kwargs)
        if kwargs.get("full_response"):
            return out
        return pd.Series(out, index=pd.Index(columns))

    def mean(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private mean of each numeric column (one joint release); a Series indexed by column."""
        return self._per_column(stats.mean, "DataFrame.private.mean", privacy_params, bounds, **kwargs)

    def sum(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private sum of each numeric column (one joint release)."""
        return self._per_column(stats.sum, "DataFrame.private.sum", privacy_params, bounds, **kwargs)

    def var(self, privacy_params: Eps, *, bounds: Any = None, ddof: int = 1, **kwargs: Any) -> Any:
        """Private variance of each numeric column (``ddof=1`` as pandas; one joint release)."""
        return self._per_column(stats.var, "DataFrame.private.var", privacy_params, bounds, ddof=ddof, **kwargs)

    def std(self, privacy_params: Eps, *, bounds: Any = None, ddof: int = 1, **kwargs: Any) -> Any:
        """Private standard deviation of each numeric column (``ddof=1`` as pandas; one joint release)."""
        return self._per_column(stats.std, "DataFrame.private.std", privacy_params, bounds, ddof=ddof, **kwargs)

    def count(self, privacy_params: Eps, **kwargs: Any) -> Any:
        """Private number of non-missing values in every column (one joint release, sensitivity 1 per column)."""
        present = self._frame.notna().to_numpy()
        out = stats.count(present, privacy_params, axis=0, **kwargs)
        if kwargs.get("full_response"):
            return out
        return pd.Series(out, index=self._frame.columns)

    def quantile(self, q: Any, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private quantile(s) of each numeric column: a Series for one level, a DataFrame (levels × columns)."""
        values, columns, (lo, hi) = self._matrix(bounds, "DataFrame.private.quantile")
        out = stats.quantile(values, q, privacy_params, bounds=(lo, hi), axis=0, **kwargs)
        if kwargs.get("full_response"):
            return out
        if np.ndim(q) == 0:
            return pd.Series(out, index=pd.Index(columns))
        return pd.DataFrame(out, index=pd.Index(np.asarray(q, dtype=float)), columns=pd.Index(columns))

    def median(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private median of each numeric column."""
        return self.quantile(0.5, privacy_params, bounds=bounds, **kwargs)

    def cov(self, privacy_params: Eps, *, bounds: Any = None, **kwargs: Any) -> Any:
        """Private covariance matrix of the numeric columns (``ddof=1`` as pandas); see :func:`stats.covariance`."""
        values, columns, (lo, hi) = self._matrix(bounds, "DataFrame.private.cov")
        out = stats.covariance(values, privacy_params, bounds=(lo, hi), **kwargs)
        if kwargs.get("full_response"):
            return out
        return pd.DataFrame(out, index=pd.Index(columns), columns=pd.Index(columns))

    def describe(
        self,
        privacy_params: Eps,
        *,
        bounds: Any = None,
        percentiles: Any = (0.25, 0.5, 0.75),
        nan_policy: NanPolicy = "raise",
        mechanism: MechanismName = "laplace",
        rng: RNGLike = None,
        accountant: Any = None,
    ) -> pd.DataFrame:
        """Private summary of the numeric columns, like ``DataFrame.describe``, with the budget split stated.

        Parameters
        ----------
        privacy_params : Eps or Del
            The total budget of the whole table.
        bounds : (lower, upper) or dict
            Public bounds, one pair for all numeric columns or one per column. Required.
        percentiles : sequence of float, default (0.25, 0.5, 0.75)
            Levels in (0, 1) released besides the minimum and maximum.
        nan_policy : {"raise", "omit"}, default "raise"
            As in :mod:`diffpriv_py.stats`.
        mechanism : {"laplace", "gaussian"}, default "laplace"
            Noise of the count, mean and std (quantiles always use the exponential mechanism).
        rng, accountant
            As in :func:`diffpriv_py.stats.mean`; the accountant is charged once per statistic.

        Returns
        -------
        DataFrame
            Rows ``count, mean, std, min, <percentiles>, max`` and then ``epsilon`` (and ``delta`` for Gaussian
            noise): the budget each column received. ``result.attrs["privacy_budget"]`` holds the ε of every cell
            and ``result.attrs["privacy_note"]`` describes the split.

        Notes
        -----
        The budget is split equally between the statistics that need one (mean, std, the quantile group, and the
        count when ``nan_policy="omit"``), and each statistic's share equally across the columns (one joint
        release per statistic with per-column noise proportional to each column's range; the quantile group splits
        its share over its levels and columns). Basic sequential composition: the shares add up to the total.
        Under ``nan_policy="raise"`` the count is the number of records n, public under replace-one neighbours,
        and costs nothing. ``min`` and ``max`` are the private quantiles at levels 0 and 1 (inside the bounds).
        With Gaussian noise δ is split equally between the Gaussian statistics.

        Every public input (bounds, percentiles, parameters, and whether the whole table fits the accountant's
        remaining budget) is checked before the first statistic is charged.
        """
        owner = "DataFrame.private.describe"
        nan_policy = check_choice(nan_policy, "nan_policy", NAN_POLICIES, owner=owner)
        mechanism = check_choice(mechanism, "mechanism", MECHANISMS, owner=owner)
        check_params(privacy_params, mechanism, owner=owner)
        accountant = check_accountant(accountant)
        values, columns, (lo, hi) = self._matrix(bounds, owner)
        try:
            levels = np.asarray(percentiles, dtype=float).ravel()
        except (TypeError, ValueError):
            raise TypeError(
                f"The 'percentiles' of {owner} must be a sequence of numbers in (0, 1). Got {percentiles!r}."
            ) from None
        if levels.size and not np.all((levels > 0) & (levels < 1)):
            raise ValueError(f"The percentiles of {owner} must lie in (0, 1). Got {list(np.ravel(percentiles))!r}.")
        levels = np.unique(levels)
        if callable(getattr(accountant, "check", None)):
            # Every statistic is charged separately; check the whole table fits first, so a refusal of a later
            # statistic cannot leave the earlier ones charged (their shares add up to privacy_params).
            accountant.check(privacy_params)
        gen = as_generator(rng)
        d = len(columns)
        n = values.shape[0]
        omit = nan_policy == "omit"
        noisy = ["count", "mean", "std"] if omit else ["mean", "std"]
        groups = [*noisy, "quantiles"]
        share = 1.0 / len(groups)
        eps_params = split_params(Eps(privacy_params.epsilon), [share])[0]
        if mechanism == "gaussian":
            noise_params: Eps = Del(privacy_params.epsilon * share, privacy_params.delta / len(noisy))
        else:
            noise_params = eps_params
        common = {"nan_policy": nan_policy, "mechanism": mechanism, "rng": gen, "accountant": accountant}
        b = (lo, hi)
        if omit:
            present = ~np.isnan(values)
            counts = stats.count(present, noise_params, axis=0, mechanism=mechanism, rng=gen, accountant=accountant)
        else:
            if np.isnan(values).any():
                raise nan_error(owner)
            counts = np.full(d, n)
        means = stats.mean(values, noise_params, bounds=b, axis=0, **common)
        stds = stats.std(values, noise_params, bounds=b, axis=0, ddof=1 if n > 1 else 0, **common)
        all_levels = np.concatenate([[0.0], levels, [1.0]])
        quants = stats.quantile(
            values, all_levels, eps_params, bounds=b, axis=0, nan_policy=nan_policy, rng=gen, accountant=accountant
        )
        labels = ["min", *[f"{100 * p:g}%" for p in levels], "max"]
        table = pd.DataFrame(
            np.vstack([counts, means, stds, quants]),
            index=["count", "mean", "std", *labels],
            columns=pd.Index(columns),
        )
        per_cell = {
            "count": eps_params.epsilon / d if omit else 0.0,
            "mean": eps_params.epsilon / d,
            "std": eps_params.epsilon / d,
        }
        q_cell = eps_params.epsilon / (d * len(all_levels))
        budget = pd.DataFrame(
            [[per_cell[r]] * d for r in ("count", "mean", "std")] + [[q_cell] * d for _ in labels],
            index=table.index,
            columns=table.columns,
        )
        table.loc["epsilon"] = budget.sum(axis=0)
        if mechanism == "gaussian":
            table.loc["delta"] = privacy_params.delta / d
        table.attrs["privacy_budget"] = budget
        table.attrs["privacy_params"] = privacy_params
        table.attrs["privacy_note"] = (
            f"Total {privacy_params}: split equally over {', '.join(groups)} (ε={eps_params.epsilon:g} each), then "
            f"equally over {d} column(s); quantiles also over {len(all_levels)} levels (min, max included). "
            + ("count = number of records n (public, no budget). " if not omit else "")
            + "Replace-one neighbours; basic composition."
        )
        return table

    def noise(
        self,
        privacy_params: Eps,
        *,
        bounds: Any = None,
        mechanism: MechanismName = "laplace",
        rng: RNGLike = None,
        accountant: Any = None,
        full_response: bool = False,
    ) -> Any:
        """Input perturbation of the whole frame: each value clipped to its bounds plus independent noise.

        Parameters
        ----------
        privacy_params : Eps or Del
            The guarantee of the released frame.
        bounds : (lower, upper) or dict
            Public bounds for every column. Required.
        mechanism : {"laplace", "gaussian"}, default "laplace"
            Laplace noise (ε-DP) or Gaussian noise (needs ``Del``).
        rng, accountant
            As in :func:`diffpriv_py.stats.mean`.
        full_response : bool, default False
            Return the Response (whose ``response`` is the noisy frame).

        Returns
        -------
        DataFrame
            Same index, columns and column order. Float columns keep their dtype; integer columns are rounded back
            to integers (post-processing).

        Notes
        -----
        The released frame is ε-DP (Laplace) or (ε, δ)-DP (Gaussian) with respect to replacing one row; it is
        also a local-DP release of each row. One replaced row moves the clipped frame by at most r_j = hi_j − lo_j
        in each column j; in units of r_j the row moves by at most d in L1 (√d in L2), so the column-j noise has
        scale d·r_j/ε for Laplace (each column effectively spends ε/d), as one Laplace or Gaussian release of the
        normalised frame. PyPryvacy's ``noise`` uses sensitivity 1 whatever the data's range; here the range comes
        from the public bounds. Index and column labels are released as they are: they must be public. Missing
        values are refused (impute them with a public value first); non-numeric columns are refused rather than
        passed through unprotected.
        """
        owner = "DataFrame.private.noise"
        mechanism = check_choice(mechanism, "mechanism", MECHANISMS, owner=owner)
        check_params(privacy_params, mechanism, owner=owner)
        full_response = check_bool(full_response, "full_response", owner=owner)
        frame = self._frame
        columns = list(frame.columns)
        bad = [c for c in columns if c not in set(_numeric_columns(frame))]
        if bad:
            raise TypeError(
                f"{owner} adds noise to real numeric columns only; {bad} are not (or are boolean or complex). Passing "
                "them through would release them unprotected: select the real numeric ones first, e.g. "
                "df.select_dtypes('number') without complex columns."
            )
        if frame.shape[0] == 0:
            raise ValueError(f"{owner} needs at least one row.")
        lo, hi = _checked_bounds(bounds, columns, owner)
        values = frame.to_numpy(dtype=np.float64, na_value=np.nan)
        if np.isnan(values).any():
            raise nan_error(owner)
        d = len(columns)
        target = _NormalisedRows(lo, hi)
        mech: Any
        if mechanism == "gaussian":
            mech = Gaussian(target=target, sensitivity=math.sqrt(d))
        else:
            mech = Laplace(target=target, sensitivity=float(d))
        # The noisy rows (in units of the widths) are unbounded; in data units they must stay finite. Beyond 1000
        # noise scales the tails have probability below e^-1000, so this public check (bounds, ε, d) keeps every
        # released value finite in practice, and refuses before the charge bounds for which it would not.
        scale = mech.noise_scale(mech.check_privacy_params(privacy_params))
        with np.errstate(over="ignore"):
            reach = (1.0 + 1000.0 * scale) * (hi - lo)
        if not np.all(np.isfinite(reach)):
            i = int(np.flatnonzero(~np.isfinite(reach))[0])
            raise ValueError(
                f"The bounds of {owner} for column {columns[i]!r} are ({float(lo[i])!r}, {float(hi[i])!r}): their "
                f"width times the noise (scale {scale:.3g} widths) overflows float64, so noisy "
                "values could be infinite. Narrow the bounds, rescale the column (e.g. other units), or use a larger "
                "epsilon."
            )
        response = mech.release_response(privacy_params, values, rng=rng, accountant=accountant)
        noisy = np.asarray(response.response) * (hi - lo)
        out = pd.DataFrame(noisy, index=frame.index, columns=frame.columns)
        cast = np.zeros((3, d))  # per column: rounding to an integer, relative and absolute error of a float cast
        for j, c in enumerate(columns):
            dtype = frame[c].dtype
            if pd.api.types.is_integer_dtype(dtype):
                cast[0, j] = 0.5
                info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
                rounded = np.clip(np.rint(out[c].to_numpy()), max(info.min, -(2**53)), min(info.max, 2**53))
                out[c] = rounded.astype(np.int64).astype(dtype)
            elif dtype != np.float64:
                out[c] = out[c].astype(dtype)
                fine = np.finfo(dtype)
                cast[1:, j] = float(fine.eps), float(fine.smallest_subnormal)
        if full_response:
            bound = _FrameErrorBound(
                mechanism=mech,
                privacy_params=response.privacy_params,
                noised=np.asarray(response.response, dtype=np.float64),
                width=hi - lo,
                reach=np.maximum(np.abs(lo), np.abs(hi)),
                cast=cast,
            )
            return attrs.evolve(response, response=out, error_bound=bound)
        return out

    def groupby(
        self,
        by: Any,
        privacy_params: Eps,
        *,
        column: Any = None,
        statistics: Any = ("count",),
        keys: Any = None,
        bounds: Any = None,
        privacy_unit: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Private statistics of ``column`` (or several columns) per group of column ``by``, with error bars
        (:func:`dp.stats.groupby`).

        Parameters
        ----------
        by : column label
            The column holding each row's group.
        privacy_params : Eps or Del
            The guarantee of the whole query (``Del`` with δ > 0 unless ``keys=`` lists the public groups).
        column : column label or list of column labels, optional
            The numeric column to aggregate (needed for sum, mean, var, std). A list of (string) column labels
            aggregates all of them in one release, with one contribution bounding and one partition selection
            shared by all: the result's columns are then ``<column>_<statistic>`` (see
            :func:`diffpriv_py.stats.groupby`, ``values=`` as a mapping).
        statistics : str or sequence of str, or mapping, default ("count",)
            Any of "count", "sum", "mean", "var", "std"; with a list of columns, the same for all of them or a
            mapping ``{column: statistics}``.
        keys : sequence, optional
            The public list of groups (every key is released, missing ones as empty groups, and no other; rows of
            other groups are dropped before contribution bounding). ``None``: the groups are selected privately
            among those that still hold a person after bounding, which needs ``Del`` privacy parameters with δ > 0.
        bounds : (lower, upper) or mapping, optional
            Public bounds of ``column`` (needed for sum, mean, var, std); with a list of columns, one pair for all
            or a mapping ``{column: (lower, upper)}``.
        privacy_unit : column label, optional
            The column naming the person behind each row (then ``max_groups=`` and ``max_rows=`` bound each
            person's contribution). ``None``: every row is a different person.
        **kwargs
            ``quantiles``, ``n_candidates``, ``max_groups``, ``max_rows``, ``mechanism``, ``selection``,
            ``neighbouring``, ``max_people``, ``alpha``, ``rng``, ``accountant``, ``full_response``, as
            in :func:`diffpriv_py.stats.groupby`.

        Returns
        -------
        pandas.DataFrame
            Indexed by the released groups, with ``<statistic>`` and ``<statistic>_accuracy`` columns
            (``<column>_<statistic>`` and ``<column>_<statistic>_accuracy`` for a list of columns).

        Examples
        --------
        >>> import numpy as np, pandas as pd, diffpriv_py as dp, diffpriv_py.pandas
        >>> df = pd.DataFrame({"city": ["Paris"] * 400 + ["Lyon"] * 300, "age": np.arange(700) % 80})
        >>> table = df.private.groupby("city", dp.Del(1.0, 1e-6), column="age", statistics=["count", "mean"],
        ...                            bounds=(0, 100), rng=0)
        >>> df["income"] = np.arange(700) * 100.0
        >>> both = df.private.groupby("city", dp.Del(1.0, 1e-6), column=["age", "income"], statistics=["mean"],
        ...                           bounds={"age": (0, 100), "income": (0, 1e5)}, rng=0)
        >>> list(both.columns)
        ['age_mean', 'age_mean_accuracy', 'income_mean', 'income_mean_accuracy']
        """
        frame = self._frame
        several = isinstance(by, list)  # several grouping columns (a tuple is one label, as in pandas)
        labels = [_frame_column(frame, b, "by") for b in by] if several else _frame_column(frame, by, "by")
        unit = None if privacy_unit is None else _frame_column(frame, privacy_unit, "privacy_unit")
        values: Any
        if isinstance(column, list):  # several columns (a tuple is one label of a MultiIndex, as in pandas)
            values = {c: _value_column(frame, c) for c in column}
        else:
            values = None if column is None else _value_column(frame, column)
        name = (
            tuple(b if _is_label(frame, b) else getattr(b, "name", None) for b in by)
            if several
            else (by if _is_label(frame, by) else getattr(by, "name", None))
        )
        return stats.groupby(
            labels,
            privacy_params,
            values=values,
            statistics=statistics,
            keys=keys,
            bounds=bounds,
            privacy_unit=unit,
            name=name,
            **kwargs,
        )


def _is_label(frame: pd.DataFrame, key: Any) -> bool:
    try:
        return key in frame.columns
    except TypeError:  # unhashable: an array of labels, not a column name
        return False


def _value_column(frame: pd.DataFrame, key: Any) -> Any:
    """A value column of ``frame`` (object columns read as float64, a missing value as NaN)."""
    values = _frame_column(frame, key, "column")
    if values.dtype == object:
        values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    return values


def _frame_column(frame: pd.DataFrame, key: Any, name: str) -> Any:
    """A column of ``frame`` by label, or (like pandas' groupby) an array with one entry per row."""
    if _is_label(frame, key):
        return frame[key]
    if np.ndim(key) == 1 and len(key) == len(frame):
        return key
    raise ValueError(
        f"The '{name}' of DataFrame.private.groupby must be a column label of the frame or an array with one entry "
        f"per row ({len(frame)}); got {key!r:.80}. Columns: {list(frame.columns)!r:.200}."
    )


@attrs.frozen(eq=False)
class _FrameErrorBound:
    """Error bar of :meth:`PrivateFrameAccessor.noise`, in data units (the noise is added in units of each width).

    With |noise| ≤ h (the mechanism's bar, in widths) each released value fl(fl(c/w) + noise)·w (c the clipped
    value, w = fl(hi − lo)) is within h·w + 3.0001u·(|c| + h·w) of c, and the 2⁻⁴⁰ terms cover those roundings
    (|c| ≤ max(|lo|, |hi|)) and this bar's own. Integer columns are rounded to the nearest integer (½ more), other
    float dtypes rounded to their precision (their machine epsilon relative, plus their smallest subnormal).
    """

    mechanism: Any
    privacy_params: Eps
    noised: np.ndarray
    width: np.ndarray
    reach: np.ndarray
    cast: np.ndarray

    def __call__(self, alpha: float, simultaneous: bool) -> np.ndarray:
        h = half_width(self.mechanism, self.privacy_params, self.noised, alpha, simultaneous=simultaneous)
        noise = np.asarray(h, dtype=np.float64) * self.width
        with np.errstate(over="ignore"):
            size = self.reach + noise
            rounding = self.cast[0] + self.cast[1] * size + self.cast[2]
            result: np.ndarray = noise * (1.0 + GRID_SLACK) + GRID_SLACK * size + GRID_TINY + rounding
        return result


@attrs.frozen(eq=False)
class _NormalisedRows:
    """Target of :meth:`PrivateFrameAccessor.noise`: the clipped frame, in units of each column's width."""

    lower: np.ndarray
    upper: np.ndarray

    def __call__(self, data: Any) -> np.ndarray:
        result: np.ndarray = np.clip(np.asarray(data, dtype=np.float64), self.lower, self.upper) / (
            self.upper - self.lower
        )
        return result


pd.api.extensions.register_series_accessor("private")(PrivateSeriesAccessor)
pd.api.extensions.register_dataframe_accessor("private")(PrivateFrameAccessor)
