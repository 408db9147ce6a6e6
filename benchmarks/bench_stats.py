"""DP statistics: diffpriv_py against numpy (non-private) and diffprivlib's tools, n = 10⁶ and 10⁷, one run.

Run: python benchmarks/bench_stats.py [--sizes 1e6 1e7] [--peer-python /work/bench-venv/bin/python] [--only median]

Prints a Markdown table for benchmarks/README.md. numpy and diffpriv_py are timed in this process; diffprivlib is
timed in the peer environment (``benchmarks/setup_peers.sh``; never a dependency) by a child process started from
this script, which also re-times numpy's mean so the two processes can be compared. Data: N(0.5, 0.15) clipped to
bounds (0, 1) as in the peer study, ε = 1, default (secure) randomness, BLAS pinned to one thread, medians.

Times are CPU time of the benchmark process (``time.process_time``), not wall time: on the shared 2-core machine the
scheduler takes the CPU away for several milliseconds at a time, which dominates wall times of 1–10 ms operations.
Every computation here is single-threaded, so CPU time is the time the work takes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import diffpriv_py as dp

LO, HI = 0.0, 1.0
EPS = dp.Eps(1.0)
PEER_PYTHON = "/work/bench-venv/bin/python"


def median_times(fns: list[Callable[[], Any]], repeats: int) -> tuple[list[float], list[Any]]:
    """Median wall time of each function, the functions interleaved in every round (after one warm-up round).

    Interleaving keeps the comparison fair on a shared machine: a burst of load slows every function of that round,
    not just one of them. Returns the medians and each function's last result.
    """
    results = [fn() for fn in fns]
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.process_time()
            results[i] = fn()
            times[i].append(time.process_time() - start)
    return [statistics.median(t) for t in times], results


def data(n: int) -> np.ndarray:
    return np.random.default_rng(0).normal(0.5, 0.15, n)


def cases(x: np.ndarray) -> list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], Any]]]:
    """(name, numpy bare, numpy with clipping = the non-private equivalent, diffpriv_py)."""
    b = (LO, HI)
    return [
        ("mean", lambda: np.mean(x), lambda: np.mean(np.clip(x, *b)), lambda: dp.stats.mean(x, EPS, bounds=b)),
        ("sum", lambda: np.sum(x), lambda: np.sum(np.clip(x, *b)), lambda: dp.stats.sum(x, EPS, bounds=b)),
        ("var", lambda: np.var(x), lambda: np.var(np.clip(x, *b)), lambda: dp.stats.var(x, EPS, bounds=b)),
        ("std", lambda: np.std(x), lambda: np.std(np.clip(x, *b)), lambda: dp.stats.std(x, EPS, bounds=b)),
        (
            "histogram (10 bins)",
            lambda: np.histogram(x, bins=10, range=b),
            lambda: np.histogram(x, bins=10, range=b),
            lambda: dp.stats.histogram(x, EPS, bins=10, range=b),
        ),
        (
            "histogram (1000 bins)",
            lambda: np.histogram(x, bins=1000, range=b),
            lambda: np.histogram(x, bins=1000, range=b),
            lambda: dp.stats.histogram(x, EPS, bins=1000, range=b),
        ),
        (
            "mean, bounds (−1, 2): nothing to clip",
            lambda: np.mean(x),
            lambda: np.mean(np.clip(x, -1.0, 2.0)),
            lambda: dp.stats.mean(x, EPS, bounds=(-1.0, 2.0)),
        ),
        (
            "var, bounds (−1, 2): nothing to clip",
            lambda: np.var(x),
            lambda: np.var(np.clip(x, -1.0, 2.0)),
            lambda: dp.stats.var(x, EPS, bounds=(-1.0, 2.0)),
        ),
        ("median", lambda: np.median(x), lambda: np.median(np.clip(x, *b)), lambda: dp.stats.median(x, EPS, bounds=b)),
        (
            "quantile (0.9)",
            lambda: np.quantile(x, 0.9),
            lambda: np.quantile(np.clip(x, *b), 0.9),
            lambda: dp.stats.quantile(x, 0.9, EPS, bounds=b),
        ),
        (
            "median, n_candidates = 1025 (the former fixed default)",
            lambda: np.median(x),
            lambda: np.median(np.clip(x, *b)),
            lambda: dp.stats.median(x, EPS, bounds=b, n_candidates=1025),
        ),
    ]


def error(name: str, private: Any, exact: Any) -> str:
    if name.startswith("histogram"):
        return f"L1 {np.abs(np.asarray(private[0]) - np.asarray(exact[0])).sum():.0f}"
    return f"{abs(float(private) - float(exact)):.1e}"


PEER_SCRIPT = r"""
import json, statistics, sys, time, warnings
import numpy as np
from threadpoolctl import threadpool_limits
from diffprivlib import tools
from diffprivlib.accountant import BudgetAccountant
warnings.simplefilter("ignore")
sizes = [int(float(s)) for s in sys.argv[1].split(",")]
out = {}
def median_time(fn, repeats):
    fn(); ts = []
    for _ in range(repeats):
        t = time.process_time(); fn(); ts.append(time.process_time() - t)
    return statistics.median(ts)
with threadpool_limits(1):
    for n in sizes:
        x = np.random.default_rng(0).normal(0.5, 0.15, n)
        b = (0.0, 1.0)
        acc = lambda: BudgetAccountant()
        reps = 5 if n <= 10**6 else 3
        slow = 3 if n <= 10**6 else 1
        res = {"numpy mean (peer process)": median_time(lambda: np.mean(x), reps)}
        res["mean"] = median_time(lambda: tools.mean(x, epsilon=1.0, bounds=b, accountant=acc()), reps)
        res["sum"] = median_time(lambda: tools.sum(x, epsilon=1.0, bounds=b, accountant=acc()), reps)
        res["var"] = median_time(lambda: tools.var(x, epsilon=1.0, bounds=b, accountant=acc()), reps)
        res["std"] = median_time(lambda: tools.std(x, epsilon=1.0, bounds=b, accountant=acc()), reps)
        res["histogram (10 bins)"] = median_time(
            lambda: tools.histogram(x, epsilon=1.0, bins=10, range=b, accountant=acc()), reps)
        res["histogram (1000 bins)"] = median_time(
            lambda: tools.histogram(x, epsilon=1.0, bins=1000, range=b, accountant=acc()), reps)
        res["median"] = median_time(lambda: tools.median(x, epsilon=1.0, bounds=b, accountant=acc()), slow)
        res["quantile (0.9)"] = median_time(
            lambda: tools.quantile(x, 0.9, epsilon=1.0, bounds=b, accountant=acc()), slow)
        out[str(n)] = res
print(json.dumps(out))
"""


def peer_times(sizes: list[int], python: str) -> dict[str, dict[str, float]]:
    """diffprivlib timings from the peer environment, or {} when it is not available."""
    if not os.path.exists(python):
        print(f"(peer environment {python} not found: diffprivlib columns left empty)", file=sys.stderr)
        return {}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [python, "-c", PEER_SCRIPT, ",".join(str(s) for s in sizes)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        print(f"(diffprivlib run failed: {proc.stderr.strip()[-300:]})", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["1e6", "1e7"])
    parser.add_argument("--peer-python", default=PEER_PYTHON)
    parser.add_argument("--only", nargs="+", default=None, help="time only the statistics whose name starts so")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes]
    peers = peer_times(sizes, args.peer_python)
    header = (
        "| n | statistic | numpy ms | numpy + clip ms | diffpriv_py ms | ×numpy | ×(numpy + clip) | diffprivlib ms "
        "| diffprivlib / diffpriv_py | diffpriv_py error |"
    )
    print(header)
    print("|" + "---|" * 10)
    with threadpool_limits(1):
        for n in sizes:
            x = data(n)
            repeats = 11 if n <= 10**6 else 7
            for name, bare, clipped, private in cases(x):
                if args.only and not name.startswith(tuple(args.only)):
                    continue
                (t_bare, t_clip, t_dp), (_, exact, value) = median_times([bare, clipped, private], repeats)
                peer = peers.get(str(n), {}).get(name)
                peer_ms = f"{peer * 1e3:.1f}" if peer else "–"
                speedup = f"{peer / t_dp:.1f}×" if peer else "–"
                err = error(name, value, exact)
                print(
                    f"| {n:.0e} | {name} | {t_bare * 1e3:.1f} | {t_clip * 1e3:.1f} | {t_dp * 1e3:.1f} | "
                    f"{t_dp / t_bare:.2f}× | {t_dp / t_clip:.2f}× | {peer_ms} | {speedup} | {err} |"
                )
            ref = peers.get(str(n), {}).get("numpy mean (peer process)")
            if ref:
                print(f"| {n:.0e} | (numpy mean in the diffprivlib process) | {ref * 1e3:.1f} | | | | | | | |")


if __name__ == "__main__":
    main()
