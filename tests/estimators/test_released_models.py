"""Released models are post-processing: they answer for rows the caller holds, and refuse rows they have no answer
for (NaN, infinite or complex) instead of silently returning a class, cluster or number."""

from __future__ import annotations

import numpy as np
import pytest

import diffpriv_py as dp


def _released_models():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 3))
    y = (X[:, 0] > 0).astype(int)
    yield (
        dp.estimators.LogisticRegression(0.01, data_norm=2.0, classes=[0, 1])
        .release_response(dp.Eps(1.0), (X, y), rng=0)
        .response.predict
    )
    yield (
        dp.estimators.LinearRegression(data_norm=2.0, label_bound=1.0)
        .release_response(dp.Del(1.0, 1e-6), (X, X[:, 0]), rng=0)
        .response.predict
    )
    yield dp.estimators.PCA(2, data_norm=2.0).release_response(dp.Eps(1.0), X, rng=0).response.transform
    yield dp.estimators.KMeans(2, bounds=(-1, 1)).release_response(dp.Eps(1.0), X, rng=0).response.predict


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1j])
def test_released_models_refuse_nan_infinite_and_complex_rows(bad):
    """predict/transform on a NaN, infinite or complex row raise a clear error instead of answering."""
    row = np.array([[0.1, 0.2, bad]])
    for answer in _released_models():
        with pytest.raises((TypeError, ValueError), match=r"NaN or infinite|real numbers"):
            answer(row)
