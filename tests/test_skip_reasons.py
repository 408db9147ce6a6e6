"""A test skipped for a missing optional module says which extra installs it (the hooks in conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import name_the_extra

ROOT = Path(__file__).resolve().parent.parent


def test_the_reason_names_the_extra_of_the_missing_module():
    missing = "could not import 'dask.dataframe': No module named 'dask'"
    assert name_the_extra(f"Skipped: {missing}") == f'Skipped: needs the dask extra: pip install ".[dask]" ({missing})'
    assert name_the_extra("could not import 'sklearn': x").startswith(
        'needs the sklearn extra: pip install ".[sklearn]"'
    )
    assert name_the_extra("could not import 'matplotlib.pyplot': x").startswith("needs the plot extra")
    assert name_the_extra("could not import 'sphinx_gallery': x").startswith("needs the docs extra")
    assert name_the_extra("could not import 'dp_accounting': x").startswith("needs dp_accounting, which no extra")
    assert name_the_extra("needs os.fork") == "needs os.fork"  # other skips keep their reason


def test_a_skipped_test_run_reports_the_extra(tmp_path):
    """End to end: skips at module level and inside a test both name the extra in pytest's summary (-rs)."""
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    prelude = "import sys\nimport pytest\nsys.modules['pandas'] = None\nsys.modules['sklearn'] = None\n"
    (tmp_path / "test_module_level.py").write_text(
        prelude + "pd = pytest.importorskip('pandas')\n\ndef test_x():\n    pass\n", encoding="utf-8"
    )
    (tmp_path / "test_in_a_test.py").write_text(
        prelude + "def test_y():\n    pytest.importorskip('sklearn')\n", encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    summary = textwrap.indent(done.stdout[-3000:], "  ")
    assert done.returncode == 0, summary
    assert 'needs the pandas extra: pip install ".[pandas]"' in done.stdout, summary
    assert 'needs the sklearn extra: pip install ".[sklearn]"' in done.stdout, summary
