"""DP group-by: count, sum, mean, variance and standard deviation per group, with per-person contribution bounds and
private partition selection (the set of released groups is itself private unless the keys are public)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from .. import _noise
from .._contribution import bound_contributions
from .._rng import RNGLike
from .._validation import check_int
from ..accuracy import check_alpha, discrete_laplace_half_width, half_width
from ..exceptions import TargetOutputError
from ..mechanisms import DiscreteLaplace, Gaussian, Laplace
from ..mechanisms.base import DPMech, NumericMech, _callable_target
from ..privacy import Del, Eps
from ._common import MECHANISMS, check_bounds, check_choice

__all__ = ["GROUPBY_STATISTICS", "GroupBy", "GroupByResult", "groupby"]

GROUPBY_STATISTICS = ("count", "sum", "mean", "var", "std")


def _group_sums(codes: np.ndarray, weights: np.ndarray | None, n_groups: int) -> np.ndarray:
    """Σ weights per group (the number of rows without weights): the ONE place per-group sums are computed.

    Swap point for an exact fixed-point aggregation kernel: every per-group sum of the group-by goes through here.
    """
    return np.bincount(codes, weights=weights, minlength=n_groups).astype(np.float64, copy=False)


def _identity(data: Any) -> Any:
    return data


def _statistics(value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or any(not isinstance(s, str) or s not in GROUPBY_STATISTICS for s in names):
        raise ValueError(
            f"The 'statistics' of dp.stats.groupby must be a non-empty selection of {GROUPBY_STATISTICS}; got "
            f"{value!r}. Pass e.g. statistics=('count', 'mean')."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"The 'statistics' of dp.stats.groupby must not repeat a statistic; got {value!r}.")
    return names


def _keys(value: Any) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(
            f"The 'keys' of dp.stats.groupby must be a sequence of public group labels (or None to select groups "
            f"privately); got {value!r}. Pass e.g. keys=['Paris', 'Lyon']."
        )
    keys = tuple(np.asarray(list(value)).tolist())
    if not keys:
        raise ValueError("The 'keys' of dp.stats.groupby must not be empty; pass keys=None to select groups privately.")
    if len(set(keys)) != len(keys):
        raise ValueError(f"The 'keys' of dp.stats.groupby must be distinct labels; got {value!r}.")
    return keys


@attrs.frozen(eq=False)
class GroupByResult:
    """The released groups and, per statistic, the private values and their error bars (public arrays)."""

    keys: np.ndarray
    values: dict[str, np.ndarray]
    accuracy: dict[str, np.ndarray]
    alpha: float

    def to_frame(self, name: Any = None) -> Any:
        """A pandas DataFrame indexed by the released groups, with a ``<statistic>_accuracy`` column per statistic."""
        import pandas as pd

        columns: dict[str, np.ndarray] = {}
        for stat, vals in self.values.items():
            columns[stat] = vals
            columns[f"{stat}_accuracy"] = self.accuracy[stat]
        frame = pd.DataFrame(columns, index=pd.Index(self.keys, name=name))
        frame.attrs["alpha"] = self.alpha
        return frame


@attrs.frozen(kw_only=True)
class _Measurement:
    """One noised vector of per-group sums: its per-row bound M and how it counts towards the sensitivities."""

    name: str
    bound: float  # |contribution of one row| ≤ bound
    signed: bool  # False for counts (non-negative contributions)


@attrs.frozen(kw_only=True)
class GroupBy(DPMech):
    """Release statistics per group of a table whose people may own several rows.

    The dataset is a tuple ``(by, values, unit)`` of equal-length 1-D arrays: the group label of each row, its value
    (or ``None`` for counts only) and the person it belongs to (or ``None``: every row is a different person). Use
    :func:`diffpriv_py.stats.groupby` or ``DataFrame.private.groupby``; this class is the mechanism they release
    through (and what :func:`diffpriv_py.testing.audit` audits).

    Parameters
    ----------
    statistics : sequence of {"count", "sum", "mean", "var", "std"}
        What to release per group.
    bounds : (lower, upper) or None
        Public clipping bounds of the values (required for sum, mean, var, std).
    keys : sequence or None
        Public group labels: every key is released (empty ones too). ``None``: groups are selected privately.
    max_groups, max_rows : int, default 1
        Public limits: each person contributes to at most ``max_groups`` groups with at most ``max_rows`` rows each
        (more are dropped by a uniformly random, data-independent choice). Must be 1 without an identifier.
    noise : {"laplace", "gaussian"}, default "laplace"
        Noise of the aggregates (Laplace-type: discrete Laplace for counts; Gaussian needs ``Del``).
    alpha : float, default 0.05
        Level of the error bars reported with every value.

    Notes
    -----
    **Neighbouring relation: replace one person** (all of their rows), the library's relation lifted from rows to
    people; without an identifier a person is one row. The number of people is public; the number of rows, the
    groups a person is in and which groups exist are private. After bounding, removing a person changes at most
    G = ``max_groups`` groups by at most R = ``max_rows`` rows, and replacing a person is one removal plus one
    addition, so the add/remove sensitivities are doubled: with per-row bound M (1 for counts, max(|lo|, |hi|) for
    sums, ½ and ⅛ for the centred sums Σu and Σ(u² − ⅛), u = (clip(x) − c)/(hi − lo)), the L1 sensitivity is
    2·G·R·M and the L2 sensitivity R·√(2G) for counts, 2·R·M·√G for signed sums (a group touched by both people
    can move by 2RM).

    **Budget.** The (ε, δ) given is the guarantee of the whole query and is charged to the accountant once. ε is
    split equally over the noised vectors: private partition selection (if ``keys`` is None), the row count (if
    count, mean, var or std is asked for), the sum, Σu (mean, var, std) and Σ(u² − ⅛) (var, std); mean, variance
    and standard deviation are post-processing of these. With Laplace noise all of δ goes to partition selection
    (which needs δ > 0); with Gaussian noise δ is split like ε.

    **Partition selection** (Korolova et al. 2009; Wilson et al. 2020), when the keys are private: each group's
    number of people N_g (after bounding) gets two-sided geometric noise K with P(K = k) ∝ exp(−t|k|),
    t = ε_s/(2G), and the group is released iff N_g + K ≥ τ with τ = h + 2, h the smallest integer with
    P(|K| > h) ≤ 2δ₀ and δ₀ = δ_s/((1 + e^{ε_s})·G). Proof: on the groups present in both neighbours the people
    counts have L1 sensitivity 2G, so their noisy comparison is ε_s-DP. A group present in only one neighbour has
    N_g = 1 there (only the replaced person is in it) and is released with probability P(K ≥ τ − 1) =
    P(K > h) ≤ δ₀; there are at most G such groups on each side. Conditioning on their non-release gives
    P[M(D) ∈ S] ≤ G·δ₀ + e^{ε_s}·(P[M(D′) ∈ S] + G·δ₀), i.e. (ε_s, (1 + e^{ε_s})·G·δ₀ = δ_s)-DP; the aggregates
    of released groups compose on top (their noise on a group absent from D′ is only seen inside the δ event). The
    sampler's float reserve is calibrated for the 2G coordinates that can differ, a public number.

    **Error bars.** Counts and sums: the exact (1 − α) noise quantile (:meth:`diffpriv_py.Response.accuracy`).
    Mean, variance, std: intervals from the union bound over the noised vectors they use (each at α/k) pushed
    through the public formulas by interval arithmetic, reported as the half-width around the value; they assume
    the group is non-empty. Per group and per statistic, not simultaneous.
    """

    target: Callable[[Any], Any] = attrs.field(default=_identity, validator=_callable_target)
    sensitivity: float = attrs.field(default=1.0)
    statistics: tuple[str, ...] = attrs.field(default=("count",), converter=_statistics)
    bounds: tuple[float, float] | None = attrs.field(default=None)
    keys: tuple[Any, ...] | None = attrs.field(default=None, converter=_keys)
    max_groups: int = attrs.field(default=1)
    max_rows: int = attrs.field(default=1)
    noise: str = attrs.field(default="laplace")
    alpha: float = attrs.field(default=0.05)

    def __attrs_post_init__(self) -> None:
        check_choice(self.noise, "noise", MECHANISMS, who="dp.stats.groupby")
        check_alpha(self.alpha, owner="dp.stats.groupby")
        for name in ("max_groups", "max_rows"):
            check_int(getattr(self, name), name, minimum=1, owner="dp.stats.groupby")
        if self.needs_values:
            if self.bounds is None:
                raise TypeError(
                    "dp.stats.groupby needs public bounds=(lower, upper) for sum, mean, var and std: values are "
                    "clipped to them and the noise is calibrated to them. They are never derived from the data."
                )
            lo, hi = check_bounds(self.bounds, None, who="dp.stats.groupby")
            object.__setattr__(self, "bounds", (float(lo), float(hi)))

    # ---- public plan -----------------------------------------------------------------------------------------------

    @property
    def needs_values(self) -> bool:
        return any(s != "count" for s in self.statistics)

    def measurements(self) -> list[_Measurement]:
        """The noised vectors of per-group sums this query releases (its budget is split over them)."""
        wanted = set(self.statistics)
        out = []
        if wanted & {"count", "mean", "var", "std"}:
            out.append(_Measurement(name="count", bound=1.0, signed=False))
        if "sum" in wanted:
            lo, hi = self.bounds  # type: ignore[misc]
            out.append(_Measurement(name="sum", bound=max(abs(lo), abs(hi)), signed=True))
        if wanted & {"mean", "var", "std"}:
            out.append(_Measurement(name="sum_u", bound=0.5, signed=True))
        if wanted & {"var", "std"}:
            out.append(_Measurement(name="sum_u2", bound=0.125, signed=True))
        return out

    def split(self, privacy_params: Eps) -> tuple[Eps | None, list[Eps]]:
        """The parameters of partition selection (None with public keys) and of each measurement."""
        parts = len(self.measurements()) + (self.keys is None)
        eps = privacy_params.epsilon / parts
        if self.noise == "gaussian":
            each = Del(eps, privacy_params.delta / parts)
            return (each if self.keys is None else None), [each] * (parts - (self.keys is None))
        select = Del(eps, privacy_params.delta) if self.keys is None else None
        return select, [Eps(eps)] * (parts - (self.keys is None))

    def sensitivities(self, m: _Measurement) -> tuple[float, float]:
        """(L1, L2) of one measurement under replace-one-person neighbours (see the class Notes)."""
        g, r = self.max_groups, self.max_rows
        l1 = 2.0 * g * r * m.bound
        l2 = r * m.bound * (math.sqrt(2.0 * g) if not m.signed else 2.0 * math.sqrt(g))
        return l1, l2

    def threshold(self, select: Eps) -> tuple[float, int]:
        """(t, τ): the selection noise parameter and the release threshold on the noisy number of people."""
        g = self.max_groups
        t = _noise.laplace_epsilon_reserve(select.epsilon, 2 * g) / (2.0 * g)
        delta0 = select.delta / ((1.0 + math.exp(select.epsilon)) * g)
        return t, discrete_laplace_half_width(t, 2.0 * delta0) + 2

    # ---- template hooks ----------------------------------------------------------------------------------------------

    def _check_params(self, privacy_params: Eps) -> None:
        if self.noise == "gaussian" and not (isinstance(privacy_params, Del) and privacy_params.delta > 0):
            raise TypeError(
                f"dp.stats.groupby with mechanism='gaussian' needs Del privacy parameters with delta > 0; got "
                f"{privacy_params!r}. Pass e.g. dp.Del(1.0, 1e-6)."
            )
        if self.keys is None and not privacy_params.delta > 0:
            raise ValueError(
                f"dp.stats.groupby without public keys selects the groups privately, which needs delta > 0 (a group "
                f"of one person is released with probability at most delta); got {privacy_params!r}. Pass "
                "dp.Del(epsilon, delta) with a small delta (e.g. 1e-6), or pass the public keys=[...]."
            )
        select = self.split(privacy_params)[0]
        if select is not None:
            _noise.laplace_epsilon_reserve(select.epsilon, 2 * self.max_groups)

    def _check_dataset(self, X: Any) -> Any:
        who = "dp.stats.groupby"
        if not (isinstance(X, tuple) and len(X) == 3):
            raise TypeError(f"The dataset of GroupBy is a tuple (by, values, unit); got {type(X).__name__}.")
        by, values, unit = X
        by = _labels(by, "by", who)
        n = by.shape[0]
        if self.needs_values:
            if values is None:
                raise TypeError(f"{who} needs values for {self.statistics}; pass values= (a numeric column).")
            values = _column(values, "values", who, n=n)
            if values.dtype.kind not in "iuf":
                raise TypeError(
                    f"The 'values' of {who} must be numeric; got dtype {values.dtype}. Convert them first (e.g. "
                    "x.astype(float))."
                )
        else:
            values = None
        if unit is not None:
            unit = _labels(unit, "privacy_unit", who, n=n)
        elif self.max_groups != 1 or self.max_rows != 1:
            raise ValueError(
                f"{who} got max_groups={self.max_groups}, max_rows={self.max_rows} but no privacy_unit: without an "
                "identifier every row is a different person (one group, one row). Pass privacy_unit= (the column "
                "naming the person behind each row), or leave max_groups and max_rows at 1."
            )
        return by, values, unit

    def _evaluate(self, output: Any) -> Any:
        values = output[1]
        if values is not None and np.isnan(np.asarray(values, dtype=np.float64)).any():
            raise TargetOutputError(
                "The values passed to dp.stats.groupby contain NaN. Impute them with a public value first (dropping "
                "rows yourself is fine here: the number of rows is private under per-person neighbours)."
            )
        return output

    def _norm(self, value1: Any, value2: Any) -> float:
        raise NotImplementedError(
            "GroupBy has one sensitivity per aggregate, derived from max_groups and max_rows; it has no single norm "
            "and cannot be used with the sensitivity sampler."
        )

    def _release(self, value: Any, privacy_params: Eps, rng: np.random.Generator) -> GroupByResult:
        by, values, unit = value
        select, parts = self.split(privacy_params)
        labels, codes = np.unique(by, return_inverse=True)
        codes = codes.reshape(-1)
        if self.keys is not None:
            # Rows of groups outside the public keys are dropped before bounding (data-independent: by label).
            key_arr = np.asarray(self.keys)
            pos = np.searchsorted(labels, key_arr)
            pos = np.minimum(pos, labels.size - 1)
            found = labels[pos] == key_arr
            to_key = np.full(labels.size, -1)
            to_key[pos[found]] = np.flatnonzero(found)
            codes = to_key[codes]
            rows = codes >= 0
            by_codes, labels = codes[rows], key_arr
            values = None if values is None else values[rows]
            unit = None if unit is None else unit[rows]
        else:
            by_codes = codes
        n_groups = labels.size
        if unit is not None:
            unit_codes = np.unique(unit, return_inverse=True)[1].reshape(-1)
            keep = bound_contributions(unit_codes, by_codes, self.max_groups, self.max_rows, rng)
            by_codes, unit_codes = by_codes[keep], unit_codes[keep]
            values = None if values is None else values[keep]
        else:
            unit_codes = None
        if select is not None:
            if unit_codes is None:
                people = _group_sums(by_codes, None, n_groups)
            else:
                pairs = np.unique(unit_codes.astype(np.int64) * n_groups + by_codes)
                people = _group_sums(pairs % n_groups, None, n_groups)
            t, tau = self.threshold(select)
            noisy = people + _noise.two_sided_geometric(people.shape, t, rng)
            released = np.flatnonzero(noisy >= tau)
        else:
            released = np.arange(n_groups)
        # Per-group sums of the released groups only (the others are never looked at again).
        slot = np.full(n_groups, -1)
        slot[released] = np.arange(released.size)
        rows = slot[by_codes] >= 0
        g_codes = slot[by_codes[rows]]
        x = None if values is None else values[rows].astype(np.float64)
        return self._aggregate(labels[released], g_codes, x, released.size, parts, rng)

    def _aggregate(
        self, keys: np.ndarray, codes: np.ndarray, x: np.ndarray | None, k: int, parts: list[Eps], rng: Any
    ) -> GroupByResult:
        exact: dict[str, np.ndarray] = {}
        lo = hi = centre = width = 0.0
        if x is not None:
            lo, hi = self.bounds  # type: ignore[misc]
            centre, width = (lo + hi) / 2, hi - lo
            clipped = np.clip(x, lo, hi)
            u = (clipped - centre) / width
        for m in self.measurements():
            if m.name == "count":
                exact[m.name] = _group_sums(codes, None, k)
            elif m.name == "sum":
                exact[m.name] = _group_sums(codes, clipped, k)
            elif m.name == "sum_u":
                exact[m.name] = _group_sums(codes, u, k)
            else:
                exact[m.name] = _group_sums(codes, u * u - 0.125, k)
        noisy: dict[str, np.ndarray] = {}
        bars: dict[str, Callable[[float], np.ndarray]] = {}
        for m, params in zip(self.measurements(), parts, strict=True):
            mech = self._mechanism(m, k)
            if k == 0:
                noisy[m.name] = np.zeros(0)
                bars[m.name] = lambda a: np.zeros(0)
                continue
            resp = mech.release_response(params, exact[m.name], rng=rng)
            noisy[m.name] = np.atleast_1d(np.asarray(resp.response, dtype=np.float64))
            bars[m.name] = lambda a, mech=mech, params=params, v=noisy[m.name]: np.broadcast_to(
                np.asarray(half_width(mech, params, v, a), dtype=np.float64), v.shape
            )
        return self._report(keys, noisy, bars, centre, width, lo, hi)

    def _mechanism(self, m: _Measurement, k: int) -> NumericMech:
        l1, l2 = self.sensitivities(m)
        target = np.asarray
        if self.noise == "gaussian":
            return Gaussian(target=target, sensitivity=l2, dims=max(k, 1))
        if m.name == "count":
            return DiscreteLaplace(target=target, sensitivity=l1, dims=max(k, 1))
        return Laplace(target=target, sensitivity=l1, dims=max(k, 1))

    def _report(
        self,
        keys: np.ndarray,
        noisy: dict[str, np.ndarray],
        bars: dict[str, Callable[[float], np.ndarray]],
        centre: float,
        width: float,
        lo: float,
        hi: float,
    ) -> GroupByResult:
        alpha = self.alpha
        values: dict[str, np.ndarray] = {}
        acc: dict[str, np.ndarray] = {}
        wanted = self.statistics
        if "count" in noisy:
            count = np.maximum(np.rint(noisy["count"]), 0.0)
            if "count" in wanted:
                values["count"] = count.astype(np.int64)
                acc["count"] = np.floor(bars["count"](alpha) + 0.5)
        if "sum" in wanted:
            values["sum"] = noisy["sum"]
            acc["sum"] = bars["sum"](alpha)
        if set(wanted) & {"mean", "var", "std"}:
            k_used = 3 if set(wanted) & {"var", "std"} else 2
            a = alpha / k_used  # union bound over the noised vectors a statistic is computed from
            c, s = noisy["count"], noisy["sum_u"]
            n_hat = np.maximum(c, 1.0)
            mean_u = np.clip(s / n_hat, -0.5, 0.5)
            n_lo = np.maximum(c - bars["count"](a), 1.0)
            n_hi = np.maximum(c + bars["count"](a), n_lo)
            hs = bars["sum_u"](a)
            m_lo, m_hi = _ratio_interval(s - hs, s + hs, n_lo, n_hi, -0.5, 0.5)
            if "mean" in wanted:
                values["mean"] = np.clip(centre + width * mean_u, lo, hi)
                acc["mean"] = width * np.maximum(mean_u - m_lo, m_hi - mean_u)
            if set(wanted) & {"var", "std"}:
                q = noisy["sum_u2"]
                hq = bars["sum_u2"](a)
                e_lo, e_hi = _ratio_interval(q - hq, q + hq, n_lo, n_hi, -0.125, 0.125)
                sq_lo = np.where((m_lo <= 0) & (m_hi >= 0), 0.0, np.minimum(m_lo**2, m_hi**2))
                sq_hi = np.maximum(m_lo**2, m_hi**2)
                v_lo = np.clip(e_lo + 0.125 - sq_hi, 0.0, 0.25)
                v_hi = np.clip(e_hi + 0.125 - sq_lo, 0.0, 0.25)
                var_u = np.clip(q / n_hat + 0.125 - mean_u**2, 0.0, 0.25)
                w2 = width * width
                if "var" in wanted:
                    values["var"] = w2 * var_u
                    acc["var"] = w2 * np.maximum(var_u - v_lo, v_hi - var_u)
                if "std" in wanted:
                    sd = width * np.sqrt(var_u)
                    values["std"] = sd
                    acc["std"] = np.maximum(sd - width * np.sqrt(v_lo), width * np.sqrt(v_hi) - sd)
        ordered = {s: values[s] for s in wanted}
        return GroupByResult(keys=keys, values=ordered, accuracy={s: acc[s] for s in wanted}, alpha=alpha)


def _ratio_interval(
    a: np.ndarray, b: np.ndarray, n_lo: np.ndarray, n_hi: np.ndarray, low: float, high: float
) -> tuple[np.ndarray, np.ndarray]:
    """Range of s/n over s ∈ [a, b], n ∈ [n_lo, n_hi] (n > 0), intersected with the feasible [low, high]."""
    lo = np.minimum(a / n_lo, a / n_hi)
    hi = np.maximum(b / n_lo, b / n_hi)
    return np.clip(lo, low, high), np.clip(hi, low, high)


def _labels(value: Any, name: str, who: str, *, n: int | None = None) -> np.ndarray:
    """A label column (groups, people) as a sortable array: object columns (strings, pandas categoricals with
    missing values) become strings, so a missing label is the group ``"nan"``."""
    arr = _column(value, name, who, n=n)
    return arr.astype(str) if arr.dtype.kind == "O" else arr


def _column(value: Any, name: str, who: str, *, n: int | None = None) -> np.ndarray:
    arr = value.to_numpy() if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray) else np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"The '{name}' of {who} must be a 1-D column (one entry per row); got shape {arr.shape}.")
    if n is None and arr.shape[0] == 0:
        raise ValueError(f"{who} needs at least one row; got an empty '{name}' column.")
    if n is not None and arr.shape[0] != n:
        raise ValueError(
            f"The '{name}' of {who} must have one entry per row of 'by' ({n}); got {arr.shape[0]}. Pass columns of "
            "the same table."
        )
    return arr


def groupby(
    by: Any,
    privacy_params: Eps,
    *,
    values: Any = None,
    statistics: str | Sequence[str] = ("count",),
    bounds: Any = None,
    keys: Any = None,
    privacy_unit: Any = None,
    max_groups: int = 1,
    max_rows: int = 1,
    mechanism: str = "laplace",
    alpha: float = 0.05,
    rng: RNGLike = None,
    accountant: Any = None,
    full_response: bool = False,
    name: Any = None,
) -> Any:
    """Differentially private statistics per group, with error bars, as a pandas DataFrame.

    Parameters
    ----------
    by : array_like
        The group label of each row (1-D; any sortable labels: strings, integers).
    privacy_params : Eps or Del
        The guarantee of the whole query (charged once). Without public ``keys`` it must be ``Del`` with δ > 0.
    values : array_like, optional
        The numeric value of each row (needed for sum, mean, var, std).
    statistics : str or sequence of str, default ("count",)
        Any of "count", "sum", "mean", "var", "std".
    bounds : (lower, upper), optional
        Public clipping bounds of the values (required for value statistics).
    keys : sequence, optional
        Public group labels. Every key is released, missing ones as empty groups, and rows of other groups are
        ignored. ``None`` (default): the groups are chosen privately (partition selection; rare groups are dropped).
    privacy_unit : array_like, optional
        The person behind each row. ``None``: every row is a different person.
    max_groups, max_rows : int, default 1
        Public per-person limits: at most ``max_groups`` groups and ``max_rows`` rows per group are kept per person
        (a uniformly random choice from ``rng``). Larger limits keep more data but add proportionally more noise.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Noise of the aggregates (integer-valued for counts with Laplace).
    alpha : float, default 0.05
        Level of the ``<statistic>_accuracy`` columns: each value is within that half-width of the exact
        statistic of the bounded, clipped data with probability ≥ 1 − α (per group and statistic).
    rng : None, int or numpy.random.Generator, optional
        ``None`` (default) draws cryptographically strong noise; a seed is for tests only.
    accountant : Accountant, optional
        Charged once with ``privacy_params``, before the data are read.
    full_response : bool, default False
        Return the :class:`~diffpriv_py.Response` (its ``response`` is the DataFrame).
    name : object, optional
        Name of the DataFrame's index.

    Returns
    -------
    pandas.DataFrame or Response
        Indexed by the released groups (sorted), one column per statistic and one ``<statistic>_accuracy`` column
        each; ``frame.attrs["alpha"]`` records α.

    Notes
    -----
    (ε, δ)-DP under replace-one-person neighbours (one person's rows replaced by another's), the library's
    replace-one relation with people as records; see :class:`GroupBy` for the sensitivities, the budget split, the
    partition-selection threshold and its proof, and the error bars.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> city = np.array(["Paris"] * 300 + ["Lyon"] * 200 + ["Nice"])
    >>> age = np.linspace(20, 70, city.size)
    >>> table = dp.stats.groupby(city, dp.Del(1.0, 1e-6), values=age, statistics=("count", "mean"),
    ...                          bounds=(0, 100), rng=0)
    >>> list(table.index)  # the group of one person is (almost surely) not released
    ['Lyon', 'Paris']
    """
    who = "dp.stats.groupby"
    if not isinstance(privacy_params, Eps):
        raise TypeError(f"{who} needs privacy parameters such as dp.Del(1.0, 1e-6); got {privacy_params!r}.")
    if not isinstance(full_response, (bool, np.bool_)):
        raise TypeError(f"The 'full_response' of {who} must be True or False. Got {full_response!r}.")
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS, who=who)
    mech = GroupBy(
        statistics=statistics,
        bounds=bounds,
        keys=keys,
        max_groups=max_groups,
        max_rows=max_rows,
        noise=mechanism,
        alpha=alpha,
    )
    response = mech.release_response(privacy_params, (by, values, privacy_unit), rng=rng, accountant=accountant)
    if name is None:
        name = getattr(by, "name", None)
    frame = response.response.to_frame(name)
    if full_response:
        return attrs.evolve(response, response=frame)
    return frame
