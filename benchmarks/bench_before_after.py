"""Per-release cost of a few paths in this checkout against an older one (a refactor must not slow them).

Run: python benchmarks/bench_before_after.py --before DIR [--rounds 2]

DIR holds the older checkout's ``diffpriv_py`` package (e.g. ``git worktree add --detach /tmp/old <commit>``). Each
checkout is timed in its own child process (so both import their own ``diffpriv_py``), alternating, ``--rounds``
times; a case's time is the median CPU time of 7 batches, one BLAS thread. Prints a Markdown table of the medians
over the rounds and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def measure() -> dict[str, float]:
    """Seconds per release of each case, in this process's ``diffpriv_py``."""
    import numpy as np

    import diffpriv_py as dp

    x10, x1k = np.linspace(0, 1, 10), np.linspace(0, 1, 1000)
    X = np.random.default_rng(0).uniform(-1, 1, (2000, 5))
    lap, gau = dp.Laplace(target=np.mean, sensitivity=0.1), dp.Gaussian(target=np.mean, sensitivity=0.1)
    acc = dp.accounting.Accountant(dp.Eps(1e9))
    cases = {
        "dp.stats.mean, 10 values": (200, lambda: dp.stats.mean(x10, dp.Eps(1), bounds=(0, 1), rng=0)),
        "dp.stats.var, 10 values": (200, lambda: dp.stats.var(x10, dp.Eps(1), bounds=(0, 1), rng=0)),
        "Laplace release": (200, lambda: lap.release_response(dp.Eps(1), x10, rng=0)),
        "Gaussian release": (200, lambda: gau.release_response(dp.Del(1, 1e-6), x10, rng=0)),
        "Laplace release, charged to an accountant": (
            200,
            lambda: lap.release_response(dp.Eps(1), x10, rng=0, accountant=acc),
        ),
        "dp.stats.median, 1000 values": (200, lambda: dp.stats.median(x1k, dp.Eps(1), bounds=(0, 1), rng=0)),
        "KMeans, 2000×5, k = 3": (
            20,
            lambda: dp.estimators.KMeans(3, bounds=(-1, 1)).release_response(dp.Eps(1), X, rng=0),
        ),
        "PCA, 2000×5, k = 2": (
            20,
            lambda: dp.estimators.PCA(2, data_norm=3.0).release_response(dp.Eps(1), X, rng=0),
        ),
    }
    out = {}
    for name, (reps, fn) in cases.items():
        for _ in range(3):
            fn()
        batches = []
        for _ in range(7):
            start = time.process_time()
            for _ in range(reps):
                fn()
            batches.append((time.process_time() - start) / reps)
        out[name] = statistics.median(batches)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="directory holding the older checkout's diffpriv_py package")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help="internal: time this process's diffpriv_py")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return
    if not args.before:
        parser.error("--before DIR is required")
    here = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    runs: dict[str, list[dict[str, float]]] = {"before": [], "now": []}
    for _ in range(args.rounds):
        for label, root in (("before", args.before), ("now", here)):
            done = subprocess.run(
                [sys.executable, __file__, "--child"],
                env={**env, "PYTHONPATH": root},
                capture_output=True,
                text=True,
                check=True,
            )
            runs[label].append(json.loads(done.stdout))
    print("| release | before µs | now µs | now / before |")
    print("|---|---|---|---|")
    for case in runs["now"][0]:
        before = statistics.median(r[case] for r in runs["before"]) * 1e6
        now = statistics.median(r[case] for r in runs["now"]) * 1e6
        print(f"| {case} | {before:.1f} | {now:.1f} | {now / before:.2f} |")


if __name__ == "__main__":
    main()
