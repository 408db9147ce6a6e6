"""The utility-vs-ε engine behind ``diffpriv-py evaluate`` (PyPryvacy-style input perturbation with repeats)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diffpriv_py import datasets, evaluation

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def iris() -> datasets.Dataset:
    """Fisher's iris from scikit-learn (bundled, offline)."""
    return datasets.load_dataset("iris")


def test_the_pypryvacy_grid_is_kept_and_the_default_grid_ends_in_the_non_private_line():
    """PYPRYVACY_EPSILONS is the study's grid; the default grid spans 0.01 to 5 and ends with ∞ (no privacy)."""
    assert evaluation.PYPRYVACY_EPSILONS == (0.01, 0.5, 0.75, 1, 2, 3, 4, 6, 9, 14, 19, math.inf)
    assert evaluation.DEFAULT_EPSILONS == (0.01, 0.1, 0.5, 1, 2, 5, math.inf)


# ---- the default study: DP estimators on Adult ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult() -> datasets.Dataset:
    """UCI Adult in its public-bounds form (bundled with the package)."""
    return datasets.load_dataset("adult")


def test_adults_public_norm_bound_comes_from_the_schema_and_holds(adult):
    """13 columns each add at most 1 to the squared norm: √13 (not √104), and no record exceeds it."""
    assert adult.norm == pytest.approx(math.sqrt(13))
    assert np.linalg.norm(adult.data, axis=1).max() <= adult.norm


@pytest.mark.slow
def test_the_default_study_beats_the_majority_class_at_epsilon_one(adult):
    """The default study (DP estimators, public norm √13, public Λ rule) is well above "predict the majority".

    Under the old defaults (per-record input perturbation, or the estimators at data_norm=√d with a fixed Λ) every
    model at every finite ε scored the majority class (0.76) on Adult; 10,000 records and one split keep this fast.
    """
    result = evaluation.evaluate(adult, epsilons=[1.0], repeats=1, max_records=10_000, rng=0)
    assert result.privatisation == "estimators" and result.utility_note == ""
    acc = {r["model"]: r["mean"] for r in result.summary() if r["metric"] == "accuracy"}
    majority = acc.pop("majority")
    assert 0.74 < majority < 0.78
    private = [model for model in acc if result.model_private[model]]
    assert set(private) >= {"dp-logreg", "dp-svm", "dp-sgd"}
    for model in private:
        assert acc[model] > majority + 0.03, (model, acc[model], majority)


def test_input_perturbation_says_why_it_falls_to_the_majority_class(iris):
    """Per-record input perturbation is kept as an option, and its result explains its collapse."""
    result = evaluation.evaluate(iris, privatisation="laplace", epsilons=[1.0], repeats=1, models=["knn"], rng=0)
    assert "majority class" in result.utility_note and "privatisation='estimators'" in result.utility_note


def test_progress_goes_to_stderr_when_it_is_not_a_terminal(iris, capsys):
    """progress=True draws the tqdm bar on stderr even though capsys's stderr is no terminal; stdout stays clean."""
    evaluation.evaluate(
        iris, privatisation="laplace", epsilons=[math.inf], repeats=1, models=["knn"], rng=0, progress=True
    )
    out, err = capsys.readouterr()
    assert "evaluate iris" in err and "1/1" in err
    assert out == ""


def test_a_non_private_model_marks_only_its_own_row():
    """dp-pca-svm reads the clean data: its row is not private, dp-logreg's still is, and ε keeps its name."""
    digits = datasets.load_dataset("digits")
    result = evaluation.evaluate(
        digits,
        privatisation="estimators",
        models=["dp-logreg", "dp-pca-svm"],
        epsilons=[5.0],
        repeats=1,
        max_records=300,
        rng=0,
    )
    assert result.model_private == {"dp-logreg": True, "dp-pca-svm": False}
    assert not result.private and result.epsilon_label == "epsilon"
    flags = {(r["model"], r["private"]) for r in result.records}
    assert flags == {("dp-logreg", True), ("dp-pca-svm", False), ("majority", False)}


def test_a_study_wide_reason_marks_every_row():
    """Scaling read from the data is not a property of one model: every row is marked."""
    digits = datasets.load_dataset("digits")
    result = evaluation.evaluate(
        digits,
        privatisation="estimators",
        models=["dp-logreg"],
        epsilons=[5.0],
        repeats=1,
        max_records=300,
        scale="minmax",
        rng=0,
    )
    assert result.model_private == {"dp-logreg": False} and result.epsilon_label == "noise_epsilon"


@pytest.mark.slow
def test_a_seed_reproduces_the_whole_study(iris):
    """Same seed, same splits, noise and forests: identical records."""
    kwargs = {"privatisation": "laplace", "epsilons": [1.0, math.inf], "repeats": 2, "models": ["knn", "svm"], "rng": 5}
    first = evaluation.evaluate(iris, **kwargs).records
    assert first == evaluation.evaluate(iris, **kwargs).records
    assert first != evaluation.evaluate(iris, **{**kwargs, "rng": 6}).records


@pytest.mark.slow
def test_parallel_workers_give_the_same_records(iris):
    """n_jobs=2 runs the cells in two processes and returns exactly the records of the in-process run."""
    kwargs = {
        "privatisation": "laplace",
        "epsilons": [0.5, math.inf],
        "repeats": 2,
        "models": ["knn", "linear"],
        "rng": 9,
    }
    assert evaluation.evaluate(iris, n_jobs=2, **kwargs).records == evaluation.evaluate(iris, **kwargs).records


def test_summary_gives_mean_and_sd_over_repeats(iris):
    """Each (model, ε, metric) is summarised over all runs with the sample standard deviation."""
    result = evaluation.evaluate(iris, privatisation="laplace", epsilons=[0.5], repeats=3, models=["linear"], rng=1)
    values = [r["value"] for r in result.records if r["metric"] == "accuracy"]
    (row,) = [r for r in result.summary() if r["metric"] == "accuracy" and r["model"] == "linear"]
    assert row["n"] == 3
    assert row["mean"] == pytest.approx(np.mean(values))
    assert row["sd"] == pytest.approx(np.std(values, ddof=1))


def test_cross_validation_runs_every_fold_of_every_repeat(iris):
    """cv=K with R repeats gives R·K runs per point."""
    result = evaluation.evaluate(
        iris, privatisation="laplace", epsilons=[math.inf], repeats=2, cv=3, models=["knn"], rng=0
    )
    assert {r["split"] for r in result.records} == set(range(6))


@pytest.mark.slow
def test_tiny_epsilon_destroys_utility_and_infinity_keeps_it(iris):
    """At ε = 0.01 (noise scale 100 on features of size ~5) accuracy is near chance; with no noise it is high."""
    result = evaluation.evaluate(
        iris, privatisation="laplace", epsilons=[0.01, math.inf], repeats=3, models=["linear"], rng=2
    )
    acc = {r["epsilon"]: r["mean"] for r in result.summary() if r["metric"] == "accuracy" and r["model"] != "majority"}
    assert acc[math.inf] > 0.85
    assert acc[0.01] < 0.6


def test_input_perturbation_uses_the_calibrated_laplace_scale():
    """The training matrix gets i.i.d. Laplace noise of scale sensitivity/ε (and none at ε = ∞)."""
    X = np.zeros((400, 50))
    noisy = evaluation.privatisation._perturb(X, "laplace", 2.0, 1e-5, 1.0, np.random.default_rng(0))
    # The mean absolute value of Lap(b) is b = 0.5; 20,000 draws put the estimate within ±0.02 (>5 sd).
    assert np.mean(np.abs(noisy)) == pytest.approx(0.5, abs=0.02)
    half = evaluation.privatisation._perturb(X, "laplace", 4.0, 1e-5, 1.0, np.random.default_rng(0))
    assert np.mean(np.abs(half)) == pytest.approx(0.25, abs=0.01)  # a halved scale would be caught above
    assert evaluation.privatisation._perturb(X, "laplace", math.inf, 1e-5, 1.0, np.random.default_rng(0)) is X


def test_regression_datasets_report_rmse_and_r2():
    """A regression target gives RMSE and R² instead of accuracy and F1."""
    result = evaluation.evaluate(
        datasets.load_dataset("diabetes"),
        privatisation="laplace",
        epsilons=[math.inf],
        repeats=1,
        models=["linear"],
        rng=0,
    )
    assert result.metrics == ("rmse", "r2")
    assert {r["metric"] for r in result.records} == {"rmse", "r2"}


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"epsilons": [0.0]}, ValueError),
        ({"epsilons": [float("nan")]}, ValueError),
        ({"epsilons": [True]}, TypeError),
        ({"epsilons": []}, ValueError),
        ({"privatisation": "noise"}, ValueError),
        ({"repeats": 0}, ValueError),
        ({"models": ["xgboost"]}, ValueError),
        ({"models": ["knn"]}, ValueError),  # an input-perturbation model, but the default study is the estimators
        ({"delta": 0.0, "privatisation": "gaussian"}, ValueError),
        ({"n_jobs": 0}, ValueError),
    ],
)
def test_bad_settings_raise_clear_errors(iris, kwargs, error):
    """Invalid ε, privatisation, repeats, model or δ are refused before any work."""
    with pytest.raises(error):
        evaluation.evaluate(iris, **kwargs)


@pytest.mark.slow
def test_plot_draws_one_line_per_model(iris, tmp_path):
    """The plot has one line per model, ε on a categorical axis ending in ∞, and is saved as PNG."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    result = evaluation.evaluate(
        iris, privatisation="laplace", epsilons=[1.0, math.inf], repeats=2, models=["knn", "linear"], rng=0
    )
    fig = result.plot("f1")
    ax = fig.axes[0]
    # Two models, then the majority class and the best non-private model as horizontal lines.
    assert len(ax.get_legend().get_texts()) == 4
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "∞"]
    result.plot("accuracy", tmp_path / "acc.png")
    assert (tmp_path / "acc.png").stat().st_size > 1000


def test_estimators_mode_trains_the_dp_classifiers_and_their_baselines(iris):
    """privatisation="estimators" trains the DP facades at finite ε and a non-private model at ε = ∞."""
    if not evaluation.ESTIMATOR_MODELS["dp-logreg"].available():
        pytest.skip("the DP logistic regression facade is not available")
    result = evaluation.evaluate(
        datasets.load_dataset("breast_cancer"),
        privatisation="estimators",
        models=["dp-logreg"],
        epsilons=[0.01, math.inf],
        repeats=2,
        rng=0,
    )
    acc = {r["epsilon"]: r["mean"] for r in result.summary() if r["metric"] == "accuracy" and r["model"] != "majority"}
    assert result.settings["scale"] == "minmax"
    assert acc[math.inf] > 0.9  # the non-private baseline on min-max scaled features
    assert acc[0.01] < acc[math.inf]


def test_estimator_names_are_refused_for_input_perturbation(iris):
    """DP estimator names only exist with privatisation="estimators"."""
    with pytest.raises(ValueError, match="Unknown model 'dp-logreg'"):
        evaluation.evaluate(iris, privatisation="laplace", models=["dp-logreg"])


# ---- honesty: ε only where it is a guarantee ----------------------------------------------------------------------


def test_a_study_with_public_bounds_is_private_per_record():
    """digits' public pixel bounds: scale='public' by default, sensitivity d per record, and the result is private."""
    digits = datasets.load_dataset("digits")
    result = evaluation.evaluate(
        digits, privatisation="laplace", epsilons=[10.0], repeats=1, models=["knn"], max_records=200, rng=0
    )
    assert result.private and result.epsilon_label == "epsilon"
    assert result.settings["scale"] == "public" and result.settings["sensitivity"] == 64.0


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"scale": "minmax"}, "read from the data"),
        ({"scale": "none"}, "not into public bounds"),
        ({"sensitivity": 1.0}, "not a whole record"),
    ],
)
def test_a_study_that_is_not_private_says_why_and_never_labels_epsilon(tmp_path, kwargs, reason):
    """Data-derived scaling, no scaling, or a per-value sensitivity: not private, and the CSV says noise_epsilon."""
    digits = datasets.load_dataset("digits")
    result = evaluation.evaluate(
        digits, privatisation="laplace", epsilons=[10.0], repeats=1, models=["knn"], max_records=200, rng=0, **kwargs
    )
    assert not result.private and reason in result.privacy_note
    header = open(result.to_csv(tmp_path / "s.csv", summary=True), encoding="utf-8").readline()
    assert "noise_epsilon" in header and ",epsilon," not in header


def test_dp_pca_then_a_non_private_svm_is_not_called_private():
    """The poster's pipeline trains its SVM on the clean data, so the study is not private."""
    digits = datasets.load_dataset("digits")
    result = evaluation.evaluate(
        digits, privatisation="estimators", epsilons=[5.0], repeats=1, models=["dp-pca-svm"], max_records=300, rng=0
    )
    assert not result.private and "dp-pca-svm" in result.privacy_note
