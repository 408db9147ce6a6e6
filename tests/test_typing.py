"""The public API is typed: mypy (with the project's configuration) flags the common misuses in a user's script."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the lint extra)"),
]

ROOT = Path(__file__).resolve().parents[1]

# Each mistake sits on its own line, next to the correct call, so the test can tell which lines mypy reported.
USER_SCRIPT = textwrap.dedent(
    """\
    import numpy as np

    import diffpriv_py as dp

    x = np.linspace(0.0, 1.0, 100)
    dp.stats.mean(x, 1.0, bounds=(0, 1))
    dp.Eps("one")
    dp.Laplace(target=np.mean, sensitivity="x")
    dp.stats.mean(x, dp.Eps(1.0), bounds=(0, 1))
    dp.Eps(1.0)
    dp.Laplace(target=np.mean, sensitivity=1.0)
    dp.stats.mean(x, dp.Eps(1.0), bounds=(0, 1), mechanism="gauss")
    dp.stats.mean(x.reshape(50, 2), dp.Del(1.0, 1e-6), bounds=(0, 1), axis=(0,), mechanism="gaussian", keepdims=True)
    """
)
LINES = {
    "stats privacy_params is not an Eps": 6,
    "Eps of a string": 7,
    "Laplace sensitivity of a string": 8,
    "correct stats call": 9,
    "correct Eps": 10,
    "correct Laplace": 11,
    "misspelt stats option": 12,
    "correct stats options": 13,
}


@pytest.fixture(scope="module")
def reported_lines(tmp_path_factory: pytest.TempPathFactory) -> set[int]:
    """The line numbers of the user script at which mypy reports an error (the library's own errors are silenced)."""
    tmp = tmp_path_factory.mktemp("typing")
    script = tmp / "user_script.py"
    script.write_text(USER_SCRIPT, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--follow-imports=silent",
        "--cache-dir",
        str(tmp / "cache"),
        "--no-error-summary",
        str(script),
    ]
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2 would be a crash or a configuration error
    # mypy prints the path relative to its working directory when it can.
    pattern = re.compile(r"^(?:.*[/\\])?user_script\.py:(\d+): error:", re.MULTILINE)
    return {int(n) for n in pattern.findall(done.stdout)}


def test_mypy_flags_a_float_passed_as_the_privacy_params_of_a_statistic(reported_lines: set[int]) -> None:
    """``dp.stats.mean(x, 1.0, ...)`` is reported: privacy_params must be an Eps, not a bare ε."""
    assert LINES["stats privacy_params is not an Eps"] in reported_lines


def test_mypy_flags_a_string_epsilon(reported_lines: set[int]) -> None:
    """``dp.Eps("one")`` is reported: ε must be a real number."""
    assert LINES["Eps of a string"] in reported_lines


def test_mypy_flags_a_string_sensitivity(reported_lines: set[int]) -> None:
    """``dp.Laplace(target=np.mean, sensitivity="x")`` is reported: the sensitivity must be a real number."""
    assert LINES["Laplace sensitivity of a string"] in reported_lines


def test_mypy_flags_a_misspelt_option_of_a_statistic(reported_lines: set[int]) -> None:
    """``mechanism="gauss"`` is reported: the options of ``dp.stats`` are typed as ``Literal`` strings."""
    assert LINES["misspelt stats option"] in reported_lines


def test_mypy_accepts_the_correct_calls(reported_lines: set[int]) -> None:
    """The same calls with correct arguments are not reported, so the checks above are not blanket failures."""
    correct = {LINES[k] for k in ("correct stats call", "correct Eps", "correct Laplace", "correct stats options")}
    assert not correct & reported_lines
