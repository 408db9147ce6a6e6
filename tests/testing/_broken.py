"""Deliberately broken mechanisms, each leaking only on some neighbouring pairs: the searching auditor must find it."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

import diffpriv_py as dp
from diffpriv_py.mechanisms.base import DPMech


def _identity(data: Any) -> Any:
    return data


@attrs.frozen(kw_only=True)
class InterpolatingQuantile(DPMech):
    """Broken (the old dp.stats quantile): the exponential mechanism over the intervals between sorted data points,
    then the float a + U·(b − a) inside the chosen interval. DP over the reals, but the set of floats it can output
    depends on the data (the lattice a + k·2⁻⁵³·(b − a)), so moving one record by 1e-9 changes it."""

    target: Any = attrs.field(default=_identity)
    sensitivity: float = 1.0
    q: float = 0.5
    lower: float
    upper: float

    def _evaluate(self, output: Any) -> np.ndarray:
        return np.sort(np.clip(np.asarray(output, dtype=np.float64), self.lower, self.upper))

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        points = np.unique(np.concatenate([value1, value2, [self.lower, self.upper]]))
        probes = (points[:-1] + points[1:]) / 2
        u1 = -np.abs(np.searchsorted(value1, probes) - self.q * value1.size)
        u2 = -np.abs(np.searchsorted(value2, probes) - self.q * value2.size)
        return float(np.max(np.abs(u1 - u2), initial=0.0))

    def _release(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator) -> float:
        return float(self._sample_many(value, privacy_params, rng, 1)[0])

    def _sample_many(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        edges = np.concatenate([[self.lower], value, [self.upper]])
        ranks = np.arange(edges.size - 1)
        with np.errstate(divide="ignore"):
            logits = np.log(np.diff(edges)) - privacy_params.epsilon / 2 * np.abs(ranks - self.q * value.size)
        p = np.exp(logits - logits.max())
        idx = rng.choice(ranks.size, size=n, p=p / p.sum())
        a, b = edges[idx], edges[idx + 1]
        return np.clip(a + rng.random(n) * (b - a), a, b)


@attrs.frozen
class FloatSumMean:
    """Broken target: clip to offset bounds, then a float sum; near 2⁴³ its rounding moves by more than (hi − lo)/n."""

    lower: float
    upper: float

    def __call__(self, data: np.ndarray) -> float:
        x = np.clip(np.asarray(data, dtype=np.float64), self.lower, self.upper)
        return float(np.cumsum(x)[-1] / x.size)  # left-to-right float sum, as a naive loop would do


@attrs.frozen
class SquaredNormClip:
    """Broken target: per-coordinate second moments, clipped by min(1, C/‖x‖)² *after* squaring, so a record of
    1e200 gives inf·0 = NaN instead of a clipped contribution."""

    data_norm: float = 1.0

    def __call__(self, data: np.ndarray) -> np.ndarray:
        X = np.asarray(data, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            squares = X * X
            factor = np.minimum(1.0, self.data_norm / np.sqrt(squares.sum(axis=1)))
            return (squares * factor[:, None] ** 2).sum(axis=0)


@attrs.frozen(kw_only=True)
class UncheckedLaplace(dp.Laplace):
    """A user-written Laplace variant that releases whatever its target returns, NaN included (no finiteness check)."""

    def _evaluate(self, output: Any) -> np.ndarray:
        return np.asarray(output, dtype=np.float64)


@attrs.frozen(kw_only=True)
class LinearExponential(dp.Exponential):
    """Broken (R's diffpriv bug): selects a candidate with probability ∝ score, not ∝ exp(ε·score/(2Δ)), so a score
    of 0 on one side is probability 0 there and positive on the other."""

    def _probabilities(self, value: np.ndarray) -> np.ndarray:
        w = np.maximum(value, 0.0)
        return w / w.sum() if w.sum() > 0 else np.full(w.size, 1.0 / w.size)

    def _release(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator) -> Any:
        return self.response_set[int(rng.choice(value.size, p=self._probabilities(value)))]

    def _sample_many(self, value: np.ndarray, privacy_params: dp.Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.choice(value.size, size=n, p=self._probabilities(value))
