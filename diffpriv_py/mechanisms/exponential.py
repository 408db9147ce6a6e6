"""The exponential mechanism over a finite response set (McSherry & Talwar 2007; R: ``DPMechExponential``)."""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, Sequence, Set, ValuesView
from typing import Any

import attrs
import numpy as np

from ..exceptions import TargetOutputError
from ..privacy import Eps
from ._selection import sample_exponential, sample_exponential_many
from .base import DPMech

__all__ = ["Exponential"]


def _non_empty(instance: Any, attribute: attrs.Attribute, value: tuple) -> None:
    if len(value) == 0:
        raise ValueError(
            "The 'response_set' of Exponential must be a non-empty collection of candidate answers. Got an empty one."
        )


def _as_tuple(value: Any) -> tuple:
    if isinstance(value, (Set, KeysView, ValuesView, ItemsView)):
        # A set's iteration order depends on hashing (randomised per process for strings), so the same seed would
        # select a different response in another process: refuse rather than release irreproducibly.
        raise TypeError(
            "The 'response_set' of Exponential must be an ordered sequence of candidate answers; got an unordered "
            f"{type(value).__name__} {value!r}, whose order (and so the seeded release) can change between "
            "processes. Pass sorted(candidates) or a list in the order you want."
        )
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray, range)):
        raise TypeError(
            "The 'response_set' of Exponential must be a list (or other sequence) of candidate answers. "
            f"Got {value!r} (type {type(value).__name__})."
        )
    return tuple(value)


@attrs.frozen(kw_only=True)
class Exponential(DPMech):
    """Select one response with probability ∝ exp(ε·score/(2Δ)) (R: ``DPMechExponential``).

    Parameters
    ----------
    target : callable
        Maps a dataset to a *score function* ``r -> float`` giving the quality of each candidate response
        (higher is better). With ``vectorized=True`` the score function is called once with the whole response
        set as a list and must return one score per candidate.
    response_set : sequence
        The finite set of candidate responses, any Python objects, in a fixed order (a list, tuple, range or
        array). Python sets are refused: their order depends on hashing, so a seeded release would not be
        reproducible across processes; pass ``sorted(candidates)``.
    sensitivity : float
        Global sensitivity Δ of the score: the largest change of any candidate's score between replace-one
        neighbouring datasets (L∞ over the response set).
    vectorized : bool, default False
        Whether the score function scores the whole response set in one call (the fast path).
    method : {"exponential", "permute_and_flip"}, default "exponential"
        ``"permute_and_flip"`` (McKenna & Sheldon 2020) gives the same ε-DP guarantee and never worse expected
        utility.

    Notes
    -----
    ε-DP for any score with sensitivity Δ (McSherry & Talwar 2007); the factor 2 is needed because replace-one
    neighbours can move scores in opposite directions. Sampling is done in log space, so huge scores neither
    overflow nor make candidates with tiny probability impossible. NaN or infinite scores are refused.

    Deliberate divergence from R: R's implementation samples proportionally to the raw score, without the
    exponential, which is not differentially private (a candidate scored 0 can never be chosen).
    """

    response_set: tuple = attrs.field(converter=_as_tuple, validator=_non_empty)
    vectorized: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    method: str = attrs.field(
        default="exponential", validator=attrs.validators.in_(("exponential", "permute_and_flip"))
    )

    def _evaluate(self, output: Any) -> np.ndarray:
        if not callable(output):
            raise TargetOutputError(
                "Non-private target output is not a function: the target of Exponential must return a score "
                f"function r -> float. Got {type(output).__name__}."
            )
        n = len(self.response_set)
        if self.vectorized:
            scores = np.asarray(output(list(self.response_set)), dtype=np.float64)
        else:
            scores = np.fromiter((output(r) for r in self.response_set), dtype=np.float64, count=n)
        if scores.shape != (n,):
            raise TargetOutputError(
                f"The score function returned {scores.size} scores for {n} candidate responses; return exactly one "
                "per candidate."
            )
        if not np.all(np.isfinite(scores)):
            bad = self.response_set[int(np.flatnonzero(~np.isfinite(scores))[0])]
            raise TargetOutputError(
                f"The score of candidate {bad!r} is not finite. Scores must be finite numbers; clip or fix the "
                "score function."
            )
        return scores

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        return float(np.max(np.abs(value1 - value2)))

    def _scale(self, privacy_params: Eps) -> float:
        # Zero sensitivity: every candidate's score is fixed, so the best one is released with no randomness.
        return np.inf if self.sensitivity == 0 else privacy_params.epsilon / (2.0 * self.sensitivity)

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> Any:
        return self.response_set[sample_exponential(value, self._scale(privacy_params), rng, method=self.method)]

    def _sample_many(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """Indices into ``response_set`` of ``n`` independent releases on scores ``value`` (for auditing)."""
        return sample_exponential_many(value, self._scale(privacy_params), rng, n, method=self.method)
