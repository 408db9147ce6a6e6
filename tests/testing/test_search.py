"""The searching auditor: it refutes each broken mechanism at its defaults, passes the correct versions, and its report
is reproducible, bounded in time and honest about the α it spends."""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.mechanisms.base import DPMech
from diffpriv_py.testing import MechCase, SearchReport, check_search_audit_passes, mechanism_checks, search_audit
from diffpriv_py.testing._search import _candidate_pairs
from diffpriv_py.testing._support import interpolation_lattice_level, public_bounds

EPS = dp.Eps(1.0)
LETTERS = ["a"] * 6 + ["b"] * 5 + ["c"] * 3 + ["d"]


# ---- deliberately broken mechanisms, each leaking only on some neighbouring pairs -------------------------------


def _identity(data: Any) -> Any:
    return data


@attrs.frozen(kw_only=True)
class InterpolatingQuantile(DPMech):
    """Broken (the old dp.stats quantile): the exponential mechanism over the intervals between sorted data points,
    then the float a + U·(b − a) inside the chosen interval. DP over the reals, but the set of floats it can output
    depends on the data (the lattice a + k·2⁻⁵³·(b − a)), so moving one record by 1e-9 changes it."""

    target: Any = attrs.field(default=_identity)
    sensitivity: float = 1.0
    q: float = 0.5
    lower: float
    upper: float

    def _evaluate(self, output: Any) -> np.ndarray:
        return np.sort(np.clip(np.asarray(output, dtype=np.float64), self.lower, self.upper))

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        points = np.unique(np.concatenate([value1, value2, [self.lower, self.upper]]))
        probes = (points[:-1] + points[1:]) / 2
        u1 = -np.abs(np.searchsorted(value1, probes) - self.q * value1.size)
        u2 = -np.abs(np.searchsorted(value2, probes) - self.q * value2.size)
        return float(np.max(np.abs(u1 - u2), initial=0.0))

    def _release(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator) -> float:
        return float(self._sample_many(value, privacy_params, rng, 1)[0])

    def _sample_many(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        edges = np.concatenate([[self.lower], value, [self.upper]])
        ranks = np.arange(edges.size - 1)
        with np.errstate(divide="ignore"):
            logits = np.log(np.diff(edges)) - privacy_params.epsilon / 2 * np.abs(ranks - self.q * value.size)
        p = np.exp(logits - logits.max())
        idx = rng.choice(ranks.size, size=n, p=p / p.sum())
        a, b = edges[idx], edges[idx + 1]
        return np.clip(a + rng.random(n) * (b - a), a, b)


@attrs.frozen
class FloatSumMean:
    """Broken target: clip to offset bounds, then a float sum; near 2⁴³ its rounding moves by more than (hi − lo)/n."""

    lower: float
    upper: float

    def __call__(self, data: np.ndarray) -> float:
        x = np.clip(np.asarray(data, dtype=np.float64), self.lower, self.upper)
        return float(np.cumsum(x)[-1] / x.size)  # left-to-right float sum, as a naive loop would do


@attrs.frozen
class SquaredNormClip:
    """Broken target: per-coordinate second moments, clipped by min(1, C/‖x‖)² *after* squaring, so a record of
    1e200 gives inf·0 = NaN instead of a clipped contribution."""

    data_norm: float = 1.0

    def __call__(self, data: np.ndarray) -> np.ndarray:
        X = np.asarray(data, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            squares = X * X
            factor = np.minimum(1.0, self.data_norm / np.sqrt(squares.sum(axis=1)))
            return (squares * factor[:, None] ** 2).sum(axis=0)


@attrs.frozen(kw_only=True)
class UncheckedLaplace(dp.Laplace):
    """A user-written Laplace variant that releases whatever its target returns, NaN included (no finiteness check)."""

    def _evaluate(self, output: Any) -> np.ndarray:
        return np.asarray(output, dtype=np.float64)


@attrs.frozen(kw_only=True)
class LinearExponential(dp.Exponential):
    """Broken (R's diffpriv bug): selects a candidate with probability ∝ score, not ∝ exp(ε·score/(2Δ)), so a score
    of 0 on one side is probability 0 there and positive on the other."""

    def _probabilities(self, value: np.ndarray) -> np.ndarray:
        w = np.maximum(value, 0.0)
        return w / w.sum() if w.sum() > 0 else np.full(w.size, 1.0 / w.size)

    def _release(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator) -> Any:
        return self.response_set[int(rng.choice(value.size, p=self._probabilities(value)))]

    def _sample_many(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.choice(value.size, size=n, p=self._probabilities(value))


def _letter_scores(X):
    return lambda r: float(X.count(r))


def _assert_refuted(report: SearchReport) -> None:
    assert not report.passed, str(report)
    assert report.worst is not None and not report.worst.confirm.passed
    assert report.epsilon_lower_bound > EPS.epsilon
    assert report.elapsed < 60


# ---- the four broken mechanisms are refuted at the defaults ----------------------------------------------------


@pytest.mark.slow
def test_search_refutes_interpolating_quantile_on_normal_data():
    """The old float quantile (a + U·(b − a) between data points) is refuted on N(0, 1) data, n = 101, ε = 1."""
    x = np.random.default_rng(0).normal(size=101)
    report = search_audit(InterpolatingQuantile(lower=-10.0, upper=10.0), x, EPS, rng=1)
    _assert_refuted(report)
    assert "lattice" in report.worst.confirm.event


@pytest.mark.slow
def test_search_refutes_interpolating_quantile_on_data_straddling_zero():
    """The same quantile is refuted on uniform data straddling 0 (bounds ±1)."""
    x = np.random.default_rng(2).uniform(-1.0, 1.0, 101)
    _assert_refuted(search_audit(InterpolatingQuantile(lower=-1.0, upper=1.0), x, EPS, rng=3))


@pytest.mark.slow
def test_search_refutes_float_sum_mean_with_offset_bounds():
    """A clipped float mean on bounds (2⁴³, 2⁴³ + 1) whose rounding moves it by 4× the sensitivity is refuted."""
    lo, n = 2.0**43, 2048
    mech = dp.Laplace(target=FloatSumMean(lo, lo + 1.0), sensitivity=1.0 / n)
    report = search_audit(mech, lo + np.random.default_rng(0).random(n), EPS, rng=1)
    _assert_refuted(report)
    assert any("declared sensitivity" in f for f in report.findings)


@pytest.mark.slow
def test_search_refutes_clip_bypassed_by_overflow():
    """A clip factor applied after squaring lets 1e200 through as NaN on one side only: refuted."""
    X = np.random.default_rng(0).normal(size=(50, 2)) / 3
    report = search_audit(UncheckedLaplace(target=SquaredNormClip(1.0), sensitivity=1.0), X, EPS, rng=1)
    _assert_refuted(report)
    assert "NaN" in report.worst.confirm.event


def test_search_refutes_linear_selection():
    """R-style selection ∝ score is refuted by a pair giving a candidate score 0 on one side only."""
    mech = LinearExponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    report = search_audit(mech, LETTERS, EPS, rng=1)
    _assert_refuted(report)
    assert math.isinf(report.epsilon_lower_bound) or report.epsilon_lower_bound > 3


# ---- the corrected versions pass -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_search_passes_the_exponential_mechanism_that_linear_selection_should_be(method):
    """Selection ∝ exp(ε·score/(2Δ)) on the same data is not refuted (the refutation above is the bug's)."""
    mech = dp.Exponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1, method=method)
    assert search_audit(mech, LETTERS, EPS, rng=1, time_budget=3).passed


@pytest.mark.slow
def test_search_passes_the_clip_applied_before_squaring():
    """Clipping each record before squaring, with the library's checked Laplace, is not refuted on the same data."""

    def second_moment(X):
        X = np.asarray(X, dtype=np.float64)
        norms = np.linalg.norm(X, axis=1)  # scaled internally: finite for every finite row
        Z = X * np.minimum(1.0, 1.0 / np.maximum(norms, 1e-300))[:, None]
        return (Z * Z).sum(axis=0)

    X = np.random.default_rng(0).normal(size=(50, 2)) / 3
    report = search_audit(dp.Laplace(target=second_moment, sensitivity=1.0), X, EPS, rng=1, time_budget=3)
    assert report.passed, str(report)


@pytest.mark.slow
def test_search_passes_an_exact_mean_with_offset_bounds_at_small_n():
    """The offset-bounds mean is not refuted where its float rounding stays below the sensitivity (n = 100)."""
    lo, n = 2.0**43, 100
    mech = dp.Laplace(target=FloatSumMean(lo, lo + 1.0), sensitivity=1.2 / n)  # measured rounding allowance
    report = search_audit(mech, lo + np.random.default_rng(0).random(n), EPS, rng=1, time_budget=3)
    assert report.passed, str(report)


# ---- the report ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_search_is_reproducible_with_a_seed():
    """A search replayed with its seed and plan tries the same pairs and confirms the same events and counts, however
    fast the machine is this time (the plan fixes the sizes the time budget chose)."""
    mech = LinearExponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    a = search_audit(mech, LETTERS, EPS, rng=5, time_budget=3)
    b = search_audit(mech, LETTERS, EPS, rng=5, time_budget=1e-9, plan=a.plan)
    assert [p.description for p in a.pairs] == [p.description for p in b.pairs]
    assert (a.worst.confirm.event, a.worst.confirm.counts) == (b.worst.confirm.event, b.worst.confirm.counts)
    assert a.seed == b.seed == 5 and a.plan == b.plan


def test_search_refuses_a_plan_of_another_type():
    mech = LinearExponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    with pytest.raises(TypeError, match="plan must be a SearchPlan"):
        search_audit(mech, LETTERS, EPS, rng=5, plan=(1, 2, 3, 4))


@pytest.mark.slow
def test_search_divides_alpha_among_the_confirmed_pairs():
    """Each confirm audit runs at α / (pairs confirmed), so the overall false-alarm probability is at most α."""
    mech = dp.Laplace(target=lambda X: float(np.clip(X, 0, 1).mean()), sensitivity=1 / 40)
    report = search_audit(mech, np.linspace(0, 1, 40), EPS, rng=2, alpha=1e-4, confirm_pairs=3, time_budget=3)
    assert report.passed
    assert len(report.confirmed) == 3
    assert all(p.confirm.alpha == pytest.approx(1e-4 / 3) for p in report.confirmed)
    assert "3 confirmed" in str(report)


@pytest.mark.slow
def test_search_accepts_a_dataset_generator():
    """``data`` may be ``callable(rng) -> dataset``; both drawn datasets are searched."""
    mech = LinearExponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    report = search_audit(mech, lambda rng: list(rng.choice(list("abcd"), 15)), EPS, rng=1, time_budget=3)
    assert not report.passed


@pytest.mark.slow
def test_search_keeps_to_its_time_budget_for_a_slow_mechanism():
    """An estimator (slow releases) is searched within a few seconds of a 4-second budget, with smaller samples."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2)) / 3
    mech = dp.estimators.KMeans(2, bounds=(-1, 1), n_iter=2)
    report = search_audit(mech, X, EPS, rng=1, time_budget=4.0)
    assert report.elapsed < 12.0
    assert report.passed


def test_search_refuses_invalid_arguments():
    """Invalid α, time budget, pair counts or dataset types are refused with a message naming the parameter."""
    mech = dp.Laplace(target=np.mean, sensitivity=1.0)
    x = np.zeros(10)
    with pytest.raises(ValueError, match="alpha"):
        search_audit(mech, x, EPS, alpha=0.0)
    with pytest.raises(ValueError, match="time_budget"):
        search_audit(mech, x, EPS, time_budget=math.nan)
    with pytest.raises(ValueError, match="confirm_pairs"):
        search_audit(mech, x, EPS, confirm_pairs=0)
    with pytest.raises(TypeError, match="numpy arrays"):
        search_audit(mech, {"a": 1}, EPS)


# ---- the building blocks ---------------------------------------------------------------------------------------


def test_lattice_level_marks_every_interpolated_output_and_few_others():
    """Outputs a + U·(b − a) are all on the lattice of their data; outputs of another interval mostly are not."""
    rng = np.random.default_rng(0)
    points = np.array([-0.3, -0.001, 0.3, 0.7])
    y = -0.001 + rng.random(10_000) * 0.301
    level = interpolation_lattice_level(y, points)
    assert np.all(level >= 0)
    other = -0.001 + rng.random(10_000) * (0.301 + 1e-9)  # the right end point moved by 1e-9
    assert np.mean(level >= 4) > 0.005  # some outputs fall where the lattice is ≥ 16× sparser than the floats
    sparse = other < 0.301 / 64  # there, both y and y − a have floats much finer than the lattice step
    assert np.mean(interpolation_lattice_level(other[sparse], points) >= 0) < 0.2


def test_public_bounds_are_read_from_the_mechanism_or_its_target():
    """Bounds come from ``lower``/``upper``, ``bounds`` or ``data_norm`` on the mechanism or its target."""
    lo, hi = public_bounds(InterpolatingQuantile(lower=-2.0, upper=3.0))
    assert (lo[0], hi[0]) == (-2.0, 3.0)
    lo, hi = public_bounds(dp.Laplace(target=FloatSumMean(1.0, 2.0), sensitivity=1.0))
    assert (lo[0], hi[0]) == (1.0, 2.0)
    lo, hi = public_bounds(dp.estimators.PCA(1, data_norm=2.0))
    assert (lo[0], hi[0]) == (-2.0, 2.0)
    assert public_bounds(dp.Laplace(target=np.mean, sensitivity=1.0)) is None


# ---- the conformance kit ---------------------------------------------------------------------------------------


def _letters_case(mechanism, *, search):
    return MechCase(
        mechanism=mechanism, privacy_params=EPS, dataset=LETTERS, neighbour=["b", *LETTERS[1:]], search=search
    )


def test_search_check_is_opt_in():
    """``check_search_audit_passes`` runs only for cases with ``search=True`` (it costs a few seconds each)."""
    mech = dp.Exponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    names = [c.__name__ for c in mechanism_checks(_letters_case(mech, search=False))]
    assert "check_search_audit_passes" not in names
    names = [c.__name__ for c in mechanism_checks(_letters_case(mech, search=True))]
    assert "check_search_audit_passes" in names


def test_search_check_catches_linear_selection_with_the_cases_own_records():
    """The kit's search check, restricted to the case's own records, refutes R-style linear selection."""
    mech = LinearExponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    with pytest.raises(AssertionError, match="refuted"):
        check_search_audit_passes(_letters_case(mech, search=True))


def _differing_records(a, b):
    if isinstance(a, tuple):
        rows = [_differing_records(pa, pb) for pa, pb in zip(a, b, strict=True)]
        return sorted(set().union(*rows))
    if isinstance(a, list):
        return [i for i, (u, v) in enumerate(zip(a, b, strict=True)) if u != v]
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    same = (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    return list(np.flatnonzero(~same.reshape(a.shape[0], -1).all(axis=1)))


@pytest.mark.parametrize(
    "data",
    [np.linspace(-1, 1, 30), np.linspace(0, 1, 60).reshape(30, 2), (np.ones((30, 2)), np.arange(30) % 3), LETTERS],
    ids=["1-D", "2-D", "(X, y)", "list"],
)
def test_every_candidate_pair_differs_in_exactly_one_record(data):
    """Every pair the search builds is a pair of replace-one neighbours (same size, one record differs)."""
    mech = (
        dp.estimators.KMeans(2, bounds=(-1, 1))
        if not isinstance(data, list)
        else dp.Exponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1)
    )
    pairs = list(_candidate_pairs(mech, data))
    assert len(pairs) > 20
    for pair in pairs:
        assert _differing_records(pair.first, pair.second) == [pair.record], pair.description
