"""The searching auditor over every built-in release path (mechanisms, every dp.stats function, group-by, each
estimator and method): none may be refuted (small data, a 2.5-second budget each, about two minutes in all, one seed
per case so the sweep also tries many seeds). A failure here is either a privacy bug in the built-in or a false alarm
of the auditor: both matter. The searched neighbours include fresh labels and values, and the audits compare the
structure of the releases (keys, layout, failures after the charge) as well as their values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py import estimators
from diffpriv_py.stats._groupby import GroupBy
from diffpriv_py.testing import search_audit

EPS = dp.Eps(1.0)
DEL = dp.Del(1.0, 1e-5)
DEL_SELECT = dp.Del(1.0, 1e-3)
N = 40
BUDGET = 2.5


def _unit(n: int = N, d: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.random(n) if d is None else rng.random((n, d))


def _clipped_mean(X: np.ndarray) -> float:
    return float(np.clip(X, 0.0, 1.0).mean())


def _clipped_count(X: np.ndarray) -> int:
    return int(np.count_nonzero(np.clip(X, 0.0, 1.0) > 0.5))


def _letter_scores(X: list[str]) -> Any:
    return lambda r: float(X.count(r))


def _density(X: np.ndarray) -> Any:
    x = np.clip(X, 0.0, 1.0)
    return lambda y: np.exp(-((np.asarray(y)[:, None] - x[None, :]) ** 2) / 0.02).mean(axis=1)


def _stat(function: Any, *args: Any, data: np.ndarray, **kwargs: Any) -> Any:
    """The mechanism a dp.stats function builds (read off its full response)."""
    out = function(data, *args, full_response=True, rng=0, **kwargs)
    response = out[0] if isinstance(out, tuple) else out
    return response.mechanism


def _blobs(n: int = N, d: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    y = np.arange(n) % 2
    X = rng.normal(0.0, 0.3, (n, d)) + np.where(y[:, None] == 1, 0.5, -0.5)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, y


def _cases() -> list[Any]:
    x, X2 = _unit(), _unit(d=2)
    letters = ["a"] * 6 + ["b"] * 5 + ["c"] * 3 + ["d"]
    centred = x - 0.5  # the quantile's float leak lives where an interval between data points straddles 0
    # At 2⁴³ the float mean's rounding (ulp 2⁻⁹) exceeds the sensitivity 1/n once n > 512.
    offset = 2.0**43 + _unit(2048)
    supervised = _blobs()
    linear = (supervised[0], np.clip(supervised[0] @ np.array([0.5, -0.3]), -1, 1))
    cases = [
        ("Laplace", dp.Laplace(target=_clipped_mean, sensitivity=1 / N), x, EPS),
        ("Gaussian", dp.Gaussian(target=_clipped_mean, sensitivity=1 / N), x, DEL),
        ("DiscreteLaplace", dp.DiscreteLaplace(target=_clipped_count, sensitivity=1), x, EPS),
        ("Bernstein", dp.Bernstein(target=_density, lattice_k=4, dims=1, sensitivity=1 / N, vectorized=True), x, EPS),
    ]
    for method in ("exponential", "permute_and_flip"):
        mech = dp.Exponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1, method=method)
        cases.append((f"Exponential[{method}]", mech, letters, EPS))
    for name in ("mean", "sum", "var", "std"):
        function = getattr(dp.stats, name)
        cases.append((f"stats.{name}", _stat(function, EPS, data=x, bounds=(0, 1)), x, EPS))
    for name in ("mean", "sum"):
        mech = _stat(getattr(dp.stats, name), EPS, data=offset, bounds=(2.0**43, 2.0**43 + 1))
        cases.append(pytest.param(f"stats.{name}[offset bounds]", mech, offset, EPS, id=f"stats.{name}[offset]"))
    cases += [
        ("stats.count", _stat(dp.stats.count, EPS, data=x), x, EPS),
        ("stats.histogram", _stat(dp.stats.histogram, EPS, data=x, bins=5, range=(0, 1)), x, EPS),
        ("stats.covariance", _stat(dp.stats.covariance, EPS, data=X2, bounds=(0, 1)), X2, EPS),
    ]
    for name in ("quantile", "median"):
        args = (0.5, EPS) if name == "quantile" else (EPS,)
        mech = _stat(getattr(dp.stats, name), *args, data=centred, bounds=(-0.5, 0.5))
        cases.append(pytest.param(f"stats.{name}", mech, centred, EPS, id=f"stats.{name}"))
    X3 = _unit(12, 3) - 0.5
    for method in ("wishart", "ppca", "analyze_gauss", "mod_sulq"):
        params = EPS if method in ("wishart", "ppca") else DEL
        cases.append((f"PCA[{method}]", estimators.PCA(1, method=method, data_norm=1.0), X2, params))
        cases.append((f"PCA[{method},k=2]", estimators.PCA(2, method=method, data_norm=1.0), X3, params))
    for perturbation in ("objective", "output"):
        lr = estimators.LogisticRegression(0.1, perturbation=perturbation, data_norm=1.0, classes=[0, 1])
        cases.append((f"LogisticRegression[{perturbation}]", lr, supervised, EPS))
        svm = estimators.SVM(0.1, perturbation=perturbation, data_norm=1.0, classes=[0, 1])
        cases.append((f"SVM[{perturbation}]", svm, supervised, EPS))
    three = (supervised[0], np.arange(N) % 3)
    lr3 = estimators.LogisticRegression(0.1, data_norm=1.0, classes=[0, 1, 2])
    cases.append(("LogisticRegression[3 classes]", lr3, three, EPS))
    labels = np.random.default_rng(7).choice(list("abcd"), N)
    values = _unit()
    cases += [
        ("groupby[count, public keys]", GroupBy(keys=tuple("abcd")), labels, EPS),
        ("groupby[count, private keys]", GroupBy(), labels, DEL_SELECT),
        (
            "groupby[mean, var, public keys]",
            GroupBy(statistics=("mean", "var"), bounds=(0, 1), keys=tuple("abcd")),
            (labels, values, None),
            EPS,
        ),
        ("groupby[sum, private keys]", GroupBy(statistics=("sum",), bounds=(0, 1)), (labels, values, None), DEL_SELECT),
    ]
    for method in ("dplloyd", "input_perturbation"):
        cases.append((f"KMeans[{method}]", estimators.KMeans(2, method=method, bounds=(-1, 1), n_iter=2), X2, EPS))
    cases.append(("LinearRegression", estimators.LinearRegression(data_norm=1.0, label_bound=(-1, 1)), linear, DEL))
    sgd = estimators.DPSGDClassifier(hidden_layer_sizes=(), sampling_rate=0.2, epochs=1, classes=[0, 1])
    cases.append(("DPSGDClassifier", sgd, supervised, DEL))
    return [pytest.param(*c, id=c[0]) if type(c) is tuple else c for c in cases]


CASES = _cases()


@pytest.mark.slow
@pytest.mark.parametrize(("name", "mechanism", "data", "params"), CASES)
def test_search_does_not_refute_built_in(name, mechanism, data, params):
    """The searching auditor, at a small time budget, does not refute a built-in mechanism's claim (a seed per case)."""
    seed = 11 + [c.values[0] for c in CASES].index(name)
    report = search_audit(mechanism, data, params, rng=seed, time_budget=BUDGET)
    assert report.passed, f"{name}: {report}"


@pytest.mark.slow
def test_search_does_not_refute_group_by_for_a_person_with_many_labels():
    """A person who owns 2000 rows, each moved to a fresh group of their own (max_groups=1): after bounding at most
    one of those groups holds anyone, so the others must never be released beyond the claimed δ."""
    m = 2000
    by = np.array(["a"] * m + list(np.random.default_rng(0).choice(list("abcd"), N)))
    unit = np.concatenate([np.zeros(m, dtype=np.int64), np.arange(1, N + 1)])
    report = search_audit(GroupBy(max_groups=1), (by, None, unit), DEL_SELECT, rng=11, time_budget=10.0)
    assert report.passed, str(report)
