"""Group-by on several columns: one release over the tuples of labels, a MultiIndex back, public keys as tuples."""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")  # a group-by releases a pandas DataFrame

import diffpriv_py as dp  # noqa: E402
import diffpriv_py.pandas  # noqa: E402 - registers the accessor


def _table(n: int = 6000, seed: int = 0):
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "state": gen.choice(["CA", "NY", "TX"], n),
            "band": gen.integers(0, 3, n),
            "pid": np.arange(n) // 2,
            "x": gen.uniform(0, 100, n),
        }
    )


UNIT = dict(statistics=("count", "mean"), bounds=(0, 100), max_groups=1, max_rows=2, rng=0)


def test_two_columns_give_a_multiindex_sorted_as_pandas_sorts_it():
    df = _table()
    out = dp.stats.groupby([df.state, df.band], dp.Del(1.0, 1e-6), values=df.x, privacy_unit=df.pid, **UNIT)
    exact = df.groupby(["state", "band"]).x.agg(["count", "mean"])
    assert isinstance(out.index, pd.MultiIndex) and out.index.names == ["state", "band"]
    assert list(out.index) == list(exact.index)  # every group is large: all released, in pandas' order
    assert out.index.levels[0].dtype == object and out.index.levels[1].dtype == np.int64
    np.testing.assert_allclose(out["mean"], exact["mean"], atol=10.0)  # kept rows only: a sanity check


def test_one_column_in_a_list_is_the_one_column_release():
    """A list of one column is the same release as the column itself, bit for bit, for a seed."""
    df = _table()
    one = dp.stats.groupby(df.state, dp.Del(1.0, 1e-6), values=df.x, privacy_unit=df.pid, **UNIT)
    listed = dp.stats.groupby([df.state], dp.Del(1.0, 1e-6), values=df.x, privacy_unit=df.pid, **UNIT)
    np.testing.assert_array_equal(one.to_numpy(), listed.to_numpy())
    assert list(listed.index.get_level_values(0)) == list(one.index)


def test_the_accessor_the_function_and_dask_agree():
    df = _table()
    a = df.private.groupby(["state", "band"], dp.Del(1.0, 1e-6), column="x", privacy_unit="pid", **UNIT)
    b = dp.stats.groupby([df.state, df.band], dp.Del(1.0, 1e-6), values=df.x, privacy_unit=df.pid, **UNIT)
    pd.testing.assert_frame_equal(a, b)
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(df, npartitions=3)
    c = dp.stats.groupby([ddf.state, ddf.band], dp.Del(1.0, 1e-6), values=ddf.x, privacy_unit=ddf.pid, **UNIT)
    pd.testing.assert_frame_equal(b, c)


def test_public_keys_as_tuples_or_a_multiindex_release_exactly_those_groups():
    """Every key is released in order (an absent one as an empty group) and no row of another tuple counts."""
    df = _table()
    keys = [("TX", 2), ("CA", 0), ("ZZ", 1)]
    for given in (keys, pd.MultiIndex.from_tuples(keys)):
        out = dp.stats.groupby([df.state, df.band], dp.Eps(1.0), keys=given, rng=0)
        assert list(out.index) == keys
    # A neighbour differing only in a row of an unlisted tuple gives the same release for a seed.
    other = df.copy()
    row = int(np.flatnonzero((df.state == "NY").to_numpy())[0])
    other.loc[row, "band"] = 1 - other.loc[row, "band"] if other.loc[row, "band"] < 2 else 0
    a = dp.stats.groupby([df.state, df.band], dp.Eps(1.0), keys=keys, rng=3)
    b = dp.stats.groupby([other.state, other.band], dp.Eps(1.0), keys=keys, rng=3)
    pd.testing.assert_frame_equal(a, b)


def test_partition_selection_hides_a_tuple_one_person_makes_and_level_dtypes_are_public():
    """One person alone makes the tuple ('WY…', 7) exist: it is not released (its probability is at most δ per
    release); the level dtypes follow the columns' dtypes whether or not that person's long label is in the data."""
    df = _table()
    lone = pd.DataFrame({"state": ["WY" * 40], "band": [7], "pid": [10**6], "x": [1.0]})
    both = pd.concat([df, lone], ignore_index=True)
    kw = {**UNIT, "rng": None}
    outs = [
        dp.stats.groupby([d.state, d.band], dp.Del(1.0, 1e-6), values=d.x, privacy_unit=d.pid, **kw)
        for d in (df, both, both, both)
    ]
    for out in outs:
        assert ("WY" * 40, 7) not in set(out.index)
        assert [lvl.dtype for lvl in out.index.levels] == [np.dtype(object), np.dtype(np.int64)]
        assert len(out) == 9


def test_an_empty_release_keeps_the_levels_and_their_dtypes():
    df = _table(n=40)
    out = dp.stats.groupby([df.state, df.band], dp.Del(0.01, 1e-9), privacy_unit=df.pid, max_rows=2, rng=0)
    assert len(out) == 0 and out.index.nlevels == 2
    assert [lvl.dtype for lvl in out.index.levels] == [np.dtype(object), np.dtype(np.int64)]


@pytest.mark.parametrize(
    ("keys", "match"),
    [
        (["CA", "NY"], "tuple of 2 labels"),
        ([("CA", 0, 1)], "tuple of 2 labels"),
        ([("CA", 0), ("CA", 0)], "distinct"),
        ([], "must not be empty"),
        ([("CA", "zero")], "type of the 'by' labels"),
        ("CA", "sequence of tuples"),
    ],
)
def test_bad_keys_are_refused_before_the_charge(keys, match):
    df = _table(n=100)
    accountant = dp.accounting.Accountant(dp.Eps(10.0))
    with pytest.raises((TypeError, ValueError), match=match):
        dp.stats.groupby([df.state, df.band], dp.Eps(1.0), keys=keys, accountant=accountant)
    assert accountant.spent.epsilon == 0


def test_columns_of_different_lengths_are_refused_before_the_charge():
    df = _table(n=100)
    accountant = dp.accounting.Accountant(dp.Eps(10.0))
    with pytest.raises(ValueError, match="one entry per row"):
        dp.stats.groupby([df.state, df.band[:50]], dp.Eps(1.0), keys=[("CA", 0)], accountant=accountant)
    assert accountant.spent.epsilon == 0


def test_a_key_is_never_narrowed_to_the_columns_type():
    """A key longer than every label of its column ('NYC' beside 'NY') or not of its column's integer type (2.5
    beside 0, 1, 2) stands for no row: it used to be cast to the column's dtype, becoming 'NY' or 2 and taking
    those rows (and their label) silently."""
    state = np.repeat(["NY", "CA"], 50)
    band = np.tile([0, 2], 50)
    out = dp.stats.groupby([state, band], dp.Eps(1.0), keys=[("NYC", 0), ("CA", 2.5), ("NY", 2)], rng=0)
    assert list(out.index) == [("NYC", 0.0), ("CA", 2.5), ("NY", 2.0)]
    counts = out["count"].to_numpy()  # noise of scale 1 at ε = 1 (public keys: no selection share)
    assert abs(counts[0]) < 12 and abs(counts[1]) < 12  # empty: the narrowed keys took 25 rows each
    assert abs(counts[2] - 25) < 12
