"""The small-data path of the dp.stats moments (Python arithmetic) gives the array path's value bit for bit."""

import numpy as np
import pytest

from diffpriv_py.stats._moments import SMALL, ClippedStatistic


def _both_paths(statistic: str, x: np.ndarray, low: float, high: float) -> tuple[object, object]:
    target = ClippedStatistic(statistic, np.asarray(low), np.asarray(high))
    grid = target.grid(1)
    return target(x), target._finish(target._sums(x, grid), grid)


@pytest.mark.parametrize("statistic", ["mean", "sum", "var"])
def test_small_path_equals_the_array_path_on_random_data_bounds_and_infinities(statistic):
    """Random sizes up to SMALL, random bounds, values outside them and ±inf: the same float64 from both paths."""
    rng = np.random.default_rng(5)
    for trial in range(500):
        size = int(rng.integers(1, SMALL + 1))
        low = float(rng.normal() * 100)
        high = low + float(rng.exponential() * 50) + 1e-6
        x = rng.normal((low + high) / 2, high - low, size)
        if trial % 5 == 0:
            x[rng.integers(size)] = np.inf if trial % 2 else -np.inf
        small, array = _both_paths(statistic, x, low, high)
        assert small == array


@pytest.mark.parametrize("statistic", ["mean", "sum", "var"])
def test_small_path_rounds_exact_halves_to_even_like_the_array_path(statistic):
    """Values exactly halfway between grid points round half to even on both paths (a round-half-up bug fails)."""
    target = ClippedStatistic(statistic, np.asarray(0.0), np.asarray(1.0))
    x = (np.arange(SMALL) * 7 + 0.5) / target.grid(1).scale
    small, array = _both_paths(statistic, x, 0.0, 1.0)
    assert small == array
    # The halves matter: rounding them up instead of to even changes the value.
    half_up = float(np.floor(x * target.grid(1).scale + 0.5).sum()) / (SMALL * 2 ** target.grid(1).bits)
    if statistic == "mean":
        assert small != half_up


def test_small_path_sends_nan_to_the_array_path_error():
    """A NaN among few values gets nan_policy='raise''s error, as on the array path."""
    x = np.array([0.1, np.nan, 0.3])
    with pytest.raises(ValueError, match="NaN"):
        ClippedStatistic("mean", np.asarray(0.0), np.asarray(1.0))(x)
