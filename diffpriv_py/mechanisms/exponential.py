"""The exponential mechanism over a finite response set (McSherry & Talwar 2007; R: ``DPMechExponential``)."""

from __future__ import annotations

import numbers
from collections.abc import ItemsView, KeysView, Sequence, Set, ValuesView
from typing import Any

import attrs
import numpy as np

from .._validation import one_of
from ..exceptions import TargetOutputError
from ..noise import sample_exponential, sample_exponential_many
from ..privacy import Eps
from .base import DPMech

__all__ = ["Exponential"]


def _non_empty(instance: Any, attribute: attrs.Attribute[Any], value: tuple[Any, ...]) -> None:
    if len(value) == 0:
        raise ValueError(
            "The 'response_set' of Exponential must be a non-empty collection of candidate answers. Got an empty one."
        )


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, (Set, KeysView, ValuesView, ItemsView)):
        # A set's iteration order depends on hashing (randomised per process for strings), so the same seed would
        # select a different response in another process: refuse rather than release irreproducibly.
        raise TypeError(
            "The 'response_set' of Exponential must be an ordered sequence of candidate answers; got an unordered "
            f"{type(value).__name__} {value!r}, whose order (and so the seeded release) can change between "
            "processes. Pass sorted(candidates) or a list in the order you want."
        )
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, (Sequence, np.ndarray, range))
        or (isinstance(value, np.ndarray) and value.ndim == 0)  # a 0-d array is one value, not a sequence
    ):
        raise TypeError(
            "The 'response_set' of Exponential must be a list (or other sequence) of candidate answers. "
            f"Got {value!r} (type {type(value).__name__})."
        )
    return tuple(value)


def _weights(value: Any) -> tuple[float, ...] | None:
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf":
        raise TypeError(
            "A base measure of Exponential ('base_measure', 'measure' or 'log_base_measure') must be a 1-D sequence of "
            "real "
            "numbers, one per candidate response. "
            f"Got {value!r}."
        )
    return tuple(arr.astype(np.float64).tolist())


def _check_base_measure(instance: Any, attribute: attrs.Attribute[Any], value: tuple[float, ...] | None) -> None:
    """Public checks of ``base_measure`` / ``measure`` / ``log_base_measure`` (length, sign, finite), when built."""
    if value is None:
        return
    name = attribute.name
    if len(value) != len(instance.response_set):
        raise ValueError(
            f"The '{name}' of Exponential must give one value per candidate response: {len(instance.response_set)} "
            f"candidates, got {len(value)} values."
        )
    arr = np.asarray(value)
    if name != "log_base_measure":
        ok = bool(np.all(np.isfinite(arr)) and np.all(arr >= 0) and np.any(arr > 0))
        rule = "finite weights ≥ 0, at least one > 0"
    else:
        ok = bool(not np.any(np.isnan(arr)) and not np.any(arr == np.inf) and np.any(np.isfinite(arr)))
        rule = "log-weights in [-inf, inf) (no NaN or +inf), at least one finite"
    if not ok:
        raise ValueError(f"The '{name}' of Exponential must hold {rule}. Got {value!r}.")
    given = [n for n in ("base_measure", "measure", "log_base_measure") if getattr(instance, n) is not None]
    if len(given) > 1:
        raise TypeError(
            f"Pass at most one base measure to Exponential, not both {given[0]} and {given[1]}. 'measure' is another "
            "name for 'base_measure'; pass one of them, or 'log_base_measure' alone."
        )
    if instance.method != "exponential":
        raise ValueError(
            f"A base measure is only supported with method='exponential'; got method={instance.method!r}. Drop the "
            "base measure or use method='exponential'."
        )


def _real_scores(raw: Any) -> np.ndarray:
    """The scores as float64; strings, complex numbers and other non-real values are refused, never parsed."""
    try:
        scores = np.asarray(raw)
    except (ValueError, TypeError):  # ragged: numpy cannot even form the array
        scores = np.asarray(raw, dtype=object)
    kind = scores.dtype.kind
    if kind == "O" and scores.ndim == 1 and all(isinstance(v, numbers.Real) for v in scores):
        kind = "f"  # e.g. Python ints beyond int64: real numbers all the same
    if kind not in "biuf":
        values = raw if isinstance(raw, list) else (scores.ravel() if scores.ndim else [scores.item()])
        bad = next((v for v in values if not isinstance(v, numbers.Real)), scores)
        raise TargetOutputError(
            f"The score function of Exponential must return real numbers (one float score per candidate); it "
            f"returned {bad!r} (type {type(bad).__name__}). Return float(score) from it."
        )
    return scores.astype(np.float64, copy=False)


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
    base_measure : sequence of float, optional
        Public weights μ(r) ≥ 0, one per candidate: candidate r is drawn with probability ∝ μ(r)·exp(ε·s(r)/(2Δ))
        (a weight 0 is never drawn). E.g. interval lengths for the exponential mechanism over intervals. Only with
        ``method="exponential"``.
    measure : sequence of float, optional
        Another name for ``base_measure`` (diffprivlib's ``Exponential(measure=...)``); pass one of the two.
    log_base_measure : sequence of float, optional
        The same as ln μ(r) (−inf for weight 0), for weights that would under- or overflow as floats.
    monotonic : bool, default False
        Declare that the score is *monotonic*: between any two neighbouring datasets every candidate's score moves
        in the same direction (all up or all down). Then ε/Δ replaces ε/(2Δ) (see Notes). A false declaration
        voids the guarantee (the release is then only 2ε-DP).

    Notes
    -----
    ε-DP for any score with sensitivity Δ (McSherry & Talwar 2007); the factor 2 is needed because replace-one
    neighbours can move scores in opposite directions. Sampling is done in log space, so huge scores neither
    overflow nor make candidates with tiny probability impossible. NaN or infinite scores are refused.

    Deliberate divergence from R: R's implementation samples proportionally to the raw score, without the
    exponential, which is not differentially private (a candidate scored 0 can never be chosen).

    A base measure μ (McSherry & Talwar 2007 define the mechanism with one) keeps the guarantee: μ is public and
    fixed, so the ratio of the probabilities of r on two neighbours is the same as without it. With
    ``monotonic=True`` the mechanism samples ∝ exp(ε·s/Δ): when all scores move in the same direction the
    normalising sum moves with them, so the factor 2 is not needed (McSherry & Talwar 2007; Dwork & Roth 2014,
    §3.4; the same holds for permute-and-flip, McKenna & Sheldon 2020). This holds for counting scores under
    add/remove neighbours; under the replace-one relation used here one replaced record can raise one candidate's
    score and lower another's (e.g. votes, rank-based quantile scores), so most scores are *not* monotonic — declare
    it only when a proof covers replace-one neighbours (e.g. scores that can only all rise or all fall when a
    record changes).
    """

    response_set: tuple[Any, ...] = attrs.field(converter=_as_tuple, validator=_non_empty)
    vectorized: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    method: str = attrs.field(default="exponential", validator=one_of("exponential", "permute_and_flip"))
    base_measure: tuple[float, ...] | None = attrs.field(
        default=None, converter=_weights, validator=_check_base_measure, repr=False
    )
    measure: tuple[float, ...] | None = attrs.field(
        default=None, converter=_weights, validator=_check_base_measure, repr=False
    )
    log_base_measure: tuple[float, ...] | None = attrs.field(
        default=None, converter=_weights, validator=_check_base_measure, repr=False
    )
    monotonic: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def _evaluate(self, output: Any) -> np.ndarray:
        if not callable(output):
            raise TargetOutputError(
                "Non-private target output is not a function: the target of Exponential must return a score "
                f"function r -> float. Got {type(output).__name__}."
            )
        n = len(self.response_set)
        if self.vectorized:
            scores = _real_scores(output(list(self.response_set)))
        else:
            scores = _real_scores([output(r) for r in self.response_set])
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
        if self.sensitivity == 0:
            return np.inf
        return privacy_params.epsilon / ((1.0 if self.monotonic else 2.0) * self.sensitivity)

    def _log_weights(self) -> np.ndarray | None:
        """ln μ per candidate (None without a base measure); weight 0 is −inf."""
        if self.log_base_measure is not None:
            return np.asarray(self.log_base_measure)
        weights = self.base_measure if self.base_measure is not None else self.measure
        if weights is None:
            return None
        with np.errstate(divide="ignore"):
            result: np.ndarray | None = np.log(np.asarray(weights))
            return result

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> Any:
        index = sample_exponential(
            value, self._scale(privacy_params), rng, method=self.method, log_weights=self._log_weights()
        )
        return self.response_set[index]

    def _sample_many(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """Indices into ``response_set`` of ``n`` independent releases on scores ``value`` (for auditing)."""
        return sample_exponential_many(
            value, self._scale(privacy_params), rng, n, method=self.method, log_weights=self._log_weights()
        )
