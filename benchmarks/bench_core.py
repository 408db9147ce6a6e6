"""Core release and sampler overhead, side by side with numpy's own generator in the same process.

Run: python benchmarks/bench_core.py   (prints a Markdown table; numbers go into benchmarks/README.md)
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

import diffpriv_py as dp

REPEATS = 7


def median_time(fn, repeats: int = REPEATS) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def release_rows() -> list[str]:
    rows = []
    identity = lambda v: v  # noqa: E731 - the release cost is what is measured
    for size in (10**6, 10**7):
        x = np.zeros(size)
        gen = np.random.default_rng(0)
        numpy_laplace = median_time(lambda: gen.laplace(0.0, 1.0, size))  # noqa: B023
        numpy_normal = median_time(lambda: gen.normal(0.0, 1.0, size))  # noqa: B023
        lap = dp.Laplace(target=identity, sensitivity=1.0)
        gau = dp.Gaussian(target=identity, sensitivity=1.0)
        cases = [
            ("Laplace (default, secure rng)", lambda: lap.release_response(dp.Eps(1), x), numpy_laplace),  # noqa: B023
            ("Gaussian (default, secure rng)", lambda: gau.release_response(dp.Del(1, 1e-6), x), numpy_normal),  # noqa: B023
        ]
        if "noise" in {a.name for a in type(lap).__attrs_attrs__}:
            flap = dp.Laplace(target=identity, sensitivity=1.0, noise="float")
            cases.append(("Laplace noise='float'", lambda: flap.release_response(dp.Eps(1), x), numpy_laplace))  # noqa: B023
        for name, fn, base in cases:
            t = median_time(fn)
            rows.append(f"| {name} | {size:.0e} | {t * 1e3:.1f} | {base * 1e3:.1f} | {t / base:.2f}× |")
    return rows


def sampler_rows() -> list[str]:
    n, m = 1000, 2000
    mech = dp.Laplace(target=np.median)

    def oracle(k, rng):
        return rng.random(k)

    def plain():
        rng = np.random.default_rng(0)
        for _ in range(m):  # R's pair: a shared base oracle(n - 1) plus one fresh oracle(1) record each
            base, first, second = oracle(n - 1, rng), oracle(1, rng), oracle(1, rng)
            abs(np.median(np.concatenate([base, first])) - np.median(np.concatenate([base, second])))

    t_plain = median_time(plain, 3)
    t_sampler = median_time(lambda: mech.sensitivity_sampler_manual(oracle, n=n, m=m, k=m, rng=0), 3)
    return [
        f"| hand-written loop (3 oracle + 2 target calls per pair) | {m} | {t_plain * 1e3:.0f} | – | – |",
        f"| sensitivity_sampler_manual | {m} | {t_sampler * 1e3:.0f} | {t_plain * 1e3:.0f} | "
        f"{t_sampler / t_plain:.2f}× |",
    ]


def main() -> None:
    with threadpool_limits(1):
        print("| release | values | median ms | numpy generator ms | ratio |")
        print("|---|---|---|---|---|")
        print("\n".join(release_rows()))
        print()
        print("| sampler (target = median of n=1000) | pairs m | median ms | plain loop ms | ratio |")
        print("|---|---|---|---|---|")
        print("\n".join(sampler_rows()))


if __name__ == "__main__":
    main()
