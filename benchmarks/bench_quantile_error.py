"""DP median error: diffpriv_py's default grid, the former fixed 1025-point grid, and diffprivlib's median.

Run: python benchmarks/bench_quantile_error.py [--peer-python /work/bench-venv/bin/python] [--seeds 10] [--high 0.7]

Data: n uniform values on (0, high) with the public bounds (0, 1): high = 1 by default, whose median 1/2 is a point
of every power-of-two grid (which flatters a coarse grid), so ``--high 0.7`` puts the median off the grid. Dataset
seed s and release seed s for s < seeds (more seeds at small n, where one release takes microseconds). Reported: the
mean absolute error |release − np.median(x)| over the seeds, per (n, ε). diffprivlib (``benchmarks/setup_peers.sh``;
never a dependency) runs in the peer environment, in a child process started from this script with ``--peer``,
which imports only numpy and diffprivlib. Errors, not times: the machine's load does not change them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from collections.abc import Callable

import numpy as np

SIZES = (10, 100, 1000, 10**6)
EPSILONS = (0.1, 1.0)
PEER_PYTHON = "/work/bench-venv/bin/python"


def _seeds(n: int, seeds: int) -> int:
    return seeds if n >= 10**5 else 20 * seeds


def mean_errors(release: Callable[[np.ndarray, float, int], float], seeds: int, high: float) -> dict[str, float]:
    """'n,ε' → mean |release − median| over the seeds."""
    out: dict[str, float] = {}
    for n in SIZES:
        for eps in EPSILONS:
            errs = []
            for s in range(_seeds(n, seeds)):
                x = np.random.default_rng(s).uniform(0.0, high, n)
                errs.append(abs(release(x, eps, s) - float(np.median(x))))
            out[f"{n},{eps}"] = float(np.mean(errs))
    return out


def peer(seeds: int, high: float) -> dict[str, float]:
    """diffprivlib's median (the exponential mechanism over the gaps of the sorted data, Smith 2011)."""
    from diffprivlib.tools import median

    warnings.simplefilter("ignore")
    return mean_errors(lambda x, eps, s: float(median(x, epsilon=eps, bounds=(0, 1), random_state=s)), seeds, high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--peer-python", default=PEER_PYTHON)
    parser.add_argument("--high", type=float, default=1.0, help="the data are uniform on (0, high), bounds (0, 1)")
    parser.add_argument("--peer", action="store_true", help="internal: run diffprivlib and print JSON")
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(peer(args.seeds, args.high)))
        return

    import diffpriv_py as dp

    ours = mean_errors(lambda x, e, s: dp.stats.median(x, dp.Eps(e), bounds=(0, 1), rng=s), args.seeds, args.high)
    former = mean_errors(
        lambda x, e, s: dp.stats.median(x, dp.Eps(e), bounds=(0, 1), rng=s, n_candidates=1025), args.seeds, args.high
    )
    try:
        done = subprocess.run(
            [args.peer_python, __file__, "--peer", "--seeds", str(args.seeds), "--high", str(args.high)],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        theirs: dict[str, float] | None = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as exc:
        print(f"diffprivlib not run ({exc}); set --peer-python", file=sys.stderr)
        theirs = None
    print("| n | ε | grid (default) | diffpriv_py default | former 1025 grid | diffprivlib | default / diffprivlib |")
    print("|---|---|---|---|---|---|---|")
    for key, err in ours.items():
        n_text, eps_text = key.split(",")
        n, eps = int(n_text), float(eps_text)
        m = dp.stats.default_n_candidates(n, eps)
        peer_err = "—" if theirs is None else f"{theirs[key]:.2e}"
        ratio = "—" if theirs is None else f"{err / theirs[key]:.2f}"
        print(f"| {n:.0e} | {eps:g} | {m} | {err:.2e} | {former[key]:.2e} | {peer_err} | {ratio} |")


if __name__ == "__main__":
    main()
