"""One rule for every estimator: a sensitivity below the derived one is refused, a larger one or a sampled one kept."""

import math

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.estimators import PCA, SVM, DPSGDClassifier, KMeans, LinearRegression, LogisticRegression
from diffpriv_py.estimators._sensitivity_floor import not_below
from diffpriv_py.stats._groupby import GroupBy

ESTIMATORS = {
    "LogisticRegression": (lambda: LogisticRegression(0.01, data_norm=1.0), 2.0),
    "SVM": (lambda: SVM(0.01, data_norm=1.0), 2.0),
    "LinearRegression": (lambda: LinearRegression(data_norm=1.0, label_bound=1.0), 1.0),
    "KMeans": (lambda: KMeans(2, bounds=(-1, 1)), 1.0),
    "PCA": (lambda: PCA(1, data_norm=1.0), 1.0),
}


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("fraction", [0.0, 0.5, 1 - 1e-12])
def test_every_estimator_refuses_a_sensitivity_below_its_derived_one(name, fraction):
    """sensitivity = 0, half or just below the derived value raises ValueError naming sensitivity; equal is kept."""
    build, derived = ESTIMATORS[name]
    mech = build()
    assert mech.sensitivity >= derived
    with pytest.raises(ValueError, match="sensitivity"):
        attrs.evolve(mech, sensitivity=fraction * mech.sensitivity)
    assert attrs.evolve(mech, sensitivity=2 * mech.sensitivity).sensitivity == 2 * mech.sensitivity


def test_dpsgd_sensitivity_is_the_clipping_norm_and_the_validator_guards_it():
    """DPSGDClassifier's sensitivity is C; lowering it behind attrs' back is caught by attrs.validate."""
    mech = DPSGDClassifier(clip_norm=0.5)
    assert mech.sensitivity == 0.5
    object.__setattr__(mech, "sensitivity", 0.0)
    with pytest.raises(ValueError, match=r"sensitivity=0\.0 is below"):
        attrs.validate(mech)


def test_the_validator_is_not_lowered_by_hand_set_sampler_fields_and_refuses_nan():
    """sampled_n and gamma_sensitivity set by hand (public fields anyone can set) never lower the floor: only the
    sampler's own record can (see the sampler tests below); NaN never passes."""

    @attrs.frozen
    class Toy:
        sampled_n: int | None = None
        gamma_sensitivity: float | None = None
        sensitivity: float = attrs.field(default=1.0, validator=not_below(1.0, "toy bound"))

    assert Toy(sensitivity=1.0).sensitivity == 1.0
    for fields in ({}, {"sampled_n": 10}, {"sampled_n": 10, "gamma_sensitivity": 0.05}):
        with pytest.raises(ValueError, match=r"toy bound"):
            Toy(sensitivity=0.1, **fields)
    with pytest.raises(ValueError, match="nan"):
        Toy(sensitivity=math.nan)


def test_a_sampled_kmeans_sensitivity_below_one_is_kept_and_reported_as_random_dp():
    """KMeans input perturbation with a sampled sensitivity releases and reports a Gam."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(50, 2))
    mech = KMeans(2, bounds=(-1, 1), method="input_perturbation")
    sampled = mech.sensitivity_sampler(lambda n, rng: rng.uniform(-0.1, 0.1, size=(n, 2)), n=50, gamma=0.3, rng=1)
    assert sampled.sensitivity < 1.0
    assert isinstance(sampled.release_response(dp.Eps(1.0), X, rng=2).privacy_params, dp.Gam)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_sampled_n_set_by_hand_does_not_lower_an_estimators_sensitivity(name):
    """sampled_n without the sampler's gamma would report plain ε-DP with too little noise, so the floor holds."""
    mech = ESTIMATORS[name][0]()
    with pytest.raises(ValueError, match="sensitivity"):
        attrs.evolve(mech, sensitivity=0.0, sampled_n=10)


def test_the_manual_sampler_cannot_go_below_the_derived_sensitivity():
    """sensitivity_sampler_manual sets no gamma (the claim stays plain ε), so a sampled value below 1 is refused."""
    mech = KMeans(2, bounds=(-1, 1), method="input_perturbation")
    with pytest.raises(ValueError, match="sensitivity"):
        mech.sensitivity_sampler_manual(lambda n, rng: rng.uniform(-0.1, 0.1, size=(n, 2)), n=50, m=20, k=20, rng=1)


# ---- attacks: a derived sensitivity cannot be lowered, whatever other fields say (issue: floors that hold) ----------

N = 40
_X = np.random.default_rng(5).uniform(-1, 1, size=(N, 3)) / 2  # rows in the unit ball
_LABELS = np.tile([0, 1], N // 2)
_TARGETS = _X @ np.array([0.5, -0.2, 0.1])

# Every built-in whose sensitivity the library derives: (builder, dataset, privacy parameters, sampling allowed).
DERIVED = {
    "LogisticRegression-objective": (
        lambda: LogisticRegression(0.1, data_norm=1.0, classes=(0, 1)),
        (_X, _LABELS),
        dp.Eps(1.0),
        False,
    ),
    "LogisticRegression-output": (
        lambda: LogisticRegression(0.1, perturbation="output", data_norm=1.0, classes=(0, 1), radius_share=0.0),
        (_X, _LABELS),
        dp.Eps(1.0),
        True,
    ),
    "SVM-objective": (lambda: SVM(0.1, data_norm=1.0, classes=(0, 1)), (_X, _LABELS), dp.Eps(1.0), False),
    "SVM-output": (
        lambda: SVM(0.1, perturbation="output", data_norm=1.0, classes=(0, 1)),
        (_X, _LABELS),
        dp.Eps(1.0),
        True,
    ),
    "LinearRegression-adassp": (
        lambda: LinearRegression(data_norm=1.0, label_bound=1.0),
        (_X, _TARGETS),
        dp.Del(1.0, 1e-6),
        True,
    ),
    "LinearRegression-functional": (
        lambda: LinearRegression(method="functional", data_norm=1.0, label_bound=1.0),
        (_X, _TARGETS),
        dp.Eps(1.0),
        True,
    ),
    "KMeans-dplloyd": (lambda: KMeans(2, bounds=(-1, 1), method="dplloyd"), _X, dp.Eps(1.0), False),
    "KMeans-input_perturbation": (
        lambda: KMeans(2, bounds=(-1, 1), method="input_perturbation"),
        _X,
        dp.Eps(1.0),
        True,
    ),
    **{
        f"PCA-{method}": (
            lambda method=method: PCA(1, method=method, data_norm=1.0),
            _X,
            dp.Eps(1.0) if method in ("wishart", "ppca") else dp.Del(1.0, 1e-6),
            False,
        )
        for method in ("wishart", "ppca", "analyze_gauss", "mod_sulq")
    },
    "DPSGDClassifier": (
        lambda: DPSGDClassifier(clip_norm=1.0, classes=(0, 1), hidden_layer_sizes=(), epochs=1.0),
        (_X, _LABELS),
        dp.Del(1.0, 1e-5),
        False,
    ),
    "GroupBy": (
        lambda: GroupBy(statistics=("count", "sum"), bounds=(0.0, 1.0), keys=("a", "b")),
        (np.tile(np.array(["a", "b"]), N // 2), np.linspace(0, 1, N), None),
        dp.Eps(1.0),
        False,
    ),
}
FORGED = {"sensitivity": 0.0, "gamma_sensitivity": 1e-9, "sampled_n": N}


def _oracle(name):
    def oracle(n, rng):
        X = rng.uniform(-1, 1, size=(n, 3)) / 2
        if name.startswith("KMeans"):
            return X * 0.01  # a population far tighter than the bounds: the sampled sensitivity is tiny
        if name.startswith("LinearRegression"):
            return X, X @ np.array([0.5, -0.2, 0.1])
        return X, np.arange(n) % 2

    return oracle


def _kwargs(mech, fields):
    """The forged fields the class accepts as constructor arguments (DP-SGD's sensitivity and γ are not)."""
    init = {f.name for f in attrs.fields(type(mech)) if f.init}
    return {name: value for name, value in fields.items() if name in init}


@pytest.mark.parametrize("name", DERIVED)
def test_every_derived_estimator_refuses_a_hand_set_gamma_and_sampled_n_at_construction(name):
    """sensitivity=0 with gamma_sensitivity=1e-9 and sampled_n=n (the PCA attack) is refused for every built-in, by
    the constructor and by attrs.evolve; so are γ and n alone (they would relabel the release as random DP)."""
    build = DERIVED[name][0]
    mech = build()
    assert mech.sensitivity_is_derived and mech.sampling is None
    kind = type(mech)
    fixed = {f.name: getattr(mech, f.name) for f in attrs.fields(kind) if f.init and f.name not in FORGED}
    for fields in (FORGED, {"gamma_sensitivity": 1e-9, "sampled_n": N}, {"sampled_n": N}, {"gamma_sensitivity": 0.1}):
        forged = _kwargs(mech, fields)
        if not forged:
            continue
        with pytest.raises((ValueError, TypeError), match=r"sensitivity|sampled_n"):
            kind(**fixed, **forged)
        with pytest.raises((ValueError, TypeError), match=r"sensitivity|sampled_n"):
            attrs.evolve(mech, **forged)


def test_dpsgd_takes_neither_a_sensitivity_nor_a_gamma_argument():
    """DP-SGD's sensitivity is the clipping norm: the fields are not arguments at all, so evolve cannot set them."""
    mech = DERIVED["DPSGDClassifier"][0]()
    for field in ("sensitivity", "gamma_sensitivity"):
        with pytest.raises(TypeError):
            attrs.evolve(mech, **{field: FORGED[field]})


@pytest.mark.parametrize("name", DERIVED)
def test_attrs_validate_catches_sampler_fields_forged_behind_attrs_back(name):
    """Fields written with object.__setattr__ (bypassing the constructor) are caught by attrs.validate, like the
    floor itself: gamma_sensitivity / sampled_n without the sampler's record, or a record that does not match."""
    mech = DERIVED[name][0]()
    object.__setattr__(mech, "sampled_n", N)
    with pytest.raises(ValueError, match="sampled_n"):
        attrs.validate(mech)
    record = dp.sensitivity.SensitivitySampling(n=N, m=10, k=10, gamma=1e-9, sensitivity=0.0)
    object.__setattr__(mech, "sampling", record)  # describes other fields than the mechanism has
    with pytest.raises(ValueError, match="sampled_n"):
        attrs.validate(mech)


@pytest.mark.parametrize("name", [name for name, case in DERIVED.items() if case[3]])
def test_the_sampler_path_still_works_and_any_change_after_it_drops_the_record(name):
    """Where sampling is allowed the sampler's mechanism carries its record and releases a Gam; attrs.evolve of any
    field (the sensitivity, γ, n, or another setting) drops the record, so the forged results are refused."""
    build, data, params, _ = DERIVED[name]
    sampled = build().sensitivity_sampler(_oracle(name), n=N, gamma=0.3, rng=1)
    record = sampled.sampling
    assert record is not None and record.n == N and record.gamma == sampled.gamma_sensitivity
    assert record.sensitivity == sampled.sensitivity and record.k <= record.m
    assert isinstance(sampled.release_response(params, data, rng=0).privacy_params, dp.Gam)
    for change in (FORGED, {"sensitivity": 0.0}, {"gamma_sensitivity": 1e-9}, {"sampled_n": N}):
        with pytest.raises(ValueError, match=r"sensitivity|sampled_n"):
            attrs.evolve(sampled, **change)
    with pytest.raises(ValueError, match="sampled_n"):  # another setting: the sampled value no longer applies
        attrs.evolve(sampled, data_norm=2.0) if hasattr(sampled, "data_norm") else attrs.evolve(sampled, bounds=(-2, 2))
    # Dropping the sampled fields with the change gives back a plain estimator at (at least) its derived sensitivity.
    plain = attrs.evolve(sampled, sensitivity=build().sensitivity, gamma_sensitivity=None, sampled_n=None)
    assert plain.sampling is None and plain.privacy_guarantee(params) == params


@pytest.mark.parametrize("name", [name for name, case in DERIVED.items() if not case[3]])
def test_the_sampler_is_refused_where_sampling_is_unsound(name):
    """PCA, DP-SGD, DPLloyd, objective perturbation and group-by refuse both samplers before drawing anything."""
    mech = DERIVED[name][0]()
    for sample in (
        lambda: mech.sensitivity_sampler(_oracle(name), n=N, m=10, rng=0),
        lambda: mech.sensitivity_sampler_manual(_oracle(name), n=N, m=10, k=10, rng=0),
    ):
        with pytest.raises(TypeError):
            sample()


def test_the_sampling_record_is_not_a_constructor_argument():
    """The record of a sampling cannot be passed in: it is attached by the sampler while it builds its mechanism."""
    record = dp.sensitivity.SensitivitySampling(n=N, m=10, k=10, gamma=1e-9, sensitivity=0.0)
    with pytest.raises(TypeError):
        PCA(1, data_norm=1.0, sensitivity=0.0, gamma_sensitivity=1e-9, sampled_n=N, sampling=record)


def test_a_plain_mechanism_keeps_a_hand_set_gamma_as_the_users_declaration():
    """R parity: on Laplace (a user-given sensitivity) gamma_sensitivity and sampled_n are the user's to declare."""
    mech = dp.Laplace(target=np.mean, sensitivity=0.01, gamma_sensitivity=0.1, sampled_n=N)
    assert not mech.sensitivity_is_derived and mech.sampling is None
    assert mech.release_response(dp.Eps(1.0), _X[:, 0], rng=0).privacy_params == dp.Gam(1.0, gamma=0.1)
    sampled = mech.sensitivity_sampler(lambda n, rng: rng.uniform(size=n), n=N, gamma=0.3, rng=0)
    assert sampled.sampling is not None and sampled.sampling.gamma == sampled.gamma_sensitivity
    assert attrs.evolve(sampled, sensitivity=1.0).sampling is None  # a changed copy carries no stale record
