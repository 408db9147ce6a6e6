"""The scikit-learn facades are real scikit-learn estimators: scikit-learn's own checks, feature names, set_output,
its NotFittedError, refusal of sample weights with the reason, and no budget spent on a malformed fit."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

import diffpriv_py as dp
from diffpriv_py import sklearn as dps


def _facades():
    return [
        dps.PCA(2, epsilon=1.0, data_norm=10.0, rng=0),
        dps.PCA(2, epsilon=1.0, delta=1e-5, method="analyze_gauss", data_norm=10.0, rng=0),
        # scikit-learn's checks fit on label sets they make up, so the classifiers declare the observed set public.
        dps.LogisticRegression(epsilon=5.0, data_norm=10.0, classes="observed", rng=0),
        dps.SVM(epsilon=5.0, data_norm=10.0, classes="observed", rng=0),
        dps.KMeans(3, epsilon=1.0, bounds=(-10, 10), rng=0),
        dps.LinearRegression(epsilon=1.0, delta=1e-5, data_norm=10.0, label_bound=10.0, rng=0),
        dps.DPSGDClassifier((), epsilon=5.0, delta=1e-5, classes="observed", rng=0),
    ]


def _expected_failures(estimator):
    return dps.EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks(_facades(), expected_failed_checks=_expected_failures)
def test_facades_pass_scikit_learns_estimator_checks(estimator, check):
    """Every check of scikit-learn's check_estimator passes, except the declared ones (each with its DP reason)."""
    check(estimator)


def test_at_most_two_expected_failures_per_facade_each_with_a_reason():
    """The expected-failure list is short and every entry says why privacy forbids the behaviour."""
    for name, checks in dps.EXPECTED_FAILED_CHECKS.items():
        assert len(checks) <= 2, name
        assert all(len(reason) > 40 for reason in checks.values()), name


@pytest.fixture
def frame():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    y = (X["a"] > 0).astype(int).to_numpy()
    return X, y


def test_reordered_dataframe_columns_are_refused_at_predict_time(frame):
    """A model fitted on named columns refuses the same columns in another order instead of answering wrongly."""
    X, y = frame
    clf = dps.LogisticRegression(epsilon=1.0, data_norm=4.0, classes=[0, 1], rng=0).fit(X, y)
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(X[["c", "a", "b"]])


def test_pca_works_with_set_output_pandas_and_names_its_features(frame):
    """Pipeline(...).set_output(transform="pandas") works and the output columns are named pca0, pca1."""
    from sklearn.pipeline import make_pipeline

    X, _ = frame
    pipe = make_pipeline(dps.PCA(2, epsilon=1.0, data_norm=4.0, rng=0)).set_output(transform="pandas")
    out = pipe.fit_transform(X)
    assert list(out.columns) == ["pca0", "pca1"]
    assert list(pipe[-1].get_feature_names_out()) == ["pca0", "pca1"]


def test_pca_keeps_every_feature_by_default():
    """n_components=None releases a d-dimensional basis, as scikit-learn's default keeps all features."""
    X = np.random.default_rng(1).normal(size=(300, 4))
    pca = dps.PCA(epsilon=1.0, data_norm=6.0, method="analyze_gauss", delta=1e-6, rng=0).fit(X)
    assert pca.components_.shape == (4, 4)


def test_facades_require_a_privacy_level_and_take_it_by_keyword_only():
    """No facade has a default epsilon, and none takes it positionally (where the estimator layer puts Λ)."""
    with pytest.raises(TypeError):
        dps.LogisticRegression(1.0, data_norm=1.0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        dps.PCA(2, data_norm=1.0)  # type: ignore[call-arg]


def test_sample_weight_is_refused_with_the_reason():
    """A weighted fit is refused with an explanation, not a TypeError about an unexpected argument."""
    X = np.random.default_rng(2).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="weight would scale its contribution"):
        dps.SVM(epsilon=1.0, data_norm=3.0, classes=[0, 1], rng=0).fit(X, y, sample_weight=np.ones(50))


def test_not_fitted_error_is_scikit_learns():
    """Predicting before fit raises scikit-learn's NotFittedError (also exported by diffpriv_py.sklearn)."""
    from sklearn.exceptions import NotFittedError

    assert dps.NotFittedError is NotFittedError
    with pytest.raises(NotFittedError):
        dps.LinearRegression(epsilon=1.0, delta=1e-6, data_norm=1.0, label_bound=1.0).predict(np.zeros((1, 1)))


@pytest.mark.parametrize(
    ("X", "y"),
    [
        (np.zeros((10, 2), dtype=complex), np.arange(10) % 2),
        (np.zeros((0, 2)), np.zeros(0)),
        (np.zeros(10), np.arange(10) % 2),
        (np.zeros((10, 2)), np.arange(9) % 2),
        (np.zeros((10, 2)), np.linspace(0, 1, 10)),
    ],
    ids=["complex", "empty", "1-d", "length-mismatch", "continuous-labels"],
)
def test_a_malformed_fit_charges_nothing(X, y):
    """Complex, empty, 1-D, mismatched or regression-valued input fails before the accountant is charged."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    with pytest.raises((TypeError, ValueError)):
        dps.LogisticRegression(epsilon=1.0, data_norm=1.0, classes="observed", rng=0, accountant=acc).fit(X, y)
    assert acc.spent.epsilon == 0.0


def test_html_repr_comes_from_scikit_learn():
    """The notebook representation is scikit-learn's estimator diagram."""
    html = dps.KMeans(2, epsilon=1.0, bounds=(0, 1))._repr_html_()
    assert "KMeans" in html and "sk-" in html


# ---- PCA: scikit-learn's model methods, as post-processing of the release ----------------------------------------


def _gauss_pca(X, **kwargs):
    params = dict(epsilon=5.0, delta=1e-6, method="analyze_gauss", data_norm=10.0, rng=0) | kwargs
    return dps.PCA(2, **params).fit(X)


@pytest.fixture
def spread():
    return np.random.default_rng(3).normal(size=(20_000, 5)) * [3.0, 2.0, 1.0, 0.5, 0.2]


def test_pca_model_methods_equal_scikit_learns_formulas_on_the_released_values(spread):
    """get_covariance, get_precision, score_samples and score are scikit-learn's PCA's on the same released values."""
    from sklearn.decomposition import PCA as SkPCA

    pca = _gauss_pca(spread)
    reference = SkPCA(2).fit(spread[:10])  # then overwritten with the release: only its formulas are used
    reference.components_ = pca.components_
    reference.explained_variance_ = pca.explained_variance_
    reference.noise_variance_ = pca.noise_variance_
    reference.mean_ = np.zeros(5)
    np.testing.assert_allclose(pca.get_covariance(), reference.get_covariance(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(pca.get_precision(), reference.get_precision(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(pca.score_samples(spread[:50]), reference.score_samples(spread[:50]), rtol=1e-10)
    assert pca.score(spread[:50]) == pytest.approx(reference.score(spread[:50]), rel=1e-10)


def test_pca_variances_estimate_the_non_private_ones_and_the_ratios_stay_in_the_unit_interval(spread):
    """At a large n the released variances, ratios, σ² and score are close to scikit-learn's non-private PCA."""
    from sklearn.decomposition import PCA as SkPCA

    pca, exact = _gauss_pca(spread), SkPCA(2).fit(spread)
    np.testing.assert_allclose(pca.explained_variance_, exact.explained_variance_, rtol=0.05)
    np.testing.assert_allclose(pca.explained_variance_ratio_, exact.explained_variance_ratio_, rtol=0.05)
    assert pca.noise_variance_ == pytest.approx(exact.noise_variance_, rel=0.1)
    assert 0.0 <= pca.explained_variance_ratio_.sum() <= 1.0
    assert pca.score(spread) == pytest.approx(exact.score(spread), rel=0.01)


def test_pca_model_methods_are_functions_of_the_release_only(spread):
    """The model's methods read only the released values: a model rebuilt from them gives the same numbers."""
    from diffpriv_py.estimators.pca import PCAModel

    model = _gauss_pca(spread).model_
    rebuilt = PCAModel(
        components=model.components.copy(),
        explained_variance=model.explained_variance.copy(),
        method=model.method,
        total_variance=model.total_variance,
    )
    np.testing.assert_array_equal(rebuilt.get_covariance(), model.get_covariance())
    np.testing.assert_array_equal(rebuilt.score_samples(spread[:20]), model.score_samples(spread[:20]))
    np.testing.assert_allclose(model.get_precision() @ model.get_covariance(), np.eye(5), atol=1e-9)


def test_ppca_has_no_model_methods_and_says_why_and_what_to_use(spread):
    """A PPCA release has no eigenvalues: the methods are absent (hasattr False) and the error names the methods
    that have them."""
    pca = dps.PCA(2, epsilon=1.0, method="ppca", data_norm=10.0, rng=0).fit(spread)
    assert pca.explained_variance_ is None and pca.explained_variance_ratio_ is None and pca.noise_variance_ is None
    for name in ("get_covariance", "get_precision", "score", "score_samples"):
        assert not hasattr(pca, name)
    with pytest.raises(AttributeError, match=r"without the eigenvalues.*'wishart'.*analyze_gauss"):
        pca.score(spread)
    with pytest.raises(ValueError, match=r"no eigenvalues.*'wishart'.*analyze_gauss"):
        pca.model_.get_covariance()


def test_pca_sampler_passes_through_and_gibbs_warns(spread):
    """sampler="gibbs" reaches the estimator (an unproven chain: warns, model_.exact False); the default is exact,
    and a Gibbs sampler asked of another method than PPCA is refused rather than ignored."""
    assert dps.PCA(2, epsilon=1.0, data_norm=10.0, rng=0).fit(spread[:500]).model_.exact
    assert dps.PCA(2, epsilon=1.0, method="ppca", data_norm=10.0, rng=0).fit(spread[:500]).model_.exact
    with pytest.warns(dp.exceptions.DiffprivWarning, match="NOT proven"):
        gibbs = dps.PCA(2, epsilon=1.0, method="ppca", data_norm=10.0, sampler="gibbs", n_sweeps=5, rng=0)
        gibbs.fit(spread[:500])
    assert gibbs.model_.exact is False and gibbs.get_params()["sampler"] == "gibbs"
    with pytest.raises(ValueError, match="method='ppca'"):
        dps.PCA(2, epsilon=1.0, data_norm=10.0, sampler="gibbs", rng=0).fit(spread[:500])


def test_multi_output_linear_regression_has_scikit_learns_shapes():
    """A 2-D y gives coef_ of shape (t, d), intercept_ (t,) and predictions (n, t); a (n, 1) y keeps (1, d)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(5_000, 3))
    Y = np.stack([X @ [0.5, -0.3, 0.1], X @ [0.0, 0.4, -0.2]], axis=1)
    reg = dps.LinearRegression(epsilon=1.0, delta=1e-6, data_norm=2.0, label_bound=1.0, rng=0).fit(X, Y)
    assert reg.coef_.shape == (2, 3) and reg.intercept_.shape == (2,) and reg.predict(X[:4]).shape == (4, 2)
    assert reg.__sklearn_tags__().target_tags.multi_output
    one = dps.LinearRegression(epsilon=1.0, delta=1e-6, data_norm=2.0, label_bound=1.0, rng=0).fit(X, Y[:, :1])
    flat = dps.LinearRegression(epsilon=1.0, delta=1e-6, data_norm=2.0, label_bound=1.0, rng=0).fit(X, Y[:, 0])
    assert one.coef_.shape == (1, 3) and np.array_equal(one.coef_[0], flat.coef_)


def test_a_noisy_release_with_non_positive_discarded_variance_still_gives_a_proper_model():
    """When the noise makes the discarded eigenvalues' mean <= 0, σ² is floored and the log-likelihood stays finite."""
    from diffpriv_py.estimators.pca import PCAModel

    eye = np.eye(4)
    model = PCAModel(components=eye[:, :2], explained_variance=[4.0, 1.0], method="analyze_gauss", total_variance=3.0)
    assert model.noise_variance == pytest.approx(4e-6)
    full = PCAModel(components=eye, explained_variance=[4.0, 1.0, 0.5, -0.1], method="mod_sulq", total_variance=5.4)
    for m in (model, full):
        assert np.all(np.isfinite(m.score_samples(np.ones((3, 4)))))
        np.testing.assert_allclose(m.get_precision() @ m.get_covariance(), eye, atol=1e-6)


# ---- one constructor convention ----------------------------------------------------------------------------------

_FACADE_ONLY = {"epsilon", "delta", "rng", "accountant"}  # the release's arguments (release_response's, one layer down)
_ESTIMATOR_ONLY = {"sampled_n", "sensitivity", "gamma_sensitivity", "accounting"}
_RENAMED = {"n_components": "k", "n_clusters": "k", "batch_size": "sampling_rate"}  # scikit-learn's names (docs)


@pytest.mark.parametrize("name", ["PCA", "LinearRegression", "LogisticRegression", "SVM", "KMeans", "DPSGDClassifier"])
def test_facade_and_estimator_name_every_shared_hyper_parameter_alike_with_the_same_default(name):
    """Apart from scikit-learn's own names (listed in docs/sklearn.md), both layers use one name and one default."""
    import inspect

    from diffpriv_py import estimators

    facade = dict(inspect.signature(getattr(dps, name).__init__).parameters)
    estimator = dict(inspect.signature(getattr(estimators, name).__init__).parameters)
    for layer in (facade, estimator):
        layer.pop("self")
    shared = set(facade) - _FACADE_ONLY
    assert {_RENAMED.get(p, p) for p in shared} == set(estimator) - _ESTIMATOR_ONLY
    for p in shared - set(_RENAMED):
        assert facade[p].default == estimator[p].default, p


def test_with_public_classes_a_label_outside_them_contributes_nothing_and_never_fails_after_the_charge():
    """classes= makes the label set public: a label outside it (even a continuous one) is a private fact, so it
    neither fails the fit (after the charge, which would reveal it) nor is refused before it for free: the record
    contributes nothing and the model has the declared classes."""
    X = np.random.default_rng(3).normal(size=(40, 2))
    y = np.r_[np.zeros(39), 0.5]
    acc = dp.Accountant(budget=dp.Eps(10.0))
    clf = dps.LogisticRegression(epsilon=1.0, data_norm=3.0, classes=[0, 1], rng=0, accountant=acc).fit(X, y)
    assert len(acc.ledger) == 1 and clf.classes_.tolist() == [0, 1] and clf.coef_.shape == (1, 2)
    assert clf.assumptions_ == ()


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: dps.LogisticRegression(epsilon=1.0, data_norm=3.0, rng=0, **kw),
        lambda **kw: dps.SVM(epsilon=1.0, data_norm=3.0, rng=0, **kw),
        lambda **kw: dps.DPSGDClassifier((), epsilon=1.0, delta=1e-5, epochs=1, rng=0, **kw),
    ],
    ids=["LogisticRegression", "SVM", "DPSGDClassifier"],
)
def test_a_classifier_facade_without_classes_is_refused_before_the_charge_and_observed_is_recorded(make):
    """fit without classes= charges nothing and says how to pass them; classes="observed" records the assumption."""
    X = np.random.default_rng(4).normal(size=(60, 2))
    y = np.arange(60) % 3
    acc = dp.Accountant(budget=dp.Del(10.0, 1e-3))
    with pytest.raises(ValueError, match=r"classes=\[\.\.\.\] with every possible label.*classes='observed'"):
        make(accountant=acc).fit(X, y)
    assert len(acc.ledger) == 0
    clf = make(classes="observed", accountant=acc).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2] and len(acc.ledger) == 1
    assert len(clf.assumptions_) == 1 and "classes='observed'" in clf.assumptions_[0]


def test_pca_model_matches_scikit_learns_at_a_huge_epsilon_with_its_n_minus_1_divisor():
    """diffprivlib's test_inf_epsilon: on centred data, score and get_covariance equal scikit-learn's as ε grows.

    The released variances use scikit-learn's n − 1 divisor (n is public: a rescaling is post-processing); with the
    n divisor the score differed by about d/2·ln(n/(n − 1)) ≈ 0.04 at n = 250, d = 21. The precision matches to
    ~10⁻⁷ of its largest entry (the fixed-point grid's floor, amplified by 1/σ⁴), not to numpy's default atol.
    """
    from sklearn.decomposition import PCA as SkPCA

    rng = np.random.RandomState(0)
    X = rng.randn(250, 21)
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=1).max()
    for k in (1, 4, 9):
        ours = dps.PCA(k, epsilon=1e12, data_norm=1.0, rng=k).fit(X)
        theirs = SkPCA(k, svd_solver="full").fit(X)
        assert ours.score(X) == pytest.approx(theirs.score(X), abs=1e-7)
        np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_, rtol=1e-7)
        assert np.allclose(ours.get_covariance(), theirs.get_covariance())
        precision = theirs.get_precision()
        np.testing.assert_allclose(ours.get_precision(), precision, atol=1e-6 * np.abs(precision).max())
        assert np.allclose(np.abs((ours.components_ / theirs.components_).sum(axis=1)), 21)  # as diffprivlib checks


# ---- PCA: n_components as a variance share or "mle", chosen from the release -------------------------------------


def _centred_rows(n=1000, d=5, seed=0):
    X = np.random.RandomState(seed).randn(n, d) * np.linspace(2.0, 0.5, d)
    X -= X.mean(axis=0)
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("n_components", ["mle", 0.5, 0.8, 0.95])
def test_pca_variance_share_and_mle_choose_scikit_learns_k_at_a_large_epsilon(n_components):
    """diffprivlib's test_float_components / test_mle_components: fit works and, as ε grows, k is scikit-learn's."""
    from sklearn.decomposition import PCA as SkPCA

    X = _centred_rows()
    ours = dps.PCA(n_components, epsilon=1e9, data_norm=1.0, rng=0).fit(X)
    k = SkPCA(n_components, svd_solver="full").fit(X).n_components_
    assert ours.n_components_ == k and ours.components_.shape == (k, 5) and ours.transform(X).shape == (1000, k)
    assert ours.explained_variance_.shape == (k,) and ours.get_feature_names_out().shape == (k,)
    assert dps.PCA(n_components, epsilon=5.0, data_norm=1.0, rng=0).fit(X).n_components_ >= 1


@pytest.mark.parametrize("n_components", ["mle", 0.7])
def test_pca_chosen_k_is_post_processing_of_the_full_release(n_components):
    """The release is the k = d one (same seed, same charge); k and the kept components are read off it alone.

    Two datasets whose full releases coincide (the same seed and data) give the same k; the kept components are the
    first k of the full release, and the accountant is charged exactly what an integer n_components is charged.
    """
    X = _centred_rows(seed=3)
    acc = dp.Accountant(budget=dp.Eps(10.0))
    chosen = dps.PCA(n_components, epsilon=1.0, data_norm=1.0, rng=7, accountant=acc).fit(X)
    full = dps.PCA(None, epsilon=1.0, data_norm=1.0, rng=7).fit(X)
    k = chosen.n_components_
    np.testing.assert_array_equal(chosen.components_, full.components_[:k])
    np.testing.assert_array_equal(chosen.explained_variance_, full.explained_variance_[:k])
    assert chosen.model_.total_variance == full.model_.total_variance
    assert acc.spent.epsilon == pytest.approx(1.0) and chosen.privacy_params_ == full.privacy_params_
    if n_components == 0.7:  # recomputed from the released ratios only
        shares = np.cumsum(full.explained_variance_ratio_)
        assert k == int(np.searchsorted(shares, 0.7, side="right")) + 1


@pytest.mark.parametrize(
    "kwargs, n_rows, match",
    [
        ({"n_components": 0.5, "method": "ppca"}, 100, "no eigenvalues"),
        ({"n_components": "mle", "method": "ppca"}, 100, "no eigenvalues"),
        ({"n_components": 1.5}, 100, r"\(0, 1\)"),
        ({"n_components": 0.0}, 100, r"\(0, 1\)"),
        ({"n_components": "mle"}, 3, "at least as many rows"),
    ],
)
def test_pca_data_dependent_k_refusals_come_before_the_charge(kwargs, n_rows, match):
    """PPCA (no eigenvalues), a share outside (0, 1) and "mle" with n < d are refused by name, nothing charged."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    X = _centred_rows(n=n_rows)
    with pytest.raises(ValueError, match=match):
        dps.PCA(epsilon=1.0, data_norm=1.0, rng=0, accountant=acc, **kwargs).fit(X)
    assert acc.spent.epsilon == 0
