"""The exact fixed-point row pass of PCA and LinearRegression against the non-private numpy / scikit-learn cost.

Run from the repository root (BLAS pinned to one thread, well under a minute)::

    PYTHONPATH=. python benchmarks/bench_exact_pass.py [--repeats 7] [--skip-memory]

* LinearRegression (default: AdaSSP with intercept, ``reg_lambda="auto"``) on 10⁶ × 20 against numpy's normal
  equations ``solve(XᵀX, Xᵀy)``.
* PCA (default: two-sided Wishart, k = 5) on 10⁴ × 50 and 10⁶ × 50 against scikit-learn's ``PCA(5).fit``.

Each repetition times every contender in turn in the same process (CPU time, ``time.process_time``: the machine is
shared, so wall time mostly measures the neighbours); the table gives medians, the ratio of the medians and the
spread (min–max of the per-repetition ratios) as the noise. Peak extra memory of a release is the tracemalloc peak
(numpy reports its buffers to tracemalloc) minus the input, at growing n, to show that it does not grow with n.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import time
import tracemalloc
import warnings

import numpy as np
import scipy.linalg  # noqa: F401 - loaded before the thread limit, so that the limit reaches its BLAS
import sklearn.decomposition
from threadpoolctl import threadpool_limits

import diffpriv_py as dp
from diffpriv_py.estimators import PCA, LinearRegression

threadpool_limits(1)
warnings.simplefilter("ignore", dp.exceptions.DiffprivWarning)


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def compare(contenders: dict, repeats: int) -> list[str]:
    """Interleaved CPU timings; the first contender is the baseline."""
    for fn in contenders.values():  # warm-up
        fn(0)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for seed in range(repeats):
        for name, fn in contenders.items():
            times[name].append(cpu(lambda fn=fn, seed=seed: fn(seed)))
    names = list(contenders)
    base = times[names[0]]
    rows = []
    for name in names:
        ratios = [t / b for t, b in zip(times[name], base, strict=True)]
        med = statistics.median(times[name])
        rows.append(
            f"| {name} | {1000 * med:.1f} | {med / statistics.median(base):.2f} | {min(ratios):.2f}–{max(ratios):.2f} |"
        )
    return rows


def regression_data(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    y = np.clip(X @ rng.normal(size=d) + rng.normal(0, 0.1, n), -1, 1)
    return X, y


def pca_data(n: int, d: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, d)) * np.linspace(3.0, 0.5, d)


def bench_regression(repeats: int) -> list[str]:
    X, y = regression_data(10**6, 20)
    model = LinearRegression(data_norm=1.0, label_bound=1.0)
    return compare(
        {
            "numpy solve(XᵀX, Xᵀy), 10⁶ × 20": lambda seed: np.linalg.solve(X.T @ X, X.T @ y),
            "LinearRegression (default AdaSSP, ε = 1, δ = 1e-6)": lambda seed: model.release_response(
                dp.Del(1.0, 1e-6), (X, y), rng=seed
            ),
            "LinearRegression (functional, ε = 1)": lambda seed: LinearRegression(
                method="functional", data_norm=1.0, label_bound=1.0
            ).release_response(dp.Eps(1.0), (X, y), rng=seed),
        },
        repeats,
    )


def bench_pca(n: int, repeats: int) -> list[str]:
    X = pca_data(n, 50)
    exp = "10⁴" if n == 10**4 else "10⁶"
    return compare(
        {
            f"scikit-learn PCA(5).fit, {exp} × 50": lambda seed: sklearn.decomposition.PCA(5).fit(X),
            "PCA(5) (default wishart, ε = 1)": lambda seed: PCA(5, data_norm=20.0).release_response(
                dp.Eps(1.0), X, rng=seed
            ),
            "PCA(5), data_norm = 5 (nearly every row clipped)": lambda seed: PCA(5, data_norm=5.0).release_response(
                dp.Eps(1.0), X, rng=seed
            ),
        },
        repeats,
    )


def peak_mb(fn) -> float:
    """tracemalloc's peak over one call, in MB (numpy reports its buffers to tracemalloc); the input is not counted."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def memory_row(n: int) -> str:
    X, y = regression_data(n, 20)
    X32 = X.astype(np.float32)
    pca = PCA(5, data_norm=20.0)
    lin = LinearRegression(data_norm=1.0, label_bound=1.0)
    pca_mb = peak_mb(lambda: pca.release_response(dp.Eps(1.0), X, rng=0))
    pca32_mb = peak_mb(lambda: pca.release_response(dp.Eps(1.0), X32, rng=0))
    lin_mb = peak_mb(lambda: lin.release_response(dp.Del(1.0, 1e-6), (X, y), rng=0))
    return f"| {n:.0e} × 20 | {X.nbytes / 2**20:.0f} | {pca_mb:.1f} | {pca32_mb:.1f} | {lin_mb:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, BLAS 1 thread, load average {load:.1f}")  # fmt: skip
    print("\n| contender | median ms CPU | × baseline | per-repetition ratio (min–max) |\n|---|---|---|---|")
    for line in bench_regression(args.repeats) + bench_pca(10**4, 3 * args.repeats) + bench_pca(10**6, args.repeats):
        print(line, flush=True)
    if not args.skip_memory:
        print(
            "\n| data | input MB | PCA peak MB | PCA, float32 input, peak MB | LinearRegression peak MB |\n"
            "|---|---|---|---|---|"
        )
        for n in (10**5, 10**6, 4 * 10**6):
            print(memory_row(n), flush=True)


if __name__ == "__main__":
    main()
