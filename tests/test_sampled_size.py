"""A sampled sensitivity is bound to the n it was sampled for, for every form the data can take.

The attack: a mechanism sampled for n = 1000 released on 10 records gives a mean about 100 times less noise than its
ε needs. Every form whose size is public metadata is checked against ``sampled_n``; every form whose size would
need a pass over the private data (a generator, a dask collection of unknown length, ``Chunks`` without
``n_records``) is refused. Both before the accountant is charged.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py._blockwise import n_rows
from diffpriv_py.estimators import LinearRegression
from diffpriv_py.exceptions import SensitivityError

pd = pytest.importorskip("pandas")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

SAMPLED_N = 1000


def _mean(X):
    """A black-box target that reads every form the tests pass."""
    if isinstance(X, dp.Chunks):
        X = np.concatenate(list(X))
    elif hasattr(X, "compute"):
        X = X.compute()
    elif isinstance(X, Iterator):
        X = list(X)
    return float(np.mean(np.asarray(X, dtype=float)))


@pytest.fixture(scope="module")
def sampled():
    mech = dp.Laplace(target=_mean).sensitivity_sampler(
        lambda n, rng: rng.uniform(size=n), n=SAMPLED_N, gamma=0.3, rng=0
    )
    assert mech.sampled_n == SAMPLED_N
    return mech


def _forms(n):
    """Every data form with n records, and whether its size is public metadata."""
    values = np.random.default_rng(n).uniform(size=n)
    known_dask = da.from_array(values, chunks=max(n // 3, 1))
    unknown_dask = known_dask[known_dask >= 0]  # boolean indexing: the chunk sizes become unknown (nan)
    frame = pd.DataFrame({"x": values})
    return {
        "numpy": (values, True),
        "list": (values.tolist(), True),
        "pandas DataFrame": (frame, True),
        "pandas Series": (frame["x"], True),
        "dask array, known chunks": (known_dask, True),
        "dask array, unknown chunks": (unknown_dask, False),
        "dask DataFrame": (dd.from_pandas(frame, npartitions=2), False),
        "dask Series": (dd.from_pandas(frame, npartitions=2)["x"], False),
        "Chunks with n_records": (dp.Chunks([values[: n // 2], values[n // 2 :]], n_records=n), True),
        "Chunks without n_records": (dp.Chunks([values[: n // 2], values[n // 2 :]]), False),
        "generator": ((v for v in values), False),
    }


def _budget():
    return dp.Accountant(budget=dp.Gam(100.0, 0.5, gamma=0.5))  # accepts the sampler's random DP


@pytest.mark.parametrize("form", list(_forms(10)))
def test_a_mechanism_sampled_for_1000_records_refuses_10_records_in_every_form_before_the_charge(sampled, form):
    """The ε ≈ 100 attack: refused whatever the form, and nothing is charged."""
    X, _ = _forms(10)[form]
    acc = _budget()
    with pytest.raises(SensitivityError, match="sampled for datasets of n=1000"):
        sampled.release_response(dp.Eps(1.0), X, rng=0, accountant=acc)
    assert acc.ledger == ()


@pytest.mark.parametrize("form", list(_forms(10)))
def test_the_right_size_releases_when_it_is_public_metadata_and_is_refused_with_the_fix_when_not(sampled, form):
    """n = 1000 in a form whose size is metadata releases (a Gam); otherwise the refusal names how to declare n."""
    X, known = _forms(SAMPLED_N)[form]
    acc = _budget()
    if known:
        r = sampled.release_response(dp.Eps(1.0), X, rng=0, accountant=acc)
        assert isinstance(r.privacy_params, dp.Gam) and len(acc.ledger) == 1
        return
    with pytest.raises(SensitivityError, match=r"not known without reading the data") as info:
        sampled.release_response(dp.Eps(1.0), X, rng=0, accountant=acc)
    assert acc.ledger == ()
    fix = {
        "dask array, unknown chunks": "compute_chunk_sizes()",
        "dask DataFrame": "to_dask_array(lengths=True)",
        "dask Series": "to_dask_array(lengths=True)",
        "Chunks without n_records": "n_records=n",
        "generator": "n_records=n",
    }[form]
    assert fix in str(info.value)


def test_a_sampled_estimator_refuses_out_of_core_data_of_another_or_unknown_size_before_the_charge():
    """LinearRegression (which streams dask and Chunks) sampled for 1000 records: 10 dask records, a dask DataFrame,
    undeclared Chunks are refused before the charge; 1000 declared ones release."""

    def oracle(n, rng):
        X = rng.uniform(-1, 1, size=(n, 2)) / 2
        return X, X @ np.array([0.5, -0.5])

    mech = LinearRegression(data_norm=1.0, label_bound=1.0).sensitivity_sampler(oracle, n=SAMPLED_N, gamma=0.3, rng=0)
    small_X, small_y = oracle(10, np.random.default_rng(1))
    X, y = oracle(SAMPLED_N, np.random.default_rng(2))
    frame = pd.DataFrame({"a": small_X[:, 0], "b": small_X[:, 1]})
    refused = {
        "dask, 10 records": (da.from_array(small_X, chunks=5), da.from_array(small_y, chunks=5)),
        "dask DataFrame": (dd.from_pandas(frame, npartitions=2), dd.from_pandas(pd.Series(small_y), npartitions=2)),
        "Chunks, undeclared": dp.Chunks([(X[:500], y[:500]), (X[500:], y[500:])]),
        "Chunks, 10 declared": dp.Chunks([(small_X, small_y)], n_records=10),
    }
    for data in refused.values():
        acc = _budget()
        with pytest.raises(SensitivityError, match="sampled for datasets of n=1000"):
            mech.release_response(dp.Del(1.0, 1e-6), data, rng=0, accountant=acc)
        assert acc.ledger == ()
    for data in (
        (da.from_array(X, chunks=300), da.from_array(y, chunks=300)),
        dp.Chunks([(X[:500], y[:500]), (X[500:], y[500:])], n_records=SAMPLED_N),
    ):
        assert isinstance(mech.release_response(dp.Del(1.0, 1e-6), data, rng=0).privacy_params, dp.Gam)


def test_chunks_checks_its_declared_size_on_every_pass():
    """A declared n_records is read without a pass (n_rows) and every pass raises if the blocks contradict it."""
    blocks = [np.ones((3, 2)), np.ones((4, 2))]
    assert n_rows(dp.Chunks(blocks, n_records=7)) == 7
    assert sum(len(b) for b in dp.Chunks(blocks, n_records=7)) == 7
    for wrong in (6, 8):
        with pytest.raises(ValueError, match=f"n_records={wrong}"):
            list(dp.Chunks(blocks, n_records=wrong))
    with pytest.raises(ValueError, match="n_records"):
        dp.Chunks(blocks, n_records=0)


def test_a_mechanism_without_a_sampled_sensitivity_still_takes_every_form():
    """Only a sampled_n binds the size: an analytic mechanism releases on a generator or a dask DataFrame as before."""
    mech = dp.Laplace(target=_mean, sensitivity=1.0)
    for form in ("generator", "dask DataFrame", "Chunks without n_records"):
        X, _ = _forms(10)[form]
        assert np.isfinite(mech.release_response(dp.Eps(1.0), X, rng=0).response)
