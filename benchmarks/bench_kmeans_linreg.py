"""Private k-means and linear regression against IBM diffprivlib 0.6.6: utility and fit time on the same data.

Run in the peer environment (diffprivlib is never a dependency; ``benchmarks/setup_peers.sh`` builds it and installs
diffpriv_py there in editable mode)::

    /work/bench-venv/bin/python benchmarks/bench_kmeans_linreg.py [--quick] [--skip-large]

Both libraries get the same arrays, the same ε, the same train/test splits and the same public bounds; BLAS is
pinned to one thread. Fit times are medians over all fits of a method on a task.

k-means (ε-DP for both): NICV = mean squared distance to the nearest centre with the data mapped to [-1, 1]^d by the
public bounds, shown as a ratio to scikit-learn's (non-private, 10 restarts; the ratio of the inertias), with the
adjusted Rand index against the generating labels.

* ``iris`` (150 × 4, k = 3), ``s1_like`` (make_blobs 5000 × 2, 15 centres, std 0.5, box ±10, seed 1) and
  ``peers_blobs`` (make_blobs 10 000 × 10, 5 centres, std 1, box ±10, seed 0, clipped to ±15,
  bounds (−15, 15)); bounds are the data's range for iris and s1_like (public for the benchmark).
* diffpriv_py: the default (``method="auto"``: coreset seeding or improved DPLloyd by the public rule), the previous
  default (``method="dplloyd"``: improved DPLloyd + shrinkage) and Su et al.'s improved DPLloyd as published
  (``method="dplloyd", shrinkage=False``); diffprivlib: ``KMeans(n_clusters=k, epsilon=ε, bounds=...)``.

Linear regression (median test R² over the runs):

* ``diabetes`` (70/30 split, random_state 0, bounds_X = (−0.2, 0.2) per feature,
  bounds_y = (0, 350)); diffpriv_py gets the same bounds as ``data_norm = 0.2·√10`` and ``label_bound = (0, 350)``.
* ``synthetic`` (d = 10, X ~ U(−1, 1), y = Xw + noise clipped to [−1, 1],
  bounds ±1, non-private R² ≈ 0.84) for n = 10³, 10⁴, 10⁵ (80/20 split); ``data_norm = √10``, ``label_bound = 1``.
* diffpriv_py: the functional mechanism (pure ε, like diffprivlib's) and AdaSSP ((ε, 10⁻⁶)-DP, the default);
  diffprivlib: ``LinearRegression(epsilon=ε, bounds_X=..., bounds_y=...)`` (the functional mechanism).

Lloyd iteration cost: one noisy DPLloyd iteration against one scikit-learn Lloyd iteration (``algorithm="lloyd"``),
interleaved, medians. scikit-learn's iteration time jumps between two levels from one process to the next, so
``--lloyd-processes N`` runs that table alone in N fresh processes and summarises the ratios per size (each ratio
comes from one process). Large-n fit time: k-means on 10⁶ × 10 (k = 5) and regression on 10⁶ × 20 against the
non-private computation in numpy (T Lloyd passes from the same start; XᵀX plus a solve).
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import sys
import time
import warnings

import numpy as np
import sklearn.cluster  # noqa: F401 - loads scikit-learn's OpenMP runtime, so that the limit below reaches it
from threadpoolctl import threadpool_limits

import diffpriv_py as dp
from diffpriv_py.estimators import KMeans, LinearRegression

# One thread for every BLAS and OpenMP runtime loaded so far (threadpoolctl cannot limit a library loaded later:
# without the import above, scikit-learn's k-means ran on both cores while ours ran on one).
threadpool_limits(1)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def unit(X, lower, upper):
    return 2.0 * (np.clip(X, lower, upper) - lower) / (upper - lower) - 1.0


def nicv(Z, centres):
    return float(((Z[:, None, :] - centres[None]) ** 2).sum(-1).min(1).mean())


def ari(labels_true, labels_pred):
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(labels_true, labels_pred))


# ---- k-means -------------------------------------------------------------------------------------------------------


def kmeans_tasks():
    from sklearn.datasets import load_iris, make_blobs

    iris = load_iris()
    s1, s1_labels = make_blobs(5000, 2, centers=15, cluster_std=0.5, center_box=(-10, 10), random_state=1)
    blobs, blob_labels = make_blobs(10_000, 10, centers=5, cluster_std=1.0, center_box=(-10, 10), random_state=0)
    blobs = np.clip(blobs, -15, 15)
    return {
        "iris": (iris.data, iris.target, 3, (iris.data.min(0), iris.data.max(0))),
        "s1_like": (s1, s1_labels, 15, (s1.min(0), s1.max(0))),
        "peers_blobs": (blobs, blob_labels, 5, (np.full(10, -15.0), np.full(10, 15.0))),
    }


def peer_factor(d):
    """diffprivlib 0.6.6's true replace-one spend per nominal ε: (2 + d·r)/(d + r), r = (4dρ²)^{1/3}.

    Its count has sensitivity 1 (replace-one needs 2) and its count/coordinate budgets are swapped; so running it at
    ε/f(d) gives the replace-one guarantee that diffpriv_py gives at ε.
    """
    r = (4 * d * 0.225**2) ** (1 / 3)
    return (2 + d * r) / (d + r)


def fit_ours(X, k, bounds, eps, settings, seed):
    mech = KMeans(k, bounds=bounds, **settings)
    return mech.release_response(dp.Eps(eps), X, rng=seed).response.centroids


OURS = {
    "default": {},
    "previous default": {"method": "dplloyd"},
    "Su et al.": {"method": "dplloyd", "shrinkage": False},
}


def fit_peer_kmeans(peer, X, k, bounds, eps, seed):
    return peer(n_clusters=k, epsilon=eps, bounds=bounds, random_state=seed).fit(X).cluster_centers_


def bench_kmeans(epsilons, runs):
    from diffprivlib.models import KMeans as PeerKMeans
    from sklearn.cluster import KMeans as SklearnKMeans

    print("\n### k-means: mean NICV / scikit-learn's (sd of the ratio), median ARI, median fit ms\n")
    print(
        "| data | ε | diffpriv_py default (method run) | previous default | Su et al. | diffprivlib "
        "| diffprivlib at ε/f(d) | fit ms (default / previous / diffprivlib) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, (X, labels, k, (lower, upper)) in kmeans_tasks().items():
        Z = unit(X, lower, upper)
        reference = SklearnKMeans(k, n_init=10, random_state=0).fit(Z)
        best = nicv(Z, reference.cluster_centers_)
        print(f"| {name} | non-private | NICV {best:.4g}, ARI "
              f"{ari(labels, reference.labels_):.3f} (sklearn, 10 restarts) | | | | | |")  # fmt: skip
        for eps in epsilons:
            cells, times = [], []
            method_run = KMeans(k, bounds=(lower, upper)).resolved_method(eps, *X.shape)
            methods = (
                *(functools.partial(fit_ours, X, k, (lower, upper), eps, settings) for settings in OURS.values()),
                functools.partial(fit_peer_kmeans, PeerKMeans, X, k, (lower, upper), eps),
                functools.partial(fit_peer_kmeans, PeerKMeans, X, k, (lower, upper), eps / peer_factor(X.shape[1])),
            )
            for fit in methods:
                scores, aris, fit_times = [], [], []
                for s in range(runs):
                    centres, seconds = timed(functools.partial(fit, s))
                    C = unit(centres, lower, upper)
                    scores.append(nicv(Z, C) / best)
                    aris.append(ari(labels, ((Z[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)))
                    fit_times.append(seconds)
                cells.append(f"{np.mean(scores):.3g}× ({np.std(scores):.2g}), ARI {np.median(aris):.2f}")
                times.append(f"{1e3 * statistics.median(fit_times):.1f}")
            cells[0] += f" ({method_run})"
            print(f"| {name} | {eps:g} | {' | '.join(cells)} | {times[0]} / {times[1]} / {times[3]} |")
            sys.stdout.flush()


def bench_lloyd_iteration(repeats, extra=20):
    """One noisy DPLloyd iteration against one scikit-learn Lloyd iteration on the same data and start, interleaved.

    Both sides are differenced: each runs 1 and 1 + ``extra`` iterations from the same start, and the difference is
    divided by the extra iterations. That removes scikit-learn's fixed cost per ``fit`` (validation, thread-pool
    set-up, the final relabelling) and ours per release (initial arrays, the plan). Both read the same prepared
    data (``KMeans.prepare`` writes it into the workspace every iteration reads, so no copy is timed or hidden).
    """
    from sklearn.cluster import KMeans as SklearnKMeans

    from diffpriv_py.estimators.kmeans._dplloyd import _lloyd_steps as steps

    rng = np.random.default_rng(0)
    print("\n### k-means: cost of one Lloyd iteration (median ms, interleaved)\n")
    print("| n × d, k | diffpriv_py noisy iteration | scikit-learn Lloyd iteration | ratio |")
    print("|---|---|---|---|")
    for n, d, k in ((10**4, 10, 5), (10**5, 10, 5), (10**5, 2, 15)):
        centres = rng.uniform(-0.6, 0.6, (k, d))
        X = np.clip(centres[rng.integers(k, size=n)] + rng.normal(0, 0.3, (n, d)), -1, 1)
        start = rng.uniform(-1, 1, (k, d))
        Z = KMeans(k, bounds=(-1, 1), method="dplloyd").prepare(X)
        plans = [KMeans(k, bounds=(-1, 1), method="dplloyd", n_iter=t).plan(1.0, n, d) for t in (1, 1 + extra)]
        one = SklearnKMeans(k, init=start, n_init=1, max_iter=1, tol=0.0, algorithm="lloyd")
        many = SklearnKMeans(k, init=start, n_init=1, max_iter=1 + extra, tol=0.0, algorithm="lloyd")
        ours, theirs = [], []
        for s in range(repeats):
            o1, o_many = (
                timed(
                    functools.partial(
                        steps, Z, start[None], p, np.random.default_rng(s), sensitivity=1.0, shrinkage=True
                    )
                )[1]
                for p in plans
            )
            ours.append((o_many - o1) / extra)
            t1 = timed(functools.partial(one.fit, Z))[1]
            t_many = timed(functools.partial(many.fit, Z))[1]
            theirs.append((t_many - t1) / max(many.n_iter_ - 1, 1))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {n} × {d}, k = {k} | {1e3 * a:.2f} | {1e3 * b:.2f} ({many.n_iter_} iterations) | {a / b:.2f} |")


def bench_lloyd_iteration_processes(processes):
    """``bench_lloyd_iteration`` in ``processes`` fresh interpreters: every process's ratios, then their medians."""
    import subprocess

    rows: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(processes):
        out = subprocess.run(
            [sys.executable, __file__, "--lloyd-only"], capture_output=True, text=True, check=True
        ).stdout
        for line in out.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) == 4 and cells[0][:1].isdigit():
                ours, theirs = float(cells[1]), float(cells[2].split()[0])
                rows.setdefault(cells[0], []).append((ours, theirs, float(cells[3])))
    print(f"\n### k-means: cost of one Lloyd iteration over {processes} processes (ms; each ratio from one process)\n")
    print("| n × d, k | ours, median | scikit-learn, per process | ratio, per process | median ratio |")
    print("|---|---|---|---|---|")
    for size, runs in rows.items():
        ours, theirs, ratios = zip(*runs, strict=True)
        print(f"| {size} | {statistics.median(ours):.2f} | {' '.join(f'{t:.2f}' for t in theirs)} | "
              f"{' '.join(f'{r:.2f}' for r in ratios)} | {statistics.median(ratios):.2f} |")  # fmt: skip


def bench_kmeans_large(repeats):
    rng = np.random.default_rng(0)
    n, d, k = 10**6, 10, 5
    centres = rng.uniform(-0.6, 0.6, (k, d))
    X = np.clip(centres[rng.integers(k, size=n)] + rng.normal(0, 0.15, (n, d)), -1, 1)
    mech = KMeans(k, bounds=(-1, 1), method="dplloyd")  # T noisy Lloyd passes against T plain ones
    T = mech.plan(1.0, n, d).n_iter
    start = mech.initial_centres(d, rng=0)

    def lloyd():
        C = start.copy()
        for _ in range(T):
            labels = np.argmin(0.5 * (C * C).sum(1) - X @ C.T, axis=1)
            onehot = np.zeros((n, k))
            onehot[np.arange(n), labels] = 1.0
            C = (onehot.T @ X) / np.maximum(onehot.sum(0), 1.0)[:, None]
        return C

    private = statistics.median(
        timed(lambda s=s: mech.release_response(dp.Eps(1.0), X, rng=s))[1] for s in range(repeats)
    )
    plain = statistics.median(timed(lloyd)[1] for _ in range(repeats))
    print(f"\nk-means 10⁶ × 10, k = 5, T = {T}: private release {private:.3f} s, non-private Lloyd (same T, "
          f"numpy) {plain:.3f} s, ratio {private / plain:.2f}×")  # fmt: skip


# ---- linear regression -----------------------------------------------------------------------------------------------


def synthetic(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 10))
    w = np.random.default_rng(99).normal(0, 0.3, 10)
    y = np.clip(X @ w + rng.normal(0, 0.25, n), -1, 1)
    return X, y


def r2(y, prediction):
    return 1.0 - float(np.mean((y - prediction) ** 2) / np.var(y))


def regression_tasks(sizes):
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import train_test_split

    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    tasks = {"diabetes": ((Xtr, ytr), (Xte, yte), (-0.2, 0.2), (0.0, 350.0))}
    for n in sizes:
        X, y = synthetic(int(n * 1.25), int(math.log10(n)))
        cut = n
        tasks[f"synthetic n={n:.0e}"] = ((X[:cut], y[:cut]), (X[cut:], y[cut:]), (-1.0, 1.0), (-1.0, 1.0))
    return tasks


def fit_regression(method, params, data_norm, label_bound, X, y, seed):
    mech = LinearRegression(method=method, data_norm=data_norm, label_bound=label_bound)
    return mech.release_response(params, (X, y), rng=seed).response.predict


def fit_peer_regression(peer, eps, bounds_X, bounds_y, X, y, seed):
    return peer(epsilon=eps, bounds_X=bounds_X, bounds_y=bounds_y, random_state=seed).fit(X, y).predict


def bench_regression(epsilons, runs, sizes):
    from diffprivlib.models import LinearRegression as PeerLinearRegression

    print("\n### Linear regression: median test R², median fit ms\n")
    print("| data | ε | diffpriv_py functional (ε) | diffprivlib (ε) | diffpriv_py AdaSSP (ε, 1e-6) | fit ms |")
    print("|---|---|---|---|---|---|")
    for name, ((Xtr, ytr), (Xte, yte), bx, by) in regression_tasks(sizes).items():
        d = Xtr.shape[1]
        ols = np.linalg.lstsq(np.c_[Xtr, np.ones(len(ytr))], ytr, rcond=None)[0]
        print(f"| {name} | non-private | OLS R² {r2(yte, np.c_[Xte, np.ones(len(yte))] @ ols):.3f} | | | |")
        data_norm = math.sqrt(d) * max(abs(bx[0]), abs(bx[1]))
        for eps in epsilons:
            fits = (
                functools.partial(fit_regression, "functional", dp.Eps(eps), data_norm, by, Xtr, ytr),
                functools.partial(fit_peer_regression, PeerLinearRegression, eps, bx, by, Xtr, ytr),
                functools.partial(fit_regression, "adassp", dp.Del(eps, 1e-6), data_norm, by, Xtr, ytr),
            )
            cells, times = [], []
            for fit in fits:
                scores, fit_times = [], []
                for s in range(runs):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        predict, seconds = timed(functools.partial(fit, s))
                    scores.append(r2(yte, predict(Xte)))
                    fit_times.append(seconds)
                cells.append(f"{np.median(scores):.3g}")
                times.append(f"{1e3 * statistics.median(fit_times):.1f}")
            print(f"| {name} | {eps:g} | {cells[0]} | {cells[1]} | {cells[2]} | {' / '.join(times)} |")
            sys.stdout.flush()


def bench_regression_large(repeats):
    rng = np.random.default_rng(0)
    n, d = 10**6, 20
    X = rng.uniform(-1, 1, (n, d)) / math.sqrt(d)
    y = np.clip(X @ rng.normal(size=d) + rng.normal(0, 0.1, n), -1, 1)

    def ols():
        A = np.c_[X, np.ones(n)]
        return np.linalg.solve(A.T @ A, A.T @ y)

    plain = statistics.median(timed(ols)[1] for _ in range(repeats))
    gram = statistics.median(timed(lambda: X.T @ X)[1] for _ in range(repeats))
    print(f"\nregression 10⁶ × 20: non-private OLS (numpy, intercept column + XᵀX + solve) {plain:.3f} s; "
          f"XᵀX alone {gram:.3f} s")  # fmt: skip
    for method, params in (("adassp", dp.Del(1.0, 1e-6)), ("functional", dp.Eps(1.0))):
        private = statistics.median(
            timed(functools.partial(fit_regression, method, params, 1.0, 1.0, X, y, s))[1] for s in range(repeats)
        )
        print(f"  {method}: {private:.3f} s = {private / plain:.2f}× the non-private OLS")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--kmeans-only", action="store_true", help="only the k-means tables (no large-n timings)")
    parser.add_argument("--lloyd-only", action="store_true", help="only the Lloyd iteration table")
    parser.add_argument("--lloyd-processes", type=int, default=0, help="the Lloyd iteration table in N processes")
    args = parser.parse_args()
    if args.lloyd_only:
        bench_lloyd_iteration(5 if args.quick else 21)
        return
    if args.lloyd_processes:
        bench_lloyd_iteration_processes(args.lloyd_processes)
        return
    runs_km, runs_lr = (3, 3) if args.quick else (20, 20)
    if args.kmeans_only:
        bench_kmeans((0.5, 2.0) if args.quick else (0.1, 0.5, 1.0, 2.0, 5.0), runs_km)
        bench_lloyd_iteration(5 if args.quick else 21)
        return
    km_eps = (0.5, 2.0) if args.quick else (0.1, 0.5, 1.0, 2.0, 5.0)
    lr_eps = (1.0,) if args.quick else (0.1, 1.0, 5.0)
    sizes = (10**3,) if args.quick else (10**3, 10**4, 10**5)
    bench_kmeans(km_eps, runs_km)
    bench_lloyd_iteration(5 if args.quick else 21)
    bench_regression(lr_eps, runs_lr, sizes)
    if not args.skip_large:
        bench_kmeans_large(3 if args.quick else 5)
        bench_regression_large(3 if args.quick else 5)


if __name__ == "__main__":
    main()
