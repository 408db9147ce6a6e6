"""The public names of the design contract exist where users' code looks for them."""

import importlib

import pytest

import diffpriv_py as dp

CONTRACT = {
    "diffpriv_py": [
        "Eps", "Del", "Gam", "Response", "DPMech", "Laplace", "Gaussian", "Exponential", "plan_sampler",
        "DPParamsEps", "DPParamsDel", "DPParamsGam", "DPMechLaplace", "DPMechGaussian", "DPMechExponential",
        "releaseResponse", "sensitivitySampler", "sensitivitySamplerManual",
    ],
}  # fmt: skip


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in CONTRACT.items() for n in names])
def test_contract_name_is_exported(module, name):
    """Every contract name is importable from its module."""
    assert hasattr(importlib.import_module(module), name)


@pytest.mark.parametrize(
    "method", ["release_response", "sensitivity_norm", "sensitivity_sampler", "sensitivity_sampler_manual"]
)
def test_mechanism_methods_exist(method):
    """DPMech carries the four contract methods."""
    assert callable(getattr(dp.DPMech, method))


def test_all_lists_only_existing_names():
    """__all__ never names something the package does not have."""
    assert all(hasattr(dp, name) for name in dp.__all__)


def test_importing_the_core_does_not_import_optional_dependencies():
    """pandas, scikit-learn and matplotlib are optional: the core import does not load them."""
    import subprocess
    import sys

    code = "import sys, diffpriv_py; print(sorted(m for m in ('pandas','sklearn','matplotlib') if m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )
