"""The auditor sees the structure of a release: which keys it carries, its layout and length, and whether it fails
after the charge. Each planted leak below is refuted by the searching auditor at its defaults; the correct versions
of the same releases pass, over many seeds."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest
from pca_mutants import OneSidedWishart, e1_e2_pair

import diffpriv_py as dp
from diffpriv_py.mechanisms.base import DPMech
from diffpriv_py.stats._groupby import GroupByResult
from diffpriv_py.testing import SearchReport, audit, search_audit
from diffpriv_py.testing._structure import Raised, describe

EPS = dp.Eps(1.0)
LABELS = list(np.random.default_rng(0).choice(list("abcde"), 40))


def _identity(data: Any) -> Any:
    return data


@attrs.frozen(kw_only=True)
class CountPerLabel(DPMech):
    """Broken: a noisy count for every label present in the data, as a dict (or a pandas Series) keyed by label. The
    noise is right for the counts, but a label that only the replaced record holds is a key on one side only."""

    target: Any = attrs.field(default=_identity)
    sensitivity: float = 2.0
    keys: tuple[Any, ...] | None = None  # the correct version: public keys, every one released
    series: bool = False

    def _evaluate(self, output: Any) -> dict[Any, float]:
        labels, counts = np.unique(np.asarray(output), return_counts=True)
        present = dict(zip(labels.tolist(), counts.astype(float).tolist(), strict=True))
        if self.keys is None:
            return present
        return {k: present.get(k, 0.0) for k in self.keys}

    def _norm(self, value1: dict[Any, float], value2: dict[Any, float]) -> float:
        return float(sum(abs(value1.get(k, 0.0) - value2.get(k, 0.0)) for k in {*value1, *value2}))

    def _release(self, value: dict[Any, float], privacy_params: dp.Eps, rng: np.random.Generator) -> Any:
        noisy = {k: v + rng.laplace(0.0, self.sensitivity / privacy_params.epsilon) for k, v in value.items()}
        if self.series:
            import pandas as pd

            return pd.Series(noisy, dtype=np.float64)
        return noisy


def distinct_value_counts(data: np.ndarray) -> np.ndarray:
    """Broken target: the count of each distinct value, so the output's length is the number of distinct values."""
    return np.unique(np.asarray(data), return_counts=True)[1].astype(np.float64)


def mean_failing_on_extremes(data: np.ndarray) -> float:
    """Broken target: a clipped mean that raises (after the charge) when some record is beyond 0.99 in magnitude."""
    x = np.asarray(data, dtype=np.float64)
    if np.max(np.abs(x)) > 0.99:
        raise ValueError("a record is too extreme")
    return float(np.clip(x, -1.0, 1.0).mean())


def _assert_refuted(report: SearchReport) -> None:
    assert not report.passed, str(report)
    assert report.worst is not None and report.worst.confirm is not None
    assert not report.worst.confirm.passed
    assert report.epsilon_lower_bound > EPS.epsilon
    assert report.elapsed < 60


# ---- planted leaks, refuted at the defaults -------------------------------------------------------------------


@pytest.mark.slow
def test_search_refutes_a_noisy_count_for_every_label_present():
    """A dict of noisy counts keyed by the labels present is refuted: a fresh label is a key on D′ only."""
    report = search_audit(CountPerLabel(), LABELS, EPS, rng=1)
    _assert_refuted(report)
    assert report.worst.confirm.structural
    assert "fresh label" in report.worst.description


@pytest.mark.slow
def test_search_refutes_a_series_keyed_by_the_labels_present():
    """The same counts as a pandas Series indexed by label, on integer labels: refuted by the index it carries."""
    pytest.importorskip("pandas")
    labels = np.random.default_rng(1).integers(0, 5, 40)
    report = search_audit(CountPerLabel(series=True), labels, EPS, rng=2)
    _assert_refuted(report)
    assert report.worst.confirm.structural


def test_search_refutes_an_output_whose_length_is_the_number_of_distinct_values():
    """Counts of each distinct value: a fresh value (or a moved one) changes the length, an exact refutation."""
    data = np.random.default_rng(2).integers(0, 5, 40)
    report = search_audit(dp.Laplace(target=distinct_value_counts, sensitivity=2.0), data, EPS, rng=3)
    _assert_refuted(report)
    assert report.worst.confirm.exact and report.worst.confirm.delta_lower_bound == 1.0


def test_search_refutes_a_release_that_fails_after_the_charge_on_an_extreme_record():
    """A target that raises only on an extreme record fails after the charge on one side only: refuted exactly."""
    data = np.random.default_rng(3).uniform(-0.5, 0.5, 40)
    report = search_audit(dp.Laplace(target=mean_failing_on_extremes, sensitivity=2 / 40), data, EPS, rng=4)
    _assert_refuted(report)
    assert "raised ValueError" in report.worst.confirm.event


@pytest.mark.slow
def test_search_refutes_the_one_sided_wishart_pca_at_k_2():
    """The one-sided Wishart mechanism C + W₁ at k = 2 (tests/estimators/test_pca.py's mutant) is refuted."""
    X, _ = e1_e2_pair(d=3, n=4)
    _assert_refuted(search_audit(OneSidedWishart(2, data_norm=1.0), X, EPS, rng=1))


@pytest.mark.slow
def test_audit_sees_the_ordered_eigenvectors_a_pca_release_carries():
    """At k = d the projection is the identity; the released ordered columns still tell e₁ from e₂. The audit of
    the Wishart default on that pair bounds ε well above what the projection and spectrum alone gave (about 0.2)."""
    X, X2 = e1_e2_pair(d=2, n=3)
    report = audit(dp.estimators.PCA(2, data_norm=1.0), X, X2, EPS, rng=11)
    assert report.passed
    assert report.epsilon_lower_bound > 0.4


# ---- the correct versions pass ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_search_passes_noisy_counts_over_public_keys():
    """Counts over a public key set (every key released, absent ones as 0) are not refuted, fresh labels included."""
    mech = CountPerLabel(keys=tuple("abcdef"))
    assert search_audit(mech, LABELS, EPS, rng=1, time_budget=10).passed


@pytest.mark.slow
def test_structural_events_give_no_false_alarm_over_many_seeds():
    """A correct mechanism whose structure is random (a key released with the same probability on both datasets,
    and a failure after the charge with the same probability) is never refuted over 60 seeds at α = 1e-6."""

    @attrs.frozen(kw_only=True)
    class RandomStructure(CountPerLabel):
        def _release(self, value: dict[Any, float], privacy_params: dp.Eps, rng: np.random.Generator) -> Any:
            u = rng.random()
            if u < 0.1:
                raise RuntimeError("a failure independent of the data")
            noisy = super()._release(value, privacy_params, rng)
            return {**noisy, "sometimes": 1.0} if u < 0.5 else noisy

    mech = RandomStructure(keys=tuple("abcde"))
    other = ["a", *LABELS[1:]] if LABELS[0] != "a" else ["b", *LABELS[1:]]
    reports = [audit(mech, LABELS, other, EPS, n=600, rng=seed) for seed in range(60)]
    assert all(r.passed for r in reports), [str(r) for r in reports if not r.passed]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_search_gives_no_false_alarm_on_correct_mechanisms_over_many_seeds(seed):
    """Whole searches (fresh labels and values, structural and value events, α = 1e-6) at twelve seeds refute neither
    a vectorised clipped mean nor noisy counts over public keys."""
    mean = dp.Laplace(target=lambda x: float(np.clip(x, 0.0, 1.0).mean()), sensitivity=1 / 40)
    data = np.random.default_rng(seed).random(40)
    assert search_audit(mean, data, EPS, rng=seed, time_budget=1.0).passed
    counts = CountPerLabel(keys=tuple("abcdef"))
    assert search_audit(counts, LABELS, EPS, rng=seed, time_budget=1.0).passed


def test_audit_refutes_a_key_present_on_one_side_with_clopper_pearson_bounds():
    """A non-vectorised release whose keys differ: refuted by a structural event with δ near 1."""
    report = audit(CountPerLabel(), LABELS, ["z", *LABELS[1:]], EPS, n=400, rng=0)
    assert not report.passed and report.structural and not report.exact
    assert report.delta_lower_bound > 0.7  # P = 1 on D, 0 on D′, seen through 300 confirm releases each


@attrs.frozen(kw_only=True)
class TenRecordLaplace(dp.Laplace):
    """A Laplace mechanism whose public check refuses any dataset but ten records (before the charge)."""

    def _check_dataset(self, X: Any) -> Any:
        if len(X) != 10:
            raise ValueError("ten records, please")
        return super()._check_dataset(X)


@attrs.frozen(kw_only=True)
class AlwaysFails(CountPerLabel):
    def _release(self, value: Any, privacy_params: dp.Eps, rng: np.random.Generator) -> Any:
        raise ArithmeticError("never releases")


def test_a_refusal_before_the_charge_is_not_an_output():
    """A release refused by the public checks (before any budget is charged) cannot be audited: the error
    propagates; so does a failure after the charge that happens on both datasets alike."""
    with pytest.raises(ValueError, match="ten records"):
        audit(TenRecordLaplace(target=np.mean, sensitivity=1.0), np.zeros(10), np.zeros(11), EPS, n=100, rng=0)
    always = dp.Laplace(target=mean_failing_on_extremes, sensitivity=1.0)
    with pytest.raises(ValueError, match="too extreme"):
        audit(always, np.ones(10), np.ones(10), EPS, n=100, rng=0)
    with pytest.raises(RuntimeError, match="nothing to audit"):
        audit(AlwaysFails(), LABELS, LABELS, EPS, n=100, rng=0)


def test_describe_reads_keys_layout_and_numbers():
    """Mappings, Series, DataFrames and attrs results are read as layout, keys and values; failures as 'raised'."""
    pd = pytest.importorskip("pandas")
    layout = describe({"b": 1.0, "a": np.array([2.0, 3.0])})
    assert layout.keys == ("has key 'a'", "has key 'b'")
    assert layout.values.tolist() == [2.0, 3.0, 1.0]
    frame = describe(pd.DataFrame({"x": [1.0, 2.0]}, index=["u", "v"]))
    assert "has index label 'u'" in frame.keys and "has column 'x'" in frame.keys
    assert describe(np.zeros((2, 3))).signature == "ndarray(2, 3) float64"
    assert describe(Raised("ValueError", ValueError())).signature == "raised ValueError"
    result = GroupByResult(
        keys=np.array(["a"]), values={"count": np.ones(1)}, accuracy={"count": np.ones(1)}, alpha=0.1
    )
    assert describe(result).keys == (".keys holds 'a'", ".values has key 'count'", ".accuracy has key 'count'")
    assert describe(result).values.tolist() == [1.0, 1.0, 0.1]
