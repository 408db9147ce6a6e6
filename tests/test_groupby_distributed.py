"""Group-by on dask bounded where the data live: the rows are shuffled by person, each partition bounds its own
people and makes per-group integer totals, and the release is the in-memory one bit for bit for a seed."""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")

import diffpriv_py as dp  # noqa: E402
from diffpriv_py.stats import _groupby  # noqa: E402


def _table(seed: int = 0, n: int = 12_000) -> pd.DataFrame:
    """Common and rare groups, people with several rows spread over the table (so over the input partitions)."""
    gen = np.random.default_rng(seed)
    common = gen.choice(np.array(["a", "b", "c", "d", "e"]), n)
    rare = gen.choice(np.array([f"r{i}" for i in range(300)]), n)
    city = np.where(gen.random(n) < 0.85, common, rare)
    return pd.DataFrame(
        {"pid": gen.integers(0, 2500, n), "city": city, "x": gen.normal(50, 20, n), "y": gen.uniform(-1, 1, n)}
    )


QUERIES = [
    {"statistics": ["count", "mean"], "bounds": (0, 100)},
    {"statistics": ["count", "sum", "var", "std"], "bounds": (0, 100), "max_groups": 3, "max_rows": 2},
    {"statistics": ["count", "sum"], "bounds": (0, 100), "keys": ["a", "b", "zz"], "max_groups": 2},
    {"statistics": ["count", "mean"], "bounds": (0, 100), "max_groups": 4, "selection": "weighted_gaussian"},
    {"statistics": ["count"], "max_groups": 2, "selection": "truncated_geometric", "neighbouring": "add_remove"},
    {"statistics": ["count", "mean"], "bounds": (0, 100), "neighbouring": "add_remove", "max_people": 10**6},
    {"statistics": ["count"], "quantiles": [0.25, 0.5], "bounds": (0, 100), "max_groups": 2},
    {"statistics": ["count"], "quantiles": [0.5], "bounds": (0, 100), "keys": ["a", "r1", "zz"], "max_groups": 3},
    {"statistics": ["mean"], "quantiles": [0.9], "bounds": (0, 100), "n_candidates": 300, "max_rows": 3},
    {
        "statistics": ["count"],
        "quantiles": [0.5],
        "bounds": (0, 100),
        "neighbouring": "add_remove",
        "max_people": 10**5,
    },
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_distributed_bounding_is_the_in_memory_release_bit_for_bit(monkeypatch, query, npartitions):
    """Whatever the partitioning, the selection policy, the keys or the relation; the label and person columns are
    never read into one process (reading them would raise here)."""
    df = _table()
    ddf = dd.from_pandas(df, npartitions=npartitions)
    in_memory = dp.stats.groupby(df.city, dp.Del(1.0, 1e-6), values=df.x, privacy_unit=df.pid, rng=7, **query)

    def refuse(column):
        raise AssertionError("a label column was read into one process")

    monkeypatch.setattr(_groupby, "_materialise", refuse)
    out = dp.stats.groupby(ddf.city, dp.Del(1.0, 1e-6), values=ddf.x, privacy_unit=ddf.pid, rng=7, **query)
    pd.testing.assert_frame_equal(in_memory, out, check_exact=True)
    assert len(out) > 0 or query.get("keys") is None


def test_several_value_columns_on_dask_are_the_in_memory_release():
    df = _table(1)
    ddf = dd.from_pandas(df, npartitions=4)
    kw = {"statistics": ["count", "mean"], "bounds": {"x": (0, 100), "y": (-1, 1)}, "max_groups": 2, "rng": 3}
    a = dp.stats.groupby(df.city, dp.Del(1.0, 1e-6), values={"x": df.x, "y": df.y}, privacy_unit=df.pid, **kw)
    b = dp.stats.groupby(ddf.city, dp.Del(1.0, 1e-6), values={"x": ddf.x, "y": ddf.y}, privacy_unit=ddf.pid, **kw)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_quantiles_of_several_columns_on_dask_are_the_in_memory_release(monkeypatch):
    """The quantile grid is sized from the number of people, counted on the shuffled table by its partitions; each
    partition's (group, grid cell) counts are renumbered to the global groups and merged exactly."""
    df = _table(2)
    ddf = dd.from_pandas(df, npartitions=3)
    kw = {"statistics": ["count"], "quantiles": [0.5], "bounds": {"x": (0, 100), "y": (-1, 1)}, "max_groups": 2}
    a = dp.stats.groupby(df.city, dp.Del(1.0, 1e-6), values={"x": df.x, "y": df.y}, privacy_unit=df.pid, rng=4, **kw)
    monkeypatch.setattr(_groupby, "_materialise", lambda column: pytest.fail("a label column was read into memory"))
    b = dp.stats.groupby(
        ddf.city, dp.Del(1.0, 1e-6), values={"x": ddf.x, "y": ddf.y}, privacy_unit=ddf.pid, rng=4, **kw
    )
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_nan_values_on_dask_fail_after_the_charge_as_in_memory():
    df = _table(3)
    df.loc[5, "x"] = np.nan
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.raises(Exception, match="NaN"):
        dp.stats.groupby(ddf.city, dp.Del(1.0, 1e-6), values=ddf.x, privacy_unit=ddf.pid, bounds=(0, 100),
                         statistics=["mean"], rng=1)  # fmt: skip


def _two_column_table(seed: int = 0, n: int = 8000) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    band = pd.array(gen.integers(0, 3, n), dtype="Int64")
    band[gen.random(n) < 0.05] = pd.NA  # a missing label is a group too (read as NaN)
    return pd.DataFrame(
        {
            "state": gen.choice(["CA", "NY", "TX"], n),
            "band": band,
            "pid": gen.integers(0, 2000, n),
            "x": gen.uniform(0, 100, n),
        }
    )


SEVERAL = [
    {"statistics": ["count", "mean"], "bounds": (0, 100), "max_groups": 2, "max_rows": 2},
    {"statistics": ["count"], "max_groups": 3, "keys": [("CA", 0), ("TX", 2), ("ZZ", 1), ("NY", np.nan)]},
    {"statistics": ["count"], "max_groups": 2, "keys": [("CA", 0), ("NYC", 1), ("TX", 2.5)]},  # never narrowed
    {"statistics": ["count", "sum"], "bounds": (0, 100), "max_groups": 2, "quantiles": [0.5]},
    {"statistics": ["count"], "max_groups": 2, "selection": "truncated_geometric", "neighbouring": "add_remove"},
]


@pytest.mark.parametrize("query", SEVERAL)
@pytest.mark.parametrize("npartitions", [1, 4])
def test_several_grouping_columns_on_dask_are_combined_where_the_data_live(monkeypatch, query, npartitions):
    """Each partition combines its own rows' tuples, the release the partitions' distinct tuples (or the public keys):
    the in-memory release bit for bit, MultiIndex and all, and no dask label column is read into one process."""
    from diffpriv_py._blockwise import is_out_of_core
    from diffpriv_py.stats import _multikey

    df = _two_column_table()
    ddf = dd.from_pandas(df, npartitions=npartitions)
    a = dp.stats.groupby([df.state, df.band], dp.Del(1.0, 1e-6), values=df.x, privacy_unit=df.pid, rng=5, **query)

    def refuse(column):
        assert not is_out_of_core(column), "a dask label column was read into one process"
        return column

    monkeypatch.setattr(_multikey, "_materialise", refuse)
    monkeypatch.setattr(_groupby, "_materialise", refuse)
    b = dp.stats.groupby([ddf.state, ddf.band], dp.Del(1.0, 1e-6), values=ddf.x, privacy_unit=ddf.pid, rng=5, **query)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert b.index.names == ["state", "band"] and len(b) > 0


def test_several_dask_columns_take_the_names_given_and_fall_back_when_partitions_differ():
    df = _two_column_table(1)
    ddf = dd.from_pandas(df, npartitions=3)
    kw = {"statistics": ["count"], "max_groups": 2, "rng": 2}
    a = dp.stats.groupby([df.state, df.band], dp.Del(1.0, 1e-6), privacy_unit=df.pid, name=("s", "b"), **kw)
    b = dp.stats.groupby([ddf.state, ddf.band], dp.Del(1.0, 1e-6), privacy_unit=ddf.pid, name=("s", "b"), **kw)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    other = dd.from_pandas(df, npartitions=2)  # a person column partitioned differently: the labels are read instead
    c = dp.stats.groupby([ddf.state, ddf.band], dp.Del(1.0, 1e-6), privacy_unit=other.pid, name=("s", "b"), **kw)
    pd.testing.assert_frame_equal(a, c, check_exact=True)
