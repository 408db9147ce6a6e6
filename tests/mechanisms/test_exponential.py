"""Exponential-mechanism math: P(r) ∝ exp(ε·s(r)/(2Δ)), the L∞ norm over the response set, R's cases and bugs."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax

import diffpriv_py as dp
from diffpriv_py.exceptions import TargetOutputError

PANGRAM = "the quick brown fox jumps over the lazy dog".split()
LETTERS = list("abcdefghijklmnopqrstuvwxyz")


def letter_counts(words):
    """Score function: how often each letter occurs in the words (R's vignette target)."""
    text = "".join(words)
    return lambda letter: text.count(letter)


def frequencies(mech, params, data, n, seed):
    """Release ``n`` times and count how often each candidate wins."""
    rng = np.random.default_rng(seed)
    picks = [mech.release_response(params, data, rng=rng).response for _ in range(n)]
    return np.array([picks.count(r) for r in mech.response_set])


def test_response_lies_in_the_response_set():
    """R: the response is one of the letters (pangram data, Δ = 5, ε = 1)."""
    mech = dp.Exponential(target=letter_counts, response_set=LETTERS, sensitivity=5)
    assert mech.release_response(dp.Eps(1), PANGRAM, rng=3).response in LETTERS


def test_sampled_sensitivity_turns_the_guarantee_into_gam():
    """R: an Exponential with gamma_sensitivity 0.1 reports Gam(1, 0, 0.1)."""
    mech = dp.Exponential(target=letter_counts, response_set=LETTERS, sensitivity=5, gamma_sensitivity=0.1)
    assert mech.release_response(dp.Eps(1), PANGRAM, rng=3).privacy_params == dp.Gam(1, 0, 0.1)


def test_norm_is_linf_over_the_response_set():
    """R: letter counts of ('abcde','aaaaa') vs ('abcde','fgh') differ by 5 at most."""
    mech = dp.Exponential(target=letter_counts, response_set=LETTERS, sensitivity=1)
    assert mech.sensitivity_norm(["abcde", "aaaaa"], ["abcde", "fgh"]) == 5


def test_target_not_returning_a_function_is_refused():
    """R: a target that does not return a function errors with 'not a function'."""
    mech = dp.Exponential(target=lambda X: 3, response_set=LETTERS, sensitivity=1)
    with pytest.raises(TargetOutputError, match="not a function"):
        mech.release_response(dp.Eps(1), PANGRAM, rng=0)
    with pytest.raises(TargetOutputError, match="not a function"):
        mech.sensitivity_norm(PANGRAM, PANGRAM)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_are_refused_naming_the_candidate(bad):
    """NaN or infinite scores raise before sampling, naming the candidate."""
    mech = dp.Exponential(target=lambda X: lambda r: bad if r == "b" else 1.0, response_set=list("abc"), sensitivity=1)
    with pytest.raises(TargetOutputError, match="'b'"):
        mech.release_response(dp.Eps(1), [], rng=0)


def test_empty_or_string_response_sets_are_refused():
    """An empty response set, or a bare string, is refused at construction."""
    with pytest.raises(ValueError, match="non-empty"):
        dp.Exponential(target=letter_counts, response_set=[], sensitivity=1)
    with pytest.raises(TypeError, match="response_set"):
        dp.Exponential(target=letter_counts, response_set="abc", sensitivity=1)


def test_vectorized_scores_must_have_one_per_candidate():
    """A vectorised score function returning the wrong number of scores is refused."""
    mech = dp.Exponential(target=lambda X: lambda rs: [1.0, 2.0], response_set=LETTERS, sensitivity=1, vectorized=True)
    with pytest.raises(TargetOutputError, match="one per candidate"):
        mech.release_response(dp.Eps(1), [], rng=0)


def test_candidate_with_score_zero_is_still_selectable():
    """R bug: sampling ∝ score never picks a zero-score candidate; exp(ε·0/2Δ) > 0 must be picked."""
    mech = dp.Exponential(target=lambda X: lambda r: float(r), response_set=[0, 1], sensitivity=1)
    counts = frequencies(mech, dp.Eps(0.5), None, 400, seed=11)
    assert counts[0] > 0


def test_huge_scores_neither_overflow_nor_lose_candidates():
    """Scores near 1e6 are handled in log space: both close candidates are chosen sometimes."""
    mech = dp.Exponential(target=lambda X: lambda r: 1e6 - r, response_set=[0, 1], sensitivity=1)
    counts = frequencies(mech, dp.Eps(1), None, 400, seed=5)
    assert counts.min() > 0


def test_zero_sensitivity_releases_the_best_candidate():
    """With Δ = 0 the scores cannot depend on the data, so the best candidate is released deterministically."""
    mech = dp.Exponential(target=letter_counts, response_set=LETTERS, sensitivity=0)
    assert mech.release_response(dp.Eps(1), PANGRAM, rng=0).response == "o"


CHI2_ALPHA = 1e-6
"""False-alarm probability of the chi-square checks below: a correct sampler fails once in a million seeds."""


def chi_square_p(counts, probabilities):
    return stats.chisquare(counts, counts.sum() * probabilities).pvalue


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_selection_frequencies_match_the_exact_distribution(method):
    """Chi-square at α = 1e-6 against exp(ε·s/(2Δ)) (exponential) or the permute-and-flip pmf."""
    scores = np.array([0.0, 1.0, 2.0, 4.0])
    mech = dp.Exponential(
        target=lambda X: lambda rs: scores, response_set=range(4), sensitivity=1, vectorized=True, method=method
    )
    counts = frequencies(mech, dp.Eps(1.0), None, 20000, seed=7)
    logits = scores / 2.0
    expected = softmax(logits) if method == "exponential" else permute_and_flip_pmf(logits)
    assert chi_square_p(counts, expected) > CHI2_ALPHA
    # Power: the same counts refute the mechanism that drops the factor 2 (R-style bug family).
    assert chi_square_p(counts, softmax(scores)) < CHI2_ALPHA


def permute_and_flip_pmf(logits):
    """Exact permute-and-flip probabilities by enumerating all orders (McKenna & Sheldon 2020)."""
    from itertools import permutations

    accept = np.exp(logits - logits.max())
    pmf = np.zeros(len(logits))
    orders = list(permutations(range(len(logits))))
    for order in orders:
        reach = 1.0
        for i in order:
            pmf[i] += reach * accept[i] / len(orders)
            reach *= 1 - accept[i]
    return pmf


@pytest.mark.parametrize("candidates", [{"a", "b"}, frozenset({1, 2}), {"a": 1}.keys()])
def test_unordered_response_sets_are_refused(candidates):
    """A set's order depends on hashing, so a seeded release would differ between processes: refused."""
    with pytest.raises(TypeError, match="sorted"):
        dp.Exponential(target=lambda X: lambda r: 0.0, response_set=candidates, sensitivity=1.0)
