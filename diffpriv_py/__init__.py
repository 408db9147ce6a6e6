"""diffpriv_py: differential privacy for Python, after the R package ``diffpriv``.

Privacy parameters (:class:`Eps`, :class:`Del`, :class:`Gam`), mechanisms built on the abstract :class:`DPMech`
(:class:`Laplace`, :class:`Gaussian`, :class:`Exponential`, :class:`Bernstein`), and the sensitivity sampler that
makes a black-box target private (:meth:`DPMech.sensitivity_sampler`, :func:`plan_sampler`).
"""

from typing import TYPE_CHECKING, Any

from . import exceptions
from ._blockwise import Chunks
from .approximation import BernsteinApproximation, bernstein
from .mechanisms import Bernstein, DiscreteLaplace, DPMech, Exponential, Gaussian, Laplace, NumericMech
from .privacy import Del, Eps, Gam
from .r_compat import (
    DPMechBernstein,
    DPMechExponential,
    DPMechGaussian,
    DPMechLaplace,
    DPParamsDel,
    DPParamsEps,
    DPParamsGam,
    releaseResponse,
    sensitivitySampler,
    sensitivitySamplerManual,
)
from .response import Response
from .sensitivity import SamplerPlan, plan_sampler

if TYPE_CHECKING:
    from . import accounting as accounting
    from . import estimators as estimators
    from . import stats as stats
    from . import testing as testing
    from .accounting import Accountant

__version__ = "0.1.0"

__all__ = [
    "Accountant",
    "Bernstein",
    "BernsteinApproximation",
    "Chunks",
    "DPMech",
    "DPMechBernstein",
    "DPMechExponential",
    "DPMechGaussian",
    "DPMechLaplace",
    "DPParamsDel",
    "DPParamsEps",
    "DPParamsGam",
    "Del",
    "DiscreteLaplace",
    "Eps",
    "Exponential",
    "Gam",
    "Gaussian",
    "Laplace",
    "NumericMech",
    "Response",
    "SamplerPlan",
    "bernstein",
    "exceptions",
    "plan_sampler",
    "releaseResponse",
    "sensitivitySampler",
    "sensitivitySamplerManual",
    "stats",
]


def __getattr__(name: str) -> Any:
    # Subpackages load on first use, so `import diffpriv_py` stays cheap (tests/test_import_time.py): `dp.testing`
    # (the conformance kit and auditor; library code never imports it), `dp.estimators`, `dp.stats` and
    # `dp.accounting` (with `dp.Accountant`).
    if name in ("testing", "estimators", "stats", "accounting"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "Accountant":
        from .accounting import Accountant

        return Accountant
    raise AttributeError(f"module 'diffpriv_py' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "accounting", "estimators", "stats", "testing", "Accountant"})
