"""Noise throughput: safe (grid), exact (CKS20) and float noise beside numpy, diffprivlib and OpenDP.

``python benchmarks/bench_noise.py`` times diffpriv_py beside numpy; ``python benchmarks/bench_noise.py --peers``
(in the venv built by ``benchmarks/setup_peers.sh``) times numpy, diffprivlib and OpenDP. ``--quick`` uses smaller
sizes. Prints Markdown table rows; every figure is the median of several runs in one process.
``python benchmarks/bench_noise.py --gaussian`` times the safe Gaussian sampler against numpy's ``normal`` on the same
PCG64 generator, interleaved run by run, at 10⁶ and 10⁷ values (``--quick``: 10⁶ only), in CPU time.
``python benchmarks/bench_noise.py --twins`` times each scalar twin in ``diffpriv_py.noise`` against the single
vectorised path it shadows, on the small releases it serves (a twin is kept only where that path is > 10 % slower).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

REPEATS = 5


def median_seconds(fn, repeats: int = REPEATS, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


def row(name: str, n: int, seconds: float, reference: float | None = None) -> str:
    ratio = f"{seconds / reference:.2f}×" if reference else "–"
    line = f"| {name} | {n:.0e} | {seconds * 1e3:.1f} | {n / seconds:.2e} | {ratio} |"
    print(line, flush=True)
    return line


def numpy_rows(rows: list[str], n: int) -> tuple[float, float]:
    pcg = np.random.default_rng(1)
    np_pcg = median_seconds(lambda: pcg.laplace(0.0, 1.0, n))
    try:
        from randomgen import AESCounter
    except ImportError:  # the peer venv may lack randomgen: PCG64 only
        np_aes = np_pcg
    else:
        aes = np.random.Generator(AESCounter())
        np_aes = median_seconds(lambda: aes.laplace(0.0, 1.0, n))
        rows.append(row("numpy Generator.laplace (AES-CTR)", n, np_aes))
    rows.append(row("numpy Generator.laplace (PCG64)", n, np_pcg))
    return np_aes, np_pcg


def ours(rows: list[str], quick: bool) -> None:
    import diffpriv_py as dp
    from diffpriv_py._rng import secure_generator

    identity = lambda x: x  # noqa: E731
    eps, dl = dp.Eps(1.0), dp.Del(1.0, 1e-6)
    for n in [10**6] if quick else [10**6, 10**7]:
        x = np.zeros(n)
        aes = secure_generator()
        np_aes, np_pcg = numpy_rows(rows, n)
        rows.append(
            row("numpy Generator.normal (AES-CTR)", n, median_seconds(lambda aes=aes, n=n: aes.normal(0, 1, n)))
        )
        lap = dp.Laplace(target=identity, sensitivity=1.0)
        rows.append(
            row(
                "Laplace release, default safe, rng=None (AES-CTR)",
                n,
                median_seconds(lambda lap=lap, x=x: lap.release_response(eps, x)),
                np_aes,
            )
        )
        rows.append(
            row(
                "Laplace release, safe, seeded (PCG64)",
                n,
                median_seconds(lambda lap=lap, x=x: lap.release_response(eps, x, rng=1)),
                np_pcg,
            )
        )
        flt = dp.Laplace(target=identity, sensitivity=1.0, noise="float")
        rows.append(
            row(
                "Laplace release, noise='float' (unsafe)",
                n,
                median_seconds(lambda flt=flt, x=x: flt.release_response(eps, x)),
                np_aes,
            )
        )
        gau = dp.Gaussian(target=identity, sensitivity=1.0)
        rows.append(
            row(
                "Gaussian release, default safe",
                n,
                median_seconds(lambda gau=gau, x=x: gau.release_response(dl, x)),
                np_aes,
            )
        )
        counts = np.zeros(n, dtype=np.int64)
        geo = dp.DiscreteLaplace(target=identity, sensitivity=1.0)
        rows.append(
            row(
                "DiscreteLaplace release, safe",
                n,
                median_seconds(lambda geo=geo, c=counts: geo.release_response(eps, c)),
                np_aes,
            )
        )
    m = 2_000 if quick else 20_000
    small = np.zeros(m)
    for name, mech, params in [
        ("Laplace release, noise='exact' (CKS20)", dp.Laplace(target=identity, sensitivity=1.0, noise="exact"), eps),
        ("Gaussian release, noise='exact' (CKS20)", dp.Gaussian(target=identity, sensitivity=1.0, noise="exact"), dl),
    ]:
        rows.append(
            row(name, m, median_seconds(lambda mech=mech, params=params: mech.release_response(params, small), 3))
        )


def gaussian_sampler(rows: list[str], quick: bool) -> None:
    """Safe Gaussian noise (grid 2⁻⁴⁰σ, calibrated σ) vs numpy's ``normal``, interleaved in one process, medians."""
    from diffpriv_py.noise import grid_gaussian, grid_step

    sigma = 1.3
    r = grid_step(sigma)
    for n in [10**6] if quick else [10**6, 10**7]:
        x = np.zeros(n)
        rng = np.random.default_rng(1)
        ours_s, numpy_s = [], []
        cpu = time.process_time  # CPU time: a busy neighbour on a shared machine does not count
        for _ in range(9):
            numpy_s.append(median_seconds(lambda n=n, rng=rng: rng.normal(0.0, sigma, n), 1, cpu))
            ours_s.append(median_seconds(lambda x=x, rng=rng: grid_gaussian(x, r, sigma, rng), 1, cpu))
        reference = statistics.median(numpy_s)
        rows.append(row("numpy Generator.normal (PCG64)", n, reference))
        rows.append(row("safe Gaussian noise, grid_gaussian (PCG64)", n, statistics.median(ours_s), reference))


def peers(rows: list[str], quick: bool) -> None:
    numpy_rows(rows, 10**6)
    try:
        from diffprivlib.mechanisms import Gaussian as DLGaussian
        from diffprivlib.mechanisms import Laplace as DLLaplace

        k = 5_000 if quick else 50_000
        dl_lap = DLLaplace(epsilon=1.0, sensitivity=1.0)
        dl_gau = DLGaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0)
        rows.append(
            row(
                "diffprivlib 0.6.6 Laplace.randomise (scalar loop)",
                k,
                median_seconds(lambda: [dl_lap.randomise(0.0) for _ in range(k)], 3),
            )
        )
        rows.append(
            row(
                "diffprivlib 0.6.6 Gaussian.randomise (scalar loop)",
                k,
                median_seconds(lambda: [dl_gau.randomise(0.0) for _ in range(k)], 3),
            )
        )
    except ImportError:
        print("| diffprivlib | – | not installed | – | – |")

    try:
        import opendp.prelude as odp

        odp.enable_features("contrib")
        k = 5_000 if quick else 20_000  # OpenDP's exact samplers run at about 10^4 floats/s here
        domain = odp.vector_domain(odp.atom_domain(T=float, nan=False))
        v = [0.0] * k
        lap_meas = odp.m.make_laplace(domain, odp.l1_distance(T=float), scale=1.0)
        gau_meas = odp.m.make_gaussian(domain, odp.l2_distance(T=float), scale=1.0)
        rows.append(
            row("OpenDP make_laplace on a float vector (exact, Rust)", k, median_seconds(lambda: lap_meas(v), 3))
        )
        rows.append(
            row("OpenDP make_gaussian on a float vector (exact, Rust)", k, median_seconds(lambda: gau_meas(v), 3))
        )
    except Exception as exc:  # a peer's API or install problem must not stop the benchmark
        print(f"| OpenDP | – | unavailable ({type(exc).__name__}: {exc}) | – | – |")


def twins() -> None:
    """Each scalar twin against the vectorised path it shadows (best of 5, µs per call; the ratio is what it saves)."""
    import timeit

    from diffpriv_py import noise
    from diffpriv_py.mechanisms.gaussian import analytic_gaussian_sigma
    from diffpriv_py.noise import gaussian as gaussian_module
    from diffpriv_py.noise import geometric as geometric_module
    from diffpriv_py.noise import grid as grid_module

    rng = np.random.default_rng(1)

    def micros(fn, number: int = 20_000) -> float:
        return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6

    r, eps_c, rounded = noise.laplace_grid(1.0, 1.0, 1)
    lam, one = r * eps_c / rounded, np.array([0.3])
    lam_count = noise.laplace_epsilon_reserve(1.0, 1)
    r_g, sigma = noise.gaussian_grid_calibration(analytic_gaussian_sigma, 1.0, 1.0, 1e-6, 1)
    pairs = [
        (
            "grid_laplace_scalar / grid_laplace's size-1 branch vs _signed_geometric(1)",
            lambda: noise.grid_laplace_scalar(0.3, 1.0, 1.0, rng),
            lambda: geometric_module._signed_geometric(1, lam, rng, unit=r, offset=one),
        ),
        (
            "grid_laplace_scalar vs grid_laplace (array of one)",
            lambda: noise.grid_laplace_scalar(0.3, 1.0, 1.0, rng),
            lambda: noise.grid_laplace(one, 1.0, 1.0, 1, rng),
        ),
        (
            "one_two_sided_geometric vs two_sided_geometric(1)",
            lambda: noise.one_two_sided_geometric(lam_count, rng),
            lambda: noise.two_sided_geometric(1, lam_count, rng),
        ),
        (
            "_one_geometric_block vs _geometric_blocks(1) (β = 0.3)",
            lambda: geometric_module._one_geometric_block(0.3, rng),
            lambda: geometric_module._geometric_blocks(1, 0.3, rng),
        ),
        (
            "_one_discrete_gaussian_block / grid_gaussian's size-1 branch vs _discrete_gaussian_blocks(1)",
            lambda: noise.grid_gaussian_scalar(0.3, r_g, sigma, rng),
            lambda: gaussian_module._discrete_gaussian_blocks(1, sigma / r_g, rng, unit=r_g, offset=one),
        ),
        (
            "grid_gaussian_scalar vs grid_gaussian (array of one)",
            lambda: noise.grid_gaussian_scalar(0.3, r_g, sigma, rng),
            lambda: noise.grid_gaussian(one, r_g, sigma, rng),
        ),
        (
            "_one_round_to_grid vs round_to_grid (array of one)",
            lambda: grid_module._one_round_to_grid(0.3, r),
            lambda: noise.round_to_grid(one, r),
        ),
    ]
    print("| twin vs single path | twin µs | single path µs | ratio |\n|---|---|---|---|")
    for name, twin, single in pairs:
        a, b = micros(twin), micros(single)
        print(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.2f}× |", flush=True)
    few = gaussian_module._FEW_TAILS
    for n in (100, 1000):  # _few_gaussian_tails serves the tail batch of releases of up to a few thousand values
        values = np.full(n, 0.3)
        times = []
        for threshold in (few, 0):
            gaussian_module._FEW_TAILS = threshold
            times.append(micros(lambda v=values: noise.grid_gaussian(v, r_g, sigma, rng), number=20_000 // n))
        gaussian_module._FEW_TAILS = few
        name = f"grid_gaussian of {n} values: _few_gaussian_tails vs _gaussian_tail_arrays only"
        print(f"| {name} | {times[0]:.2f} | {times[1]:.2f} | {times[1] / times[0]:.2f}× |", flush=True)


def main() -> None:
    quick = "--quick" in sys.argv
    if "--twins" in sys.argv:
        twins()
        return
    if "--gaussian" in sys.argv:
        print("| sampler | values | median ms | values/s | × numpy normal (same generator) |\n|---|---|---|---|---|")
        gaussian_sampler([], quick)
        return
    print("| sampler | values | median ms | values/s | × numpy laplace (same generator) |\n|---|---|---|---|---|")
    (peers if "--peers" in sys.argv else ours)([], quick)


if __name__ == "__main__":
    main()
