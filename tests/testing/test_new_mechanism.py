"""A mechanism written in one file brings its own privacy events and error bar; the accountant's totals,
``Response.accuracy`` and the auditor read them from it, untouched (the mechanism is the unit)."""

import math

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.accounting import ApproxDPEvent, LaplaceEvent
from diffpriv_py.accuracy import half_width
from diffpriv_py.mechanisms import DPMech
from diffpriv_py.testing import (
    MechCase,
    audit,
    check_half_width_is_consistent,
    check_mechanism,
    check_privacy_events_are_accounting_events,
)


@attrs.frozen(kw_only=True)
class RoundedLaplaceCount(DPMech):
    """A user's mechanism: an integer count plus Laplace noise of scale b = Δ/ε, rounded to the nearest integer.

    Rounding is post-processing of the Laplace mechanism, so a release is what a ``LaplaceEvent(ε = Δ/b)`` describes;
    the output is an integer, so no floating-point structure is left to leak. |round(L)| ≤ |L| + ½, so
    b·ln(1/α) + ½ bounds the error with probability ≥ 1 − α.
    """

    def noise_scale(self, privacy_params):
        return self.sensitivity / privacy_params.epsilon

    def _evaluate(self, output):
        return np.asarray(output, dtype=np.float64)

    def _norm(self, value1, value2):
        return float(np.abs(value1 - value2).sum())

    def _release(self, value, privacy_params, rng):
        return self._sample_many(value, privacy_params, rng, 1)[0]

    def _sample_many(self, value, privacy_params, rng, n):
        noise = rng.laplace(0.0, self.noise_scale(privacy_params), size=(n, *np.shape(value)))
        return np.rint(value + noise)

    def privacy_events(self, privacy_params):
        if self.sensitivity == 0:
            return ()
        return (LaplaceEvent(epsilon=self.sensitivity / self.noise_scale(privacy_params)),)

    def half_width(self, privacy_params, noised, alpha):
        width = self.noise_scale(privacy_params) * math.log(1.0 / alpha) + 0.5
        return np.full(np.shape(noised), width) if np.ndim(noised) else width


def _count(X):
    return float(np.sum(X))


X = np.r_[np.ones(30), np.zeros(30)]
X2 = X.copy()
X2[0] = 0.0  # replace one record: the count moves by the sensitivity, 1
MECH = RoundedLaplaceCount(target=_count, sensitivity=1.0)
EPS = dp.Eps(1.0)


def test_the_accountant_composes_the_new_mechanisms_own_events():
    """50 releases at ε = 0.1 are charged the mechanism's LaplaceEvent, composed as tightly as 50 built-in Laplace
    releases: well below the claims' basic composition, 5."""
    acc, ref = dp.Accountant(budget=dp.Del(10.0, 1e-5)), dp.Accountant(budget=dp.Del(10.0, 1e-5))
    laplace = dp.Laplace(target=_count, sensitivity=1.0)
    for seed in range(50):
        MECH.release_response(dp.Eps(0.1), X, rng=seed, accountant=acc)
        laplace.release_response(dp.Eps(0.1), X, rng=seed, accountant=ref)
    assert [c.events for c in acc.ledger] == [(LaplaceEvent(epsilon=0.1),)] * 50
    assert acc.epsilon(1e-5) == ref.epsilon(1e-5) < 4.0


def test_without_its_own_events_the_claim_is_charged():
    """The declared default: a mechanism that does not describe itself is charged its claimed (ε, δ)."""

    @attrs.frozen(kw_only=True)
    class Undescribed(RoundedLaplaceCount):
        def privacy_events(self, privacy_params):
            return DPMech.privacy_events(self, privacy_params)

    acc = dp.Accountant(budget=dp.Eps(10.0))
    Undescribed(target=_count, sensitivity=1.0).release_response(EPS, X, rng=0, accountant=acc)
    assert acc.ledger[-1].events == (ApproxDPEvent(epsilon=1.0, delta=0.0),)


def test_response_accuracy_reads_the_new_mechanisms_half_width_and_covers():
    """accuracy() and confidence_interval() come from the mechanism; the bar covers at least 1 − α of releases."""
    r = MECH.release_response(EPS, X, rng=0)
    assert r.accuracy(0.05) == pytest.approx(math.log(20.0) + 0.5)
    low, high = r.confidence_interval(0.05)
    assert (low, high) == (r.response - r.accuracy(0.05), r.response + r.accuracy(0.05))
    assert half_width(MECH, EPS, r.response, 0.05) == r.accuracy(0.05)
    draws = MECH._sample_many(np.float64(30.0), EPS, np.random.default_rng(1), 20_000)
    miss = np.mean(np.abs(draws - 30.0) > r.accuracy(0.05))
    assert miss <= 0.05  # exact miss rate e^{-⌊ln 20 + ½⌋ - ½} ≈ 0.030; a bar of b·ln(1/α) − ½ would miss ≈ 0.08
    vector = attrs.evolve(MECH, target=lambda X: np.array([_count(X), 1.0]))
    rv = vector.release_response(EPS, X, rng=0)
    assert rv.accuracy(0.05, simultaneous=True) == pytest.approx([math.log(40.0) + 0.5] * 2)


def test_the_auditor_passes_the_new_mechanism_and_refutes_a_broken_one():
    """The auditor samples it through its own _sample_many and does not refute the honest claim; the same mechanism
    with a third of the noise (ε = 0.9 claimed as ε = 0.3) is refuted."""
    assert audit(MECH, X, X2, EPS, rng=11).passed

    @attrs.frozen(kw_only=True)
    class TooLittleNoise(RoundedLaplaceCount):
        def noise_scale(self, privacy_params):
            return self.sensitivity / (3 * privacy_params.epsilon)

    report = audit(TooLittleNoise(target=_count, sensitivity=1.0), X, X2, dp.Eps(0.3), rng=11)
    assert not report.passed and report.epsilon_lower_bound > 0.3


def test_the_conformance_kit_passes_the_new_mechanism():
    """Every fast check passes, the two that read privacy_events and half_width included."""
    case = MechCase(mechanism=MECH, privacy_params=EPS, dataset=X, neighbour=X2)
    passed = check_mechanism(case, include_slow=False)
    assert {"check_privacy_events_are_accounting_events", "check_half_width_is_consistent"} <= set(passed)


def test_the_kit_flags_events_that_do_not_describe_the_claim():
    """Events weaker than the claim (the accountant would under-charge) fail the events check."""

    @attrs.frozen(kw_only=True)
    class Overclaims(RoundedLaplaceCount):
        def privacy_events(self, privacy_params):
            return (LaplaceEvent(epsilon=5 * privacy_params.epsilon),)

    case = MechCase(mechanism=Overclaims(target=_count, sensitivity=1.0), privacy_params=EPS, dataset=X, neighbour=X2)
    with pytest.raises(AssertionError, match="do not describe the claimed guarantee"):
        check_privacy_events_are_accounting_events(case)

    @attrs.frozen(kw_only=True)
    class NotEvents(RoundedLaplaceCount):
        def privacy_events(self, privacy_params):
            return (1.0,)

    case = attrs.evolve(case, mechanism=NotEvents(target=_count, sensitivity=1.0))
    with pytest.raises(AssertionError, match="not a diffpriv_py\\.accounting event"):
        check_privacy_events_are_accounting_events(case)


def test_the_kit_flags_an_inconsistent_error_bar():
    """A bar that narrows as α shrinks, or is random, fails the error-bar check."""

    @attrs.frozen(kw_only=True)
    class Backwards(RoundedLaplaceCount):
        def half_width(self, privacy_params, noised, alpha):
            return self.noise_scale(privacy_params) * alpha

    @attrs.frozen(kw_only=True)
    class Random(RoundedLaplaceCount):
        def half_width(self, privacy_params, noised, alpha):
            return float(np.random.default_rng().uniform(1, 2))

    for mech, reason in ((Backwards, "narrows as α shrinks"), (Random, "not deterministic")):
        case = MechCase(mechanism=mech(target=_count, sensitivity=1.0), privacy_params=EPS, dataset=X, neighbour=X2)
        with pytest.raises(AssertionError, match=reason):
            check_half_width_is_consistent(case)
