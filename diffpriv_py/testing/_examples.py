"""One :class:`MechCase` per built-in mechanism and noise setting, each with a worst-case neighbouring pair."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

from ..mechanisms import Bernstein, DiscreteLaplace, Exponential, Gaussian, Laplace
from ..privacy import Del, Eps
from ._checks import MechCase

__all__ = ["EXAMPLE_CASES"]

_N = 100


def _pair() -> tuple[np.ndarray, np.ndarray]:
    # Replace-one neighbours that move the mean of [0, 1]-valued data by exactly its sensitivity 1/n.
    X = np.full(_N, 0.25)
    X[0] = 0.0
    X_neighbour = X.copy()
    X_neighbour[0] = 1.0
    return X, X_neighbour


def _count_pair() -> tuple[np.ndarray, np.ndarray]:
    X = np.zeros(_N, dtype=np.int64)
    X[:40] = 1
    X_neighbour = X.copy()
    X_neighbour[-1] = 1
    return X, X_neighbour


def _letters_pair() -> tuple[list[str], list[str]]:
    # The non-monotone worst case: one record moves from 'a' to 'b', so 'b' gains Δ and 'a' loses Δ.
    X = ["a"] * 6 + ["b"] * 5 + ["c"] * 3 + ["d"]
    X_neighbour = ["b", *X[1:]]
    return X, X_neighbour


def _letter_scores(X: list[str]) -> Callable[[str], float]:
    return lambda r: float(X.count(r))


def _mean(X: np.ndarray) -> float:
    return float(np.mean(X))


def _count(X: np.ndarray) -> int:
    return int(np.sum(X))


def _kernel_density(X: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    # Each record moves the value at any point by at most 1/n (the kernel is in [0, 1]).
    return lambda y: np.exp(-((np.asarray(y)[:, None] - X[None, :]) ** 2) / 0.02).mean(axis=1)


def _cases() -> list[MechCase]:
    X, X2 = _pair()
    C, C2 = _count_pair()
    L, L2 = _letters_pair()
    eps, dl = Eps(1.0), Del(1.0, 1e-5)
    # The opt-in float sampler is broken by design (Mironov 2012).
    float_reason = frozenset({"check_audit_passes", "check_search_audit_passes"})
    cases = [
        MechCase(mechanism=Laplace(target=_mean, sensitivity=1 / _N), privacy_params=eps, dataset=X, neighbour=X2),
        MechCase(
            mechanism=Laplace(target=_mean, sensitivity=1 / _N, noise="exact"),
            privacy_params=eps,
            dataset=X,
            neighbour=X2,
            slow=True,
            audit_n=3_000,
        ),
        MechCase(
            mechanism=Laplace(target=_mean, sensitivity=1 / _N, noise="float"),
            privacy_params=eps,
            dataset=X,
            neighbour=X2,
            skip=float_reason,
        ),
        MechCase(mechanism=Gaussian(target=_mean, sensitivity=1 / _N), privacy_params=dl, dataset=X, neighbour=X2),
        MechCase(
            mechanism=Gaussian(target=_mean, sensitivity=1 / _N, noise="exact"),
            privacy_params=dl,
            dataset=X,
            neighbour=X2,
            slow=True,
            audit_n=2_000,
        ),
        MechCase(
            mechanism=Gaussian(target=_mean, sensitivity=1 / _N, noise="float"),
            privacy_params=dl,
            dataset=X,
            neighbour=X2,
            skip=float_reason,
        ),
        MechCase(mechanism=DiscreteLaplace(target=_count, sensitivity=1), privacy_params=eps, dataset=C, neighbour=C2),
        MechCase(
            mechanism=DiscreteLaplace(target=_count, sensitivity=1, noise="exact"),
            privacy_params=eps,
            dataset=C,
            neighbour=C2,
            slow=True,
            audit_n=4_000,
        ),
    ]
    bernstein = Bernstein(target=_kernel_density, lattice_k=4, dims=1, sensitivity=1 / _N, vectorized=True)
    cases.append(MechCase(mechanism=bernstein, privacy_params=eps, dataset=X, neighbour=X2))
    for method in ("exponential", "permute_and_flip"):
        mech = Exponential(target=_letter_scores, response_set=list("abcdefghij"), sensitivity=1, method=method)
        cases.append(MechCase(mechanism=mech, privacy_params=eps, dataset=L, neighbour=L2))
    return [attrs.evolve(case, search=True) for case in cases]


EXAMPLE_CASES: list[MechCase] = _cases()
"""A case for every built-in mechanism and noise setting; each neighbouring pair realises the declared sensitivity."""
