"""Optional dependencies (the package's extras): one check, one message, made before any budget is charged.

The core (``pip install diffpriv-py``) needs only numpy, scipy, attrs, joblib, tqdm and randomgen. Every entry point
that needs more calls :func:`require` first, so a missing extra is found before the accountant is charged, and the
error names the extra to install the same way everywhere.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "MissingExtraError", "install_hint", "require"]

EXTRAS: dict[str, tuple[str, str]] = {
    # importable module -> (package to install, the extra of diffpriv-py that installs it)
    "pandas": ("pandas", "pandas"),
    "sklearn": ("scikit-learn", "sklearn"),
    "matplotlib": ("matplotlib", "plot"),
    "dask": ("dask", "dask"),
    "distributed": ("distributed", "dask"),
    "pytest": ("pytest", "test"),  # the conformance kit's parametrize_with_checks
    "hypothesis": ("hypothesis", "test"),  # diffpriv_py.testing.strategies
}


class MissingExtraError(ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that installs it.

    A subclass of :class:`ModuleNotFoundError` (so of :class:`ImportError`): code that catches a missing module
    keeps working.
    """


def install_hint(extra: str) -> str:
    """The install command of one extra, as the README gives it: from PyPI and from a checkout."""
    return f'pip install "diffpriv-py[{extra}]" (from a checkout: pip install ".[{extra}]")'


def require(module: str, *, feature: str) -> ModuleType:
    """Import ``module`` (e.g. ``"pandas"``, ``"sklearn.base"``) or raise :class:`MissingExtraError`.

    Parameters
    ----------
    module : str
        The module to import; its top-level package must be one of :data:`EXTRAS`.
    feature : str
        What needs it, as the user called it (e.g. ``"dp.stats.groupby"``): the first words of the message.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingExtraError
        If the module cannot be imported: the message names the package, the extra and the install command.
    """
    top = module.partition(".")[0]
    package, extra = EXTRAS[top]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        # Only a missing optional package is reported as a missing extra; a broken installation of it (an
        # ImportError raised while importing it) is re-raised as it is.
        missing = getattr(exc, "name", None)
        if not isinstance(exc, ModuleNotFoundError) or (missing is not None and missing.partition(".")[0] != top):
            raise
        raise MissingExtraError(
            f"{feature} needs {package}, an optional dependency of diffpriv-py (the '{extra}' extra). Install it "
            f"with: {install_hint(extra)}",
            name=module,
        ) from None
