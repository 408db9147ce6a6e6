"""Shared fixtures and hooks.

Statistical tests use fixed seeds so their false-alarm rate is a fixed, tiny number. A test skipped because an
optional module is missing says which extra of the project installs it (see :func:`name_the_extra`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from diffpriv_py._extras import EXTRAS

TEST_ONLY_EXTRAS: dict[str, str] = {
    # modules the tests use beyond the package's own extras (diffpriv_py._extras.EXTRAS) -> the extra installing them
    "sphinx": "docs",
    "numpydoc": "docs",
    "myst_parser": "docs",
    "sphinx_gallery": "docs",
    "jupytext": "docs",
    "mypy": "lint",
    "pyright": "lint",
}

_COULD_NOT_IMPORT = re.compile(r"could not import '([\w.]+)'")


def name_the_extra(reason: str) -> str:
    """The reason of a ``pytest.importorskip`` skip with the extra to install in front; other reasons unchanged.

    ``"could not import 'pandas': No module named 'pandas'"`` becomes
    ``'needs the pandas extra: pip install ".[pandas]" (could not import 'pandas': ...)'``. A module that no extra
    installs (e.g. ``dp_accounting``, used only to cross-check the accountant) is named as a package to install.
    """
    found = _COULD_NOT_IMPORT.search(reason)
    if found is None or "extra:" in reason:
        return reason
    module = found.group(1)
    top = module.partition(".")[0]
    extra = EXTRAS[top][1] if top in EXTRAS else TEST_ONLY_EXTRAS.get(top)
    hint = f'needs the {extra} extra: pip install ".[{extra}]"' if extra else f"needs {top}, which no extra installs"
    prefix = "Skipped: " if reason.startswith("Skipped: ") else ""
    return f"{prefix}{hint} ({reason.removeprefix(prefix)})"


def _rewrite_skip_reason(report: Any) -> None:
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, reason = report.longrepr
        report.longrepr = (path, line, name_the_extra(str(reason)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A test that skips on a missing module (``pytest.importorskip`` in its body) names the extra."""
    outcome = yield
    _rewrite_skip_reason(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A test module that skips on a missing module (``pytest.importorskip`` at its top) names the extra."""
    outcome = yield
    _rewrite_skip_reason(outcome.get_result())


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: reproducible test randomness (never used for real releases)."""
    return np.random.default_rng(20261122)
