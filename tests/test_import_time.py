"""``import diffpriv_py`` stays cheap: no heavy optional or scientific modules at import, and a bounded cost."""

import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "pandas", "sklearn", "joblib", "tqdm", "randomgen", "dask", "matplotlib")
MAX_RATIO = 2.5  # import diffpriv_py (numpy included) against import numpy alone


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=ROOT
    ).stdout


def _import_cpu_seconds(module: str) -> float:
    # CPU time of the import statement in a fresh interpreter: wall time on a shared machine measures the neighbours.
    code = f"import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
    return float(_run(code))


def test_importing_the_package_loads_no_heavy_module():
    """scipy, pandas, scikit-learn, joblib, tqdm, randomgen, dask and matplotlib load on first use only."""
    code = f"import sys, diffpriv_py; print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    assert _run(code).strip() == "[]"


@pytest.mark.slow
def test_importing_the_package_costs_at_most_two_and_a_half_numpy_imports():
    """Median CPU time of `import diffpriv_py` over 5 fresh interpreters is at most 2.5× that of `import numpy`."""
    numpy_times, ours = [], []
    for _ in range(5):  # interleaved, so a burst of load on the machine hits both alike
        numpy_times.append(_import_cpu_seconds("numpy"))
        ours.append(_import_cpu_seconds("diffpriv_py"))
    ratio = statistics.median(ours) / statistics.median(numpy_times)
    assert ratio <= MAX_RATIO, f"import diffpriv_py / import numpy = {ratio:.2f} (numpy {numpy_times}, ours {ours})"
