"""The sensitivity sampler, at its documented path: it lives in :mod:`diffpriv_py.mechanisms.sampler`."""

from .mechanisms.sampler import (
    SamplerPlan,
    SensitivitySampling,
    plan_sampler,
    sample_sensitivity,
    sample_sensitivity_manual,
)

__all__ = ["SamplerPlan", "SensitivitySampling", "plan_sampler", "sample_sensitivity", "sample_sensitivity_manual"]
