"""dp.stats.groupby quantiles: all groups in one batched draw of the quantile's own sampler, streamed on dask."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

pd = pytest.importorskip("pandas")  # a group-by releases a pandas DataFrame

from group_audit import Flattened as _Flattened  # noqa: E402

import diffpriv_py as dp  # noqa: E402
from diffpriv_py.stats import _groupby, _quantile  # noqa: E402
from diffpriv_py.stats._groupby import GroupBy  # noqa: E402
from diffpriv_py.stats._quantile import (  # noqa: E402
    _draw_candidates,
    _draw_candidates_grouped,
    _GroupedCells,
    _rank_counts,
    candidate_grid,
)
from diffpriv_py.testing import audit  # noqa: E402

P_FALSE_ALARM = 1e-7


def _dense_scores(values: np.ndarray, grid: np.ndarray, q: float) -> np.ndarray:
    """The rank utility on every candidate, as the one-column quantile computes it (the former per-group path)."""
    less, at_most, n = _rank_counts(values, grid, "raise")
    return -np.maximum(np.maximum(less - q * n, q * n - at_most), 0.0)


def _grouped(
    groups: np.ndarray, values: np.ndarray, k: int, grid: np.ndarray, q: float, scale: float, rng
) -> np.ndarray:
    """The batched path of GroupBy._quantiles for one level: cells → change points → scores → one draw."""
    group_ptr, points, less, at_most, n = _GroupedCells.of(groups, values, k, grid).rank_points()
    qn = q * np.repeat(n.astype(np.float64), np.diff(group_ptr))
    scores = -np.maximum(np.maximum(less - qn, qn - at_most), 0.0)
    return _draw_candidates_grouped(points, scores, group_ptr, grid.size, scale, rng)


def _awkward_values(gen: np.random.Generator, n: int, kind: int) -> np.ndarray:
    """Values off the grid, on grid points, outside the bounds, tied, or all equal."""
    return [
        gen.uniform(-10, 110, n),
        gen.integers(0, 17, n) * 6.25,
        np.round(gen.normal(50, 2, n)),
        np.full(n, 37.5),
    ][kind % 4]


def test_one_group_draws_the_same_grid_point_as_the_one_column_sampler_for_a_seed():
    """With one group the batched draw consumes the stream as _draw_candidates on the dense scores: same index."""
    gen = np.random.default_rng(1)
    for trial in range(300):
        grid = candidate_grid(0.0, 100.0, [17, 1025, 2][trial % 3])
        x = _awkward_values(gen, int(gen.integers(0, 40)), trial)
        q = float(gen.choice([0.0, 0.1, 0.5, 0.97, 1.0]))
        scale = float(gen.choice([1e-3, 0.25, 3.0, 1e6]))
        expected = _draw_candidates(_dense_scores(x, grid, q), scale, np.random.default_rng(trial), 1)[0]
        got = _grouped(np.zeros(x.size, dtype=np.intp), x, 1, grid, q, scale, np.random.default_rng(trial))
        assert got.tolist() == [expected], trial


class _Recorder:
    """A Generator that records what it hands out (uniforms and integers), to replay group by group."""

    def __init__(self, seed: int) -> None:
        self.gen = np.random.default_rng(seed)
        self.uniforms: list[np.ndarray] = []
        self.offsets: list[np.ndarray] = []

    def random(self, size=None):
        out = self.gen.random(size)
        self.uniforms.append(out)
        return out

    def integers(self, low, high=None, size=None):
        out = self.gen.integers(low, high, size)
        self.offsets.append(out)
        return out


class _Replay:
    """Hands one group's slice of the recorded uniforms and its recorded offset to the one-column sampler."""

    def __init__(self, uniforms: np.ndarray, offset: np.ndarray) -> None:
        self.uniforms, self.offset = uniforms, offset

    def random(self, size=None):
        assert size == self.uniforms.shape
        return self.uniforms

    def integers(self, low, high=None, size=None):
        assert np.shape(high) == self.offset.shape and low == 0 and np.all(self.offset < high)
        return self.offset


def test_each_groups_draw_is_the_one_column_sampler_on_its_own_uniforms():
    """Many groups (empty ones too): group g's result is _draw_candidates on g's dense scores fed g's uniforms."""
    gen = np.random.default_rng(2)
    grid = candidate_grid(0.0, 100.0, 65)
    for trial in range(20):
        k = int(gen.integers(1, 40))
        sizes = gen.integers(0, 12, k)  # some groups empty (public keys)
        groups = np.repeat(np.arange(k), sizes)
        x = _awkward_values(gen, groups.size, trial)
        q, scale = 0.3, float(gen.choice([0.05, 1.0, 50.0]))
        rec = _Recorder(trial)
        got = _grouped(groups, x, k, grid, q, scale, rec)
        (u,) = rec.uniforms  # one (3, runs) block for all groups: no fresh uniforms were needed
        (offsets,) = rec.offsets  # one integers call for all groups
        start = 0
        for g in range(k):
            dense = _dense_scores(x[groups == g], grid, q)
            runs = 1 + int(np.count_nonzero(dense[1:] != dense[:-1]))
            replay = _Replay(u[:, start : start + runs], offsets[g : g + 1])
            assert _draw_candidates(dense, scale, replay, 1)[0] == got[g], (trial, g)
            start += runs
        assert start == u.shape[1]


def test_released_group_quantiles_follow_the_exponential_mechanism_and_a_doubled_scale_is_refuted():
    """20 000 groups with the same values: the drawn grid points fit p ∝ exp(ε_q·u/4); with 2ε_q they do not."""
    n_groups, x = 20_000, np.array([10.0, 20.0, 20.0, 60.0, 90.0])
    by = np.repeat(np.arange(n_groups), x.size)
    values = np.tile(x, n_groups)
    epsilon = 4.0  # split equally over the count and the median: ε_q = 2, scale = ε_q/(4GR) = 0.5
    mech = GroupBy(quantiles=(0.5,), bounds=(0.0, 100.0), keys=tuple(range(n_groups)), n_candidates=17)
    out = mech.release_response(dp.Eps(epsilon), (by, values, None), rng=3).response
    grid = candidate_grid(0.0, 100.0, 17)
    index = np.searchsorted(grid, out.values["q0.5"])
    assert np.array_equal(grid[index], out.values["q0.5"])  # always a grid point
    observed = np.bincount(index, minlength=grid.size)
    scores = _dense_scores(x, grid, 0.5)

    def p_value(scale: float) -> float:
        p = np.exp(scale * (scores - scores.max()))
        return float(sps.chisquare(observed, n_groups * p / p.sum()).pvalue)

    assert p_value(0.5) > P_FALSE_ALARM
    assert p_value(1.0) < P_FALSE_ALARM  # the test would catch half the noise (a doubled scale)


def test_quantiles_of_many_groups_make_one_draw_per_level_not_one_per_group(monkeypatch):
    """The number of sampler calls and of counting passes does not grow with the number of groups (10⁴ here)."""
    calls: dict[str, int] = {"gumbel": 0, "counting": 0}
    gumbel, code_blocks = _quantile.gumbel, _quantile._code_blocks

    def counted_gumbel(size, rng):
        calls["gumbel"] += 1
        return gumbel(size, rng)

    def counted_code_blocks(values, grid, nan_policy):
        calls["counting"] += 1
        return code_blocks(values, grid, nan_policy)

    monkeypatch.setattr(_quantile, "gumbel", counted_gumbel)
    monkeypatch.setattr(_quantile, "_code_blocks", counted_code_blocks)
    seen = []
    monkeypatch.setattr(_groupby, "SPAN_ROWS", 1 << 16)
    for n_groups in (10, 10_000):  # 10⁵ rows either way: two counting spans of 2¹⁶ rows
        calls.update(gumbel=0, counting=0)
        by = np.repeat(np.arange(n_groups), 100_000 // n_groups)
        x = np.random.default_rng(0).uniform(0, 100, by.size)
        out = dp.stats.groupby(by, dp.Eps(1.0), values=x, quantiles=[0.25, 0.5, 0.75], bounds=(0, 100),
                               keys=range(n_groups), rng=0)  # fmt: skip
        assert out.shape[0] == n_groups and out["q0.5"].between(0, 100).all()
        seen.append(dict(calls))
    assert seen[0] == seen[1] == {"gumbel": 3, "counting": 2}  # one draw per level, one counting pass per block


def test_cells_counted_block_by_block_and_merged_equal_the_cells_of_the_whole_column():
    """Sparse (group, cell) counts add exactly: any split of the rows, in any order, gives the same arrays."""
    gen = np.random.default_rng(4)
    grid = candidate_grid(-1.0, 1.0, 33)
    groups = gen.integers(0, 50, 5000)
    x = np.where(gen.random(5000) < 0.3, grid[gen.integers(0, 33, 5000)], gen.uniform(-1.5, 1.5, 5000))
    whole = _GroupedCells.of(groups, x, 50, grid)
    cuts = np.sort(gen.choice(np.arange(1, 5000), 6, replace=False))
    parts = [_GroupedCells.of(g, v, 50, grid) for g, v in zip(np.split(groups, cuts), np.split(x, cuts), strict=True)]
    merged = _GroupedCells.merge(parts[::-1])
    assert np.array_equal(merged.keys, whole.keys) and np.array_equal(merged.counts, whole.counts)
    assert int(whole.counts.sum()) == 5000


@pytest.mark.parametrize("unit", [False, True])
def test_dask_quantiles_of_many_groups_are_streamed_and_bit_identical_to_in_memory(monkeypatch, unit):
    """The value column is never computed whole (with a privacy unit, nor the labels); frames from 7 and 3
    partitions equal the in-memory frame."""
    dd = pytest.importorskip("dask.dataframe")
    gen = np.random.default_rng(5)
    n = 30_000
    df = pd.DataFrame(
        {
            "g": gen.integers(0, 150, n),
            "pid": gen.integers(0, 12_000, n),
            "x": np.where(gen.random(n) < 0.2, gen.integers(0, 11, n) * 10.0, gen.normal(50, 30, n)),
        }
    )
    kw = {"statistics": ["count", "mean"], "quantiles": [0.1, 0.5, 0.9], "bounds": (0, 100), "rng": 6}
    if unit:
        kw.update(max_groups=2, max_rows=2)
    params = dp.Del(8.0, 1e-6)
    in_memory = dp.stats.groupby(df["g"], params, values=df["x"], privacy_unit=df["pid"] if unit else None, **kw)
    assert in_memory.shape[0] > 100  # most of the 150 groups released: a real many-group comparison
    materialised = []
    real = _groupby._materialise
    monkeypatch.setattr(_groupby, "_materialise", lambda column: materialised.append(column.name) or real(column))
    for parts in (7, 3):
        ddf = dd.from_pandas(df, npartitions=parts)
        out = dp.stats.groupby(ddf["g"], params, values=ddf["x"], privacy_unit=ddf["pid"] if unit else None, **kw)
        pd.testing.assert_frame_equal(in_memory, out, check_exact=True)
    assert "x" not in materialised  # the values are streamed
    # With a privacy unit the table is bounded where it lives (nothing read into one process); without one the labels
    # are read into memory.
    assert ("g" in materialised) != unit


def test_in_memory_quantiles_do_not_depend_on_the_order_of_the_rows():
    """Shuffling the rows (several blocks of 2¹⁶) leaves the seeded release unchanged: only counts are read."""
    gen = np.random.default_rng(7)
    n = 150_000
    by, x = gen.integers(0, 300, n), gen.normal(50, 25, n)
    kw = {"values": x, "quantiles": [0.5, 0.9], "bounds": (0, 100), "keys": range(300), "rng": 8}
    first = dp.stats.groupby(by, dp.Eps(1.0), **kw)
    perm = gen.permutation(n)
    again = dp.stats.groupby(by[perm], dp.Eps(1.0), **{**kw, "values": x[perm]})
    pd.testing.assert_frame_equal(first, again, check_exact=True)


def test_dask_quantile_inputs_are_checked_before_the_budget_is_charged():
    """A non-numeric dask value column or quantiles without bounds are refused with nothing charged."""
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(pd.DataFrame({"g": list("aabb"), "x": list("wxyz")}), npartitions=2)
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    with pytest.raises(TypeError, match="numeric"):
        dp.stats.groupby(ddf["g"], dp.Eps(1.0), values=ddf["x"], quantiles=0.5, bounds=(0, 1), keys=["a"],
                         accountant=acc, rng=0)  # fmt: skip
    with pytest.raises(TypeError, match="bounds"):
        dp.stats.groupby(ddf["g"], dp.Eps(1.0), values=ddf["x"], quantiles=0.5, keys=["a"], accountant=acc, rng=0)
    assert len(acc.ledger) == 0


# ---- audits on neighbouring tables ----------------------------------------------------------------------------------


def _median_of_groups(labels: tuple[str, ...], **kwargs: Any) -> _Flattened:
    inner = GroupBy(quantiles=(0.5,), bounds=(0.0, 10.0), n_candidates=9, **kwargs)
    return _Flattened(inner=inner, labels=labels)


@pytest.mark.slow
def test_audit_does_not_refute_group_medians_when_a_person_alone_makes_a_group_exist():
    """D has a person alone in 'rare' with an extreme value; D′ moves them into 'big'. Counts and medians pass."""
    gen = np.random.default_rng(9)
    big = gen.uniform(0, 10, 30)
    d1 = (np.array(["big"] * 30 + ["rare"]), np.append(big, 10.0), None)
    d2 = (np.array(["big"] * 31), np.append(big, 10.0), None)
    mech = _median_of_groups(("big", "rare"))
    assert audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1).passed


@pytest.mark.slow
def test_audit_does_not_refute_a_group_median_when_a_persons_rows_move_and_catches_a_forgotten_reach(monkeypatch):
    """A person's 3 rows (max_rows=3) at the bottom of the group, then at the top: not refuted; without the 4GR
    reach in the scale (12× too large) the audit refutes the claim."""
    a = np.linspace(0, 10, 9)
    by = np.array(["a"] * 12)
    unit = np.concatenate([np.arange(9), [99, 99, 99]])
    d1 = (by, np.concatenate([a, [0.0, 0.0, 0.0]]), unit)
    d2 = (by, np.concatenate([a, [10.0, 10.0, 10.0]]), unit)
    mech = _median_of_groups(("a",), keys=("a",), max_rows=3)
    params = dp.Eps(2.0)
    assert audit(mech, d1, d2, params, n=2000, rng=2).passed
    real = _groupby._draw_candidates_grouped
    monkeypatch.setattr(
        _groupby, "_draw_candidates_grouped", lambda p, s, gp, m, scale, rng: real(p, s, gp, m, 12 * scale, rng)
    )
    assert not audit(mech, d1, d2, params, n=3000, rng=2).passed


def test_dask_quantiles_with_no_group_released_give_an_empty_frame():
    """Partition selection may release nothing: the streamed (empty) cell counts still merge into an empty frame."""
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame({"g": np.arange(100) % 50, "x": np.linspace(0, 100, 100)})  # two people per group: never released
    ddf = dd.from_pandas(df, npartitions=4)
    out = dp.stats.groupby(ddf["g"], dp.Del(1.0, 1e-6), values=ddf["x"], quantiles=0.5, bounds=(0, 100), rng=0)
    assert out.shape[0] == 0 and list(out.columns) == ["count", "count_accuracy", "q0.5", "q0.5_rank_accuracy"]


def test_the_function_and_the_accessor_take_n_candidates():
    """dp.stats.groupby(..., n_candidates=m) releases points of the m-point grid, as the GroupBy mechanism does."""
    pd = pytest.importorskip("pandas")
    import diffpriv_py.pandas  # noqa: F401 - registers the accessor

    gen = np.random.default_rng(3)
    g, v = gen.integers(0, 2, 2000), gen.uniform(0, 1, 2000)
    grid = dp.stats.candidate_grid(0, 1, 33)
    r = dp.stats.groupby(g, dp.Eps(1.0), values=v, quantiles=0.5, n_candidates=33, bounds=(0, 1),
                         keys=[0, 1], rng=0, full_response=True)  # fmt: skip
    assert r.mechanism.n_candidates == 33 and np.isin(r.response["q0.5"], grid).all()
    frame = pd.DataFrame({"g": g, "v": v}).private.groupby(
        "g", dp.Eps(1.0), column="v", quantiles=0.5, n_candidates=33, bounds=(0, 1), keys=[0, 1], rng=0
    )
    assert np.isin(frame["q0.5"], grid).all()
    with pytest.raises((TypeError, ValueError), match="n_candidates"):
        dp.stats.groupby(g, dp.Eps(1.0), values=v, quantiles=0.5, n_candidates=1, bounds=(0, 1), keys=[0, 1])
