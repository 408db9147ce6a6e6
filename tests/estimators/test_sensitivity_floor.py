"""One rule for every estimator: a sensitivity below the derived one is refused, a larger one or a sampled one kept."""

import math

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.estimators import PCA, SVM, DPSGDClassifier, KMeans, LinearRegression, LogisticRegression
from diffpriv_py.estimators._sensitivity_floor import not_below

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


def test_the_validator_accepts_sampled_sensitivities_and_refuses_nan():
    """A mechanism that records sampled_n and gamma_sensitivity (set by the sampler, reported as random DP) may carry
    any sampled value; sampled_n alone (the manual sampler, or set by hand) is still floored; NaN never passes."""

    @attrs.frozen
    class Toy:
        sampled_n: int | None = None
        gamma_sensitivity: float | None = None
        sensitivity: float = attrs.field(default=1.0, validator=not_below(1.0, "toy bound"))

    assert Toy(sampled_n=10, gamma_sensitivity=0.05, sensitivity=0.1).sensitivity == 0.1
    with pytest.raises(ValueError, match=r"toy bound"):
        Toy(sensitivity=0.1)
    with pytest.raises(ValueError, match=r"toy bound"):
        Toy(sampled_n=10, sensitivity=0.1)
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
