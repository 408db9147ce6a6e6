"""Private preprocessing for scikit-learn pipelines: :class:`StandardScaler` and :class:`MinMaxScaler`.

Each ``fit`` is one release from public per-feature ``bounds``, charged once on the optional ``accountant``;
``transform`` and ``inverse_transform`` are post-processing of that release and cost nothing.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
from sklearn.base import OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import _num_samples, check_is_fitted

from .._arguments import MechanismName, check_bounds, quantile_levels, split_params
from .._validation import check_real
from ..mechanisms.base import DPMech, check_accountant, check_callable_target
from ..mechanisms.composed import ComposedMech, Part
from ..mechanisms.response import Response
from ..privacy import Del, Eps
from ..stats import Quantile, default_n_candidates, mean, var
from ._base import DPEstimator, _refuse_fit_params

__all__ = ["MinMaxScaler", "StandardScaler"]

MEAN_SHARE = 1 / 3
"""Share of (ε, δ) the mean gets when :class:`StandardScaler` releases both the means and the variances."""

FLOOR_ALPHA = 0.5
"""The released variance is floored at the half-width of its (1 − FLOOR_ALPHA) error bar at the widest variance the
bounds allow (a public number)."""


def _finite(X: Any) -> np.ndarray:
    """The target of both scalers: the (validated, float64) rows; a NaN or infinite entry is refused."""
    if not np.all(np.isfinite(X)):
        raise ValueError(
            "X contains NaN or infinity: a scaler's fit needs finite values (they are clipped to the public bounds). "
            "Impute missing values with a public value first."
        )
    return np.asarray(X)


@attrs.frozen(kw_only=True)
class MeansAndVariances(ComposedMech):
    """One release of the per-feature means and/or variances of clipped rows, composed of ``dp.stats`` releases.

    The release is the basic composition of :func:`diffpriv_py.stats.mean` at (ε, δ)·``MEAN_SHARE`` and
    :func:`diffpriv_py.stats.var` at the rest (all of it for the one released when the other is not asked for), each
    over all features at once (``axis=0``), the parts :meth:`composed_of` lists; each part has its own sensitivity.
    """

    target: Callable[[Any], Any] = attrs.field(default=_finite, validator=check_callable_target)
    lower: np.ndarray = attrs.field(eq=False)
    upper: np.ndarray = attrs.field(eq=False)
    with_mean: bool = True
    with_std: bool = True

    def _evaluate(self, output: Any) -> np.ndarray:
        result: np.ndarray = output
        return result

    def composed_of(self, privacy_params: Eps) -> tuple[Part, ...]:
        """The mean at (ε, δ)·``MEAN_SHARE`` and the variance at the rest (all of it for the one asked alone)."""
        both = self.with_mean and self.with_std
        shares = split_params(privacy_params, [MEAN_SHARE, 1 - MEAN_SHARE]) if both else [privacy_params] * 2
        wanted = (self.with_mean, self.with_std)
        return tuple(
            Part(name=name, privacy_params=share)
            for name, share, asked in zip(("mean", "var"), shares, wanted, strict=True)
            if asked
        )

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> dict[str, Any]:
        noise: MechanismName = "gaussian" if isinstance(privacy_params, Del) and privacy_params.delta > 0 else "laplace"
        parts = {part.name: part.privacy_params for part in self.composed_of(privacy_params)}
        bounds = (self.lower, self.upper)
        out: dict[str, Any] = {"mean": None, "var": None, "floor": None}
        if self.with_mean:
            out["mean"] = mean(value, parts["mean"], bounds=bounds, axis=0, mechanism=noise, rng=rng)
        if self.with_std:
            resp = var(value, parts["var"], bounds=bounds, axis=0, mechanism=noise, rng=rng, full_response=True)
            # The bar of a variance grows with the variance (its grid allowance does), so it is evaluated at the
            # largest variance the bounds allow, (width/2)²: a public number, whatever the data or the noise.
            widest = attrs.evolve(resp.error_bound, value=((self.upper - self.lower) / 2.0) ** 2)
            out["var"], out["floor"] = resp.response, widest(FLOOR_ALPHA, False)
        return out


def _feature_bounds(estimator: Any, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """The public ``bounds`` as two arrays of n_features values (checked before any charge)."""
    lo, hi = check_bounds(estimator.bounds, n_features, owner=type(estimator).__name__)
    return np.broadcast_to(lo, (n_features,)).copy(), np.broadcast_to(hi, (n_features,)).copy()


class _Scaler(OneToOneFeatureMixin, TransformerMixin, DPEstimator):
    """What both scalers share: fit without labels, the fitted-state check, no charge when nothing is released.

    A subclass builds its mechanism from the public number of features (``_mechanism_for``) and keeps the released
    values (``_keep``); ``_releases_nothing`` says when its parameters ask for no release at all.
    """

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> _Scaler:
        """Release the scaling privately from ``X`` (one charge of ``epsilon``, none when the parameters ask for no
        release); ``y`` is ignored. Returns ``self``."""
        if self._releases_nothing():
            # Nothing depends on the data: the public checks run, nothing is read and nothing is charged.
            _refuse_fit_params(self, fit_params)
            X, _ = self._validate_fit_data(X, None)
            self._privacy_params()
            check_accountant(getattr(self, "accountant", None))
            self._keep(None, self._mechanism_for(X, None))
            # None: no guarantee to report, as nothing was released (the base types it as the release's Eps).
            setattr(self, "privacy_params_", None)  # noqa: B010
        else:
            super().fit(X, None, **fit_params)
        self.n_samples_seen_ = _num_samples(X)
        return self

    def _releases_nothing(self) -> bool:
        return False

    def _mechanism(self) -> DPMech:
        raise NotImplementedError("A scaler's mechanism needs the number of features: see _mechanism_for.")

    def _store(self, response: Response) -> None:
        self._keep(response.response, response.mechanism)

    @abc.abstractmethod
    def _keep(self, released: Any, mechanism: Any) -> None:
        """Store the released values (``None`` when nothing was released) as fitted attributes."""

    def _check_fitted(self) -> None:
        check_is_fitted(self, "n_samples_seen_")


class StandardScaler(_Scaler):
    """Standardise features by a differentially private mean and standard deviation, scikit-learn style.

    ``fit`` makes one private release of the per-feature means and variances of ``X`` clipped to public ``bounds``;
    ``transform`` computes (x − ``mean_``) / ``scale_`` and ``inverse_transform`` undoes it (free post-processing).
    ``clone``, ``Pipeline``, ``GridSearchCV``, ``set_output`` and ``get_feature_names_out`` work as for
    scikit-learn's own StandardScaler.

    Parameters
    ----------
    epsilon : float
        Privacy loss ε of one ``fit``; a required keyword (no default: a privacy level is never chosen for you).
    delta : float, default 0.0
        δ of one ``fit``: 0 gives pure ε-DP with Laplace noise; > 0 gives (ε, δ)-DP with Gaussian noise, whose
        noise grows with √(n_features) instead of n_features (better with many features).
    bounds : (lower, upper)
        Required public range of the features: two numbers, or two arrays with one number per feature. Values are
        clipped to it before the statistics are computed; it is never taken from the data.
    with_mean : bool, default True
        Centre the data (release the means). ``False`` releases the variances only, with the whole budget.
    with_std : bool, default True
        Scale the data to unit variance (release the variances). ``False`` releases the means only, with the whole
        budget. With both ``False`` nothing is released, nothing is charged and ``transform`` is the identity.
    rng : None, int or numpy Generator, default None
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged once with (ε, δ) per ``fit``, before any noise is drawn.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        The released means (inside the bounds); ``None`` when ``with_mean=False``.
    var_ : ndarray of shape (n_features,) or None
        The released variances of the clipped data, floored at ``var_floor_``; ``None`` when ``with_std=False``.
    var_floor_ : ndarray of shape (n_features,) or None
        The public floor of ``var_``: the half-width of the variance's 50% error bar (its median noise magnitude and
        the grid's allowance) at the widest variance the bounds allow, a function of ε, δ, n, the number of features
        and the bounds only.
    scale_ : ndarray of shape (n_features,) or None
        √``var_``, never zero; ``None`` when ``with_std=False``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Set when ``X`` has column names; ``transform`` then refuses columns in another order.
    n_samples_seen_ : int
        The number of rows (public under replace-one neighbours).
    privacy_params_ : Eps, Del or None
        The guarantee of the last ``fit`` (``None`` when nothing was released).

    Notes
    -----
    (ε, δ)-DP under replace-one neighbours per ``fit`` (the number of rows is public), by basic composition of two
    releases of :mod:`diffpriv_py.stats`: the means (:func:`~diffpriv_py.stats.mean`, sensitivity
    (hi − lo)/n per feature) at ε/3 (and δ/3), and the variances (:func:`~diffpriv_py.stats.var`, ddof 0,
    sensitivity (n − 1)(hi − lo)²/n² per feature) at 2ε/3 (and 2δ/3), each over all features as one vector with
    noise proportional to each feature's own width. Both are exact in floating point (see those functions).
    Everything else is post-processing.

    Why this split: the error of a standardised value z is about δμ/σ + |z|·δv/(2σ²) for mean and variance errors
    δμ, δv. Both releases have noise ∝ width/(nε') in their own units (width for the mean, width² for the
    variance), so with t = width/σ the two terms are ∝ t/ε_μ and t²/(2ε_v); their squared sum is smallest when
    ε_v/ε_μ = (t/2)^(2/3), which is 1.4–2.5 for the usual t = 3.5 (uniform data filling its bounds) to 8 (bounds
    at ±4σ). A fixed 1:2 split is within a few percent of the best over that range, and, being fixed, does not
    depend on the data.

    The variance is floored at ``var_floor_`` (post-processing with a public value): a released variance below its
    own noise level cannot be told from zero, and dividing by its root would blow the transformed values up. So
    ``scale_`` is never zero (scikit-learn sets 1 where the variance is 0; here the floor plays that role) and
    never negative. Unlike scikit-learn, ``mean_`` is not released when ``with_mean=False`` (it would cost budget
    and is not used).

    The structure of the release (shapes, which attributes exist, the budget split, the floor) depends only on the
    parameters, n and the number of features. NaN or infinite values are found after the charge (the error says
    the budget was spent): impute them with a public value before ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import StandardScaler
    >>> X = np.random.default_rng(0).normal(50, 10, size=(10_000, 2))
    >>> scaler = StandardScaler(epsilon=1.0, bounds=(0, 100), rng=0).fit(X)
    >>> np.round(scaler.mean_), np.round(scaler.scale_)
    (array([50., 50.]), array([10., 10.]))
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        with_mean: bool = True,
        with_std: bool = True,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.with_mean = with_mean
        self.with_std = with_std
        self.rng = rng
        self.accountant = accountant

    def _releases_nothing(self) -> bool:
        return not self.with_mean and not self.with_std

    def _mechanism_for(self, X: np.ndarray, y: np.ndarray | None) -> MeansAndVariances:
        lo, hi = _feature_bounds(self, X.shape[1])
        for name in ("with_mean", "with_std"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"The '{name}' parameter of StandardScaler must be True or False.")
        return MeansAndVariances(lower=lo, upper=hi, with_mean=bool(self.with_mean), with_std=bool(self.with_std))

    def _keep(self, released: Any, mechanism: Any) -> None:
        released = released or {}
        self.mean_ = None if released.get("mean") is None else np.asarray(released["mean"], dtype=np.float64)
        if released.get("var") is None:
            self.var_ = self.var_floor_ = self.scale_ = None
        else:
            self.var_floor_ = np.asarray(released["floor"], dtype=np.float64)
            self.var_ = np.maximum(np.asarray(released["var"], dtype=np.float64), self.var_floor_)
            self.scale_ = np.sqrt(self.var_)

    def transform(self, X: Any) -> np.ndarray:
        """(X − ``mean_``) / ``scale_`` (each step only when released); post-processing, no charge."""
        out = self._validate_predict_data(X)
        if self.mean_ is not None:
            out = out - self.mean_
        if self.scale_ is not None:
            out = out / self.scale_
        return out

    def inverse_transform(self, X: Any) -> np.ndarray:
        """X · ``scale_`` + ``mean_``: back to the original units; post-processing, no charge."""
        out = self._validate_predict_data(X)
        if self.scale_ is not None:
            out = out * self.scale_
        if self.mean_ is not None:
            out = out + self.mean_
        return out


class MinMaxScaler(_Scaler):
    """Scale features to ``feature_range`` by a differentially private range, scikit-learn style.

    The range of each feature is released as two DP quantiles (``quantiles``, 1% and 99% by default) of ``X``
    clipped to public ``bounds``; ``quantiles=None`` uses the public bounds themselves and spends nothing.
    ``transform`` maps ``data_min_`` to ``feature_range[0]`` and ``data_max_`` to ``feature_range[1]``;
    ``transform`` and ``inverse_transform`` are free post-processing.

    Parameters
    ----------
    feature_range : (min, max), default (0, 1)
        The desired range of the transformed data, min < max.
    epsilon : float
        Privacy loss ε of one ``fit``; a required keyword (no default: a privacy level is never chosen for you).
    bounds : (lower, upper)
        Required public range of the features: two numbers, or two arrays with one number per feature. Values are
        clipped to it, and the released range always lies inside it; it is never taken from the data.
    quantiles : (low, high) or None, default (0.01, 0.99)
        Levels in [0, 1], low < high, of the quantiles released as ``data_min_`` and ``data_max_``. ``None``: the
        range is the public ``bounds``; nothing is read from the data and nothing is charged.
    clip : bool, default False
        Clip transformed values to ``feature_range`` (values outside the released range, e.g. the 1% beyond each
        quantile, would otherwise map outside it).
    n_candidates : int or None, default None
        Resolution of the quantiles: each is a point of a public grid of this many points across the bounds.
        ``None`` sizes the grid from the public n and ε as :func:`diffpriv_py.stats.quantile` does
        (:func:`diffpriv_py.stats.default_n_candidates`), so its step is not what limits the accuracy.
    rng : None, int or numpy Generator, default None
        ``None`` for secure randomness; a seed only for reproducible experiments.
    accountant : Accountant, optional
        Charged once with ε per ``fit`` that releases quantiles, before any noise is drawn.

    Attributes
    ----------
    data_min_, data_max_ : ndarray of shape (n_features,)
        The released range (the two quantiles, in increasing order, or the bounds).
    data_range_ : ndarray of shape (n_features,)
        ``data_max_ − data_min_``, floored at one step of the quantiles' grid so it is never zero.
    scale_, min_ : ndarray of shape (n_features,)
        ``transform(X) = X · scale_ + min_``, as scikit-learn's.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Set when ``X`` has column names; ``transform`` then refuses columns in another order.
    n_samples_seen_ : int
        The number of rows (public under replace-one neighbours).
    privacy_params_ : Eps or None
        The guarantee of the last ``fit`` (``None`` with ``quantiles=None``: nothing was released).

    Notes
    -----
    ε-DP under replace-one neighbours per ``fit``: one release of :class:`diffpriv_py.stats.Quantile` (the
    exponential mechanism over a public grid, rank utility of sensitivity 1), with ε split equally over the two
    levels and the features (basic composition), exactly as :func:`diffpriv_py.stats.quantile` with ``axis=0``.

    Why quantiles and not the minimum and maximum: replacing one record can move the minimum or maximum across
    the whole public range, so a DP min/max is mostly noise. Quantiles 0 and 1 do not help either: every candidate
    below the smallest value has the same rank score, so the exponential mechanism picks uniformly among them, i.e.
    anywhere between the lower bound and the data. A quantile just inside (1% and 99%) is pinned from both sides
    and moves by at most one rank per record; the 2% of values beyond it land slightly outside ``feature_range``
    (use ``clip=True`` to cut them). When the bounds are tight already, ``quantiles=None`` is free and exact.

    The two released levels are sorted (post-processing) and the range is floored at one grid step (a public
    value), so ``transform`` never divides by zero or a negative number. The structure of the release depends only
    on the parameters, n and the number of features. NaN or infinite values are found after the charge.

    Examples
    --------
    >>> import numpy as np
    >>> from diffpriv_py.sklearn import MinMaxScaler
    >>> X = np.random.default_rng(0).uniform(20, 60, size=(10_000, 2))
    >>> scaler = MinMaxScaler(epsilon=1.0, bounds=(0, 100), rng=0).fit(X)
    >>> np.round(scaler.data_min_), np.round(scaler.data_max_)
    (array([20., 20.]), array([60., 60.]))
    """

    def __init__(
        self,
        feature_range: Any = (0, 1),
        *,
        epsilon: float,
        bounds: Any = None,
        quantiles: Any = (0.01, 0.99),
        clip: bool = False,
        n_candidates: int | None = None,
        rng: Any = None,
        accountant: Any = None,
    ) -> None:
        self.feature_range = feature_range
        self.epsilon = epsilon
        self.bounds = bounds
        self.quantiles = quantiles
        self.clip = clip
        self.n_candidates = n_candidates
        self.rng = rng
        self.accountant = accountant

    def _releases_nothing(self) -> bool:
        return self.quantiles is None

    def _range(self) -> tuple[float, float]:
        fr = self.feature_range
        if not isinstance(fr, (tuple, list)) or len(fr) != 2:
            raise TypeError(f"The 'feature_range' parameter of MinMaxScaler must be a pair (min, max). Got {fr!r}.")
        low, high = (check_real(v, "feature_range", owner="MinMaxScaler") for v in fr)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(
                f"The 'feature_range' parameter of MinMaxScaler must be finite with min < max. Got {tuple(fr)!r}."
            )
        return low, high

    def _levels(self) -> tuple[float, float]:
        levels = quantile_levels(self.quantiles)
        if len(levels) != 2 or not levels[0] < levels[1]:
            raise ValueError(
                "The 'quantiles' parameter of MinMaxScaler must be two levels (low, high) in [0, 1] with low < high, "
                f"or None for the public bounds. Got {self.quantiles!r}."
            )
        return levels[0], levels[1]

    def _mechanism_for(self, X: np.ndarray, y: np.ndarray | None) -> DPMech:
        self._range()
        if not isinstance(self.clip, (bool, np.bool_)):
            raise TypeError(f"The 'clip' parameter of MinMaxScaler must be True or False. Got {self.clip!r}.")
        lo, hi = _feature_bounds(self, X.shape[1])
        levels = (0.0, 1.0) if self.quantiles is None else self._levels()
        n_candidates = self.n_candidates
        if n_candidates is None:  # n (replace-one), ε, the levels and the features are public
            epsilon = self._privacy_params().epsilon / (len(levels) * X.shape[1])
            n_candidates = default_n_candidates(X.shape[0], epsilon)
        return Quantile(target=_finite, quantiles=levels, lower=lo, upper=hi, n_candidates=n_candidates)

    def _keep(self, released: Any, mechanism: Any) -> None:
        lo, hi = np.asarray(mechanism.lower), np.asarray(mechanism.upper)
        if released is None:
            data_min, data_max = lo, hi
        else:
            levels = np.asarray(released, dtype=np.float64)  # (levels, features); sorting is post-processing
            data_min, data_max = levels.min(axis=0), levels.max(axis=0)
        step = (hi - lo) / (mechanism.n_candidates - 1)
        low, high = self._range()
        self.data_min_, self.data_max_ = data_min, data_max
        self.data_range_ = np.maximum(data_max - data_min, step)
        self.scale_ = (high - low) / self.data_range_
        self.min_ = low - data_min * self.scale_

    def transform(self, X: Any) -> np.ndarray:
        """X · ``scale_`` + ``min_`` (clipped to ``feature_range`` if ``clip``); post-processing, no charge."""
        X = self._validate_predict_data(X)
        out: np.ndarray = X * self.scale_ + self.min_
        if self.clip:
            out = np.clip(out, *self._range())
        return out

    def inverse_transform(self, X: Any) -> np.ndarray:
        """(X − ``min_``) / ``scale_``: back to the original units; post-processing, no charge."""
        X = self._validate_predict_data(X)
        result: np.ndarray = (X - self.min_) / self.scale_
        return result
