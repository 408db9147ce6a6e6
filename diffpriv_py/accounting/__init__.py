"""Privacy accounting: one budget for a whole analysis, tight composition, and DP-SGD's accountant.

:class:`Accountant` is charged by every release (``release_response(..., accountant=acc)``) before any noise is
drawn and refuses, charging nothing, a release that would overspend. It composes what was actually released:
Laplace and Gaussian noise exactly (privacy-loss distributions, μ-Gaussian DP), DP-SGD through its subsampled
Gaussian, anything else through its (ε, δ) claim; random-DP γ by the union bound.

The pieces are public too: privacy events (:class:`LaplaceEvent`, :class:`GaussianEvent`,
:class:`SubsampledGaussianEvent`, :class:`ApproxDPEvent`) and :func:`compose`; closed-form theorems
(:func:`basic_composition`, :func:`advanced_composition`, :func:`kov_composition`, :func:`gdp_epsilon`,
:func:`zcdp_epsilon`); Rényi DP (:mod:`diffpriv_py.accounting.rdp`); and DP-SGD calibration
(:func:`dpsgd_epsilon`, :func:`noise_multiplier_for`). See ``docs/accounting.md``.
"""

from ..events import ApproxDPEvent, Event, GaussianEvent, LaplaceEvent, SubsampledGaussianEvent
from . import rdp
from ._accountant import Accountant, Charge
from ._calibration import dpsgd_epsilon, noise_multiplier_for
from ._composition import (
    Composition,
    advanced_composition,
    basic_composition,
    compose,
    gdp_delta,
    gdp_epsilon,
    kov_composition,
    zcdp_epsilon,
)
from ._detached import DetachedAccountant

__all__ = [
    "Accountant",
    "ApproxDPEvent",
    "Charge",
    "Composition",
    "DetachedAccountant",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "SubsampledGaussianEvent",
    "advanced_composition",
    "basic_composition",
    "compose",
    "dpsgd_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "kov_composition",
    "noise_multiplier_for",
    "rdp",
    "zcdp_epsilon",
]
