#!/usr/bin/env bash
# Create the separate environment used to compare against peer libraries (never a dependency of diffpriv_py).
# diffprivlib 0.6.6 needs scikit-learn 1.7.x (it fails to import with 1.8+). The group-by comparison
# (bench_groupby.py --peers) needs OpenDP's polars extra (polars 1.36.1 and pyarrow) and PipelineDP 0.3.1.
set -euo pipefail
venv="${1:-/work/bench-venv}"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "scikit-learn>=1.7,<1.8" "diffprivlib==0.6.6" "opendp[polars]==0.16.0" "pipeline-dp==0.3.1" dp-accounting threadpoolctl pandas matplotlib
"$venv/bin/pip" install --quiet -e "$(dirname "$0")/.."
echo "peer benchmark environment ready: $venv"
