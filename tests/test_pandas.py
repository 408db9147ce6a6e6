"""The pandas accessor: registration on import, Series/DataFrame statistics, describe's budget, noise of a frame."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import diffpriv_py as dp

pd = pytest.importorskip("pandas")
import diffpriv_py.pandas  # noqa: E402 - registers the accessor

BIG = dp.Eps(1e7)


@pytest.fixture
def df(rng):
    """A small private table: two float columns, an integer column, a string column, a custom index."""
    n = 400
    return pd.DataFrame(
        {
            "longitude": rng.uniform(0, 10, n),
            "latitude": rng.uniform(0, 20, n),
            "age": rng.integers(18, 90, n),
            "name": ["x"] * n,
        },
        index=pd.RangeIndex(100, 100 + n, name="id"),
    )


@pytest.mark.slow
def test_accessor_is_registered_on_import_only():
    """Importing diffpriv_py alone neither imports pandas nor registers; importing diffpriv_py.pandas does."""
    code = (
        "import sys, diffpriv_py; assert 'pandas' not in sys.modules; "
        "import pandas as pd; assert not hasattr(pd.Series([1.0]), 'private'); "
        "import diffpriv_py.pandas; assert hasattr(pd.Series([1.0]), 'private'); "
        "assert hasattr(pd.DataFrame({'a': [1.0]}), 'private')"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(("name", "ddof"), [("mean", None), ("sum", None), ("var", 1), ("std", 1)])
def test_series_statistics_match_pandas_at_large_epsilon(df, name, ddof):
    """series.private.<stat> equals pandas' own statistic (ddof=1 for var/std, as pandas) at large ε."""
    s = df.longitude
    got = getattr(s.private, name)(BIG, bounds=(0, 10), rng=0)
    assert got == pytest.approx(getattr(s, name)(), rel=1e-4)


def test_repeated_calls_give_new_samples(df):
    """Without a seed every call is a fresh private sample (and spends fresh budget)."""
    a = df.longitude.private.mean(dp.Eps(1), bounds=(0, 10))
    b = df.longitude.private.mean(dp.Eps(1), bounds=(0, 10))
    assert a != b


def test_series_count_quantile_median_histogram(df):
    """count counts non-missing (or True) values; quantile/median/histogram return pandas-shaped results."""
    s = df.longitude.copy()
    s.iloc[:40] = np.nan
    assert s.private.count(BIG, rng=0) == 360
    assert (df.age > 50).private.count(BIG, rng=0) == int((df.age > 50).sum())
    med = df.longitude.private.median(dp.Eps(1e4), bounds=(0, 10), rng=0)
    assert med == pytest.approx(df.longitude.median(), abs=0.05)
    qs = df.longitude.private.quantile([0.25, 0.75], dp.Eps(1e4), bounds=(0, 10), rng=0)
    assert isinstance(qs, pd.Series) and list(qs.index) == [0.25, 0.75] and qs.name == "longitude"
    hist = df.age.private.histogram(BIG, bins=4, range=(0, 100), rng=0)
    assert isinstance(hist.index, pd.IntervalIndex) and hist.sum() == len(df)
    np.testing.assert_array_equal(hist.to_numpy(), np.histogram(df.age, bins=4, range=(0, 100))[0])


def test_series_with_missing_values_follows_the_nan_policy(df):
    """NaN raises by default (pandas would skip silently); nan_policy='omit' accounts for it."""
    s = df.longitude.copy()
    s.iloc[::5] = np.nan
    with pytest.raises(ValueError, match="nan_policy"):
        s.private.mean(dp.Eps(1), bounds=(0, 10))
    assert s.private.mean(BIG, bounds=(0, 10), nan_policy="omit", rng=0) == pytest.approx(s.mean(), abs=1e-4)


def test_nullable_integer_series_are_supported(rng):
    """pandas' nullable Int64 with pd.NA is read as float with NaN."""
    s = pd.Series([1, 2, None, 4], dtype="Int64")
    assert s.private.mean(BIG, bounds=(0, 10), nan_policy="omit", rng=0) == pytest.approx(7 / 3, abs=1e-4)


def test_non_numeric_series_are_refused(df):
    """A string or boolean Series has no private mean; the message says what to do."""
    with pytest.raises(TypeError, match="numeric"):
        df.name.private.mean(dp.Eps(1), bounds=(0, 1))
    with pytest.raises(TypeError, match="count"):
        (df.age > 3).private.mean(dp.Eps(1), bounds=(0, 1))


def test_frame_statistics_are_series_indexed_by_numeric_columns(df):
    """frame.private.mean/var/... cover the numeric columns (strings skipped) with per-column bounds."""
    bounds = {"longitude": (0, 10), "latitude": (0, 20), "age": (0, 100)}
    numeric = df[["longitude", "latitude", "age"]]
    for name in ("mean", "sum", "var", "std"):
        got = getattr(df.private, name)(dp.Eps(1e9), bounds=bounds, rng=0)
        assert list(got.index) == list(numeric.columns)
        np.testing.assert_allclose(got, getattr(numeric, name)(), rtol=1e-4)
    med = df.private.median(dp.Eps(1e5), bounds=bounds, rng=0)
    np.testing.assert_allclose(med, numeric.median(), rtol=0.02, atol=0.1)
    q = df.private.quantile([0.1, 0.9], dp.Eps(1e5), bounds=bounds, rng=0)
    assert q.shape == (2, 3) and list(q.index) == [0.1, 0.9]
    cov = df.private.cov(dp.Eps(1e9), bounds=bounds, rng=0)
    np.testing.assert_allclose(cov, numeric.cov(), rtol=1e-3, atol=1e-3)
    counts = df.private.count(BIG, rng=0)
    assert list(counts.index) == list(df.columns) and (counts == len(df)).all()


def test_frame_bounds_must_cover_exactly_the_numeric_columns(df):
    """A bounds dict with a missing or unknown column, or bad pairs, is refused naming the columns."""
    with pytest.raises(ValueError, match="missing"):
        df.private.mean(dp.Eps(1), bounds={"longitude": (0, 10)})
    with pytest.raises(ValueError, match="unknown"):
        df.private.mean(dp.Eps(1), bounds={"longitude": (0, 10), "latitude": (0, 20), "age": (0, 9), "zzz": (0, 1)})
    with pytest.raises(ValueError, match="lower < upper"):
        df.private.mean(dp.Eps(1), bounds={"longitude": (0, 10), "latitude": (0, 20), "age": (9, 0)})
    with pytest.raises(TypeError, match="bounds"):
        df.private.mean(dp.Eps(1))


def test_describe_states_a_budget_split_that_adds_up_to_the_total(df):
    """describe: pandas-like rows plus the ε each column received; the per-cell budget sums to the total ε."""
    bounds = {"longitude": (0, 10), "latitude": (0, 20), "age": (0, 100)}
    out = df.private.describe(dp.Eps(1.5), bounds=bounds, rng=0)
    assert list(out.index) == ["count", "mean", "std", "min", "25%", "50%", "75%", "max", "epsilon"]
    assert list(out.columns) == ["longitude", "latitude", "age"]
    budget = out.attrs["privacy_budget"]
    assert budget.to_numpy().sum() == pytest.approx(1.5)
    np.testing.assert_allclose(out.loc["epsilon"], budget.sum(axis=0))
    assert (out.loc["count"] == len(df)).all() and budget.loc["count"].sum() == 0  # n is public
    assert "split equally" in out.attrs["privacy_note"]
    big = df.private.describe(dp.Eps(1e6), bounds=bounds, rng=0)
    np.testing.assert_allclose(big.loc["mean"], df[list(bounds)].mean(), rtol=1e-3)
    np.testing.assert_allclose(big.loc["50%"], df[list(bounds)].median(), rtol=0.05, atol=0.5)


def test_describe_with_missing_values_and_gaussian_noise_spends_delta_too(df):
    """Under 'omit' the count is private and budgeted; Gaussian noise adds a delta row."""
    frame = df.drop(columns="name")
    frame.iloc[::7, 0] = np.nan
    bounds = {"longitude": (0, 10), "latitude": (0, 20), "age": (0, 100)}
    out = frame.private.describe(dp.Del(1.0, 1e-6), bounds=bounds, nan_policy="omit", mechanism="gaussian", rng=0)
    assert out.attrs["privacy_budget"].loc["count"].sum() > 0
    assert out.attrs["privacy_budget"].to_numpy().sum() == pytest.approx(1.0)
    assert out.loc["delta"].sum() == pytest.approx(1e-6)


def test_describe_charges_the_accountant_per_statistic(df):
    """The accountant sees one charge per statistic, adding up to the total."""

    class Recorder:
        def __init__(self):
            self.charges = []

        def spend(self, guarantee, **kwargs):
            self.charges.append(guarantee)

    acc = Recorder()
    df.private.describe(dp.Eps(0.9), bounds=(0, 100), accountant=acc, rng=0)
    assert len(acc.charges) == 3
    assert sum(c.epsilon for c in acc.charges) == pytest.approx(0.9)


def test_noise_keeps_index_columns_and_dtypes(df):
    """noise returns the same index and columns; floats stay float, integers are rounded back to integers."""
    frame = df.drop(columns="name")
    frame["small"] = frame.latitude.astype(np.float32)
    bounds = {"longitude": (0, 10), "latitude": (0, 20), "age": (0, 100), "small": (0, 20)}
    out = frame.private.noise(dp.Eps(1), bounds=bounds, rng=0)
    assert out.index.equals(frame.index) and list(out.columns) == list(frame.columns)
    assert dict(out.dtypes) == dict(frame.dtypes)
    assert not out.equals(frame)


def test_noise_scale_is_proportional_to_each_columns_range(rng):
    """Column j gets Laplace noise of scale d·(hi_j − lo_j)/ε: measured spread matches for both columns."""
    n = 20000
    frame = pd.DataFrame({"a": np.full(n, 0.5), "b": np.full(n, 50.0)})
    out = frame.private.noise(dp.Eps(2.0), bounds={"a": (0, 1), "b": (0, 100)}, rng=1)
    resid = out - frame
    expected_std = np.sqrt(2) * 2 * np.array([1.0, 100.0]) / 2.0  # Laplace std = √2·scale, scale = d·r/ε
    np.testing.assert_allclose(resid.std().to_numpy(), expected_std, rtol=0.05)


def test_noise_gaussian_and_response(df):
    """mechanism='gaussian' needs Del; full_response returns the Response whose response is the frame."""
    frame = df[["longitude", "latitude"]]
    r = frame.private.noise(dp.Del(1, 1e-6), bounds=(0, 20), mechanism="gaussian", rng=0, full_response=True)
    assert isinstance(r.mechanism, dp.Gaussian) and isinstance(r.response, pd.DataFrame)
    with pytest.raises(TypeError, match="Del"):
        frame.private.noise(dp.Eps(1), bounds=(0, 20), mechanism="gaussian")


def test_noise_refuses_non_numeric_columns_and_missing_values(df):
    """A string column would be released unprotected, so it is refused; so is NaN."""
    with pytest.raises(TypeError, match="select_dtypes"):
        df.private.noise(dp.Eps(1), bounds=(0, 100))
    frame = df[["longitude"]].copy()
    frame.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        frame.private.noise(dp.Eps(1), bounds=(0, 10))


def test_series_noise_keeps_name_and_index(df):
    """series.private.noise perturbs one column and keeps its name and index."""
    out = df.longitude.private.noise(dp.Eps(1), bounds=(0, 10), rng=0)
    assert out.name == "longitude" and out.index.equals(df.index)


def test_accessor_never_mutates_the_frame(df):
    """Every accessor method leaves the caller's frame untouched."""
    before = df.copy(deep=True)
    bounds = {"longitude": (0, 10), "latitude": (0, 20), "age": (0, 100)}
    df.private.describe(dp.Eps(1), bounds=bounds, rng=0)
    df.drop(columns="name").private.noise(dp.Eps(1), bounds=bounds, rng=0)
    df.longitude.private.median(dp.Eps(1), bounds=(0, 10), rng=0)
    pd.testing.assert_frame_equal(df, before)


def test_describe_refuses_bounds_whose_width_overflows():
    """bounds=(-1e308, 1e308) have an infinite width: refused before any charge instead of releasing std = inf."""
    df = pd.DataFrame({"a": np.linspace(0, 1, 20)})
    acc = dp.Accountant(budget=dp.Eps(5.0))
    with pytest.raises(ValueError, match="width overflows"):
        df.private.describe(dp.Eps(1.0), bounds=(-1e308, 1e308), rng=0, accountant=acc)
    assert acc.spent.epsilon == 0


def test_describe_that_does_not_fit_the_budget_charges_nothing():
    """A table over the remaining budget is refused as a whole, not after its first statistics were charged."""
    df = pd.DataFrame({"a": np.linspace(0, 1, 20)})
    acc = dp.Accountant(budget=dp.Eps(1.0))
    with pytest.raises(dp.exceptions.BudgetExceededError):
        df.private.describe(dp.Eps(2.0), bounds=(0, 1), rng=0, accountant=acc)
    assert acc.spent.epsilon == 0 and not acc.ledger


def test_duplicate_column_names_are_refused_clearly():
    """Duplicated names would make every per-column bound ambiguous (and pandas returns frames): a ValueError."""
    df = pd.DataFrame(np.ones((4, 2)), columns=["a", "a"])
    with pytest.raises(ValueError, match="duplicated columns \\['a'\\]"):
        df.private.mean(dp.Eps(1.0), bounds=(0, 1), rng=0)
