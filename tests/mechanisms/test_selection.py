"""The exponential-mechanism samplers: right probabilities, no candidate lost to float truncation, permute-and-flip."""

import math

import numpy as np
import pytest
from scipy import stats

import diffpriv_py as dp
from diffpriv_py.noise import selection

P_FLOOR = 1e-7


class _ScriptedRng:
    """A stand-in Generator whose ``random`` returns scripted values (to reach probability-2^-1400 branches)."""

    def __init__(self, script):
        self.script = list(script)

    def random(self, size=None):
        if size is None:
            return self.script.pop(0)
        shape = (size,) if isinstance(size, int) else size
        return np.array([self.script.pop(0) for _ in range(int(np.prod(shape)))], dtype=np.float64).reshape(shape)


def _expected(scores, scale):
    w = np.exp(scale * (np.asarray(scores) - np.max(scores)))
    return w / w.sum()


def test_gumbel_draws_follow_the_standard_gumbel_law():
    """The full-range Gumbel sampler matches scipy's gumbel_r (KS, 10^6 draws)."""
    g = selection.gumbel(1_000_000, np.random.default_rng(1))
    assert stats.kstest(g, stats.gumbel_r.cdf).pvalue > P_FLOOR


def test_gumbel_reaches_beyond_the_53_bit_float_limit():
    """With 1400 leading zero bits the Gumbel draw is about 971, far above the 36.7 cap of −ln(−ln U)."""
    script = [0.75, 0.0, 0.5] + [0.0] * 25 + [2.0**-22]  # K1 = 0; K2 = 26·53 + 21; mantissa f = 0.5
    g = selection.gumbel(1, _ScriptedRng(script))
    assert g[0] == pytest.approx((26 * 53 + 21 + 2) * math.log(2) - math.log1p(0.5), rel=1e-12)
    assert g[0] > 900


def test_candidate_far_behind_can_still_win():
    """A candidate 900 behind wins when its Gumbel noise is extreme: its probability is not truncated to zero."""
    # Two candidates; the second's noise is the ~971 draw of the previous test, the first's an ordinary one.
    script = [0.75, 0.75] + [0.3, 0.0] + [0.5, 0.5] + [0.0] * 25 + [2.0**-22]
    idx = selection.sample_exponential_many(np.array([900.0, 0.0]), 1.0, _ScriptedRng(script), 1)
    assert idx[0] == 1


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_single_draw_far_behind_can_still_win(method):
    """The few-candidate single-draw path keeps the unbounded noise too: a candidate 900 behind can win."""
    script = [0.75, 0.75, 0.5, 0.75, 0.0, 0.5] + [0.0] * 25 + [2.0**-22]
    if method == "permute_and_flip":  # Exp noise: the far candidate needs K1 ≈ 1300 leading zeros instead
        script = [0.75, 0.75, 0.5, 0.0, 0.75, 0.5] + [0.0] * 24 + [2.0**-22]
    assert selection.sample_exponential(np.array([900.0, 0.0]), 1.0, _ScriptedRng(script), method=method) == 1


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_selection_frequencies_match_the_mechanism(method):
    """Exponential frequencies are ∝ exp(scale·score); permute-and-flip's match its own closed form for K = 2."""
    rng = np.random.default_rng(2)
    scores = np.array([3.0, 2.0, 0.5, -40.0])
    draws = selection.sample_exponential_many(scores, 1.0, rng, 200_000, method=method)
    counts = np.bincount(draws, minlength=4)
    if method == "exponential":
        p = _expected(scores, 1.0)
    else:
        # Permute-and-flip over {best, others}: computed by exact enumeration of the 4! orders.
        from itertools import permutations

        acc = np.exp(scores - scores.max())
        p = np.zeros(4)
        for order in permutations(range(4)):
            reach = 1.0
            for i in order:
                p[i] += reach * acc[i] / 24
                reach *= 1 - acc[i]
    keep = p * 200_000 > 20
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(p[keep], p[~keep].sum()) * 200_000
    assert stats.chisquare(obs, exp).pvalue > P_FLOOR


def test_selection_frequency_test_catches_a_missing_factor():
    """The frequency test has power: draws at scale 2 are rejected against the scale-1 distribution."""
    scores = np.array([3.0, 2.0, 0.5, 0.0])
    draws = selection.sample_exponential_many(scores, 2.0, np.random.default_rng(3), 200_000)
    assert stats.chisquare(np.bincount(draws, minlength=4), _expected(scores, 1.0) * 200_000).pvalue < P_FLOOR


def test_permute_and_flip_is_never_worse_in_expected_score():
    """Permute-and-flip's expected score is at least the exponential mechanism's (McKenna & Sheldon 2020)."""
    scores = np.linspace(0, 5, 12)
    p_em = _expected(scores, 1.0)
    draws = selection.sample_exponential_many(scores, 1.0, np.random.default_rng(5), 100_000, method="permute_and_flip")
    assert scores[draws].mean() > (p_em * scores).sum() + 0.05


def test_base_measure_weights_candidates_and_zero_weight_never_wins():
    """log_weights multiplies each candidate's weight; −inf weight is never chosen."""
    rng = np.random.default_rng(6)
    scores = np.zeros(3)
    with np.errstate(divide="ignore"):
        log_w = np.log(np.array([1.0, 3.0, 0.0]))
        draws = selection.sample_exponential_many(scores, 1.0, rng, 100_000, log_weights=log_w)
    counts = np.bincount(draws, minlength=3)
    assert counts[2] == 0
    assert abs(counts[1] / counts.sum() - 0.75) < 0.01
    with pytest.raises(ValueError, match="only supported"):
        selection.sample_exponential(scores, 1.0, rng, method="permute_and_flip", log_weights=log_w)


def test_huge_scores_neither_overflow_nor_lose_candidates():
    """Scores of 1e300 and a scale of 1e10 give finite logits; the best wins and ties share."""
    rng = np.random.default_rng(7)
    scores = np.array([1e300, 1e300, -1e300])
    draws = selection.sample_exponential_many(scores, 1e10, rng, 10_000)
    assert set(np.unique(draws)) == {0, 1}


def test_exponential_mechanism_sample_many_matches_single_releases():
    """Exponential._sample_many draws from the same distribution as release_response."""
    mech = dp.Exponential(target=lambda X: lambda r: float(X.count(r)), response_set=list("abc"), sensitivity=1)
    scores = mech._evaluate(mech.target(list("aab")))
    many = mech._sample_many(scores, dp.Eps(2.0), np.random.default_rng(8), 100_000)
    freq = np.bincount(many, minlength=3) / many.size
    assert np.allclose(freq, _expected(scores, 1.0), atol=0.01)
