"""Error bars cover the exact statistic of the clipped data, the fixed-point grid's quantisation included.

Grid-adversarial data put every value 0.49 of a grid step from a grid point (or at the bounds), where rounding to
the grid moves a variance by up to 2⁻¹⁹·width² — far more than the noise at a large n·ε. The coverage tests count
how often the bar holds at its nominal rate with a binomial floor whose false-alarm probability is 10⁻⁹, and each
shows that the same detector fires on the old bar (the grid allowance set to zero). The deterministic tests check
|computed statistic − exact statistic| ≤ allowance in exact rational arithmetic.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

import diffpriv_py as dp
from diffpriv_py._fixed_point import Grid, square_bits, sum_bits
from diffpriv_py.stats import _moments

P_FALSE_ALARM = 1e-9
ALPHA = 0.05
RUNS = 300


def coverage_floor(runs: int, alpha: float = ALPHA) -> float:
    """Fewest hits a bar of level 1 − α may score in ``runs`` independent releases (false alarm 10⁻⁹)."""
    return float(sps.binom.ppf(P_FALSE_ALARM, runs, 1 - alpha))


@contextlib.contextmanager
def old_bars() -> Iterator[None]:
    """The mutant: every grid claims zero quantisation error (the bars before the grid allowance)."""
    original = Grid.over.__func__  # type: ignore[attr-defined]

    def over(cls: type[Grid], *args: Any, **kwargs: Any) -> Grid:
        return attrs.evolve(original(cls, *args, **kwargs), error=0.0)

    _moments._cached_plan.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(Grid, "over", classmethod(over))
            yield
    finally:
        _moments._cached_plan.cache_clear()  # no plan built with the mutant survives the test


def exact(x: np.ndarray, lo: float, hi: float, ddof: int = 0) -> dict[str, Fraction]:
    """Exact sum, mean and variance of the clipped values (rational arithmetic on the float64 data)."""
    c = [Fraction(float(v)) for v in np.clip(x, lo, hi)]
    n = len(c)
    total = sum(c, Fraction(0))
    mean = total / n
    ss = sum(((v - mean) ** 2 for v in c), Fraction(0))
    return {"sum": total, "mean": mean, "var": ss / (n - ddof)}


def within(reported: float, bar: float, statistic: str, truth: dict[str, Fraction]) -> bool:
    """|reported − exact| ≤ bar, decided exactly (the std by comparing squares of non-negative numbers)."""
    r, h = Fraction(reported), Fraction(bar)
    if statistic != "std":
        return abs(r - truth[statistic]) <= h
    var = truth["var"]
    low = max(r - h, Fraction(0))
    return low * low <= var <= (r + h) * (r + h)


# ---- grid-adversarial datasets -------------------------------------------------------------------------------------


def at_the_ends(n: int, bits: int, lo: float = 0.0, hi: float = 1.0, off: float = 0.49) -> np.ndarray:
    """Half the values ``off`` step above lo, half below hi: the quantised variance is too large."""
    step = (hi - lo) * 2.0**-bits
    x = np.empty(n)
    x[: n // 2] = lo + off * step
    x[n // 2 :] = hi - off * step
    return x


def above_the_grid(n: int, bits: int) -> np.ndarray:
    """Every value 0.49 step above a grid point of [0, 1]: the quantised mean and sum are too small."""
    return (np.arange(n) % 4093 * 97 % 2**bits + 0.49) * 2.0**-bits


def at_the_bounds(n: int, bits: int) -> np.ndarray:
    """Values at, beyond and 0.49 step inside the bounds [0, 1] (clipping and rounding together)."""
    step = 2.0**-bits
    base = np.array([0.0, 1.0, -5.0, 7.0, 0.49 * step, 1 - 0.49 * step, 1e300, -1e300])
    return np.resize(base, n)


VAR_BITS, SUM_BITS = square_bits(1), sum_bits(1)

# statistic, data, bounds, ε: chosen so that the quantisation error is several old bars wide.
CASES: dict[str, tuple[str, Callable[[], np.ndarray], tuple[float, float], float]] = {
    "var-ends": ("var", lambda: at_the_ends(2000, VAR_BITS), (0.0, 1.0), 5000.0),
    "std-ends": ("std", lambda: at_the_ends(2000, VAR_BITS), (0.0, 1.0), 5000.0),
    "var-bounds": ("var", lambda: at_the_bounds(2000, VAR_BITS), (0.0, 1.0), 5000.0),
    # A width of 2⁻²⁰ at 1.0: grid steps of 2⁻³⁸ where doubles are 2⁻⁵² apart (7/16 step is representable).
    "var-tiny-width": ("var", lambda: at_the_ends(2000, VAR_BITS, 1.0, 1 + 2**-20, 7 / 16), (1.0, 1 + 2**-20), 5e3),
    "mean-above": ("mean", lambda: above_the_grid(10_000, SUM_BITS), (0.0, 1.0), 1e8),
    "sum-large-n": ("sum", lambda: above_the_grid(200_000, SUM_BITS), (0.0, 1.0), 1e7),
}


def coverage(case: str, runs: int = RUNS) -> int:
    statistic, make, (lo, hi), eps = CASES[case]
    x = make()
    truth = exact(x, lo, hi)
    func = getattr(dp.stats, statistic)
    hits = 0
    for seed in range(runs):
        r = func(x, dp.Eps(eps), bounds=(lo, hi), rng=seed, full_response=True)
        hits += within(r.response, r.accuracy(ALPHA), statistic, truth)
    return hits


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_dp_stats_bars_cover_the_clipped_statistic_on_grid_adversarial_data(case):
    """Each bar holds at rate ≥ 1 − α against the exact statistic of the clipped data; the old bar does not."""
    floor = coverage_floor(RUNS)
    assert coverage(case) >= floor
    if case == "var-bounds":
        return  # values at the bounds sit on grid points: the old bar was right there too (the control case)
    with old_bars():
        assert coverage(case, runs=60) < coverage_floor(60)  # the detector fires on the bar without the grid


@pytest.mark.slow
def test_gaussian_and_per_column_variance_bars_cover_on_grid_adversarial_data():
    """axis=0 with two columns of different bounds, Gaussian noise: each column's bar covers its own variance."""
    lo, hi = np.array([0.0, -3.0]), np.array([1.0, 5.0])
    x = np.column_stack([at_the_ends(100_000, VAR_BITS), at_the_ends(100_000, VAR_BITS, -3.0, 5.0)])
    truths = [exact(x[:, j], float(lo[j]), float(hi[j])) for j in range(2)]

    def hits(runs: int) -> int:
        total = 0
        for seed in range(runs):
            r = dp.stats.var(
                x, dp.Del(400.0, 1e-6), bounds=(lo, hi), axis=0, mechanism="gaussian", rng=seed, full_response=True
            )
            bars = r.accuracy(ALPHA)
            total += sum(within(r.response[j], bars[j], "var", truths[j]) for j in range(2))
        return total

    assert hits(RUNS // 2) >= coverage_floor(RUNS)
    with old_bars():
        assert hits(30) < coverage_floor(60)


# ---- group-by ------------------------------------------------------------------------------------------------------


def groupby_coverage(x: np.ndarray, statistics: list[str], eps: float, runs: int) -> dict[str, int]:
    truth = exact(x, 0.0, 1.0)
    by = np.zeros(x.size, dtype=np.int64)
    hits = dict.fromkeys(statistics, 0)
    for seed in range(runs):
        out = dp.stats.groupby(
            by, dp.Eps(eps), values=x, statistics=statistics, bounds=(0, 1), keys=[0], alpha=ALPHA, rng=seed
        )
        for s in statistics:
            hits[s] += within(float(out[s].iloc[0]), float(out[f"{s}_accuracy"].iloc[0]), s, truth)
    return hits


@pytest.mark.slow
def test_groupby_bars_cover_the_clipped_statistics_on_grid_adversarial_data():
    """Group-by mean/var/std (Σu and Σu² on the 2¹⁸-step grid) and sum cover; the old var/std/mean bars do not."""
    floor = coverage_floor(RUNS // 2)
    spread = groupby_coverage(at_the_ends(4000, VAR_BITS), ["sum", "var", "std"], 1e4, RUNS // 2)
    shifted = groupby_coverage(above_the_grid(4000, VAR_BITS), ["mean", "var"], 1e5, RUNS // 2)
    assert min(spread.values()) >= floor, spread
    assert min(shifted.values()) >= floor, shifted
    with old_bars():
        old_spread = groupby_coverage(at_the_ends(4000, VAR_BITS), ["var", "std"], 1e4, 30)
        old_shifted = groupby_coverage(above_the_grid(4000, VAR_BITS), ["mean", "var"], 1e5, 30)
    low = coverage_floor(30)
    assert old_spread["var"] < low and old_spread["std"] < low and old_shifted["mean"] < low


# ---- deterministic: |computed − exact| ≤ allowance -----------------------------------------------------------------


def _bounds() -> st.SearchStrategy[tuple[float, float]]:
    """Bounds of every kind: ordinary, far from 0 relative to their width, tiny, huge, straddling 0."""
    return st.one_of(
        st.sampled_from([(0.0, 1.0), (-3.0, 5.0), (1e-300, 3e-300), (2.0**40, 2.0**40 + 1), (-1e150, 1e150)]),
        st.tuples(st.floats(-1e6, 1e6), st.floats(1e-9, 1e6)).map(lambda p: (p[0], p[0] + p[1])),
    ).filter(lambda p: p[0] < p[1])


@st.composite
def adversarial_data(draw: Any, bits: int) -> tuple[np.ndarray, float, float]:
    lo, hi = draw(_bounds())
    n = draw(st.integers(2, 80))
    fractions = draw(st.lists(st.sampled_from([-0.49, 0.49, 0.5, -0.5, 0.0, 0.3]), min_size=n, max_size=n))
    steps = draw(st.lists(st.integers(0, 2**bits), min_size=n, max_size=n))
    ends = draw(st.lists(st.sampled_from([None, lo, hi, lo - 1, hi + 1, np.inf, -np.inf]), min_size=n, max_size=n))
    w = hi - lo
    x = np.array(
        [lo + (k + f) * w * 2.0**-bits if e is None else e for k, f, e in zip(steps, fractions, ends, strict=True)]
    )
    return x, lo, hi


@pytest.mark.slow
@pytest.mark.parametrize("statistic", ["mean", "sum", "var", "std"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_noiseless_release_is_within_the_allowance_of_the_exact_statistic(statistic, data):
    """With no noise (h = 0), the bar is the pure allowance: it must contain the exact clipped statistic.

    Both paths are exercised (at most 32 values: the Python small path; more: numpy blocks), with values 0.49 or
    0.5 step from grid points, at and beyond the bounds, and bounds that are tiny, huge or far from 0.
    """
    bits = VAR_BITS if statistic in ("var", "std") else SUM_BITS
    x, lo, hi = data.draw(adversarial_data(bits))
    ddof = data.draw(st.integers(0, 1)) if statistic in ("var", "std") else 0
    shape = _moments._Shape(n=x.size, d=1, axis=None, two_d=False)
    lo_a, hi_a = np.asarray(lo), np.asarray(hi)
    try:
        plan = _moments._plan(statistic, "raise", shape, lo_a, hi_a, ddof, "test", False, None)
    except ValueError:
        return  # bounds refused before any charge (sum overflowing float64, no representable grid)
    reported = plan.postprocess(np.atleast_1d(np.asarray(plan.target(x), dtype=np.float64)))
    bar = plan.accuracy(np.asarray(0.0), np.asarray(reported))
    if not math.isfinite(bar):
        return  # a variance beyond float64 (bounds near ±1e150 squared): the bar is honestly infinite
    assert within(reported, bar, statistic, exact(x, lo, hi, ddof))


@st.composite
def grid_case(draw: Any) -> tuple[Grid, np.ndarray, np.ndarray, np.ndarray, str]:
    d = draw(st.integers(1, 3))
    pairs = [draw(_bounds()) for _ in range(d)]
    lo, hi = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    bits = draw(st.sampled_from([VAR_BITS, SUM_BITS]))
    pooled = draw(st.booleans())
    offset = draw(st.sampled_from(["origin", "centre", "zero"]))
    try:
        grid = Grid.over(lo, hi, bits, pooled=pooled, offset=offset)
    except ValueError:
        grid = Grid.over(np.zeros(d), np.ones(d), bits, pooled=pooled, offset=offset)
        lo, hi = np.zeros(d), np.ones(d)
    n = draw(st.integers(1, 20))
    fractions = draw(st.lists(st.sampled_from([-0.49, 0.49, 0.5, 0.0, 0.37]), min_size=n * d, max_size=n * d))
    steps = draw(st.lists(st.integers(0, 2**bits), min_size=n * d, max_size=n * d))
    # Positions 0.49 step off the points of the grid each column is indexed on (its own, or the pooled one).
    first, width = (np.min(lo), np.max(hi) - np.min(lo)) if pooled else (lo, hi - lo)
    x = first + (np.array(steps) + np.array(fractions)).reshape(n, d) * width * 2.0**-bits
    return grid, x, lo, hi, offset


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(case=grid_case())
def test_every_index_is_within_the_grid_error_of_its_exact_position(case):
    """The lemma behind every allowance: |(k − offset) − (clip(x) − r)·2ᵇ/W| ≤ grid.error, exactly."""
    grid, x, lo, hi, offset = case
    d = x.shape[1]
    k = grid.index(x, np.empty_like(x)) - grid.offset
    upper = np.full(d, hi.max()) if grid.origin.ndim == 0 else hi
    if offset == "zero":
        upper = np.maximum(upper, 0.0)
    origins = np.broadcast_to(grid.origin, (d,))
    for j in range(d):
        a, b = Fraction(float(origins[j])), Fraction(float(upper[j]))
        width = b - a
        ref = {"origin": a, "centre": a + width / 2, "zero": Fraction(0)}[offset]
        for i in range(x.shape[0]):
            c = Fraction(float(np.clip(x[i, j], lo[j], hi[j])))
            position = (c - ref) * 2**grid.bits / width
            assert abs(Fraction(float(k[i, j])) - position) <= Fraction(grid.error), (i, j)


@pytest.mark.parametrize("statistic", ["mean", "var", "groupby"])
def test_the_deterministic_check_catches_the_bar_without_the_grid_allowance(statistic):
    """The exact checks have power: with every grid claiming zero error they find a counterexample."""
    with old_bars(), pytest.raises(AssertionError):
        if statistic == "groupby":
            test_groupby_exact_sums_are_within_their_allowance_of_the_clipped_sums()
        else:
            test_the_noiseless_release_is_within_the_allowance_of_the_exact_statistic(statistic=statistic)


# ---- pandas input perturbation -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_frame_noise_bars_are_in_data_units_and_cover_every_cell():
    """DataFrame.private.noise: the bar of each cell is in its column's units (width, integer rounding, float32
    cast included) and covers the clipped value; the bar in widths (what the Response gave before) does not."""
    import pandas as pd

    import diffpriv_py.pandas  # noqa: F401  (registers the accessor)

    gen = np.random.default_rng(11)
    frame = pd.DataFrame(
        {
            "wide": gen.uniform(-20, 120, 30),
            "count": gen.integers(0, 50, 30),
            "small": gen.uniform(0, 1, 30).astype(np.float32),
        }
    )
    bounds = {"wide": (0.0, 100.0), "count": (0, 49), "small": (0.0, 1.0)}
    clipped = np.column_stack([np.clip(frame[c].to_numpy(np.float64), *bounds[c]) for c in frame.columns])
    runs, alpha = 100, 0.2
    hits = np.zeros(3)
    old = np.zeros(3)
    for seed in range(runs):
        r = frame.private.noise(dp.Eps(3.0), bounds=bounds, rng=seed, full_response=True)
        err = np.abs(r.response.to_numpy(np.float64) - clipped)
        hits += (err <= r.accuracy(alpha)).sum(axis=0)
        old += (err <= dp.accuracy.half_width(r.mechanism, r.privacy_params, r.response.to_numpy(), alpha)).sum(0)
    trials = runs * frame.shape[0]
    floor = coverage_floor(trials, alpha)
    assert np.all(hits >= floor), hits
    assert old[0] < floor and old[1] < floor  # widths 100 and 49: the bar in widths is far too small


# ---- direct releases -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_float_noise_bars_include_the_rounding_of_the_noisy_output(mech):
    """noise="float" adds noise in one float addition. With the noise's bar just below one ulp of the output
    (target 10¹⁰ + ⅓, ulp 2⁻¹⁹), any |noise| above half an ulp rounds to a whole ulp — beyond the noise quantile
    alone about 20-30% of the time; the bar with one ulp for the rounding covers."""
    target = 1e10 + 1.0 / 3.0
    ulp = float(np.spacing(target))
    if mech == "laplace":
        params: dp.Eps = dp.Eps(1.0)
        delta = 0.99 * ulp / math.log(1 / ALPHA)
        m: Any = dp.Laplace(target=lambda x: target, sensitivity=delta, noise="float")
    else:
        params = dp.Del(1.0, 1e-6)
        unit = dp.Gaussian(target=lambda x: target, sensitivity=1.0, noise="float").noise_scale(params)
        delta = 0.99 * ulp / (float(sps.norm.isf(ALPHA / 2)) * unit)
        m = dp.Gaussian(target=lambda x: target, sensitivity=delta, noise="float")
    runs = 300
    hits = old = 0
    for seed in range(runs):
        r = m.release_response(params, [0.0], rng=seed)
        err = abs(Fraction(float(r.response)) - Fraction(target))
        bar = r.accuracy(ALPHA)
        hits += err <= Fraction(bar)
        old += err <= Fraction(bar - float(np.spacing(abs(float(r.response)))))
    assert hits >= coverage_floor(runs)
    assert old < coverage_floor(runs)


def test_a_sum_cast_to_a_dtype_has_a_bar_for_the_cast():
    """dtype=int rounds (½ more); a value clipped to an integer dtype's end has an infinite bar (the exact sum may lie
    beyond it); float32 adds its precision."""
    x = np.full(50, 3.0)
    plain = dp.stats.sum(x, dp.Eps(1.0), bounds=(0, 10), rng=0, full_response=True).accuracy(ALPHA)
    rounded = dp.stats.sum(x, dp.Eps(1.0), bounds=(0, 10), dtype=int, rng=0, full_response=True)
    assert rounded.accuracy(ALPHA) == pytest.approx(plain + 0.5, rel=1e-12)
    clipped = dp.stats.sum(x, dp.Eps(1.0), bounds=(0, 10), dtype=np.int8, rng=0, full_response=True)
    assert int(clipped.response) == 127 and clipped.accuracy(ALPHA) == math.inf  # the exact sum 150 is beyond 127
    single = dp.stats.sum(x, dp.Eps(1.0), bounds=(0, 10), dtype=np.float32, rng=0, full_response=True)
    assert single.accuracy(ALPHA) > plain


@pytest.mark.slow
@pytest.mark.parametrize("axis", [None, 0])
def test_histogram_count_bars_cover_numpys_counts(axis):
    """Histogram counts (numpy's counts with the public float64 edges) are within ⌊h + ½⌋ at rate ≥ 1 − α, laid out
    as the counts; a bar a quarter as wide is refuted."""
    x = np.random.default_rng(2).uniform(-1, 11, (400, 2))
    exact_counts = np.column_stack([np.histogram(x[:, j], bins=6, range=(0, 10))[0] for j in range(2)])
    if axis is None:
        exact_counts = np.histogram(x, bins=6, range=(0, 10))[0]
    runs, alpha = 200, 0.2
    hits = quarter = 0
    for seed in range(runs):
        r, _ = dp.stats.histogram(x, dp.Eps(0.5), bins=6, range=(0, 10), axis=axis, rng=seed, full_response=True)
        bar = r.accuracy(alpha)
        assert bar.shape == r.response.shape
        err = np.abs(r.response - exact_counts)
        hits += int((err <= bar).sum())
        quarter += int((err <= bar / 4).sum())
    trials = runs * exact_counts.size
    assert hits >= coverage_floor(trials, alpha)
    assert quarter < coverage_floor(trials, alpha)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_groupby_exact_sums_are_within_their_allowance_of_the_clipped_sums(data):
    """The group-by measurements (Σ values, Σu, Σ(u² − ⅛) in released units) on grid-adversarial values: each is
    within rows·(grid.error·2⁻ᵇ + u·M) of the exact sum over the clipped values, decided in rational arithmetic."""
    from diffpriv_py.stats._groupby import GroupBy

    x, lo, hi = data.draw(adversarial_data(VAR_BITS))
    x = x[np.isfinite(x)]
    if x.size == 0:
        return
    mech = GroupBy(statistics=("sum", "mean", "var"), bounds=(lo, hi), keys=(0,))
    try:
        computed, _ = mech._exact_sums(np.zeros(x.size, dtype=np.int64), x, 1)
    except ValueError:
        return  # bounds without a representable grid are refused (before any charge, in a release)
    clipped = [Fraction(float(v)) for v in np.clip(x, lo, hi)]
    n = len(clipped)
    for m in mech.measurements():
        if m.grid is None:
            continue
        a = Fraction(float(m.grid.origin))
        if m.name == "sum":
            width = Fraction(max(hi, 0.0)) - a
            truth = sum(clipped, Fraction(0)) / width
        else:
            width = Fraction(hi) - a
            u = [(c - a - width / 2) / width for c in clipped]
            truth = sum(u, Fraction(0)) if m.name == "sum_u" else sum((v * v - Fraction(1, 8) for v in u), Fraction(0))
        allowance = n * (m.grid.error * 2.0**-m.grid.bits + 2.0**-53 * m.bound)
        assert abs(Fraction(float(computed[m.name][0])) - truth) <= Fraction(allowance), m.name
