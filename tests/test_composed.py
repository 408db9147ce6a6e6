"""Composed releases (``ComposedMech``): the parts, the budget split and the events the accountant is charged.

The accountant, the error bars and the auditor read a composition through ``composed_of`` / ``privacy_events``; these
tests pin that the events are exactly what the accountant charged before the base existed (one approximate-DP event
at the guarantee, or DP-SGD's exact subsampled-Gaussian steps), that the accountant's totals are the composition of
the declared events, and that a split's parts compose (basic composition) to the privacy parameters.
"""

from __future__ import annotations

import math
import warnings

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.accounting import ApproxDPEvent, LaplaceEvent, SubsampledGaussianEvent, compose
from diffpriv_py.accounting._accountant import _events_for
from diffpriv_py.estimators import PCA, SVM, DPSGDClassifier, KMeans, LinearRegression, LogisticRegression
from diffpriv_py.mechanisms.composed import ComposedMech, Part
from diffpriv_py.stats import Quantile
from diffpriv_py.stats._groupby import GroupBy


def _means_and_variances():
    """The scalers' composed mechanism (its module needs the sklearn extra, absent from the floors' environment)."""
    pytest.importorskip("sklearn")
    from diffpriv_py.sklearn.preprocessing import MeansAndVariances

    return MeansAndVariances


N = 200
_rng = np.random.default_rng(3)
X = _rng.uniform(-1, 1, (N, 3))
LABELS = (X[:, 0] > 0).astype(int)
TARGETS = X @ np.array([0.5, -0.2, 0.1])
BY = np.where(X[:, 1] > 0, "a", "b")
UNIT = np.arange(N) // 2


def _sampled_regression() -> LinearRegression:
    def oracle(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        Z = rng.uniform(-1, 1, (n, 3)) / 2
        return Z, Z @ np.array([0.5, -0.2, 0.1])

    return LinearRegression(data_norm=2.0, label_bound=1.0).sensitivity_sampler(oracle, n=N, gamma=0.3, rng=1)


# name: (mechanism factory, dataset, privacy parameters)
CASES = {
    "GroupBy-private-keys": (
        lambda: GroupBy(statistics=("count", "sum", "mean", "var"), bounds=(-1.0, 1.0), quantiles=(0.5,)),
        (BY, X[:, 0], None),
        dp.Del(1.0, 1e-6),
    ),
    "GroupBy-public-keys-gaussian-columns": (
        lambda: GroupBy(
            statistics=("count", "std"), bounds=(-1.0, 1.0), keys=("a", "b"), noise="gaussian", columns=("u", "v")
        ),
        (BY, {"u": X[:, 0], "v": X[:, 2]}, None),
        dp.Del(0.7, 1e-7),
    ),
    "GroupBy-people": (
        lambda: GroupBy(statistics=("count",), keys=("a", "b"), max_groups=2, max_rows=2),
        (BY, None, UNIT),
        dp.Eps(0.5),
    ),
    "Quantile-levels-columns": (
        lambda: Quantile(quantiles=(0.25, 0.5), lower=(-1.0,), upper=(1.0,), n_candidates=65),
        X[:, :2],
        dp.Eps(1.0),
    ),
    "KMeans": (lambda: KMeans(2, bounds=(-1.0, 1.0)), X, dp.Eps(1.0)),
    "MeansAndVariances": (
        lambda: _means_and_variances()(lower=np.full(3, -1.0), upper=np.full(3, 1.0)),
        X,
        dp.Eps(1.0),
    ),
    "MeansAndVariances-var-only-del": (
        lambda: _means_and_variances()(lower=np.full(3, -1.0), upper=np.full(3, 1.0), with_mean=False),
        X,
        dp.Del(1.0, 1e-6),
    ),
    "DPSGD-calibrated": (
        lambda: DPSGDClassifier(hidden_layer_sizes=(), epochs=1.0, sampling_rate=0.1, classes=(0, 1)),
        (X, LABELS),
        dp.Del(2.0, 1e-5),
    ),
    "DPSGD-given-sigma-add-remove": (
        lambda: DPSGDClassifier(
            hidden_layer_sizes=(),
            epochs=1.0,
            sampling_rate=0.1,
            classes=(0, 1),
            noise_multiplier=2.0,
            neighbouring="add_remove",
        ),
        (X, LABELS),
        dp.Del(8.0, 1e-5),
    ),
    **{
        f"PCA-{method}": (
            lambda method=method: PCA(2, method=method, data_norm=2.0),
            X,
            dp.Eps(1.0) if method in ("wishart", "ppca") else dp.Del(1.0, 1e-6),
        )
        for method in ("wishart", "ppca", "analyze_gauss", "mod_sulq")
    },
    "LinearRegression-adassp": (
        lambda: LinearRegression(data_norm=2.0, label_bound=1.0),
        (X, TARGETS),
        dp.Del(1.0, 1e-6),
    ),
    "LinearRegression-functional": (
        lambda: LinearRegression(method="functional", data_norm=2.0, label_bound=1.0),
        (X, TARGETS),
        dp.Eps(1.0),
    ),
    "LinearRegression-sampled": (_sampled_regression, (X, TARGETS), dp.Del(1.0, 1e-6)),
    "LogisticRegression": (
        lambda: LogisticRegression(0.01, data_norm=2.0, classes=(0, 1)),
        (X, LABELS),
        dp.Eps(1.0),
    ),
    "SVM-output-del": (
        lambda: SVM(0.01, perturbation="output", data_norm=2.0, classes=(0, 1)),
        (X, LABELS),
        dp.Del(1.0, 1e-6),
    ),
}


def _build(name: str) -> ComposedMech:
    mech = CASES[name][0]()
    if isinstance(mech, KMeans) and not isinstance(mech, ComposedMech):
        pytest.skip("KMeans becomes a ComposedMech when estimators/kmeans is a package (applied at the merge)")
    assert isinstance(mech, ComposedMech)
    return mech


def _charged_before(mech: ComposedMech, params: dp.Eps) -> tuple[object, ...]:
    """What the accountant charged a composed release before the base existed (the accountant's claim, or
    DP-SGD's own subsampled-Gaussian steps), written out independently of the code under test."""
    guarantee = mech.privacy_guarantee(params)
    if isinstance(mech, DPSGDClassifier):
        return (
            SubsampledGaussianEvent(
                noise_multiplier=mech.noise_multiplier_for(params),
                sampling_rate=mech.sampling_rate,
                relation="replace_one",
                count=mech.steps,
            ),
        )
    return (ApproxDPEvent(epsilon=guarantee.epsilon, delta=guarantee.delta),)


@pytest.mark.parametrize("name", CASES)
def test_privacy_events_are_what_the_accountant_charged_before(name: str) -> None:
    _, _, params = CASES[name]
    mech = _build(name)
    events = mech.privacy_events(params)
    assert events == _charged_before(mech, params)
    assert events == _events_for(mech.privacy_guarantee(params), mech, params)


@pytest.mark.parametrize("name", CASES)
def test_the_accountant_charges_the_declared_events_and_its_totals_are_their_composition(name: str) -> None:
    """Two releases of the same mechanism: the ledger holds its declared events, and the accountant's ε at a δ is the
    tight composition of exactly those events (capped by the basic composition of the claims)."""
    _, data, params = CASES[name]
    mech = _build(name)
    acc = dp.Accountant(budget=dp.Gam(1e3, 0.5, gamma=0.9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.exceptions.DiffprivWarning)
        for seed in (1, 2):
            guarantee = mech.release_response(params, data, rng=seed, accountant=acc).privacy_params
    declared = mech.privacy_events(params)
    assert [c.events for c in acc.ledger] == [declared, declared]
    assert [c.guarantee for c in acc.ledger] == [guarantee, guarantee]
    delta = max(2.0 * guarantee.delta, 1e-3)
    composed = compose(list(declared) * 2).epsilon(delta)
    assert acc.epsilon(delta) == pytest.approx(min(composed, 2.0 * guarantee.epsilon), rel=1e-9)


@pytest.mark.parametrize("name", CASES)
def test_the_parts_compose_to_the_guarantee(name: str) -> None:
    """The budget split, declared once: the parts' (ε, δ) add up (basic composition) to the guarantee, never more."""
    params = CASES[name][2]
    mech = _build(name)
    parts = mech.composed_of(params)
    guarantee = mech.privacy_guarantee(params)
    epsilon = math.fsum(p.privacy_params.epsilon for p in parts)
    delta = math.fsum(p.privacy_params.delta for p in parts)
    assert epsilon == pytest.approx(guarantee.epsilon, rel=1e-12) and epsilon <= guarantee.epsilon * (1 + 1e-12)
    assert delta == pytest.approx(guarantee.delta, rel=1e-12, abs=0.0) and delta <= guarantee.delta * (1 + 1e-12)
    assert len({p.name for p in parts}) == len(parts)


def test_group_by_lists_every_part_it_releases_with_the_share_it_draws_at() -> None:
    """Selection, the shared count, each column's sums, then each column's quantile levels: what the release runs."""
    mech = GroupBy(
        statistics=("count", "var"), bounds=(-1.0, 1.0), quantiles=(0.25, 0.75), columns=("u", "v"), noise="gaussian"
    )
    params = dp.Del(1.0, 1e-6)
    parts = mech.composed_of(params)
    names = [p.name for p in parts]
    assert names == [
        "selection", "count", "u_sum_u", "u_sum_u2", "v_sum_u", "v_sum_u2", "u_q0.25", "u_q0.75", "v_q0.25", "v_q0.75"
    ]  # fmt: skip
    select, shares = mech.split(params)
    assert [p.privacy_params for p in parts] == [select, *shares]


def test_means_and_variances_release_reads_its_split_from_its_parts() -> None:
    """Changing the declared split changes the release: the math reads composed_of, it does not repeat the split."""
    mech = _means_and_variances()(lower=np.full(3, -1.0), upper=np.full(3, 1.0))
    params = dp.Eps(1.0)
    base = mech.release_response(params, X, rng=5).response

    class Halved(_means_and_variances()):
        def composed_of(self, privacy_params: dp.Eps) -> tuple[Part, ...]:
            return tuple(
                attrs.evolve(p, privacy_params=dp.Eps(p.privacy_params.epsilon / 2))
                for p in super().composed_of(privacy_params)
            )

    other = Halved(lower=mech.lower, upper=mech.upper).release_response(params, X, rng=5).response
    assert not np.array_equal(base["mean"], other["mean"])


# ---- the base, on compositions written in a test ----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Two(ComposedMech):
    """Two Laplace releases of the count at ε/2 each; ``exact`` says whether they describe their noise."""

    exact: bool = True

    def composed_of(self, privacy_params: dp.Eps) -> tuple[Part, ...]:
        half = dp.Eps(privacy_params.epsilon / 2)
        events = (LaplaceEvent(epsilon=half.epsilon),) if self.exact else None
        return (Part(name="first", privacy_params=half, events=events), Part(name="second", privacy_params=half))

    def _evaluate(self, output: object) -> object:
        return output

    def _release(self, value: object, privacy_params: dp.Eps, rng: np.random.Generator) -> object:
        return 0.0


def test_a_composition_is_charged_its_parts_events_only_when_every_part_describes_its_noise() -> None:
    """One part known only by its (ε, δ) makes the whole release a claim at the guarantee (basic composition): the
    accountant is never charged the exact events of some parts and nothing for the others."""
    params = dp.Eps(1.0)
    assert _Two(exact=True).privacy_events(params) == (ApproxDPEvent(epsilon=1.0, delta=0.0),)

    @attrs.frozen(kw_only=True)
    class Exact(_Two):
        def composed_of(self, privacy_params: dp.Eps) -> tuple[Part, ...]:
            return tuple(
                attrs.evolve(p, events=(LaplaceEvent(epsilon=p.privacy_params.epsilon),))
                for p in super().composed_of(privacy_params)
            )

    assert Exact().privacy_events(params) == (LaplaceEvent(epsilon=0.5), LaplaceEvent(epsilon=0.5))
    acc = dp.Accountant(budget=dp.Eps(1.0))
    Exact().release_response(params, np.zeros(3), accountant=acc)
    assert acc.ledger[0].events == (LaplaceEvent(epsilon=0.5), LaplaceEvent(epsilon=0.5))
    assert acc.spent.epsilon == pytest.approx(1.0)


def test_part_events_must_be_privacy_events() -> None:
    with pytest.raises(TypeError, match="events of a Part"):
        Part(name="x", privacy_params=dp.Eps(1.0), events=[0.5])


def test_a_composition_without_a_norm_refuses_the_sampler_and_one_with_a_norm_keeps_it() -> None:
    mech = _Two()
    for sample in (
        lambda: mech.sensitivity_sampler(lambda n, rng: rng.uniform(size=n), n=10, m=10, rng=0),
        lambda: mech.sensitivity_norm(np.zeros(3), np.ones(3)),
    ):
        with pytest.raises(TypeError, match="composed release"):
            sample()
    sampled = _sampled_regression()
    assert sampled.sampling is not None and isinstance(sampled.privacy_guarantee(dp.Del(1.0, 1e-6)), dp.Gam)
    # A sampled sensitivity (random DP) is charged as its claim, never as exact events that would ignore γ.
    assert sampled.privacy_events(dp.Del(1.0, 1e-6)) == (ApproxDPEvent(epsilon=1.0, delta=1e-6),)


def test_an_unused_sensitivity_is_deprecated_and_the_default_is_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = GroupBy(statistics=("count",), keys=("a",))
        attrs.evolve(mech, alpha=0.1)
    with pytest.warns(DeprecationWarning, match="sensitivity=2.0 is not used"):
        GroupBy(statistics=("count",), keys=("a",), sensitivity=2.0)
    assert "sensitivity" not in {f.name for f in attrs.fields(DPSGDClassifier) if f.init}
