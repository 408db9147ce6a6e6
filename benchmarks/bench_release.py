"""Per-release overhead and import time: one small release at a time, beside numpy and diffprivlib.

Run: ``PYTHONPATH=. python benchmarks/bench_release.py`` (diffpriv_py and numpy), or, to add diffprivlib (which needs
scikit-learn < 1.8), in a separate environment::

    python -m venv /work/venv-dpl
    /work/venv-dpl/bin/pip install diffprivlib "scikit-learn<1.8" attrs randomgen threadpoolctl
    PYTHONPATH=. /work/venv-dpl/bin/python benchmarks/bench_release.py

Every figure is CPU time per call (``time.process_time``, so a busy neighbour on a shared machine does not count),
the median of several rounds in which all contenders of a row are timed in turn (interleaved), with BLAS on one
thread. Prints Markdown table rows for benchmarks/README.md.

Options: ``--scalar`` (only the one-value table), ``--small-gaussian`` (only the safe Gaussian releases of 1 to 1000
values), ``--baseline DIR`` (add a "before" column: DIR holds an older copy of the package renamed ``dpbase``, e.g.
``git archive <rev> diffpriv_py | tar -x -C DIR && mv DIR/diffpriv_py DIR/dpbase``; it is timed interleaved with the
current code in the same process).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

import diffpriv_py as dp

ROUNDS = 7


def per_call(fns: dict[str, object], calls: int) -> dict[str, float]:
    """Median CPU seconds per call of each function, timed in interleaved rounds."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()  # warm-up (imports, caches)
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            start = time.process_time()
            for _ in range(calls):
                fn()
            times[name].append((time.process_time() - start) / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def peers():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import diffprivlib
    except ImportError:
        return None
    return diffprivlib


def baseline():
    """The package given by ``--baseline DIR`` (a copy of an older diffpriv_py renamed ``dpbase`` in DIR), or None."""
    if "--baseline" not in sys.argv:
        return None
    sys.path.insert(0, sys.argv[sys.argv.index("--baseline") + 1])
    import dpbase  # the package's own imports are relative, so a renamed copy imports beside the current one

    return dpbase


def row(name: str, t: dict[str, float], ours: str, ref: str | None) -> None:
    us = {k: f"{v * 1e6:.1f}" for k, v in t.items()}
    ratio = f"{t[ours] / t[ref]:.2f}×" if ref in t else "–"
    before = f" {us['before']} |" if "before" in t else ""
    print(
        f"| {name} | {us[ours]} | {us.get('numpy', '–')} | {us.get('diffprivlib', '–')} | {ratio} |{before}",
        flush=True,
    )


def scalar_cases(dp, gen: np.random.Generator) -> list:
    """(name, our release, numpy's draw or None, diffprivlib's operation) for the package ``dp``."""
    eps, delta = dp.Eps(1.0), dp.Del(1.0, 1e-6)
    identity = float
    lap = dp.Laplace(target=identity, sensitivity=1.0)
    gau = dp.Gaussian(target=identity, sensitivity=1.0)
    x10 = np.linspace(0.0, 1.0, 10)
    mean_mech = dp.Laplace(target=np.mean, sensitivity=0.1)
    return [
        ("Laplace, seed", lambda: lap.release_response(eps, 0.5, rng=1), lambda: gen.laplace(0.5, 1.0), "lap"),
        ("Laplace, rng=None", lambda: lap.release_response(eps, 0.5), lambda: gen.laplace(0.5, 1.0), "lap"),
        ("Gaussian, seed", lambda: gau.release_response(delta, 0.5, rng=1), lambda: gen.normal(0.5, 1.0), "gau"),
        ("Gaussian, rng=None", lambda: gau.release_response(delta, 0.5), lambda: gen.normal(0.5, 1.0), "gau"),
        (
            "Laplace(target=np.mean) of 10 values, seed",
            lambda: mean_mech.release_response(eps, x10, rng=1),
            None,
            "mean",
        ),
        ("Laplace(target=np.mean) of 10 values, rng=None", lambda: mean_mech.release_response(eps, x10), None, "mean"),
        ("dp.stats.mean of 10 values, seed", lambda: dp.stats.mean(x10, eps, bounds=(0, 1), rng=1), None, "mean"),
        ("dp.stats.mean of 10 values, rng=None", lambda: dp.stats.mean(x10, eps, bounds=(0, 1)), None, "mean"),
        ("dp.stats.count of 10 values, seed", lambda: dp.stats.count(x10, eps, rng=1), None, "count"),
        ("dp.stats.count of 10 values, rng=None", lambda: dp.stats.count(x10, eps), None, "count"),
    ]


def scalar_rows(dpl, base) -> None:
    extra = " before µs |" if base is not None else ""
    print(f"| release (one value) | diffpriv_py µs | numpy µs | diffprivlib µs | ours / diffprivlib |{extra}")
    print("|---|---|---|---|---|" + ("---|" if base is not None else ""))
    gen = np.random.default_rng(0)
    x10 = np.linspace(0.0, 1.0, 10)
    cases = scalar_cases(dp, gen)
    before = scalar_cases(base, gen) if base is not None else None
    if dpl is not None:
        dlap = dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0)
        dgau = dpl.mechanisms.GaussianAnalytic(epsilon=1.0, delta=1e-6, sensitivity=1.0)
        acc = dpl.BudgetAccountant()
        refs = {
            "lap": lambda: dlap.randomise(0.5),
            "gau": lambda: dgau.randomise(0.5),
            "mean": lambda: dpl.tools.mean(x10, epsilon=1.0, bounds=(0, 1), accountant=acc),
            "count": lambda: dpl.tools.count_nonzero(x10, epsilon=1.0, accountant=acc),
        }
    for i, (name, ours, numpy_fn, kind) in enumerate(cases):
        fns = {"ours": ours}
        if numpy_fn is not None:
            fns["numpy"] = numpy_fn
        if dpl is not None:
            fns["diffprivlib"] = refs[kind]
        if before is not None:
            fns["before"] = before[i][1]
        row(name, per_call(fns, 2000), "ours", "diffprivlib" if dpl is not None else None)


def small_gaussian_rows(base) -> None:
    """Safe Gaussian releases of 1 to 1000 values against numpy's ``normal`` of as many values, same generator."""
    from diffpriv_py._rng import secure_generator

    extra = " before µs |" if base is not None else ""
    print()
    print(f"| safe Gaussian release | diffpriv_py µs | numpy normal µs (same generator) | ratio |{extra}")
    print("|---|---|---|---|" + ("---|" if base is not None else ""))
    aes = secure_generator()
    # A PCG64 Generator passed as rng= (draws differ from release to release, as with rng=None; a fixed int seed would
    # hit the rare tail sampler in every call or in none).
    for seeded in (False, True):
        pcg = np.random.default_rng(1)
        gen, rng = (pcg, pcg) if seeded else (aes, None)
        for n in [1, 10, 100, 1000]:
            x = np.zeros(n) if n > 1 else 0.0
            fns = {}
            for key, module in [("ours", dp), ("before", base)]:
                if module is not None:
                    mech, params = module.Gaussian(target=lambda v: v, sensitivity=1.0), module.Del(1.0, 1e-6)
                    fns[key] = lambda mech=mech, params=params, x=x, rng=rng: mech.release_response(params, x, rng=rng)
            fns["numpy"] = lambda n=n, gen=gen: gen.normal(0.0, 1.0, n)
            t = per_call(fns, 2000 if n < 1000 else 500)
            before = f" {t['before'] * 1e6:.1f} |" if "before" in t else ""
            label = f"{n} value{'s' if n > 1 else ''}, {'rng=Generator(PCG64)' if seeded else 'rng=None (AES-CTR)'}"
            print(
                f"| {label} | {t['ours'] * 1e6:.1f} | {t['numpy'] * 1e6:.1f} | {t['ours'] / t['numpy']:.1f}× |{before}",
                flush=True,
            )


def many_rows(dpl) -> None:
    groups = np.random.default_rng(1).uniform(0.0, 1.0, size=(10_000, 10))
    eps = dp.Eps(1.0)
    mean_mech = dp.Laplace(target=np.mean, sensitivity=0.1)

    def ours_stats():
        for g in groups:
            dp.stats.mean(g, eps, bounds=(0, 1))

    def ours_mech():
        for g in groups:
            mean_mech.release_response(eps, g)

    def numpy_clip_mean():
        for g in groups:
            np.mean(np.clip(g, 0.0, 1.0))

    fns = {"stats": ours_stats, "mech": ours_mech, "numpy": numpy_clip_mean}
    if dpl is not None:
        acc = dpl.BudgetAccountant()

        def theirs():
            for g in groups:
                dpl.tools.mean(g, epsilon=1.0, bounds=(0, 1), accountant=acc)

        fns["diffprivlib"] = theirs
    global ROUNDS
    saved, ROUNDS = ROUNDS, 3
    t = {k: v / len(groups) for k, v in per_call(fns, 1).items()}
    ROUNDS = saved
    print()
    print("| 10⁴ groups of 10 values, one release per group (rng=None) | µs per release | ours / diffprivlib |")
    print("|---|---|---|")
    for key, name in [
        ("stats", "dp.stats.mean"),
        ("mech", "Laplace(target=np.mean)"),
        ("diffprivlib", "diffprivlib.tools.mean"),
        ("numpy", "numpy clip-then-mean (not private)"),
    ]:
        if key in t:
            ratio = f"{t[key] / t['diffprivlib']:.2f}×" if "diffprivlib" in t else "–"
            print(f"| {name} | {t[key] * 1e6:.1f} | {ratio} |", flush=True)


def large_rows(n: int = 10**7) -> None:
    """Safe releases of n values against numpy's own draws on the same AES-CTR generator, CPU time, interleaved."""
    from diffpriv_py._rng import secure_generator

    x = np.zeros(n)
    aes = secure_generator()
    lap = dp.Laplace(target=lambda v: v, sensitivity=1.0)
    gau = dp.Gaussian(target=lambda v: v, sensitivity=1.0)
    eps, delta = dp.Eps(1.0), dp.Del(1.0, 1e-6)
    fns = {
        "numpy laplace": lambda: aes.laplace(0.0, 1.0, n),
        "Laplace": lambda: lap.release_response(eps, x),
        "numpy normal": lambda: aes.normal(0.0, 1.0, n),
        "Gaussian": lambda: gau.release_response(delta, x),
    }
    global ROUNDS
    saved, ROUNDS = ROUNDS, 5
    t = per_call(fns, 1)
    ROUNDS = saved
    print()
    print(f"| {n:.0e} values, rng=None (AES-CTR), CPU | ms | numpy ms (same generator) | ratio |")
    print("|---|---|---|---|")
    for name, ref in [("Laplace", "numpy laplace"), ("Gaussian", "numpy normal")]:
        print(f"| {name} release (safe) | {t[name] * 1e3:.0f} | {t[ref] * 1e3:.0f} ({ref}) | {t[name] / t[ref]:.2f}× |")


def import_rows(runs: int = 7) -> None:
    """CPU time of `import numpy` and `import diffpriv_py` (numpy included), each in fresh interpreters, interleaved."""
    code = "import time; t = time.process_time(); import {}; print(time.process_time() - t)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__)))])}
    times: dict[str, list[float]] = {"numpy": [], "diffpriv_py": []}
    for _ in range(runs):
        for module in times:
            out = subprocess.run([sys.executable, "-c", code.format(module)], capture_output=True, text=True, env=env)
            times[module].append(float(out.stdout))
    med = {k: statistics.median(v) for k, v in times.items()}
    print()
    print("| import (fresh interpreter, CPU) | ms | ratio to numpy |")
    print("|---|---|---|")
    for module, t in med.items():
        print(f"| import {module} | {t * 1e3:.0f} | {t / med['numpy']:.2f}× |", flush=True)


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    dpl = peers()
    base = baseline()
    # --scalar: only the one-value table (a quick check of the fixed costs); --small-gaussian: only the small safe
    # Gaussian table; --baseline DIR: add a "before" column timing an older copy of the package (see baseline()).
    full = "--scalar" not in sys.argv and "--small-gaussian" not in sys.argv
    with threadpool_limits(1):
        if "--small-gaussian" not in sys.argv:
            scalar_rows(dpl, base)
        if full or "--small-gaussian" in sys.argv:
            small_gaussian_rows(base)
        if full:
            many_rows(dpl)
            large_rows()
    if full:
        import_rows()
