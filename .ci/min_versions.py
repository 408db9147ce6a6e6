"""Print the declared minimum version of every core dependency as an exact pin (``numpy>=1.24`` -> ``numpy==1.24``).

CI installs these pins into a fresh environment and runs the core tests, so the floors in pyproject.toml are tested
rather than hoped for.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
for requirement in project["dependencies"]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\],]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*", requirement)
    if match is None:
        sys.exit(f"Core dependency {requirement!r} has no '>=' floor to test; declare one.")
    print(f"{match.group(1)}=={match.group(2)}")
