"""The default quantile grid is sized from public numbers (n, ε, levels, shape) so that privacy, not the step, sets
the error at large n; an explicit n_candidates keeps the former draws; the grid never depends on the data."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.stats._groupby import GroupBy
from diffpriv_py.testing import audit


@pytest.mark.parametrize(
    ("n", "eps", "sensitivity", "m"),
    [
        (10, 0.1, 1.0, 1025),  # small n·ε: the former fixed default
        (1000, 1.0, 1.0, 1025),
        (4096, 1.0, 1.0, 1025),  # n·ε/(4Δ) = 2^10 exactly
        (4097, 1.0, 1.0, 2049),
        (10**6, 1.0, 1.0, 2**18 + 1),
        (10**6, 0.1, 1.0, 2**15 + 1),
        (10**6, 1.0, 4.0, 2**16 + 1),
        (2**20, 1.0, 1.0, 2**18 + 1),  # a power of two is its own ceiling (no log2 rounding)
        (10**9, 1.0, 1.0, 2**22 + 1),  # capped
        (10, float("inf"), 1.0, 2**22 + 1),
        (10, 0.0, 1.0, 1025),
    ],
)
def test_default_size_is_the_documented_rule(n, eps, sensitivity, m):
    """m = 2^k + 1 with 2^k the smallest power of two ≥ n·ε/(4Δ), k clamped to [10, 22]."""
    assert dp.stats.default_n_candidates(n, eps, sensitivity) == m


def test_quantile_uses_the_rule_per_level_and_column_and_for_pooled_values():
    """ε′ = ε/(levels·columns) with Δ = 1 per column; pooled d columns: n·d values, ε/levels, Δ = d."""
    x = np.random.default_rng(0).uniform(0, 1, (5000, 2))

    def size(**kw):
        return dp.stats.quantile(x, [0.25, 0.75], dp.Eps(2.0), bounds=(0, 1), rng=0, full_response=True, **kw)

    assert size(axis=0).mechanism.n_candidates == dp.stats.default_n_candidates(5000, 2.0 / 4)  # 1025
    assert size().mechanism.n_candidates == dp.stats.default_n_candidates(10000, 2.0 / 2, 2.0)  # 2049
    assert size(n_candidates=33).mechanism.n_candidates == 33


# ---- accuracy at large n ------------------------------------------------------------------------------------------

N_LARGE = 200_000


def _median_errors(n_candidates=None, eps=1.0, draws=100):
    """|release − median| over `draws` releases on 2·10⁵ uniforms (one evaluation, the auditor's vectorised draws).

    The data are shifted so that their median lies half-way between two points of the former 1025-point grid
    (0.5 + 1/2048; a point of every finer default grid), where that grid's error is largest: half a step, 4.9·10⁻⁴.
    """
    x = np.random.default_rng(31).uniform(0, 1, N_LARGE)
    x += 0.5 + 1 / 2048 - np.median(x)
    kw = {} if n_candidates is None else {"n_candidates": n_candidates}
    mech = dp.stats.median(x, dp.Eps(eps), bounds=(0, 1), rng=0, full_response=True, **kw).mechanism
    out = mech._sample_many(mech._evaluate(x), dp.Eps(eps), np.random.default_rng(32), draws)[:, 0, 0]
    return np.abs(out - np.median(x))


def test_default_median_error_at_large_n_is_the_privacy_error():
    """n = 2·10⁵ uniforms on [0, 1], ε = 1: the mean error over 100 releases is below 3·(2/(ε·n)) = 3·10⁻⁵.

    The exponential mechanism's rank error has mean about 2/ε ranks (a two-sided geometric of ratio e^(−ε/2):
    1.9), i.e. about 10⁻⁵ here plus the gaps between the order statistics around the median: 1.5·10⁻⁵ for this
    dataset (standard deviation 1.3·10⁻⁵, from 1000 draws), so the bound is 11 standard errors of the mean away.
    The former 1025-point grid's error here is half a step, 4.9·10⁻⁴ (the next test).
    """
    errors = _median_errors()
    assert errors.mean() < 3 * 2 / N_LARGE, errors.mean()


def test_the_accuracy_check_catches_the_former_fixed_grid():
    """The same check fails with the former default, 1025 candidates: the step, not privacy, sets its error."""
    assert _median_errors(n_candidates=1025).mean() > 10 * 3 * 2 / N_LARGE


def test_small_n_releases_are_those_of_the_former_default():
    """n·ε ≤ 1024 keeps the 1025-point grid: the same draws for a seed as with n_candidates=1025 (values pinned from
    the release before the default was sized)."""
    y = np.random.default_rng(8).normal(50, 10, 50)
    got = [dp.stats.median(y, dp.Eps(0.1), bounds=(0, 100), rng=s) for s in range(3)]
    assert got == [20.703125, 23.2421875, 44.140625]
    for n, eps in [(10, 0.1), (100, 1.0), (1000, 0.1), (1000, 1.0)]:
        x = np.random.default_rng(n).uniform(0, 1, n)
        default = [dp.stats.median(x, dp.Eps(eps), bounds=(0, 1), rng=s) for s in range(20)]
        fixed = [dp.stats.median(x, dp.Eps(eps), bounds=(0, 1), rng=s, n_candidates=1025) for s in range(20)]
        assert default == fixed


def test_an_explicit_resolution_keeps_the_former_draws_at_large_n():
    """n_candidates=1025 at n·ε = 3000 (where the default is 4097) gives the values of the former release."""
    pytest.importorskip("pandas")  # the group-by result is read as a DataFrame
    x = np.random.default_rng(7).uniform(0, 1, 30000)
    got = [dp.stats.median(x, dp.Eps(0.1), bounds=(0, 1), rng=s, n_candidates=1025) for s in range(6)]
    assert got == [0.5029296875, 0.5029296875, 0.50390625, 0.5029296875, 0.50390625, 0.501953125]
    g = np.repeat([0, 1], 15000)
    mech = GroupBy(statistics=("count",), quantiles=(0.5,), bounds=(0.0, 1.0), keys=(0, 1), n_candidates=1025)
    frame = mech.release_response(dp.Eps(0.1), (g, x, None), rng=3).response.to_frame()
    assert frame["q0.5"].tolist() == [0.4990234375, 0.5068359375]
    assert frame["q0.5_rank_accuracy"].tolist() == [794.25441321012, 794.25441321012]


# ---- the grid is public --------------------------------------------------------------------------------------------


def _grid_of(x, **kw):
    mech = dp.stats.quantile(x, 0.5, dp.Eps(1.0), bounds=(0, 1), rng=0, full_response=True, **kw).mechanism
    return mech.candidates(0)


def test_neighbouring_datasets_draw_from_the_same_grid():
    """Replace-one neighbours (an extreme value, a NaN under omit) get bit-identical candidate grids, though the
    number of present values, a private number, crosses a power of two between them (8193 → 8192)."""
    x = np.random.default_rng(5).uniform(0, 1, 8193)
    for y, kw in [
        (np.where(np.arange(8193) == 0, 1e9, x), {}),
        (np.where(np.arange(8193) == 0, np.nan, x), {"nan_policy": "omit"}),
    ]:
        gx, gy = _grid_of(x, **kw), _grid_of(y, **kw)
        assert gx.size == 4097
        np.testing.assert_array_equal(gx.view(np.int64), gy.view(np.int64))
    # The pair has teeth: a grid sized from the present values would differ between the neighbours.
    present = [8193, 8192]
    assert len({dp.stats.default_n_candidates(p, 1.0) for p in present}) == 2


def test_the_grid_depends_only_on_public_numbers():
    """Data of the same shape but different values (and NaN counts) share the grid; the grid is candidate_grid's."""
    gen = np.random.default_rng(6)
    grids = [_grid_of(gen.uniform(0, 1, 3000) ** p, nan_policy="omit") for p in (1, 5)]
    grids.append(_grid_of(np.full(3000, np.nan), nan_policy="omit"))
    for g in grids:
        np.testing.assert_array_equal(g, dp.stats.candidate_grid(0, 1, dp.stats.default_n_candidates(3000, 1.0)))


def test_group_by_grid_is_sized_from_the_number_of_people_not_the_rows_of_a_group():
    """GroupBy's default grid comes from n_people·R, ε per level and 2GR; groups of any size share it."""
    pytest.importorskip("pandas")  # the group-by result is read as a DataFrame
    gen = np.random.default_rng(9)
    n = 40_000
    g, v = (gen.random(n) < 0.01).astype(int), gen.uniform(0, 1, n)  # one small, one large group
    mech = GroupBy(statistics=("count",), quantiles=(0.5,), bounds=(0.0, 1.0), keys=(0, 1))
    sized = mech._sized(n, mech.split(dp.Eps(1.0))[1])
    assert sized.n_candidates == dp.stats.default_n_candidates(n, 0.5, 2.0)  # 2^12 + 1
    frame = mech.release_response(dp.Eps(1.0), (g, v, None), rng=1).response.to_frame()
    assert_grid = dp.stats.candidate_grid(0, 1, sized.n_candidates)
    assert np.isin(frame["q0.5"].to_numpy(), assert_grid).all()
    expected_bar = np.log(sized.n_candidates / mech.alpha) / (0.5 / 4.0)
    np.testing.assert_allclose(frame["q0.5_rank_accuracy"].to_numpy(), expected_bar)


def test_group_by_median_of_a_large_group_is_set_by_privacy():
    """One public key, 10⁵ uniform rows, ε = 1 (½ to the count, ½ to the median, scale ε_q/4): mean error of 20
    releases below 2·(4/(ε_q·n)) = 1.6·10⁻⁴; the former 1025-point grid's is about 2.4·10⁻⁴ and fails it."""
    pytest.importorskip("pandas")  # the group-by result is read as a DataFrame
    n = 100_000
    v = np.random.default_rng(10).uniform(0, 1, n)
    g = np.zeros(n, dtype=int)

    def errors(**kw):
        mech = GroupBy(statistics=("count",), quantiles=(0.5,), bounds=(0.0, 1.0), keys=(0,), **kw)
        out = [
            mech.release_response(dp.Eps(1.0), (g, v, None), rng=s).response.to_frame()["q0.5"][0] for s in range(20)
        ]
        return np.abs(np.asarray(out) - np.median(v))

    bound = 2 * 4 / (0.5 * n)
    assert errors().mean() < bound
    assert errors(n_candidates=1025).mean() > bound


# ---- audit on the sized grid ---------------------------------------------------------------------------------------

# One record moves from 0 to 1, q·n = 1, one value at 0.74 and 4398 at 0.75. The ~3030 candidates A = (0, 0.74) score
# 0 under x and −1 under y; the ~40 candidates B = (0.74, 0.75) score −1 under x and 0 under y. With A much larger
# than B, P_y(B)/P_x(B) ≈ e^(2·ε/2)·|A|/(|A| + e·|B|): a loss of about 1.97 of ε = 2 (about 3.9 without the factor 2).
AUDIT_X = np.concatenate([[0.0, 0.74], np.full(4398, 0.75)])
AUDIT_Y = np.concatenate([[1.0, 0.74], np.full(4398, 0.75)])


def _audit_mechanism():
    mech = dp.stats.quantile(AUDIT_X, 1 / 4400, dp.Eps(2.0), bounds=(0, 1), rng=0, full_response=True).mechanism
    assert mech.n_candidates == 4097  # the sized default, not the former 1025
    return mech


def test_audit_on_a_worst_case_pair_over_the_sized_grid_does_not_refute_the_claim():
    report = audit(_audit_mechanism(), AUDIT_X, AUDIT_Y, dp.Eps(2.0), n=100_000, rng=5)
    assert report.passed, report


def test_audit_over_the_sized_grid_refutes_the_mechanism_without_its_factor_two():
    bad = attrs.evolve(_audit_mechanism(), sensitivity=0.5)
    report = audit(bad, AUDIT_X, AUDIT_Y, dp.Eps(2.0), n=100_000, rng=5)
    assert not report.passed and report.epsilon_lower_bound > 2.0


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (0.1, 0.3), (-1e308, 1e308), (-5.0, 7.25), (1e-300, 3e-300)])
def test_rank_counts_on_a_fine_grid_are_exact(bounds):
    """Fine grids locate values by the grid's formula instead of reading it: the counts stay exact, including values
    on, just below and just above grid points, at and beyond the bounds (checked against a sort)."""
    from diffpriv_py.stats._quantile import _cached_grid, _formula_grid, _rank_counts

    m = 2**17 + 1
    lo, hi = bounds
    grid = _cached_grid(lo, hi, m)
    assert _formula_grid(lo, hi, m)  # the arithmetic path is the one under test
    gen = np.random.default_rng(11)
    on = grid[gen.integers(0, m, 3000)]
    x = np.concatenate([on, np.nextafter(on, -np.inf), np.nextafter(on, np.inf), [lo, hi, -np.inf, np.inf]])
    x = np.concatenate([x, lo + (hi / 2 - lo / 2) * 2 * gen.random(3000)])
    less, at_most, present = _rank_counts(x, grid, "raise")
    clipped = np.sort(np.clip(x, lo, hi))
    np.testing.assert_array_equal(less, np.searchsorted(clipped, grid, side="left"))
    np.testing.assert_array_equal(at_most, np.searchsorted(clipped, grid, side="right"))
    assert present == x.size


def test_a_grid_whose_points_merged_is_read_not_computed():
    """Bounds so close that rounding merges grid points: the formula no longer describes the grid, so it is read."""
    from diffpriv_py.stats._quantile import _cached_grid, _formula_grid, _rank_counts

    lo, hi, m = 1.0, 1.0 + 2**-40, 2**17 + 1
    grid = _cached_grid(lo, hi, m)
    assert grid.size < m and not _formula_grid(lo, hi, m)
    x = np.concatenate([grid, np.nextafter(grid, np.inf)])
    less, at_most, _ = _rank_counts(x, grid, "raise")
    clipped = np.sort(np.clip(x, lo, hi))
    np.testing.assert_array_equal(less, np.searchsorted(clipped, grid, side="left"))
    np.testing.assert_array_equal(at_most, np.searchsorted(clipped, grid, side="right"))
