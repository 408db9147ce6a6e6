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
        dps.LogisticRegression(epsilon=5.0, data_norm=10.0, rng=0),
        dps.SVM(epsilon=5.0, data_norm=10.0, rng=0),
        dps.KMeans(3, epsilon=1.0, bounds=(-10, 10), rng=0),
        dps.LinearRegression(epsilon=1.0, delta=1e-5, data_norm=10.0, label_bound=10.0, rng=0),
        dps.DPSGDClassifier((), epsilon=5.0, delta=1e-5, rng=0),
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
        dps.LogisticRegression(epsilon=1.0, data_norm=1.0, rng=0, accountant=acc).fit(X, y)
    assert acc.spent.epsilon == 0.0


def test_html_repr_comes_from_scikit_learn():
    """The notebook representation is scikit-learn's estimator diagram."""
    html = dps.KMeans(2, epsilon=1.0, bounds=(0, 1))._repr_html_()
    assert "KMeans" in html and "sk-" in html
