"""Releases are bit-identical for a seed across refactors: a few releases per path, pinned by digest.

The digests in ``tests/data/release_pins.json`` were recorded on the library's primary environment. Float results of
the estimators go through BLAS/LAPACK and numpy's own kernels, so the pins are checked exactly where the numpy
version matches the recording and skipped (with the reason) elsewhere, such as the dependency-floor run.

To re-record after a deliberate change of a release (never to make a refactor pass): run this file with
``DIFFPRIV_RECORD_PINS=1`` and say in the commit message which path changed and why.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import diffpriv_py as dp

PINS = Path(__file__).parent / "data" / "release_pins.json"
SEED = 20261128


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (400, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    t = X @ np.array([0.5, -0.25, 0.1, 0.0]) * 0.9
    return X, y, t


def _kde(X: np.ndarray) -> Callable[[Any], np.ndarray]:
    return lambda u: np.exp(-0.5 * ((np.asarray(u)[..., None] - X) / 0.2) ** 2).mean(-1)


def _digest(value: Any) -> str:
    """A digest of everything a release shows: values, dtype, shape, and for frames the index and columns."""
    h = hashlib.sha256()

    def feed(v: Any) -> None:
        if hasattr(v, "to_numpy") and hasattr(v, "index"):  # pandas Series / DataFrame
            h.update(repr(list(v.index)).encode())
            if hasattr(v, "columns"):
                h.update(repr(list(v.columns)).encode())
            feed(v.to_numpy())
        elif isinstance(v, (tuple, list)):
            h.update(f"seq{len(v)}".encode())
            for item in v:
                feed(item)
        elif isinstance(v, dict):
            for k in sorted(v, key=str):
                h.update(str(k).encode())
                feed(v[k])
        else:
            a = np.asarray(v)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())

    feed(value)
    return h.hexdigest()


def _cases() -> dict[str, Callable[[], Any]]:
    X, y, t = _data()
    x = X[:, 0]
    e1, d1 = dp.Eps(1.0), dp.Del(1.0, 1e-6)
    est = dp.estimators

    def release(mech: Any, params: Any, data: Any) -> Any:
        return mech.release_response(params, data, rng=SEED).response

    def model(mech: Any, params: Any, data: Any, *attrs: str) -> Any:
        r = release(mech, params, data)
        return [getattr(r, a) for a in attrs]

    def sampled() -> Any:
        mech = dp.Laplace(target=lambda d: float(np.mean(d)))
        mech = mech.sensitivity_sampler(lambda n, rng: rng.uniform(0, 1, n), n=100, gamma=0.1, rng=3)
        return mech.release_response(dp.Eps(1.0), x[:100] / 2 + 0.5, rng=SEED).response

    import pandas as pd

    import diffpriv_py.pandas  # noqa: F401 - registers the accessor

    frame = pd.DataFrame({"g": np.where(x > 0, "a", "b"), "v": X[:, 1], "person": np.arange(400) // 2})
    return {
        "laplace_scalar": lambda: release(dp.Laplace(target=np.mean, sensitivity=0.01), e1, x),
        "laplace_vector": lambda: release(dp.Laplace(target=lambda d: d.mean(0), sensitivity=0.01, dims=4), e1, X),
        "laplace_exact": lambda: release(dp.Laplace(target=np.mean, sensitivity=0.01, noise="exact"), e1, x),
        "gaussian_vector": lambda: release(dp.Gaussian(target=lambda d: d.mean(0), sensitivity=0.01, dims=4), d1, X),
        "discrete_laplace": lambda: release(
            dp.DiscreteLaplace(target=lambda d: int((d > 0).sum()), sensitivity=1), e1, x
        ),
        "exponential": lambda: release(
            dp.Exponential(
                target=lambda d: lambda r: float((d > r).sum()), sensitivity=1, response_set=[-0.5, 0.0, 0.5]
            ),
            e1,
            x,
        ),
        "bernstein": lambda: (
            dp.Bernstein(target=_kde, lattice_k=6, dims=1, sensitivity=0.01, vectorized=True)
            .release_response(e1, x / 2 + 0.5, rng=SEED)
            .response(np.linspace(0, 1, 5))
        ),
        "sampler": sampled,
        "stats_mean": lambda: dp.stats.mean(x, e1, bounds=(-1, 1), rng=SEED),
        "stats_mean_axis0_gauss": lambda: dp.stats.mean(X, d1, bounds=(-1, 1), axis=0, mechanism="gaussian", rng=SEED),
        "stats_sum": lambda: dp.stats.sum(x, e1, bounds=(-1, 1), rng=SEED),
        "stats_var": lambda: dp.stats.var(x, e1, bounds=(-1, 1), rng=SEED),
        "stats_std_axis0": lambda: dp.stats.std(X, e1, bounds=(-1, 1), axis=0, rng=SEED),
        "stats_count": lambda: dp.stats.count(x, e1, rng=SEED),
        "stats_median": lambda: dp.stats.median(x, e1, bounds=(-1, 1), rng=SEED),
        "stats_quantiles": lambda: dp.stats.quantile(X, [0.1, 0.9], e1, bounds=(-1, 1), axis=0, rng=SEED),
        "stats_histogram": lambda: dp.stats.histogram(x, e1, bins=5, range=(-1, 1), rng=SEED),
        "groupby_keys": lambda: dp.stats.groupby(
            frame["g"], e1, values=frame["v"], statistics=("count", "mean"), bounds=(-1, 1), keys=["a", "b"], rng=SEED
        ),
        "groupby_unit": lambda: dp.stats.groupby(
            frame["g"],
            d1,
            values=frame["v"],
            statistics=("count", "sum"),
            bounds=(-1, 1),
            privacy_unit=frame["person"],
            max_groups=1,
            max_rows=2,
            rng=SEED,
        ),
        "pandas_accessor": lambda: frame["v"].private.mean(e1, bounds=(-1, 1), rng=SEED),
        "kmeans": lambda: model(est.KMeans(2, bounds=(-1, 1)), e1, X, "centroids"),
        "kmeans_lloyd": lambda: model(est.KMeans(2, bounds=(-1, 1), method="dplloyd"), e1, X, "centroids"),
        "pca": lambda: model(est.PCA(2, data_norm=2.0), e1, X, "components"),
        "linear_regression": lambda: model(est.LinearRegression(data_norm=2.0, label_bound=1.0), d1, (X, t), "coef"),
        "logistic": lambda: model(est.LogisticRegression(0.01, data_norm=2.0, classes=[0, 1]), e1, (X, y), "coef"),
        "svm": lambda: model(est.SVM(0.01, data_norm=2.0, classes=[0, 1]), e1, (X, y), "coef"),
        "dpsgd": lambda: model(
            est.DPSGDClassifier(hidden_layer_sizes=(4,), sampling_rate=0.1, epochs=2, classes=[0, 1]),
            d1,
            (X, y),
            "weights",
            "biases",
        ),
    }


def _recorded() -> dict[str, Any]:
    return json.loads(PINS.read_text()) if PINS.exists() else {"numpy": None, "pins": {}}


# The names alone (building the cases needs pandas, an extra); recording builds them to name new cases.
CASES = sorted(_cases() if os.environ.get("DIFFPRIV_RECORD_PINS") else _recorded()["pins"])


def test_every_case_is_pinned() -> None:
    """The recorded pins name exactly the cases (a new case must be recorded, a removed one dropped)."""
    pytest.importorskip("pandas")
    assert sorted(_cases()) == CASES


@pytest.mark.parametrize("name", CASES)
def test_release_is_pinned(name: str) -> None:
    """The release of each path for a fixed seed has the digest recorded before the refactor."""
    pytest.importorskip("pandas")
    value = _cases()[name]()
    digest = _digest(value)
    if os.environ.get("DIFFPRIV_RECORD_PINS"):
        data = _recorded()
        data["numpy"] = np.__version__
        data["pins"][name] = digest
        PINS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        return
    data = _recorded()
    if data["numpy"] != np.__version__:
        pytest.skip(f"release pins were recorded with numpy {data['numpy']}; this is numpy {np.__version__}")
    assert data["pins"].get(name) == digest, f"the release of {name!r} changed for a fixed seed"
