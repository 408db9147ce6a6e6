"""R-parity names for people porting code from the R package ``diffpriv``: the same objects, not copies."""

from __future__ import annotations

from typing import Any

from ._rng import RNGLike
from .mechanisms import Bernstein, DPMech, Exponential, Gaussian, Laplace
from .mechanisms.base import check_mechanism
from .mechanisms.response import Response
from .privacy import Del, Eps, Gam

__all__ = [
    "DPMech",
    "DPMechBernstein",
    "DPMechExponential",
    "DPMechGaussian",
    "DPMechLaplace",
    "DPParamsDel",
    "DPParamsEps",
    "DPParamsGam",
    "releaseResponse",
    "sensitivitySampler",
    "sensitivitySamplerManual",
]

DPParamsEps = Eps
DPParamsDel = Del
DPParamsGam = Gam
DPMechLaplace = Laplace
DPMechGaussian = Gaussian
DPMechExponential = Exponential
DPMechBernstein = Bernstein


def _mechanism(value: Any, name: str, function: str) -> DPMech:
    return check_mechanism(value, name, owner=function, example="DPMechLaplace(...)")


def releaseResponse(mechanism: DPMech, privacyParams: Eps, X: Any, *, rng: RNGLike = None) -> Response:
    """R's ``releaseResponse(mechanism, privacyParams, X)``: ``mechanism.release_response(privacyParams, X)``."""
    return _mechanism(mechanism, "mechanism", "releaseResponse").release_response(privacyParams, X, rng=rng)


def sensitivitySampler(
    object: DPMech,
    oracle: Any,
    n: int,
    m: int | None = None,
    gamma: float | None = None,
    *,
    rng: RNGLike = None,
) -> DPMech:
    """R's ``sensitivitySampler``; returns the new mechanism (R returns the modified copy too)."""
    return _mechanism(object, "object", "sensitivitySampler").sensitivity_sampler(oracle, n, m=m, gamma=gamma, rng=rng)


def sensitivitySamplerManual(object: DPMech, oracle: Any, n: int, m: int, k: int, *, rng: RNGLike = None) -> DPMech:
    """R's ``sensitivitySamplerManual``; returns the new mechanism."""
    return _mechanism(object, "object", "sensitivitySamplerManual").sensitivity_sampler_manual(oracle, n, m, k, rng=rng)
