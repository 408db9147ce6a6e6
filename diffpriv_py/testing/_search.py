"""A searching auditor: generate adversarial replace-one neighbours, screen them grey-box, audit the worst black-box.

:func:`audit` tests the one pair it is handed, and a leak that shows only on some pair (an interpolating quantile, a
float sum with offset bounds, a clip bypassed by overflow) passes on a benign pair. :func:`search_audit` builds many
neighbouring pairs from a dataset (extremes, the public bounds, ±0 and subnormals, tiny moves of a record, huge and
overflowing magnitudes, offset values, label flips, swapped categories), ranks them by a sample-free screen of the
target, explores the most promising with small lax audits, and confirms the best few with full audits whose α is
divided among them (Bonferroni), so a refutation is statistically valid at the α given.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Iterator
from typing import Any

import attrs
import numpy as np

from .._datasets import n_records
from .._validation import check_int
from ..mechanisms.base import DPMech, check_mechanism
from ..privacy import Eps
from ._audit import AuditReport, _draw, _hashable, _is_vectorised, audit
from ._structure import describe
from ._support import public_bounds

__all__ = ["PairResult", "SearchPlan", "SearchReport", "search_audit"]

_EXPLORE_ALPHA = 0.05
_RECORDS_MOVED = 4
_SPREAD = 48
_SCREEN_SHARE, _EXPLORE_SHARE = 0.15, 0.35
_MAX_VECTORISED_N = 200_000
_MAX_RELEASE_N = 4_000
_HUGE = (1e154, -1e154, 1e200, 1e308, -1e308)
_TINY = (0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300)
_OFFSET = (2.0**43 + 0.5, 2.0**43 + 1.0, 2.0**52 + 1.0)


@attrs.frozen
class PairResult:
    """One neighbouring pair the search tried.

    Attributes
    ----------
    description : str
        How the neighbour ``D′`` was made from ``D`` (which record, which replacement).
    target_change : float
        ``mechanism.sensitivity_norm(D, D′)`` (NaN if the target could not be evaluated on one side).
    screen : str
        The grey-box finding for this pair ("" if none): a change above the declared sensitivity, a non-finite
        target, or releases that are non-finite or fail on one side only. A finding prioritises the pair; only an
        audit refutes.
    explore, confirm : AuditReport or None
        The lax explore audit (level 0.05, used only to rank pairs) and the confirm audit at α divided among the
        confirmed pairs; None if the pair did not reach that stage.
    """

    description: str
    target_change: float
    screen: str = ""
    explore: AuditReport | None = None
    confirm: AuditReport | None = None


def _plan_size(name: str, value: Any, minimum: int) -> None:
    check_int(value, name, minimum=minimum, owner="SearchPlan")


@attrs.frozen
class SearchPlan:
    """The sizes a :func:`search_audit` chose from its time budget: pass it back as ``plan=`` with the same ``rng``
    to replay the search exactly, whatever the machine's speed.

    Attributes
    ----------
    screened : int
        Pairs screened.
    explored : int
        Pairs audited at the explore stage (in rank order), each on ``n_explore`` samples.
    n_explore, n_confirm : int
        Sample sizes of the explore and confirm audits.
    """

    screened: int = attrs.field(validator=lambda _, a, v: _plan_size(a.name, v, 0))
    explored: int = attrs.field(validator=lambda _, a, v: _plan_size(a.name, v, 0))
    n_explore: int = attrs.field(validator=lambda _, a, v: _plan_size(a.name, v, 1))
    n_confirm: int = attrs.field(validator=lambda _, a, v: _plan_size(a.name, v, 1))


@attrs.frozen
class SearchReport:
    """The result of :func:`search_audit`.

    Attributes
    ----------
    passed : bool
        True if no confirmed pair refuted the claim. Passing proves nothing (the search and every audit only give
        lower bounds); a refutation holds with probability ≥ 1 − α.
    worst : PairResult or None
        The confirmed pair with the largest ε lower bound (a refuting one if any).
    pairs : tuple of PairResult
        Every pair tried, in the order the screen ranked them.
    epsilon_lower_bound : float
        The worst confirmed pair's ε lower bound (valid with probability ≥ 1 − α).
    seed, alpha, elapsed : int, float, float
        The seed used, α the overall error probability, seconds used.
    plan : SearchPlan
        The sizes chosen from the time budget: ``search_audit(..., rng=report.seed, plan=report.plan)`` replays the
        search exactly (the same pairs, samples and counts). ``rng=seed`` alone draws the same candidates and
        samples, but how many fit in the time budget depends on the machine's speed.
    """

    passed: bool
    worst: PairResult | None
    pairs: tuple[PairResult, ...]
    epsilon_lower_bound: float
    seed: int
    alpha: float
    elapsed: float
    plan: SearchPlan

    @property
    def confirmed(self) -> tuple[PairResult, ...]:
        """The pairs audited at the confirm stage."""
        return tuple(p for p in self.pairs if p.confirm is not None)

    @property
    def findings(self) -> tuple[str, ...]:
        """The grey-box findings of the screen, one line per pair that had one."""
        return tuple(f"{p.description}: {p.screen}" for p in self.pairs if p.screen)

    def __str__(self) -> str:
        verdict = "passed (claim not refuted)" if self.passed else "FAILED (claim refuted)"
        lines = [
            f"Search audit {verdict}: {len(self.pairs)} pairs screened, "
            f"{sum(p.explore is not None for p in self.pairs)} explored, {len(self.confirmed)} confirmed at "
            f"α={self.alpha:g} in {self.elapsed:.1f} s (seed={self.seed}); ε ≥ {self.epsilon_lower_bound:.4g}."
        ]
        if self.worst is not None:
            lines.append(f"Worst pair: {self.worst.description}.")
            lines.append(f"  {self.worst.confirm}")
        lines += [f"Screen: {f}" for f in self.findings[:5]]
        return "\n".join(lines)


# ---- candidate neighbours ---------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class _Pair:
    description: str
    first: Any
    second: Any
    record: int = -1  # the one record in which the two datasets differ


def _replace(data: np.ndarray, i: int, value: Any) -> np.ndarray:
    keep = data.dtype.kind in "iu" and _integral(value, data.dtype)
    out = data.astype(np.float64, copy=True) if data.dtype.kind in "iub" and not keep else data.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        out[i] = value
    return out


def _integral(value: Any, dtype: np.dtype[Any]) -> bool:
    """Whether every entry of ``value`` is an integer that ``dtype`` holds exactly."""
    v = np.asarray(value, dtype=np.float64)
    info = np.iinfo(dtype)
    return bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)) and np.all((v >= info.min) & (v <= info.max)))


def _records_to_move(values: np.ndarray) -> list[int]:
    """Records whose replacement is most telling: nearest 0, the median, the extremes, then the first."""
    key = values if values.ndim == 1 else np.linalg.norm(np.nan_to_num(values), axis=1)
    order = np.argsort(key, kind="stable")
    picks = [int(np.argmin(np.abs(key))), int(order[key.size // 2]), int(order[0]), int(order[-1]), 0]
    return list(dict.fromkeys(picks))[:_RECORDS_MOVED]


def _scalar_values(bounds: tuple[np.ndarray, np.ndarray] | None) -> list[float]:
    out: list[float] = []
    if bounds is not None:
        lo, hi = float(np.min(bounds[0])), float(np.max(bounds[1]))
        out += [lo, hi, 0.5 * (lo + hi), lo - (hi - lo), hi + (hi - lo), np.nextafter(lo, -np.inf)]
    out += [*_TINY, 1.0, -1.0, *_HUGE, *_OFFSET]
    return out


def _fresh_values(data: np.ndarray, bounds: tuple[np.ndarray, np.ndarray] | None) -> list[Any]:
    """Values of 1-D data that no record holds: beyond the observed range (inside the public bounds, if any) and,
    for integer data, an unseen integer inside it. A release keyed or sized by the values present changes on them."""
    if data.ndim == 2 and data.size and np.all(np.isfinite(data)):
        return _fresh_rows(data, bounds)
    if data.ndim != 1 or data.size == 0 or not np.all(np.isfinite(data)):
        return []
    seen = np.unique(data.astype(np.float64))
    low, high = float(seen[0]), float(seen[-1])
    integer = data.dtype.kind in "iub"
    if bounds is None:
        step = 1.0 if integer else max(high - low, 1.0)
        lo, hi, out = -math.inf, math.inf, [high + step, low - step]
    else:
        lo, hi = float(np.min(bounds[0])), float(np.max(bounds[1]))
        out = [0.5 * (high + hi), 0.5 * (low + lo)]
    if integer:
        out = [float(math.floor(out[0])), float(math.ceil(out[1]))]
        if seen.size < high - low + 1:  # an integer inside the observed range that no record holds
            out.append(float(seen[np.flatnonzero(np.diff(seen) > 1)[0]]) + 1.0)
    held = set(seen.tolist())
    return [float(v) for v in dict.fromkeys(out) if lo <= v <= hi and float(v) not in held]


def _fresh_rows(data: np.ndarray, bounds: tuple[np.ndarray, np.ndarray] | None) -> list[Any]:
    """Rows of 2-D data beyond every column's observed range, inside the public bounds (a norm bound: scaled into
    it) if any."""
    low, high = data.min(axis=0).astype(np.float64), data.max(axis=0).astype(np.float64)
    if bounds is None:
        step = np.maximum(high - low, 1.0)
        return [high + step, low - step]
    lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), low.shape) for b in bounds)
    rows = [0.5 * (high + hi), 0.5 * (low + lo)]
    if bounds[0].size == 1 and np.all(bounds[0] == -bounds[1]):  # a norm bound (data_norm): stay inside the ball
        rows = [r * min(1.0, float(hi[0]) / max(float(np.linalg.norm(r)), 1e-300)) for r in rows]
    return rows


def _bound_record(bound: np.ndarray, data: np.ndarray, d: int) -> Any:
    """A record at the bound: one value per column for 2-D data (a scalar bound is repeated), a scalar for 1-D."""
    if data.ndim == 1 or bound.size not in (1, d):
        return float(bound[0]) if data.ndim == 1 else float(np.mean(bound))
    return np.broadcast_to(bound, (d,))


def _moves(x: float, data: np.ndarray, replacements: Any) -> list[tuple[str, float]]:
    """Tiny moves of a float record (the float structure of a target shows there); negation leaves a given domain."""
    if data.dtype.kind != "f":
        return []
    moves = [("+1e-9", x + 1e-9), ("-1e-9", x - 1e-9)]
    moves += [("+1 ulp", float(np.nextafter(x, np.inf))), ("-1 ulp", float(np.nextafter(x, -np.inf)))]
    return moves if replacements is not None else [*moves, ("negated", -x)]


def _array_pairs(
    data: np.ndarray, bounds: tuple[np.ndarray, np.ndarray] | None, replacements: Any = None
) -> Iterator[_Pair]:
    """Replace-one neighbours of a numeric array: tiny moves of a record first, then bound and extreme values."""
    rows = _records_to_move(data)
    d = 1 if data.ndim == 1 else data.shape[1]
    for i in rows:
        record = data[i]
        if data.ndim == 1:
            for name, v in _moves(float(record), data, replacements):
                yield _Pair(f"record {i} ({float(record):.6g}) {name}", data, _replace(data, i, v), i)
        else:
            for name, v in _moves(float(record[0]), data, replacements):
                row = np.array(record, dtype=np.float64)
                row[0] = v
                yield _Pair(f"row {i}, coordinate 0 {name}", data, _replace(data, i, row), i)
    for i in rows[:2] if replacements is None else ():  # given replacements are the whole domain to try
        for v in _fresh_values(data, bounds):
            what = f"{v!r}" if np.ndim(v) == 0 else f"the row {np.round(v, 6).tolist()}"
            yield _Pair(f"record {i} replaced by {what}, a value the data does not hold", data, _replace(data, i, v), i)
    if replacements is not None:
        for i in rows[:2]:
            for record in replacements:
                yield _Pair(f"record {i} replaced by {record!r}", data, _replace(data, i, record), i)
        return
    values = _scalar_values(bounds)
    if bounds is not None:
        lo, hi = (_bound_record(b, data, d) for b in bounds)
        for i in rows[:2]:
            yield _Pair(f"record {i} at the lower vs upper bound", _replace(data, i, lo), _replace(data, i, hi), i)
        if data.ndim == 2 and d > 1:
            corner = np.where(np.arange(d) % 2 == 0, lo, hi)
            yield _Pair(f"row {rows[0]} at a corner of the bounds", data, _replace(data, rows[0], corner), rows[0])
    for i in rows[:2]:
        yield _Pair(f"record {i} at +0.0 vs -0.0", _replace(data, i, 0.0), _replace(data, i, -0.0), i)
        for v in values:
            every = " (every coordinate)" if d > 1 else ""
            yield _Pair(f"record {i} replaced by {v!r}{every}", data, _replace(data, i, v), i)
            if d > 1:
                row = np.array(data[i], dtype=np.float64)
                row[0] = v
                yield _Pair(f"row {i}, coordinate 0 replaced by {v!r}", data, _replace(data, i, row), i)
        for v in _HUGE[:3]:
            yield _Pair(f"record {i} at {v!r} vs {-v!r}", _replace(data, i, v), _replace(data, i, -v), i)
    if bounds is not None:
        # A float sum's rounding depends on where the record sits in the summation order: try records all along it.
        for i in np.unique(np.linspace(0, data.shape[0] - 1, _SPREAD).astype(int)):
            if int(i) not in rows[:2]:
                # lo and hi were set above under the same condition.
                low_pair = _replace(data, i, lo)  # pyright: ignore[reportPossiblyUnboundVariable]
                high_pair = _replace(data, i, hi)  # pyright: ignore[reportPossiblyUnboundVariable]
                yield _Pair(f"record {i} at the lower vs upper bound", low_pair, high_pair, i)


def _label_candidates(mechanism: DPMech, y: np.ndarray) -> np.ndarray:
    """The labels a record's label may flip to: those in the data, declared classes the data lacks and, when the
    mechanism declares no classes, a fresh label of the data's type (a label set read from y shows it)."""
    declared = getattr(mechanism, "classes", None)
    extra = list(np.asarray(declared).tolist()) if declared is not None else _fresh_labels(np.unique(y).tolist())
    labels = np.unique(y)
    try:
        return np.unique(np.concatenate([labels, np.asarray(extra, dtype=labels.dtype)])) if extra else labels
    except (TypeError, ValueError):
        return labels


def _supervised_pairs(
    mechanism: DPMech, data: tuple[Any, Any], bounds: Any, replacements: Any = None
) -> Iterator[_Pair]:
    X, y = data[0], np.asarray(data[1])
    labels = _label_candidates(mechanism, y) if replacements is None else np.unique(y)
    rows = _records_to_move(np.asarray(X, dtype=np.float64))
    for i in rows:
        for label in labels[labels != y[i]][:3]:
            y2 = y.copy()
            y2[i] = label
            yield _Pair(f"record {i}: label {y[i]!r} flipped to {label!r}", data, (X, y2), i)
    for pair in _array_pairs(np.asarray(X), bounds, replacements):
        yield _Pair(pair.description, (pair.first, y), (pair.second, y), pair.record)
        if labels.size > 1 and pair.record >= 0:
            # The same record's label flips too: the two datasets still differ in that one record only.
            y2 = y.copy()
            y2[pair.record] = labels[labels != y[pair.record]][0]
            yield _Pair(pair.description + " and its label flipped", (pair.first, y), (pair.second, y2), pair.record)


def _fresh_labels(seen: list[Any]) -> list[Any]:
    """Records of the data's own type that the data does not hold: a new string, a new integer, a new float.

    A release whose keys are the labels present in the data shows a key on the neighbour that it never shows on the
    dataset; a label of another type would leave the mechanism's domain, so none is made for other records."""
    kinds = {type(r) for r in seen}
    if len(kinds) != 1:
        return []
    kind = next(iter(kinds))
    if issubclass(kind, str | np.str_):
        return [kind(f"fresh label {i}") for i in range(3) if f"fresh label {i}" not in seen][:1]
    if issubclass(kind, bool | np.bool_):
        return []
    if issubclass(kind, int | np.integer | float | np.floating):
        numbers = np.asarray(seen, dtype=np.float64)
        if not np.all(np.isfinite(numbers)):
            return []
        return [kind(numbers.max() + 1), kind(numbers.min() - 1)]
    return []


def _list_pairs(data: list[Any], mechanism: DPMech, replacements: Any = None) -> Iterator[_Pair]:
    """Swap records of categorical/list data; values absent from the data (e.g. unseen response candidates) first."""
    seen: dict[Any, None] = {}
    for r in data:
        try:
            seen.setdefault(r)
        except TypeError:
            break
    candidates = [r for r in getattr(mechanism, "response_set", ()) if _hashable(r) and r not in seen]
    candidates += [*_fresh_labels(list(seen)), *seen]
    if replacements is not None:
        candidates = list(replacements)
    for i in list(dict.fromkeys([0, len(data) - 1, len(data) // 2])):
        for v in candidates:
            if _hashable(data[i]) and v == data[i]:
                continue
            yield _Pair(f"record {i} ({data[i]!r}) replaced by {v!r}", data, [*data[:i], v, *data[i + 1 :]], i)


def _table_pairs(data: tuple[Any, Any, Any], bounds: Any) -> Iterator[_Pair]:
    """Neighbours of a table ``(by, values, unit)`` (the group-by's dataset; values and unit may be None).

    Without a unit a record is a row: its label moves to a fresh or another label, its value to the bounds and fresh
    values. With a unit a record is a person (all their rows): the person with most rows, and the first, get a fresh
    label on every row (a person with many labels of their own), or move to another existing label."""
    by, values, unit = (None if c is None else np.asarray(c) for c in data)
    assert by is not None
    seen = np.unique(by).tolist()
    fresh = [f for f in _fresh_labels(seen) if not isinstance(f, float)]
    if unit is None:
        for i in list(dict.fromkeys([0, by.size - 1, by.size // 2])):
            for label in [*fresh, *seen[:3]]:
                if label != by[i]:
                    by2 = by.copy()
                    by2[i] = label
                    yield _Pair(f"row {i}: label {by[i]!r} replaced by {label!r}", data, (by2, values, None), i)
        if values is not None:
            for pair in _array_pairs(values.astype(np.float64), bounds):
                yield _Pair(pair.description, (by, pair.first, None), (by, pair.second, None), pair.record)
        return
    people, counts = np.unique(unit, return_counts=True)
    for person in dict.fromkeys([people[np.argmax(counts)], unit[0]]):
        rows = np.flatnonzero(unit == person)
        if isinstance(by.flat[0], str | np.str_):
            many = np.array([f"fresh label {j}" for j in range(rows.size)], dtype=object)
        else:
            many = np.asarray(max(seen) + 1 + np.arange(rows.size))
        by2 = by.astype(object)
        by2[rows] = many
        by2 = np.array(by2.tolist())  # the narrowest dtype holding both the old and the fresh labels
        first = rows[0]
        yield _Pair(
            f"person {person!r}: each of their {rows.size} rows in a fresh group", data, (by2, values, unit), first
        )
        for label in seen[:2]:
            by3 = by.copy()
            by3[rows] = label
            yield _Pair(f"person {person!r}: every row moved to group {label!r}", data, (by3, values, unit), first)


def _label_array_pairs(data: np.ndarray, mechanism: DPMech, replacements: Any = None) -> Iterator[_Pair]:
    """A 1-D array of labels: the pairs of the same records as a list, as arrays again."""
    for pair in _list_pairs(data.tolist(), mechanism, replacements):
        yield _Pair(pair.description, data, np.array(pair.second), pair.record)


def _pairs_of(mechanism: DPMech, data: Any, replacements: Any = None) -> Iterator[_Pair]:
    bounds = public_bounds(mechanism)
    if isinstance(data, tuple) and len(data) == 2:
        return _supervised_pairs(mechanism, data, bounds, replacements)
    if isinstance(data, tuple) and len(data) == 3:
        return _table_pairs(data, bounds)
    if isinstance(data, list):
        return _list_pairs(data, mechanism, replacements)
    if isinstance(data, np.ndarray) and data.ndim in (1, 2) and data.dtype.kind in "iubf":
        return _array_pairs(data, bounds, replacements)
    if isinstance(data, np.ndarray) and data.ndim == 1 and data.dtype.kind in "USO":
        return _label_array_pairs(data, mechanism, replacements)
    raise TypeError(
        "search_audit needs a 1-D or 2-D numeric numpy array, a 1-D array or list of records (labels), an (X, y) "
        "tuple or a (by, values, unit) table; got "
        f"{type(data).__name__}. Convert the dataset (e.g. DataFrame.to_numpy()) or audit a fixed pair with audit()."
    )


def _identical(a: Any, b: Any) -> bool:
    """Bit-for-bit equality of two datasets (so +0.0 and −0.0 differ)."""
    if isinstance(a, tuple):
        return all(_identical(u, v) for u, v in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) and a.dtype.kind not in "biuf":
        return bool(a.shape == b.shape and np.array_equal(a, b))
    if isinstance(a, np.ndarray):
        u, v = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        return u.shape == v.shape and u.tobytes() == v.tobytes()
    result: bool = a == b
    return result


def _same_dtype(first: Any, second: Any) -> Any:
    """``first`` in the dtype of ``second`` where a float replacement widened an integer array: a pair never differs
    in the type of its records, only in the one record replaced."""
    if isinstance(first, tuple):
        return tuple(_same_dtype(a, b) for a, b in zip(first, second, strict=True))
    if isinstance(first, np.ndarray) and isinstance(second, np.ndarray) and first.dtype != second.dtype:
        return first.astype(second.dtype)
    return first


def _candidate_pairs(mechanism: DPMech, data: Any, replacements: Any = None) -> Iterator[_Pair]:
    """The neighbouring pairs to screen, most telling first; a replacement equal to the record is skipped."""
    for pair in _pairs_of(mechanism, data, replacements):
        pair = attrs.evolve(pair, first=_same_dtype(pair.first, pair.second), second=pair.second)
        pair = attrs.evolve(pair, second=_same_dtype(pair.second, pair.first))
        if not _identical(pair.first, pair.second):
            yield pair


# ---- the grey-box screen ---------------------------------------------------------------------------------------


def _screen(mechanism: DPMech, pair: _Pair, params: Eps, rng: np.random.Generator) -> tuple[float, float, str]:
    """(priority, target change, finding) of one pair, from the target and a few releases; no budget is involved."""
    declared = mechanism.sensitivity
    with np.errstate(all="ignore"):
        try:
            change = float(mechanism.sensitivity_norm(pair.first, pair.second))
        except Exception as exc:  # a target that fails on one side only is itself a finding
            failed = []
            for label, data in (("D", pair.first), ("D′", pair.second)):
                try:
                    mechanism._evaluate(mechanism.target(data))
                except Exception as inner:
                    failed.append(f"{label} ({type(inner).__name__})")
            if len(failed) == 1:
                return math.inf, math.nan, f"the target fails on {failed[0]} only: {type(exc).__name__}"
            if failed:
                return -1.0, math.nan, ""
            # The target works on both sides but the norm cannot compare them (e.g. outputs of different shapes).
            finding = _release_screen(mechanism, pair, params, rng)
            return (math.inf if finding else 0.0), math.nan, finding
    if not math.isfinite(change):
        return math.inf, change, f"the target's change is {change} (non-finite output on one side)"
    if change > declared * (1 + 1e-9):
        return change / declared, change, f"the target changes by {change:.6g} > declared sensitivity {declared:.6g}"
    finding = _release_screen(mechanism, pair, params, rng)
    priority = math.inf if finding else (change / declared if declared > 0 else 0.0)
    return priority, change, finding


def _release_screen(mechanism: DPMech, pair: _Pair, params: Eps, rng: np.random.Generator) -> str:
    """A few releases per side (8 vectorised, 1 otherwise): non-finite outputs, failures, or releases of another
    structure (layout or keys) on one side only."""
    status = []
    for data in (pair.first, pair.second):
        try:
            with np.errstate(all="ignore"):
                sample = _draw(mechanism, data, params, [rng], [8 if _is_vectorised(mechanism) else 1])[0]
        except Exception as exc:
            status.append(f"refused before the charge ({type(exc).__name__})")
            continue
        status.append(_release_status(sample))
    if status[0] != status[1]:
        return f"releases are {status[0]} on D but {status[1]} on D′"
    return ""


def _release_status(sample: np.ndarray | list[Any]) -> str:
    if isinstance(sample, np.ndarray):
        finite = sample.dtype.kind not in "fc" or bool(np.all(np.isfinite(sample)))
        return f"{'finite' if finite else 'non-finite'} of shape {sample.shape[1:]}"
    layouts = [describe(s) for s in sample]
    if any(lay.signature.startswith("raised") for lay in layouts):
        return next(lay.signature for lay in layouts if lay.signature.startswith("raised"))
    values = [lay.values for lay in layouts if lay.values is not None]
    finite = all(np.all(np.isfinite(v)) for v in values)
    keys = sorted({k for lay in layouts for k in lay.keys})
    shown = f" with keys {', '.join(keys[:3])}{', …' if len(keys) > 3 else ''}" if keys else ""
    return f"{'finite' if finite else 'non-finite'} {layouts[0].signature}{shown}"


# ---- the search --------------------------------------------------------------------------------------------------


def _seconds_per_release(mechanism: DPMech, data: Any, params: Eps, rng: np.random.Generator) -> float:
    size = 200 if _is_vectorised(mechanism) else 2
    start = time.perf_counter()
    try:
        _draw(mechanism, data, params, [rng], [size])
    except Exception:  # refused before the charge: the pair is not audited, its cost does not matter
        return 1e-7
    return max((time.perf_counter() - start) / size, 1e-7)


def _sample_size(seconds: float, per_release: float, pairs: int, cap: int) -> int:
    return int(min(cap, max(40, seconds / (2 * max(pairs, 1) * per_release))))


def search_audit(
    mechanism: DPMech,
    data: Any,
    privacy_params: Eps,
    *,
    alpha: float = 1e-6,
    rng: int | None = None,
    time_budget: float = 60.0,
    max_pairs: int = 400,
    explore_pairs: int = 8,
    confirm_pairs: int = 2,
    replacements: Any = None,
    plan: SearchPlan | None = None,
) -> SearchReport:
    """Search replace-one neighbouring pairs for one on which the mechanism's privacy claim fails.

    Parameters
    ----------
    mechanism : DPMech
        The mechanism under test (built-in or user-written), with its sensitivity set.
    data : array, list, (X, y) tuple, (by, values, unit) table, or callable
        The dataset the neighbours are built from, or ``data(rng) -> dataset`` drawing one (called twice; both
        datasets are searched).
    privacy_params : Eps
        The parameters to release at; the claim audited is ``mechanism.privacy_guarantee(privacy_params)``.
    alpha : float, default 1e-6
        Probability that a correct mechanism is declared refuted: the confirm audits each get α / (pairs confirmed).
    rng : int, optional
        Seed; ``None`` draws one and records it in the report, so every search is reproducible.
    time_budget : float, default 60
        Seconds to aim for (about 15% screening, 35% exploring, 50% confirming); sample sizes shrink to fit.
    max_pairs : int, default 400
        Most candidate pairs screened.
    explore_pairs, confirm_pairs : int, default 8 and 2
        Pairs audited laxly to rank them, and pairs then audited at α / ``confirm_pairs``.
    replacements : sequence, optional
        Replacement records to try instead of the built-in adversarial values (scalars for 1-D data, rows for 2-D,
        items for lists), e.g. the data domain of a target that assumes one. Records are still moved by 1e-9/ulp.
    plan : SearchPlan, optional
        The sizes of an earlier search (``report.plan``): with the same ``rng`` the search is replayed exactly and
        ``time_budget`` is not used.

    Returns
    -------
    SearchReport
        ``passed``, the ``worst`` pair with its audit (event, counts, bounds), every pair tried, and the seed.

    Notes
    -----
    Neighbours are replace-one: ``D′`` is ``D`` with one record replaced (or both sides carry a replaced record). A
    mechanism under add/remove neighbours is audited against the replace-one guarantee it implies
    (``mechanism.charged_guarantee``).
    Replacement values: the mechanism's public bounds (``lower``/``upper``, ``bounds`` or ``data_norm`` on the
    mechanism or its target) and values beyond them, ±0.0 and subnormals, a record moved by 1e-9 or one ulp or
    negated, huge magnitudes whose squares overflow (1e154, 1e200, ±1e308), offset values (2⁴³ + ½), per row of
    2-D data (one coordinate or all); label flips for ``(X, y)``; unseen categories and swaps for lists and label
    arrays. Values the data does not hold come early: beyond the observed range (inside the public bounds if any),
    an unseen integer inside the range of integer data, a fresh label of the data's own type, and for ``(X, y)`` the
    declared ``classes`` the data lacks or (without declared classes) a fresh label. A group-by table
    ``(by, values, unit)`` gets rows moved to fresh or other groups and, with a unit, the person with most rows put
    in a fresh group on every row. Non-finite values are outside every documented domain and are never tried.

    1. *Screen* (grey-box, no samples): ``sensitivity_norm`` on each pair. A change above the declared sensitivity,
       a non-finite target, a target failing on one side only, or a few releases (8 vectorised, 1 otherwise) that
       are non-finite, fail, or differ in layout or keys on one side only puts the pair first; otherwise pairs are
       ranked by change/sensitivity.
    2. *Explore*: the top ``explore_pairs`` are audited at level 0.05 on their own samples; the result only ranks.
    3. *Confirm*: the top ``confirm_pairs`` by explore ε bound are audited afresh with :func:`audit` at α/m each
       (m = pairs confirmed). Since the pairs were chosen on independent samples, a union bound gives: with
       probability ≥ 1 − α every confirmed bound holds, so a refutation is a valid refutation of the claim.

    :func:`audit` supplies the events, including structural events (layout, keys, a failure after the charge;
    exact for vectorised mechanisms), float-structure events and, for 1-D data, "y is on the
    interpolation lattice a + u·(b − a) of D's sorted values" events, which catch an output support that depends on
    the data. A passing search proves nothing: it only tried the pairs and events listed.

    References
    ----------
    Bichsel et al. (2021), DP-Sniper; Lokna et al. (2023), Delta-Siege; Jagielski et al. (2020), auditing DP-SGD;
    Mironov (2012), floating-point attacks; Casacuberta et al. (2022), floating-point sums.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> from diffpriv_py.testing import search_audit
    >>> mech = dp.Laplace(target=lambda X: np.clip(X, 0, 1).mean(), sensitivity=1 / 50)
    >>> report = search_audit(mech, np.linspace(0, 1, 50), dp.Eps(1.0), rng=0, time_budget=5)
    >>> report.passed
    True
    """
    if not (isinstance(alpha, float | int) and not isinstance(alpha, bool) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a probability in (0, 1); got {alpha!r}. Pass e.g. alpha=1e-6.")
    if not (isinstance(time_budget, float | int) and math.isfinite(time_budget) and time_budget > 0):
        raise ValueError(f"time_budget must be a positive number of seconds; got {time_budget!r}. Pass e.g. 60.")
    for name, value in (("max_pairs", max_pairs), ("explore_pairs", explore_pairs), ("confirm_pairs", confirm_pairs)):
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    if replacements is not None and (
        isinstance(replacements, (str, bytes))
        or not hasattr(replacements, "__iter__")
        or (isinstance(replacements, np.ndarray) and replacements.ndim == 0)
    ):
        raise TypeError(
            f"replacements must be a sequence of replacement records (scalars for 1-D data, rows for 2-D, items for "
            f"lists) or None; got {replacements!r}. Pass e.g. replacements=[0.0, 1.0]."
        )
    if plan is not None and not isinstance(plan, SearchPlan):
        raise TypeError(f"plan must be a SearchPlan (a report's .plan) or None; got {type(plan).__name__}.")
    check_mechanism(mechanism, "mechanism", owner="search_audit")
    params = mechanism.check_privacy_params(privacy_params)
    seed = secrets.randbits(63) if rng is None else check_int(rng, "rng", minimum=0, owner="search_audit (a seed)")
    # Independent streams per stage, so the confirm samples never influenced which pairs were chosen.
    screen_seq, explore_seq, confirm_seq = np.random.SeedSequence(seed).spawn(3)
    screen_rng = np.random.default_rng(screen_seq)
    started = time.perf_counter()

    datasets = [data(screen_rng), data(screen_rng)] if callable(data) else [data]
    for dataset in datasets:
        # A clear error for unsupported types (a table's values and unit columns may be None).
        n_records(tuple(c for c in dataset if c is not None) if isinstance(dataset, tuple) else dataset)
    generators = [_candidate_pairs(mechanism, d, replacements) for d in datasets]

    # Stage 1: screen, alternating between datasets, within max_pairs and the screening share of the budget.
    screened: list[tuple[float, int, _Pair, PairResult]] = []
    active = list(generators)

    def screening() -> bool:
        if plan is not None:
            return len(screened) < plan.screened
        return len(screened) < max_pairs and time.perf_counter() - started < _SCREEN_SHARE * time_budget

    while active and screening():
        for gen in list(active):
            pair = next(gen, None)
            if pair is None:
                active.remove(gen)
                continue
            priority, change, finding = _screen(mechanism, pair, params, screen_rng)
            screened.append((priority, len(screened), pair, PairResult(pair.description, change, finding)))
    screened.sort(key=lambda t: (-t[0], t[1]))

    # Stage 2: explore the most promising pairs with lax audits (their results only rank the pairs), within the
    # explore share of the budget (at least two pairs).
    # Timed on both sides of the top pair too: a neighbour can cost much more than the dataset (a person's many fresh
    # groups, a label set read from the data).
    timed = [datasets[0]] + ([screened[0][2].first, screened[0][2].second] if screened else [])
    per_release = 0.0 if plan else max(_seconds_per_release(mechanism, d, params, screen_rng) for d in timed)
    cap = _MAX_VECTORISED_N if _is_vectorised(mechanism) else _MAX_RELEASE_N
    explore = screened[:explore_pairs]
    if plan is None:
        n_explore = _sample_size(_EXPLORE_SHARE * time_budget, per_release, len(explore), cap // 4)
    else:
        n_explore, explore = plan.n_explore, explore[: plan.explored]
    explore_seeds = [int(s.generate_state(1)[0]) for s in explore_seq.spawn(len(explore))]

    def audited(pair: _Pair, level: float, n: int, seed: int) -> AuditReport:
        # Replace-one pairs: an add/remove mechanism is held to the replace-one guarantee it implies.
        return audit(mechanism, pair.first, pair.second, params, alpha=level, n=n, rng=seed, relation="replace_one")

    ranked, drawn, explored, explore_started = [], 0, 0, time.perf_counter()
    for k, (priority, order, pair, result) in enumerate(explore):
        if plan is None and k >= 2 and time.perf_counter() - started > (_SCREEN_SHARE + _EXPLORE_SHARE) * time_budget:
            break
        explored = k + 1
        try:
            report = audited(pair, _EXPLORE_ALPHA, n_explore, explore_seeds[k])
        except Exception:  # a pair the mechanism cannot release on is reported by the screen
            continue
        drawn += 2 * n_explore
        explore[k] = (priority, order, pair, attrs.evolve(result, explore=report))
        ranked.append(((not report.passed, report.epsilon_lower_bound), k))
    if drawn:  # the measured cost of an audited sample, events included
        per_release = max(per_release, (time.perf_counter() - explore_started) / drawn)

    # Stage 3: confirm the best explored pairs with fresh samples, α divided among them (Bonferroni).
    ranked.sort(key=lambda t: t[0], reverse=True)
    chosen = [k for _, k in ranked[:confirm_pairs]]
    remaining = time_budget - (time.perf_counter() - started)
    n_confirm = _sample_size(remaining, per_release, len(chosen), cap) if plan is None else plan.n_confirm
    level = alpha / max(1, len(chosen))
    confirm_seeds = [int(s.generate_state(1)[0]) for s in confirm_seq.spawn(max(1, len(chosen)))]
    for j, k in enumerate(chosen):
        priority, order, pair, result = explore[k]
        report = audited(pair, level, n_confirm, confirm_seeds[j])
        explore[k] = (priority, order, pair, attrs.evolve(result, confirm=report))

    results = [t[3] for t in explore] + [t[3] for t in screened[explore_pairs:]]
    confirmed = [(r, r.confirm) for r in results if r.confirm is not None]
    worst = max(confirmed, key=lambda rc: (not rc[1].passed, rc[1].epsilon_lower_bound), default=None)
    return SearchReport(
        passed=all(c.passed for _, c in confirmed),
        worst=None if worst is None else worst[0],
        pairs=tuple(results),
        epsilon_lower_bound=0.0 if worst is None else worst[1].epsilon_lower_bound,
        seed=seed,
        alpha=float(alpha),
        elapsed=time.perf_counter() - started,
        plan=SearchPlan(screened=len(screened), explored=explored, n_explore=n_explore, n_confirm=n_confirm),
    )
