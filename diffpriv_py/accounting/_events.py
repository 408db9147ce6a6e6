"""Re-export face: the events moved to :mod:`diffpriv_py.events` (this path keeps working)."""

from ..events import (
    ApproxDPEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    Relation,
    SubsampledGaussianEvent,
    check_count,
    gaussian_curve,
)

__all__ = [
    "ApproxDPEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "Relation",
    "SubsampledGaussianEvent",
    "check_count",
    "gaussian_curve",
]
