"""dp.Exponential options: a public base measure (weights per candidate) and the monotonic-score calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import diffpriv_py as dp

ALPHA = 1e-6  # a correct sampler fails a test with probability below this


def _constant_scores(scores):
    return lambda X: lambda r: scores[r]


def _frequency_p_value(mech, scores, probability: float, draws: int, seed: int, index: int) -> float:
    """Two-sided binomial p-value of how often candidate ``index`` is drawn, against ``probability``."""
    picks = mech._sample_many(np.asarray(scores, dtype=float), dp.Eps(1.0), np.random.default_rng(seed), draws)
    return sps.binomtest(int(np.sum(picks == index)), draws, probability).pvalue


def test_base_measure_weights_the_draws_and_never_draws_weight_zero():
    """At equal scores the draws follow the weights 1:0:3; ignoring the weights (1:1:1) would be refuted."""
    scores = {0: 0.0, 1: 0.0, 2: 0.0}
    mech = dp.Exponential(
        target=_constant_scores(scores), response_set=[0, 1, 2], sensitivity=1.0, base_measure=[1, 0, 3]
    )
    picks = mech._sample_many(np.zeros(3), dp.Eps(1.0), np.random.default_rng(0), 40_000)
    assert not np.any(picks == 1)
    assert _frequency_p_value(mech, [0, 0, 0], 0.75, 40_000, seed=1, index=2) > ALPHA
    assert _frequency_p_value(mech, [0, 0, 0], 0.5, 40_000, seed=1, index=2) < ALPHA  # the bug "weights ignored"


def test_log_base_measure_is_the_same_mechanism_as_its_weights():
    """log_base_measure = ln(weights) gives the very same draws as base_measure (same seed)."""
    target = _constant_scores({0: 0.3, 1: 1.0, 2: -2.0})
    by_weight = dp.Exponential(target=target, response_set=[0, 1, 2], sensitivity=1.0, base_measure=[2.0, 0.0, 0.5])
    by_log = dp.Exponential(
        target=target,
        response_set=[0, 1, 2],
        sensitivity=1.0,
        log_base_measure=[math.log(2.0), -math.inf, math.log(0.5)],
    )
    scores = np.array([0.3, 1.0, -2.0])
    a = by_weight._sample_many(scores, dp.Eps(1.0), np.random.default_rng(5), 1000)
    b = by_log._sample_many(scores, dp.Eps(1.0), np.random.default_rng(5), 1000)
    np.testing.assert_array_equal(a, b)
    assert (
        by_weight.release_response(dp.Eps(1.0), None, rng=3).response
        == by_log.release_response(dp.Eps(1.0), None, rng=3).response
    )


def test_measure_is_diffprivlibs_name_for_the_base_measure():
    """measure= (diffprivlib's keyword) is the same mechanism as base_measure=: the same draws with the same seed."""
    target = _constant_scores({0: 0.3, 1: 1.0, 2: -2.0})
    weights = [1.0, 0.0, 3.0]
    by_base = dp.Exponential(target=target, response_set=[0, 1, 2], sensitivity=1.0, base_measure=weights)
    by_measure = dp.Exponential(target=target, response_set=[0, 1, 2], sensitivity=1.0, measure=weights)
    scores = np.array([0.3, 1.0, -2.0])
    a = by_base._sample_many(scores, dp.Eps(1.0), np.random.default_rng(7), 2000)
    b = by_measure._sample_many(scores, dp.Eps(1.0), np.random.default_rng(7), 2000)
    np.testing.assert_array_equal(a, b)
    assert not np.any(b == 1)  # weight 0 is never drawn: the measure is not ignored
    assert [by_measure.release_response(dp.Eps(1.0), None, rng=s).response for s in range(20)] == [
        by_base.release_response(dp.Eps(1.0), None, rng=s).response for s in range(20)
    ]


def test_base_measure_probabilities_follow_weight_times_exponential_score():
    """P(r) ∝ μ(r)·exp(ε·s(r)/(2Δ)): with μ = (1, 4) and s = (2, 0), Δ = 1, ε = 1: P(1) = 4/(4 + e)."""
    mech = dp.Exponential(
        target=_constant_scores({0: 2.0, 1: 0.0}), response_set=[0, 1], sensitivity=1.0, base_measure=[1, 4]
    )
    expected = 4 / (4 + math.e)
    assert _frequency_p_value(mech, [2.0, 0.0], expected, 40_000, seed=2, index=1) > ALPHA
    assert _frequency_p_value(mech, [2.0, 0.0], 1 / (1 + math.e), 40_000, seed=2, index=1) < ALPHA  # μ ignored


def test_monotonic_scores_use_epsilon_over_sensitivity_without_the_factor_two():
    """monotonic=True draws ∝ exp(ε·s/Δ): with s = (0, 1), P(1) = e/(1 + e); the default keeps e^½/(1 + e^½)."""
    target = _constant_scores({0: 0.0, 1: 1.0})
    mono = dp.Exponential(target=target, response_set=[0, 1], sensitivity=1.0, monotonic=True)
    plain = dp.Exponential(target=target, response_set=[0, 1], sensitivity=1.0)
    p_mono, p_plain = math.e / (1 + math.e), math.exp(0.5) / (1 + math.exp(0.5))
    assert _frequency_p_value(mono, [0.0, 1.0], p_mono, 20_000, seed=3, index=1) > ALPHA
    assert _frequency_p_value(mono, [0.0, 1.0], p_plain, 20_000, seed=3, index=1) < ALPHA
    assert _frequency_p_value(plain, [0.0, 1.0], p_plain, 20_000, seed=4, index=1) > ALPHA
    assert _frequency_p_value(plain, [0.0, 1.0], p_mono, 20_000, seed=4, index=1) < ALPHA


def test_monotonic_applies_to_permute_and_flip_too():
    """Permute-and-flip with monotonic=True uses ε/Δ: P(best) = 1 − e^(−1)/2 for scores (0, 1) (McKenna & Sheldon)."""
    mech = dp.Exponential(
        target=_constant_scores({0: 0.0, 1: 1.0}),
        response_set=[0, 1],
        sensitivity=1.0,
        method="permute_and_flip",
        monotonic=True,
    )
    # Permute-and-flip with scale c on two candidates: the best is kept when first; the other accepted w.p. e^(−c).
    p_best = 1 - 0.5 * math.exp(-1.0)
    assert _frequency_p_value(mech, [0.0, 1.0], p_best, 20_000, seed=6, index=1) > ALPHA
    assert _frequency_p_value(mech, [0.0, 1.0], 1 - 0.5 * math.exp(-0.5), 20_000, seed=6, index=1) < ALPHA


def test_zero_sensitivity_with_a_base_measure_releases_the_best_candidate_of_positive_weight():
    """Sensitivity 0: the best-scoring candidate among those with weight > 0, deterministically."""
    mech = dp.Exponential(
        target=_constant_scores({0: 5.0, 1: 1.0, 2: 0.0}),
        response_set=[0, 1, 2],
        sensitivity=0.0,
        base_measure=[0, 1, 1],
    )
    assert mech.release_response(dp.Eps(1.0), None, rng=0).response == 1


@pytest.mark.parametrize(
    "kwargs, kind, match",
    [
        ({"base_measure": [1, 2]}, ValueError, "one value per candidate"),
        ({"base_measure": [-1, 1, 1]}, ValueError, "≥ 0"),
        ({"base_measure": [0, 0, 0]}, ValueError, "at least one > 0"),
        ({"base_measure": [1, np.nan, 1]}, ValueError, "finite"),
        ({"log_base_measure": [np.inf, 0, 0]}, ValueError, r"\+inf"),
        ({"log_base_measure": [-np.inf] * 3}, ValueError, "at least one finite"),
        ({"base_measure": [1, 1, 1], "log_base_measure": [0, 0, 0]}, TypeError, "not both"),
        ({"base_measure": [1, 1, 1], "method": "permute_and_flip"}, ValueError, "method='exponential'"),
        ({"measure": [1, 2]}, ValueError, "one value per candidate"),
        ({"measure": [-1, 1, 1]}, ValueError, "≥ 0"),
        ({"measure": [1, 1, 1], "base_measure": [1, 1, 1]}, TypeError, "not both"),
        ({"measure": [1, 1, 1], "log_base_measure": [0, 0, 0]}, TypeError, "not both"),
        ({"measure": [1, 1, 1], "method": "permute_and_flip"}, ValueError, "method='exponential'"),
        ({"base_measure": "abc"}, TypeError, "1-D sequence"),
        ({"monotonic": 1}, TypeError, "monotonic"),
    ],
)
def test_bad_base_measures_and_options_are_refused_at_construction(kwargs, kind, match):
    """A base measure of the wrong length, sign or type, or a non-bool monotonic, is refused with the rule."""
    with pytest.raises(kind, match=match):
        dp.Exponential(target=_constant_scores({}), response_set=["a", "b", "c"], sensitivity=1.0, **kwargs)
