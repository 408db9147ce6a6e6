"""DP PCA against IBM diffprivlib 0.6.6: utility and fit time on the same data, same ε, same split.

Run in the peer environment (``benchmarks/setup_peers.sh``: diffprivlib 0.6.6 needs scikit-learn < 1.8; the script
installs diffpriv_py there too), where both libraries run side by side in this process::

    /work/bench-venv/bin/python benchmarks/bench_pca.py [--quick] [--runs 10] [--timeout 60]
    python benchmarks/bench_pca.py --versus-sklearn [--runs 15]   (our releases against scikit-learn's PCA)

Where diffprivlib cannot be imported (diffpriv_py's own environment), its fits run in a child process of the peer
environment (``--peer-python``) on the *same arrays* (an .npz file) instead. Either way both get the same ε grid
and split. Every diffprivlib fit is capped (``--timeout`` seconds, by an alarm); once a fit times out the larger ε
of that task are skipped, because its Bingham rejection sampler only gets slower as ε grows. BLAS is pinned to one
thread.

Tasks:

* ``synthetic``: n = 10 000, d = 50, k = 5; a rank-5 signal with standard deviations
  5, 4, 3, 2, 1.5 along a random orthonormal basis plus N(0, 0.5²) noise, rows clipped to norm 20, then centred.
  Both libraries get ``data_norm=20`` (diffprivlib: ``bounds=(-8, 8)``, ``centered=True``, so it spends nothing on
  a mean). Utility: variance captured by the k released directions divided by that of the non-private top-k
  (q_F ratio; a random subspace scores about k/d·tr/top-k = 0.14).
* ``digits`` (the dp-stats poster task): scikit-learn's digits, each image divided by its own norm (per record, no
  privacy cost, ``data_norm=1``), stratified 50/50 split (random_state = 0); the k = 10 components are released
  from the training half and a linear SVM (StandardScaler + LinearSVC, non-private) is trained on the projected
  training half and scored on the projected test half. Utility: q_F ratio on the training half and SVM test error.
  diffprivlib gets ``centered=True`` so that both release the uncentred second-moment subspace.

Comparable guarantees: diffprivlib's PCA is pure ε-DP (Amin et al. 2019's iterative eigenvector sampling), so the
like-for-like columns are our ``wishart`` (the default: two-sided Wishart noise) and ``ppca`` (sequential exact
Bingham draws), both proven ε-DP. ``ppca_gibbs`` is the opt-in Gibbs chain for CSS's matrix Bingham
(``sampler="gibbs"``, no proven guarantee) and ``analyze_gauss`` is (ε, δ = 1e-6)-DP; both are listed for reference
only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

PEER_PYTHON = "/work/bench-venv/bin/python"
DELTA = 1e-6
EPSILONS = {
    "synthetic": (0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0),
    "digits": (0.1, 0.5, 1.0, 2.0, 5.0, 10.0),
}
K = {"synthetic": 5, "digits": 10}
DATA_NORM = {"synthetic": 20.0, "digits": 1.0}


# ---- data ----------------------------------------------------------------------------------------------------------


def load_task(name: str) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(X_train, y_train, X_test, y_test); the supervised parts are None for the synthetic task."""
    if name == "synthetic":
        rng = np.random.default_rng(0)
        n, d = 10_000, 50
        basis = np.linalg.qr(rng.standard_normal((d, 5)))[0]
        X = (rng.standard_normal((n, 5)) * [5.0, 4.0, 3.0, 2.0, 1.5]) @ basis.T + rng.normal(0, 0.5, (n, d))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1) / 20.0)[:, None]
        return X - X.mean(axis=0), None, None, None
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    X = digits.data / np.linalg.norm(digits.data, axis=1, keepdims=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, digits.target, test_size=0.5, stratify=digits.target, random_state=0
    )
    return X_train, y_train, X_test, y_test


def utility(components: np.ndarray, X: np.ndarray, k: int) -> float:
    """Captured variance of the released directions over that of the non-private top-k (uncentred q_F ratio)."""
    top = np.linalg.eigvalsh(X.T @ X)[::-1][:k].sum()
    q, _ = np.linalg.qr(components)  # diffprivlib's components are orthonormal too; QR is a no-op guard
    return float(np.square(X @ q).sum() / top)


def svm_error(components: np.ndarray, Xtr, ytr, Xte, yte) -> float:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    model = make_pipeline(StandardScaler(), LinearSVC(C=1.0, max_iter=5000)).fit(Xtr @ components, ytr)
    return float(np.mean(model.predict(Xte @ components) != yte))


# ---- diffpriv_py ---------------------------------------------------------------------------------------------------


def ours(task: str, data, epsilons, runs: int) -> dict:
    import diffpriv_py as dp
    from diffpriv_py.estimators import PCA

    Xtr, ytr, Xte, yte = data
    out: dict = {}
    warnings.simplefilter("ignore", dp.exceptions.DiffprivWarning)  # ppca_gibbs warns on every release, by design
    for method in ("wishart", "ppca", "ppca_gibbs", "analyze_gauss"):
        if method == "ppca_gibbs":
            mech = PCA(K[task], method="ppca", sampler="gibbs", data_norm=DATA_NORM[task])
        else:
            mech = PCA(K[task], method=method, data_norm=DATA_NORM[task])
        for eps in epsilons:
            params = dp.Del(eps, DELTA) if method == "analyze_gauss" else dp.Eps(eps)
            walls, cpus, utils, errors = [], [], [], []
            for seed in range(runs):
                t0, c0 = time.perf_counter(), time.process_time()
                components = mech.release_response(params, Xtr, rng=seed).response.components
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
                utils.append(utility(components, Xtr, K[task]))
                if ytr is not None:
                    errors.append(svm_error(components, Xtr, ytr, Xte, yte))
            out[f"{method}|{eps}"] = {"wall": walls, "cpu": cpus, "utility": utils, "error": errors}
    return out


def non_private(task: str, data) -> dict:
    """Non-private reference: XᵀX + eigh (the physical limit) and scikit-learn's PCA fit, median of 5."""
    from sklearn.decomposition import PCA as SkPCA

    Xtr, ytr, Xte, yte = data
    k = K[task]

    def gram_eigh():
        return np.linalg.eigh(Xtr.T @ Xtr)[1][:, ::-1][:, :k]

    def median_time(fn):
        fn()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    top = gram_eigh()
    rng = np.random.default_rng(1)
    random_util = statistics.mean(
        utility(np.linalg.qr(rng.standard_normal((Xtr.shape[1], k)))[0], Xtr, k) for _ in range(20)
    )
    res = {
        "gram_eigh_s": median_time(gram_eigh),
        "sklearn_pca_s": median_time(lambda: SkPCA(k, svd_solver="full").fit(Xtr)),
        "random_utility": random_util,
    }
    if ytr is not None:
        res["error"] = svm_error(top, Xtr, ytr, Xte, yte)
        res["random_error"] = statistics.mean(
            svm_error(np.linalg.qr(rng.standard_normal((Xtr.shape[1], k)))[0], Xtr, ytr, Xte, yte) for _ in range(5)
        )
    return res


# ---- diffprivlib (in this process when importable, else in the peer environment) ---------------------------------


def diffprivlib_imports() -> bool:
    """Whether diffprivlib imports in this process (0.6.6 fails to import with scikit-learn 1.8 or later)."""
    try:
        import diffprivlib.models  # noqa: F401
    except ImportError:
        return False
    return True


def diffprivlib_fits(X: np.ndarray, task: str, epsilons: list[float], runs: int, timeout: int) -> dict:
    """diffprivlib's PCA on X for every ε (stops at the first ε whose fit exceeds ``timeout`` seconds)."""
    import signal
    import warnings

    from diffprivlib.models import PCA as DplPCA
    from threadpoolctl import threadpool_limits

    class Timeout(Exception):
        pass

    def on_alarm(signum, frame):
        raise Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    out: dict = {}
    try:
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for eps in epsilons:
                walls, cpus, comps, timed_out = [], [], [], False
                for seed in range(runs):
                    model = DplPCA(
                        n_components=K[task],
                        epsilon=eps,
                        data_norm=DATA_NORM[task],
                        bounds=(-8.0, 8.0) if task == "synthetic" else (0.0, 1.0),
                        centered=True,
                        random_state=seed,
                    )
                    signal.alarm(timeout)
                    t0, c0 = time.perf_counter(), time.process_time()
                    try:
                        model.fit(X)
                    except Timeout:
                        timed_out = True
                        break
                    finally:
                        signal.alarm(0)
                    walls.append(time.perf_counter() - t0)
                    cpus.append(time.process_time() - c0)
                    comps.append(model.components_.T.tolist())
                out[str(eps)] = {"wall": walls, "cpu": cpus, "components": comps, "timeout": timed_out}
                print(json.dumps({"eps": eps, "timeout": timed_out, "walls": walls}), file=sys.stderr, flush=True)
                if timed_out:
                    break
    finally:
        signal.signal(signal.SIGALRM, previous)
    return out


def peer_main(npz: str, task: str, epsilons: list[float], runs: int, timeout: int) -> None:
    """Runs inside the peer venv when diffprivlib cannot be imported here: prints :func:`diffprivlib_fits` as JSON."""
    print(json.dumps(diffprivlib_fits(np.load(npz)["X"], task, epsilons, runs, timeout)))


def run_peer(python: str, npz: str, task: str, epsilons, runs: int, timeout: int) -> dict:
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); import bench_pca as b; "
        "b.peer_main(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))"
    )
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [python, "-c", code, here, npz, task, json.dumps(list(epsilons)), str(runs), str(timeout)]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    budget = timeout * (len(epsilons) * runs + 2) + 120
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=budget)
    except subprocess.TimeoutExpired:
        return {"error": f"peer process exceeded {budget} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- report --------------------------------------------------------------------------------------------------------


def _fmt(values: list[float], digits: int = 3) -> str:
    if not values:
        return "–"
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def _ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):.0f}" if values else "–"


def table(task: str, epsilons, mine: dict, peer: dict, base: dict, data) -> str:
    Xtr, ytr, Xte, yte = data
    k = K[task]
    lines = [
        f"**{task}** (n = {Xtr.shape[0]}, d = {Xtr.shape[1]}, k = {k}, data_norm = {DATA_NORM[task]:g}): non-private "
        f"XᵀX + eigh {1000 * base['gram_eigh_s']:.1f} ms, scikit-learn PCA fit {1000 * base['sklearn_pca_s']:.1f} ms; "
        f"random subspace utility {base['random_utility']:.3f}"
        + (
            f"; SVM error: non-private PCA {base['error']:.3f}, random {base['random_error']:.3f}"
            if ytr is not None
            else ""
        )
        + ".",
        "",
    ]
    head = "| ε | wishart utility (default) | ppca utility | diffprivlib utility |"
    if ytr is not None:
        head += " wishart SVM error | ppca SVM error | diffprivlib SVM error |"
    head += (
        " wishart fit ms (cpu) | ppca fit ms (cpu) | diffprivlib fit ms (cpu) | ppca_gibbs utility (unproven) |"
        " ppca_gibbs fit ms (cpu) | analyze_gauss utility (δ=1e-6) | analyze_gauss fit ms |"
    )
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for eps in epsilons:
        w = mine[f"wishart|{eps}"]
        p = mine[f"ppca|{eps}"]
        gibbs = mine[f"ppca_gibbs|{eps}"]
        g = mine[f"analyze_gauss|{eps}"]
        entry = peer.get(str(eps))
        if entry is None:
            peer_util = peer_err = peer_time = "skipped (an earlier ε timed out)" if "error" not in peer else "error"
        elif entry["timeout"] and not entry["wall"]:
            peer_util = peer_err = "–"
            peer_time = "**timed out**"
        else:
            comps = [np.array(c) for c in entry["components"]]
            peer_util = _fmt([utility(c, Xtr, k) for c in comps])
            peer_err = _fmt([svm_error(c, Xtr, ytr, Xte, yte) for c in comps]) if ytr is not None else ""
            peer_time = f"{_ms(entry['wall'])} ({_ms(entry['cpu'])})" + (
                " (then timed out)" if entry["timeout"] else ""
            )
        row = f"| {eps:g} | {_fmt(w['utility'])} | {_fmt(p['utility'])} | {peer_util} |"
        if ytr is not None:
            row += f" {_fmt(w['error'])} | {_fmt(p['error'])} | {peer_err} |"
        row += f" {_ms(w['wall'])} ({_ms(w['cpu'])}) | {_ms(p['wall'])} ({_ms(p['cpu'])}) | {peer_time} |"
        row += f" {_fmt(gibbs['utility'])} | {_ms(gibbs['wall'])} ({_ms(gibbs['cpu'])}) |"
        row += f" {_fmt(g['utility'])} | {_ms(g['wall'])} |"
        lines.append(row)
    return "\n".join(lines)


def timing_grid(runs: int) -> str:
    """Release time of every method at every ε on the synthetic task (d = 50, k = 5, n = 10⁴): median wall and CPU."""
    import diffpriv_py as dp
    from diffpriv_py.estimators import PCA

    X = load_task("synthetic")[0]
    epsilons = (0.01, 0.1, 1.0, 10.0)
    lines = [
        "| method | " + " | ".join(f"ε = {e:g}: wall ms (cpu)" for e in epsilons) + " |",
        "|---|" + "---|" * len(epsilons),
    ]
    np.linalg.eigh(X.T @ X)  # warm up BLAS and LAPACK before timing
    warnings.simplefilter("ignore", dp.exceptions.DiffprivWarning)
    for method in ("wishart", "ppca", "ppca_gibbs", "analyze_gauss", "mod_sulq"):
        if method == "ppca_gibbs":
            mech = PCA(5, method="ppca", sampler="gibbs", data_norm=20.0)
        else:
            mech = PCA(5, method=method, data_norm=20.0)
        cells = []
        for eps in epsilons:
            params = dp.Del(eps, DELTA) if method in ("analyze_gauss", "mod_sulq") else dp.Eps(eps)
            walls, cpus = [], []
            for seed in range(runs):
                t0, c0 = time.perf_counter(), time.process_time()
                mech.release_response(params, X, rng=seed)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
            cells.append(f"{_ms(walls)} ({_ms(cpus)})")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def versus_sklearn(runs: int) -> str:
    """Our pure-ε releases against scikit-learn's PCA fit at n = 10⁴, d = 50, k = 5, interleaved in one process.

    BLAS is pinned to one thread by the caller; each repetition times scikit-learn, then each of our releases, in
    CPU time (the machine may be shared, so wall time measures the neighbours). Medians and their ratios.
    """
    from sklearn.decomposition import PCA as SkPCA

    import diffpriv_py as dp
    from diffpriv_py.estimators import PCA

    X = load_task("synthetic")[0]
    warnings.simplefilter("ignore", dp.exceptions.DiffprivWarning)
    contenders = {
        "scikit-learn PCA(5).fit": lambda seed: SkPCA(5).fit(X),
        "wishart (default, ε = 1)": lambda seed: PCA(5, data_norm=20.0).release_response(dp.Eps(1.0), X, rng=seed),
        "wishart (default, ε = 0.1)": lambda seed: PCA(5, data_norm=20.0).release_response(dp.Eps(0.1), X, rng=seed),
        "ppca (ε = 1)": lambda seed: PCA(5, method="ppca", data_norm=20.0).release_response(dp.Eps(1.0), X, rng=seed),
        "ppca (ε = 0.1)": lambda seed: PCA(5, method="ppca", data_norm=20.0).release_response(dp.Eps(0.1), X, rng=seed),
        "ppca_gibbs (opt-in, ε = 1)": lambda seed: PCA(
            5, method="ppca", data_norm=20.0, sampler="gibbs"
        ).release_response(dp.Eps(1.0), X, rng=seed),
        "analyze_gauss (ε = 1, δ = 1e-6)": lambda seed: PCA(5, method="analyze_gauss", data_norm=20.0).release_response(
            dp.Del(1.0, DELTA), X, rng=seed
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():  # warm-up
        fn(0)
    for seed in range(runs):
        for name, fn in contenders.items():
            c0 = time.process_time()
            fn(seed)
            times[name].append(time.process_time() - c0)
    base = statistics.median(times["scikit-learn PCA(5).fit"])
    lines = ["| release (n = 10⁴, d = 50, k = 5) | median ms CPU | × scikit-learn |", "|---|---|---|"]
    for name, values in times.items():
        med = statistics.median(values)
        lines.append(f"| {name} | {1000 * med:.1f} | {med / base:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer ε and one run")
    parser.add_argument("--peer-python", default=PEER_PYTHON)
    parser.add_argument("--timeout", type=int, default=60, help="seconds per diffprivlib fit")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", nargs="*", default=["synthetic", "digits"])
    parser.add_argument("--epsilons", nargs="*", type=float, help="override the task's ε grid")
    parser.add_argument("--timing-only", action="store_true", help="only the d=50, k=5 release-time grid")
    parser.add_argument("--versus-sklearn", action="store_true", help="only our releases against scikit-learn's PCA")
    args = parser.parse_args()
    import scipy.linalg  # noqa: F401 - load scipy's BLAS and scikit-learn's OpenMP runtime before limiting them:
    import sklearn.decomposition  # noqa: F401 - threadpoolctl cannot limit a library loaded inside the block
    from threadpoolctl import threadpool_limits

    if args.versus_sklearn:
        with threadpool_limits(1):
            print(versus_sklearn(max(args.runs, 15)))
        return

    if args.timing_only:
        with threadpool_limits(1):
            print(timing_grid(max(args.runs, 5)))
        return

    runs = 1 if args.quick else args.runs
    for task in args.tasks:
        epsilons = args.epsilons or (EPSILONS[task][::3] if args.quick else EPSILONS[task])
        data = load_task(task)
        with threadpool_limits(1):
            base = non_private(task, data)
            mine = ours(task, data, epsilons, runs)
        if diffprivlib_imports():  # side by side in this process
            peer = diffprivlib_fits(data[0], task, list(epsilons), runs, args.timeout)
        elif os.path.exists(args.peer_python):
            with tempfile.TemporaryDirectory() as tmp:
                npz = os.path.join(tmp, f"{task}.npz")
                np.savez(npz, X=data[0])
                peer = run_peer(args.peer_python, npz, task, epsilons, runs, args.timeout)
        else:
            peer = {"error": f"diffprivlib does not import here and there is no peer environment at {args.peer_python}"}
        if "error" in peer:
            print(f"diffprivlib: {peer['error']}", file=sys.stderr)
        print(table(task, epsilons, mine, peer, base, data))
        print()


if __name__ == "__main__":
    main()
