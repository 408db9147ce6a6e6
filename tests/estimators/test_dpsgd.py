"""DP-SGD: ghost-norm clipping is exact, the noise has the calibrated scale, the guarantee is stated and charged."""

import itertools
import math
import time

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.accounting import Accountant, SubsampledGaussianEvent, dpsgd_epsilon
from diffpriv_py.estimators import DPSGDClassifier, DPSGDModel
from diffpriv_py.estimators.dpsgd import SafeNoise, clipped_gradient_sum, sum_sensitivity


def _toy(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def _per_example_gradients(x, code, weights, biases):
    """Textbook backprop for one example (ReLU MLP, softmax cross-entropy): flattened gradient."""
    acts, pres = [x], []
    for w, b in zip(weights[:-1], biases[:-1], strict=True):
        z = acts[-1] @ w + b
        pres.append(z)
        acts.append(np.maximum(z, 0))
    logits = acts[-1] @ weights[-1] + biases[-1]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    delta = p.copy()
    delta[code] -= 1
    grads = []
    for layer in range(len(weights) - 1, -1, -1):
        grads.append((np.outer(acts[layer], delta), delta.copy()))
        if layer:
            delta = (weights[layer] @ delta) * (pres[layer - 1] > 0)
    return grads[::-1]


def test_ghost_norm_clipping_equals_explicit_per_example_clipping():
    """Norms from the per-layer factorisation and the clipped sum equal the per-example computation exactly."""
    rng = np.random.default_rng(3)
    sizes = [5, 7, 4, 3]
    weights = [rng.normal(size=(a, b)) for a, b in itertools.pairwise(sizes)]
    biases = [rng.normal(size=b) for b in sizes[1:]]
    X = rng.normal(size=(9, 5)) * 3
    codes = rng.integers(0, 3, size=9)
    clip = 0.7
    grad_w, grad_b, norms = clipped_gradient_sum(X, codes, weights, biases, "relu", clip)
    sum_w = [np.zeros_like(w) for w in weights]
    sum_b = [np.zeros_like(b) for b in biases]
    for i in range(9):
        per = _per_example_gradients(X[i], codes[i], weights, biases)
        norm = math.sqrt(sum(np.sum(gw**2) + np.sum(gb**2) for gw, gb in per))
        assert norms[i] == pytest.approx(norm, rel=1e-12)
        factor = min(1.0, clip / norm)
        for layer, (gw, gb) in enumerate(per):
            sum_w[layer] += factor * gw
            sum_b[layer] += factor * gb
    for layer in range(3):
        np.testing.assert_allclose(grad_w[layer], sum_w[layer], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(grad_b[layer], sum_b[layer], rtol=1e-12, atol=1e-14)


def test_every_clipped_contribution_has_norm_at_most_the_clipping_norm():
    """With one example, the clipped sum is that example's gradient scaled into the ball of radius C."""
    rng = np.random.default_rng(4)
    weights = [rng.normal(size=(6, 8)) * 5, rng.normal(size=(8, 4)) * 5]
    biases = [np.zeros(8), np.zeros(4)]
    for i in range(5):
        x = rng.normal(size=(1, 6)) * 10
        gw, gb, _ = clipped_gradient_sum(x, np.array([i % 4]), weights, biases, "tanh", 0.5)
        total = math.sqrt(sum(np.sum(a**2) for a in gw) + sum(np.sum(b**2) for b in gb))
        assert total <= 0.5 * (1 + 1e-12)


def _noise_only_weights(noise_multiplier):
    """Softmax regression on all-zero features: a ⊗ δ = 0, so the weights move by the noise alone."""
    d, k, n = 200, 10, 10
    X = np.zeros((n, d))
    y = np.arange(n) % k
    mech = DPSGDClassifier(
        hidden_layer_sizes=(),
        sampling_rate=0.5,
        epochs=5,  # 10 steps
        learning_rate=1.0,
        momentum=0.0,
        noise_multiplier=noise_multiplier,
        classes=list(range(k)),
    )
    model = mech.release_response(dp.Del(50.0, 1e-5), (X, y), rng=11).response
    return model.weights[0], mech


def test_the_noise_has_the_calibrated_scale_and_half_of_it_is_caught():
    """Weights after noise-only steps have variance 2/d + T(σCη/(qn))²; the observed variance matches within 15 %.

    2000 weights give a relative standard error of 3 %, so a false alarm needs a 5-sigma deviation; noise at half
    the scale (variance ÷ 4) is far outside the band.
    """
    sigma = 3.0
    w, mech = _noise_only_weights(sigma)
    expected = 2 / 200 + mech.steps * (sigma * 1.0 * 1.0 / (0.5 * 10)) ** 2
    ratio = float(np.var(w)) / expected
    assert 0.85 < ratio < 1.15
    w_half, _ = _noise_only_weights(sigma / 2)
    assert not 0.85 < float(np.var(w_half)) / expected < 1.15


def test_release_reports_the_requested_replace_one_guarantee_and_its_calibration():
    """The calibrated σ meets the parameters under replace-one; the Response states them; the model records σ."""
    X, y = _toy()
    mech = DPSGDClassifier(hidden_layer_sizes=(8,), sampling_rate=0.05, epochs=2, classes=[0, 1])
    response = mech.release_response(dp.Del(2.0, 1e-5), (X, y), rng=0)
    model = response.response
    assert isinstance(model, DPSGDModel)
    assert response.privacy_params == dp.Del(2.0, 1e-5)
    assert response.sensitivity == 1.0
    assert dpsgd_epsilon(model.noise_multiplier, 0.05, mech.steps, 1e-5) <= 2.0
    assert model.epsilon_add_remove < 2.0
    assert model.steps == mech.steps == 40


def test_add_remove_calibration_reports_the_larger_replace_one_guarantee():
    """Calibrating to a literature-style add/remove ε states the replace-one ε actually given (larger)."""
    X, y = _toy()
    mech = DPSGDClassifier(
        hidden_layer_sizes=(), sampling_rate=0.05, epochs=2, classes=[0, 1], neighbouring="add_remove", accounting="rdp"
    )
    response = mech.release_response(dp.Del(2.0, 1e-5), (X, y), rng=0)
    model = response.response
    assert response.privacy_params.epsilon > 2.0 and response.privacy_params.delta == 1e-5
    assert response.privacy_params.epsilon == pytest.approx(
        dpsgd_epsilon(model.noise_multiplier, 0.05, mech.steps, 1e-5), rel=1e-12
    )
    assert model.epsilon_add_remove <= 2.0


def test_an_explicit_noise_multiplier_must_meet_the_parameters():
    """A σ too small for the requested ε is refused with the ε it would give; a large one reports its smaller ε."""
    X, y = _toy()
    weak = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.05, epochs=2, noise_multiplier=0.3, classes=[0, 1])
    with pytest.raises(ValueError, match=r"noise_multiplier=0\.3"):
        weak.release_response(dp.Del(1.0, 1e-5), (X, y), rng=0)
    strong = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.05, epochs=2, noise_multiplier=5.0, classes=[0, 1])
    response = strong.release_response(dp.Del(1.0, 1e-5), (X, y), rng=0)
    assert response.privacy_params.epsilon < 1.0


def test_the_accountant_is_charged_with_the_exact_subsampled_gaussian_steps():
    """An accountant records T replace-one subsampled Gaussian steps and its spent ε equals dpsgd_epsilon."""
    X, y = _toy()
    mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.05, epochs=2, classes=[0, 1])
    acc = Accountant(budget=dp.Del(3.0, 1e-5))
    model = mech.release_response(dp.Del(2.0, 1e-5), (X, y), rng=0, accountant=acc).response
    (event,) = acc.ledger[0].events
    assert event == SubsampledGaussianEvent(
        noise_multiplier=model.noise_multiplier, sampling_rate=0.05, relation="replace_one", count=40
    )
    assert acc.spent.epsilon == pytest.approx(dpsgd_epsilon(model.noise_multiplier, 0.05, 40, 1e-5), rel=1e-9)


def test_same_seed_same_model_and_inputs_untouched():
    """A seeded release is reproducible and does not modify X or y."""
    X, y = _toy()
    X0, y0 = X.copy(), y.copy()
    mech = DPSGDClassifier(hidden_layer_sizes=(4,), sampling_rate=0.1, epochs=1, classes=[0, 1])
    a = mech.release_response(dp.Del(1.0, 1e-5), (X, y), rng=5).response
    b = mech.release_response(dp.Del(1.0, 1e-5), (X, y), rng=5).response
    for wa, wb in zip(a.weights, b.weights, strict=True):
        np.testing.assert_array_equal(wa, wb)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    with pytest.raises(ValueError):
        a.weights[0][0, 0] = 1.0  # released arrays are read-only


def test_logistic_regression_learns_a_linear_rule():
    """hidden_layer_sizes=() is softmax regression; at ε = 2 it learns a clear linear rule."""
    X, y = _toy(n=3000)
    mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.05, epochs=5, classes=[0, 1])
    model = mech.release_response(dp.Del(2.0, 1e-5), (X, y), rng=2).response
    assert model.hidden_layer_sizes == ()
    assert model.score(X, y) > 0.9
    proba = model.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.slow
def test_digits_mlp_reaches_85_percent_at_epsilon_8_and_trains_10_epochs_quickly():
    """64-32-10 MLP on scikit-learn's digits, (ε=8, δ=1e-5) replace-one, 10 epochs: ≥ 85 % test accuracy, < 30 s."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.2, random_state=0, stratify=y)
    mech = DPSGDClassifier(
        hidden_layer_sizes=(64, 32), sampling_rate=64 / len(X_train), epochs=10, classes=list(range(10))
    )
    start = time.perf_counter()
    model = mech.release_response(dp.Del(8.0, 1e-5), (X_train, y_train), rng=0).response
    elapsed = time.perf_counter() - start
    assert model.score(X_test, y_test) >= 0.85
    assert elapsed < 30.0


def test_sklearn_facade_fits_scores_and_clones():
    """The facade computes q = batch_size/n, charges the accountant and follows scikit-learn's conventions."""
    pytest.importorskip("sklearn")
    from sklearn.base import clone

    from diffpriv_py.sklearn import DPSGDClassifier as Facade

    X, y = _toy(n=1000)
    acc = Accountant(budget=dp.Del(5.0, 1e-5))
    clf = Facade((8,), epsilon=2.0, delta=1e-5, batch_size=50, epochs=3, classes=[0, 1], rng=0, accountant=acc)
    clf.fit(X, y)
    assert clf.score(X, y) > 0.8
    assert clf.classes_.tolist() == [0, 1] and clf.n_features_in_ == 4
    assert clf.predict_proba(X[:3]).shape == (3, 2)
    assert acc.ledger[0].events[0].sampling_rate == pytest.approx(0.05)
    twin = clone(clf)
    assert twin.get_params()["batch_size"] == 50 and not hasattr(twin, "model_")
    with pytest.warns(UserWarning, match="batch_size=5000 exceeds the 1000 records"):
        Facade((), epsilon=1.0, delta=1e-5, batch_size=5000, epochs=1, classes=[0, 1], rng=0).fit(X, y)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"hidden_layer_sizes": (0,)}, ValueError, "hidden_layer_sizes"),
        ({"hidden_layer_sizes": "64"}, TypeError, "hidden_layer_sizes"),
        ({"sampling_rate": 0.0}, ValueError, "sampling_rate"),
        ({"sampling_rate": math.nan}, ValueError, "sampling_rate"),
        ({"clip_norm": -1.0}, ValueError, "clip_norm"),
        ({"learning_rate": True}, TypeError, "learning_rate"),
        ({"activation": "sigmoid"}, ValueError, "activation"),
        ({"accounting": "rdp"}, ValueError, "replace-one"),
        ({"classes": [1]}, ValueError, "classes"),
    ],
)
def test_bad_settings_are_refused_at_construction(kwargs, error, match):
    """Invalid settings raise a clear error naming the parameter."""
    with pytest.raises(error, match=match):
        DPSGDClassifier(**kwargs)


def test_bad_privacy_parameters_and_data_are_refused_before_training():
    """Pure ε, δ = 0, NaN features and a missing label set are refused with the fix."""
    X, y = _toy()
    mech = DPSGDClassifier(hidden_layer_sizes=(), classes=[0, 1])
    with pytest.raises(TypeError, match="Del"):
        mech.release_response(dp.Eps(1.0), (X, y))
    with pytest.raises(ValueError, match="delta > 0"):
        mech.release_response(dp.Del(1.0, 0.0), (X, y))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mech.release_response(dp.Del(1.0, 1e-5), (bad, y), rng=0)
    acc = Accountant(budget=dp.Del(5.0, 1e-5))
    with pytest.raises(ValueError, match="classes='observed'"):
        attrs.evolve(mech, classes=None).release_response(dp.Del(1.0, 1e-5), (X, y), rng=0, accountant=acc)
    assert len(acc.ledger) == 0
    with pytest.raises(TypeError, match="tuple"):
        mech.release_response(dp.Del(1.0, 1e-5), X, rng=0)
    with pytest.raises(TypeError, match="nothing to sample"):
        mech.sensitivity_sampler(lambda n, rng: (X[:n], y[:n]), n=10)


def test_progress_bar_can_be_shown(capsys):
    """progress=True shows a tqdm bar over the steps (on stderr) and trains the same model."""
    X, y = _toy(n=200)
    quiet = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.1, epochs=1, classes=[0, 1])
    loud = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.1, epochs=1, classes=[0, 1], progress=True)
    a = quiet.release_response(dp.Del(1.0, 1e-5), (X, y), rng=3).response
    b = loud.release_response(dp.Del(1.0, 1e-5), (X, y), rng=3).response
    np.testing.assert_array_equal(a.weights[0], b.weights[0])
    assert "DP-SGD" in capsys.readouterr().err


# ---- overflow: no finite record escapes the clip -----------------------------------------------------------------


def _flat(grad_w, grad_b):
    return np.concatenate([a.ravel() for a in grad_w] + [b.ravel() for b in grad_b])


def _small_net(seed=5, sizes=(4, 6, 3)):
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=(a, b)) for a, b in itertools.pairwise(sizes)]
    biases = [rng.normal(size=b) * 0.1 for b in sizes[1:]]
    return weights, biases


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("magnitude", [1e154, 1e200, 1e300, np.finfo(float).max])
def test_a_huge_finite_record_changes_the_clipped_sum_by_at_most_the_clipping_norm(activation, magnitude):
    """Grey box: adding a record with entries ~1e154..1e308 moves the computed sum by ≤ C and leaves it finite.

    Every label is tried, so the saturated case is included: a correctly classified huge record has δ = 0 exactly,
    and before the fix its norm was 0·inf = NaN, min(1, C/NaN) skipped the clip and the sum became NaN.
    """
    weights, biases = _small_net(sizes=(4, 6, 3) if activation == "relu" else (4, 3))
    rng = np.random.default_rng(6)
    X = rng.normal(size=(20, 4))
    codes = rng.integers(0, 3, size=20)
    huge = np.array([[magnitude, -magnitude, magnitude / 3, 0.0]])
    base = _flat(*clipped_gradient_sum(X, codes, weights, biases, activation, 0.5)[:2])
    for label in range(3):
        grad_w, grad_b, norms = clipped_gradient_sum(
            np.vstack([X, huge]), np.append(codes, label), weights, biases, activation, 0.5
        )
        moved = _flat(grad_w, grad_b)
        assert np.all(np.isfinite(moved)) and not np.isnan(norms).any()
        assert np.linalg.norm(moved - base) <= sum_sensitivity(0.5, 21)


def test_a_record_whose_gradient_overflows_contributes_exactly_zero():
    """An example whose activations or gradient are not finite adds 0 (data-independent), never NaN or inf."""
    weights, biases = _small_net(sizes=(4, 6, 3))
    weights[0] = weights[0] * 1e200  # the hidden layer of a 1e154 record overflows
    rng = np.random.default_rng(7)
    X = rng.normal(size=(10, 4))
    codes = rng.integers(0, 3, size=10)
    base_w, base_b, _ = clipped_gradient_sum(X, codes, weights, biases, "relu", 1.0)
    huge = np.full((1, 4), 1e154)
    grad_w, grad_b, norms = clipped_gradient_sum(
        np.vstack([X, huge]), np.append(codes, 0), weights, biases, "relu", 1.0
    )
    assert np.isinf(norms[-1]) and np.all(np.isfinite(norms[:-1]))
    np.testing.assert_array_equal(_flat(grad_w, grad_b), _flat(base_w, base_b))


def test_the_1e154_record_never_makes_the_released_model_nan():
    """The attack dataset (one record of norm ~1e154) gives finite weights in every one of 20 seeded releases.

    Before the fix the weights were NaN with probability ≈ 1 on this dataset and never on its neighbour (ε = ∞);
    a single NaN in 20 would refute the fix, and there were 20 out of 20.
    """
    X, y = _toy(n=200)
    attack = X.copy()
    attack[0] = 1e154
    mech = DPSGDClassifier(hidden_layer_sizes=(8,), sampling_rate=0.2, epochs=2, classes=[0, 1])
    for seed in range(20):
        model = mech.release_response(dp.Del(2.0, 1e-5), (attack, y), rng=seed).response
        assert all(np.all(np.isfinite(w)) for w in (*model.weights, *model.biases))
        assert np.all(np.isfinite(model.decision_function(X[:5])))


# ---- safe noise ---------------------------------------------------------------------------------------------------


def test_noisy_sums_lie_on_the_power_of_two_grid():
    """Every released noisy sum is an integer multiple of the grid r = 2^k ≤ σC·2⁻⁴⁰, whatever the input bits."""
    mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.1, epochs=1, classes=[0, 1])
    noise = mech.safe_noise(dp.Del(1.0, 1e-5), n=100, dims=10)
    assert math.frexp(noise.grid)[0] == 0.5 and noise.grid <= noise.noise_multiplier * mech.clip_norm * 2.0**-40
    values = np.random.default_rng(0).normal(size=1000) * np.pi
    out = noise.perturb(values, np.random.default_rng(1))
    ratio = out / noise.grid
    np.testing.assert_array_equal(ratio, np.rint(ratio))


def test_the_noise_std_covers_the_rounded_float_sensitivity_at_the_event_multiplier():
    """std = σ_c·(Δ_float + √d·r) with σ_c ≥ σ of the accounted event, and Δ_float ≥ C; the excess is tiny."""
    mech = DPSGDClassifier(hidden_layer_sizes=(64, 32), sampling_rate=0.05, epochs=10, classes=list(range(10)))
    dims = 65 * 64 + 65 * 32 + 33 * 10
    noise = mech.safe_noise(dp.Del(8.0, 1e-5), n=1437, dims=dims)
    assert noise.noise_multiplier == mech.noise_multiplier_for(dp.Del(8.0, 1e-5))
    assert noise.step_sensitivity >= sum_sensitivity(1.0, 1437) + math.sqrt(dims) * noise.grid
    assert sum_sensitivity(1.0, 1437) > 1.0
    assert noise.noise_std >= noise.noise_multiplier * noise.step_sensitivity
    assert noise.noise_std <= noise.noise_multiplier * 1.0 * (1 + 1e-6)


def test_the_sampled_noise_has_the_stated_std_and_half_of_it_is_caught():
    """200 000 draws: the sample std is within 1 % of noise_std; noise at half the scale is 50 % off.

    The relative standard error of a sample std from N draws is 1/√(2N) = 0.16 %, so the ±1 % band is 6 standard
    errors (false alarm < 1e-8).
    """
    noise = SafeNoise(noise_multiplier=1.3, grid=2.0**-40, step_sensitivity=1.0, noise_std=1.3)
    draws = noise.perturb(np.zeros(200_000), np.random.default_rng(3))
    assert abs(float(np.std(draws)) / 1.3 - 1) < 0.01
    half = SafeNoise(noise_multiplier=1.3, grid=2.0**-40, step_sensitivity=1.0, noise_std=0.65)
    assert abs(float(np.std(half.perturb(np.zeros(200_000), np.random.default_rng(3)))) / 1.3 - 1) > 0.01


def test_too_many_noise_values_for_the_float_reserve_are_refused():
    """When steps × parameters would make the float-error reserve exceed ε/2 the release is refused clearly."""
    mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.05, epochs=10, classes=[0, 1])
    with pytest.raises(ValueError, match="float-error reserve"):
        mech.safe_noise(dp.Del(1e-3, 1e-5), n=100, dims=10**7)  # 2·10⁹ values: a reserve of 0.03 > ε/2
    assert mech.safe_noise(dp.Del(1e-3, 1e-5), n=100, dims=10**5).noise_std > 0  # 2·10⁷ values: 3·10⁻⁴ < ε/2


# ---- honest sensitivity and public checks before the charge ------------------------------------------------------


def test_the_sensitivity_cannot_be_set_below_the_clipping_norm():
    """The sensitivity is C by construction: it cannot be passed, evolved, or validated below C."""
    mech = DPSGDClassifier(hidden_layer_sizes=(), classes=[0, 1], clip_norm=2.0)
    assert mech.sensitivity == 2.0
    with pytest.raises(TypeError):
        DPSGDClassifier(sensitivity=0.0)
    with pytest.raises(TypeError):
        attrs.evolve(mech, sensitivity=0.0)
    object.__setattr__(mech, "sensitivity", 0.0)  # a subclass or a bug that lowers it is caught by the validator
    with pytest.raises(ValueError, match="derived replace-one sensitivity 2"):
        attrs.validate(mech)


@pytest.mark.parametrize(
    ("data", "error", "match", "charged"),
    [
        ((np.zeros((6, 2)), np.array([0, 1, 1, 1, 0])), ValueError, "one label per row", False),
        ((np.zeros((6, 2)), np.array([0j, 1, 1, 1, 0, 1])), TypeError, "complex", False),
        ((np.zeros((6, 2)) + 1j, np.arange(6) % 2), TypeError, "complex", False),
        ((np.zeros((6, 2, 1)), np.arange(6) % 2), ValueError, "2-D", False),
        (np.zeros((6, 2)), TypeError, "tuple", False),
    ],
)
def test_labels_and_features_of_the_wrong_form_are_refused_before_the_charge(data, error, match, charged):
    """A length mismatch, complex or 3-D X, or no (X, y) tuple: refused with nothing charged."""
    acc = Accountant(budget=dp.Del(5.0, 1e-5))
    mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.5, epochs=1, classes=[0, 1])
    with pytest.raises(error, match=match):
        mech.release_response(dp.Del(1.0, 1e-5), data, rng=0, accountant=acc)
    assert len(acc.ledger) == (1 if charged else 0)


def test_a_nan_label_is_refused_with_observed_classes_instead_of_becoming_a_class():
    """With classes="observed", a NaN label would have been a third class; it is refused before the charge."""
    X, y = _toy(n=50)
    labels = y.astype(float)
    labels[3] = np.nan
    acc = Accountant(budget=dp.Del(5.0, 1e-5))
    with pytest.raises(ValueError, match="NaN"):
        DPSGDClassifier(hidden_layer_sizes=(), classes="observed").release_response(
            dp.Del(1.0, 1e-5), (X, labels), rng=0, accountant=acc
        )
    assert len(acc.ledger) == 0


@pytest.mark.parametrize("odd", [np.nan, 5, "x"], ids=["nan", "undeclared-int", "string"])
def test_a_label_outside_classes_contributes_a_zero_gradient_instead_of_failing_after_the_charge(odd):
    """A record with an undeclared label trains exactly like a record whose gradient is zero: the seeded release is
    the same whatever that record's features are, and nothing fails after the charge."""
    X, y = _toy(n=60)
    labels = y.astype(object)
    labels[7] = odd
    mech = DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.5, epochs=2, classes=[0, 1])
    far = X.copy()
    far[7] = 50.0
    a = mech.release_response(dp.Del(1.0, 1e-5), (X, labels), rng=4).response
    b = mech.release_response(dp.Del(1.0, 1e-5), (far, labels), rng=4).response
    assert a.classes.tolist() == [0, 1] and a.weights[0].shape == b.weights[0].shape == (X.shape[1], 2)
    np.testing.assert_array_equal(a.weights[0], b.weights[0])


@pytest.mark.parametrize("method", ["predict", "decision_function", "predict_proba"])
def test_predicting_on_nan_inf_or_complex_rows_is_refused(method):
    """A released model asked about a NaN, inf or complex row raises instead of answering class 0."""
    X, y = _toy(n=200)
    mech = DPSGDClassifier(hidden_layer_sizes=(4,), sampling_rate=0.2, epochs=1, classes=[0, 1])
    model = mech.release_response(dp.Del(2.0, 1e-5), (X, y), rng=0).response
    bad = X[:3].copy()
    for value in (np.nan, np.inf):
        bad[1, 2] = value
        with pytest.raises(ValueError, match="NaN or infinite"):
            getattr(model, method)(bad)
    with pytest.raises(TypeError, match="complex"):
        getattr(model, method)(X[:3] + 1j)
