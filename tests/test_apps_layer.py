"""The command line and the evaluation engine are applications on top of the library's public API.

Every import they make of ``diffpriv_py`` names a public module and a public object: no ``_``-module, no ``_``-name
(imports between the application's own modules are its business). A new private helper an application needs either
belongs in the application or must be made public first.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "diffpriv_py"
APPS = ("cli", "evaluation")


def _app_files() -> list[Path]:
    return sorted(p for app in APPS for p in (PACKAGE / app).rglob("*.py"))


def _library_imports(path: Path, package: Path = PACKAGE) -> list[tuple[int, str, str]]:
    """(line, module, name) of every import of the library: absolute, or relative beyond the application."""
    here = ("diffpriv_py", *path.parent.relative_to(package).parts)  # the package the file is in
    app = here[:2]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                if base[:2] == app:
                    continue  # the application's own modules
                module = ".".join((*base, *([node.module] if node.module else [])))
            elif (node.module or "").split(".")[0] == "diffpriv_py":
                module = node.module or ""
            else:
                continue
            found += [(node.lineno, module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, "") for a in node.names if a.name.split(".")[0] == "diffpriv_py"]
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))  # __version__ is public


def test_the_applications_exist_as_packages():
    assert len(_app_files()) >= 8


@pytest.mark.parametrize("path", _app_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_an_application_imports_only_public_names_of_the_library(path):
    private = [
        f"line {line}: from {module} import {name}"
        for line, module, name in _library_imports(path)
        if any(part.startswith("_") for part in module.split(".")[1:]) or _private(name)
    ]
    assert not private, f"{path.name} imports private names of the library: {private}"


def test_the_check_catches_a_private_import(tmp_path):
    """The test above catches the old ``from .._extras import require`` and ``from diffpriv_py._rng import X``."""
    app = tmp_path / "diffpriv_py" / "cli"
    app.mkdir(parents=True)
    bad = app / "x.py"
    bad.write_text(
        "from .._extras import require\nfrom diffpriv_py._rng import RNGLike\nfrom ._args import _seed\n"
        "from .. import datasets\nfrom ..evaluation import _perturb\n"
    )
    found = [(m, n) for _, m, n in _library_imports(bad, tmp_path / "diffpriv_py")]
    assert found == [
        ("diffpriv_py._extras", "require"),
        ("diffpriv_py._rng", "RNGLike"),
        ("diffpriv_py", "datasets"),
        ("diffpriv_py.evaluation", "_perturb"),
    ]


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (
            "diffpriv_py.evaluation",
            "DEFAULT_EPSILONS ESTIMATOR_MODELS INPUT_MODELS PRIVATISATIONS PYPRYVACY_EPSILONS EvaluationResult "
            "ModelContext ModelSpec evaluate METRICS models_for baseline_name DPSGD_EPOCHS PCA_COMPONENTS",
        ),
        (
            "diffpriv_py.cli",
            "CLIError main build_parser DEMO_STEPS PROG EXIT_OK EXIT_REFUTED EXIT_ERROR DEFAULT_SEARCH_SECONDS "
            "describe_guarantee format_table",
        ),
    ],
)
def test_every_public_name_of_the_former_modules_is_still_there(module, names):
    """cli.py and evaluation.py became packages: each public name they had is still found at the same path."""
    loaded = importlib.import_module(module)
    assert [name for name in names.split() if not hasattr(loaded, name)] == []


def test_the_command_line_runs_as_a_module_of_both_packages():
    for module in ("diffpriv_py", "diffpriv_py.cli"):
        done = subprocess.run(
            [sys.executable, "-m", module, "--version"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)},
            timeout=120,
        )
        assert done.returncode == 0 and done.stdout.startswith("diffpriv-py "), done
