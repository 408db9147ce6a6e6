"""Private logistic regression / SVM (CMS'11) against IBM diffprivlib 0.6.6: test error and fit time, same data.

Run:  python benchmarks/bench_erm.py [--quick] [--tasks adult synthetic_easy breast_cancer digits]
      [--peer-python /work/bench-venv/bin/python]
      python benchmarks/bench_erm.py --defaults [--seeds 10]   # both libraries at their defaults, test accuracy
      python benchmarks/bench_erm.py --solver                   # our certified solver against scikit-learn's lbfgs
      python benchmarks/bench_erm.py --certify                  # how often the solver's fallback runs (adversarial)

Run in the peer environment (``benchmarks/setup_peers.sh``: diffprivlib 0.6.6 needs scikit-learn < 1.8; the script
installs diffpriv_py there too), where both libraries run side by side in this process. Where diffprivlib cannot
be imported (diffpriv_py's own environment), its fits run in a child process of the peer environment
(``--peer-python``) on the *same arrays* (an .npz file) instead. Either way both get the same ε grid, the same
train/test split and the same regularisation grid, with BLAS pinned to one thread.

Protocol (per task, per ε): every method is fitted ``runs`` times for each regularisation strength Λ in
``LAMBDAS`` (diffprivlib: C = 1/(nΛ), its own parameterisation of the same mean-loss objective); the table reports
the Λ with the lowest mean test error *in hindsight* for each method (a non-private choice, made only to compare;
use ``reg_lambda="private"`` in production). Fit times are medians of the CPU time (``time.process_time``, BLAS
on one thread) over all fits of a method on the task: on a shared machine wall time mostly measures the neighbours.

Tasks and preprocessing (identical for both libraries; every row ends inside the unit ball, so data_norm = 1):

* ``adult``: UCI Adult (shipped with diffpriv_py), official train (32,561) / test (16,281) files, income > 50K.
  One-hot categoricals (public schema), numeric columns clipped to public ranges and mapped to [−1, 1]
  (capital gain/loss on a log scale), rows divided by √14 (6 numeric + 8 one-hot groups: ‖x‖ ≤ 1).
* ``synthetic_easy``: an Adult-scale synthetic task, make_classification(n = 60 000, d = 20,
  n_informative = 10, n_redundant = 5, flip_y = 0.02, class_sep = 2, random_state = 0), 70/30 stratified split;
  features clipped to the public range [−8, 8], divided by 8√20.
* ``breast_cancer``, ``digits`` (10 classes, one-vs-rest): 70/30 stratified split
  (random_state = 0), StandardScaler fitted on the training part (a non-private step, the same for both libraries), rows
  scaled to unit norm. ``digits_binary``: the same rows, label digit ≥ 5.
* ``adult_bounded``: ``load_adult(bounded=True)`` train / test as shipped (features in [0, 1] from public bounds,
  104 columns), data_norm = √13, no further scaling.

``--defaults`` fits each library with its *default* regularisation (diffpriv_py ``reg_lambda="auto"``, diffprivlib
``C=1``) and the same data_norm, ε ∈ {0.1, 0.5, 1, 2, 5}, seeds 0..9, and reports mean test accuracy (sd).
``--solver`` times one certified solve (``_erm.minimise``, exact ‖∇‖ certified ≤ τ = 1e-10 at n = 10⁵) against
scikit-learn's lbfgs at its default tolerance on the same normalised 10⁵ × 50 problem at C = 1/(nΛ), interleaved in
one process, CPU time, one BLAS thread, medians. ``--certify`` runs the solver on adversarial problems and counts
how often Newton fails to certify τ (so the accelerated-gradient fallback runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PEER_PYTHON = "/work/bench-venv/bin/python"
LAMBDAS = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
EPSILONS = {
    "adult": (0.05, 0.1, 0.2, 0.5, 1.0, 2.0),
    "synthetic_easy": (0.05, 0.1, 0.2, 0.5, 1.0, 2.0),
    "breast_cancer": (0.1, 0.5, 1.0, 2.0, 5.0),
    "digits": (0.1, 0.5, 1.0, 2.0, 5.0),
}
RUNS = {"adult": 5, "synthetic_easy": 5, "breast_cancer": 20, "digits": 10}

ADULT_RANGES = {
    "age": (17.0, 90.0, False),
    "fnlwgt": (0.0, 1.5e6, False),
    "education-num": (1.0, 16.0, False),
    "capital-gain": (0.0, 1e5, True),
    "capital-loss": (0.0, 5e3, True),
    "hours-per-week": (1.0, 99.0, False),
}


# ---- data (main process) -------------------------------------------------------------------------------------------


def adult_features(X: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Public-range scaling of the numeric Adult columns to [−1, 1]; rows divided by √14 so ‖x‖ ≤ 1."""
    X = X.astype(np.float64, copy=True)
    for j, name in enumerate(names):
        if name in ADULT_RANGES:
            lo, hi, log = ADULT_RANGES[name]
            col = np.clip(X[:, j], lo, hi) - lo
            unit = np.log1p(col) / math.log1p(hi - lo) if log else col / (hi - lo)
            X[:, j] = 2.0 * unit - 1.0
    return X / math.sqrt(14.0)


def load_task(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X_train, y_train, X_test, y_test) with every row in the unit ball."""
    if name == "adult":
        from diffpriv_py.datasets import load_adult

        train, test = load_adult(subset="train"), load_adult(subset="test")
        return (
            adult_features(train.data, train.feature_names),
            train.target,
            adult_features(test.data, test.feature_names),
            test.target,
        )
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    if name == "synthetic_easy":
        X, y = datasets.make_classification(
            n_samples=60_000,
            n_features=20,
            n_informative=10,
            n_redundant=5,
            flip_y=0.02,
            class_sep=2.0,
            random_state=0,
        )
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)

        def scale(A):
            return np.clip(A, -8.0, 8.0) / (8.0 * math.sqrt(A.shape[1]))

        return scale(Xtr), ytr, scale(Xte), yte
    from sklearn.preprocessing import StandardScaler

    if name == "digits_binary":
        Xtr, ytr, Xte, yte = load_task("digits")
        return Xtr, (ytr >= 5).astype(int), Xte, (yte >= 5).astype(int)
    if name == "adult_bounded":
        from diffpriv_py.datasets import load_adult

        train, test = load_adult(bounded=True), load_adult(bounded=True, subset="test")
        return train.data, train.target, test.data, test.target
    X, y = {"breast_cancer": datasets.load_breast_cancer, "digits": datasets.load_digits}[name](return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(Xtr)

    def unit(A):
        A = scaler.transform(A)
        return A / np.maximum(np.linalg.norm(A, axis=1), 1e-12)[:, None]

    return unit(Xtr), ytr, unit(Xte), yte


# ---- fitting -------------------------------------------------------------------------------------------------------


def sweep(fit, Xtr, ytr, Xte, yte, epsilons, runs, lambdas=LAMBDAS) -> dict:
    """fit(eps, lam, seed) -> predictor; returns {eps: {"error": mean, "sd": sd, "lam": best}, "time": median}."""
    out, times = {}, []
    for eps in epsilons:
        best = None
        for lam in lambdas:
            errors = []
            for seed in range(runs):
                start = time.process_time()
                model = fit(eps, lam, seed)
                times.append(time.process_time() - start)
                errors.append(float(np.mean(model.predict(Xte) != yte)))
            mean = statistics.fmean(errors)
            if best is None or mean < best["error"]:
                best = {"error": mean, "sd": statistics.pstdev(errors), "lam": lam}
        out[str(eps)] = best
    out["time"] = statistics.median(times)
    return out


OUR_METHODS = (
    ("diffpriv_py LR objective", "LogisticRegression", "objective", True),
    ("diffpriv_py LR objective (no intercept)", "LogisticRegression", "objective", False),
    ("diffpriv_py LR output", "LogisticRegression", "output", True),
    ("diffpriv_py Huber SVM objective", "SVM", "objective", True),
)


def ours(Xtr, ytr, Xte, yte, epsilons, runs, methods=OUR_METHODS, lambdas=LAMBDAS) -> dict:
    import diffpriv_py as dp
    from diffpriv_py import estimators

    classes = sorted(set(ytr.tolist()))
    results = {}
    for label, name, pert, intercept in methods:
        cls = getattr(estimators, name)

        def fit(eps, lam, seed, cls=cls, pert=pert, intercept=intercept):
            mech = cls(lam, perturbation=pert, data_norm=1.0, fit_intercept=intercept, classes=classes)
            return mech.release_response(dp.Eps(eps), (Xtr, ytr), rng=seed).response

        results[label] = sweep(fit, Xtr, ytr, Xte, yte, epsilons, runs, lambdas)
        print(f"  {label} done", file=sys.stderr, flush=True)
    return results


def non_private(Xtr, ytr, Xte, yte) -> dict:
    """Non-private references at Λ = 1e-3 (and the best Λ in hindsight): sklearn lbfgs and our exact solver."""
    from sklearn.linear_model import LogisticRegression as SkLR

    from diffpriv_py.estimators import _erm
    from diffpriv_py.estimators.linear_models import build_problem

    n = len(ytr)
    errors = {lam: float(1 - SkLR(C=1 / (n * lam), max_iter=5000).fit(Xtr, ytr).score(Xte, yte)) for lam in LAMBDAS}
    best = min(errors, key=errors.get)
    times_sk, times_exact = [], []
    problem = build_problem((Xtr, ytr), data_norm=1.0, fit_intercept=True, classes="observed")
    signs = [np.where(problem.codes == 1, 1.0, -1.0)] if problem.classes.size == 2 else None
    for _ in range(5):
        start = time.process_time()
        SkLR(C=1 / (n * 1e-3), max_iter=5000).fit(Xtr, ytr)
        times_sk.append(time.process_time() - start)
        if signs is not None:
            start = time.process_time()
            _erm.minimise(problem.Z, signs[0], _erm.LOGISTIC, 1e-3)
            times_exact.append(time.process_time() - start)
    majority = float(np.mean(yte != np.bincount(ytr).argmax()))
    return {
        "error": errors[best],
        "lam": best,
        "majority": majority,
        "time_sklearn": statistics.median(times_sk),
        "time_exact": statistics.median(times_exact) if times_exact else math.nan,
    }


# ---- diffprivlib: in this process when importable, else in the peer environment (which need not have diffpriv_py) ---


def diffprivlib_imports() -> bool:
    """Whether diffprivlib imports in this process (0.6.6 fails to import with scikit-learn 1.8 or later)."""
    try:
        import diffprivlib.models  # noqa: F401
    except ImportError:
        return False
    return True


def diffprivlib_sweep(arrays, epsilons, runs, lambdas=LAMBDAS, intercepts=(True, False)) -> dict:
    """diffprivlib's LogisticRegression over the (ε, Λ) grid, with and without an intercept, one BLAS thread."""
    import warnings

    from diffprivlib.models import LogisticRegression as DplLR
    from threadpoolctl import threadpool_limits

    Xtr, ytr, Xte, yte = arrays
    n = len(ytr)
    results = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # diffprivlib's ConvergenceWarning on noisy objectives
        for intercept in intercepts:
            label = "diffprivlib LR (fit_intercept=True)" if intercept else "diffprivlib LR (no intercept)"

            def fit(eps, lam, seed, intercept=intercept):
                return DplLR(
                    epsilon=eps, data_norm=1.0, C=1 / (n * lam), fit_intercept=intercept, random_state=seed
                ).fit(Xtr, ytr)

            results[label] = sweep(fit, Xtr, ytr, Xte, yte, epsilons, runs, lambdas)
    return results


def diffprivlib_defaults(arrays, data_norm: float, epsilons, seeds: int) -> dict:
    """diffprivlib at its defaults (C = 1, fit_intercept=True): test accuracies per ε and seed."""
    import warnings

    from diffprivlib.models import LogisticRegression as DplLR
    from threadpoolctl import threadpool_limits

    Xtr, ytr, Xte, yte = arrays
    out = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for eps in epsilons:
            out[str(eps)] = [
                float(
                    np.mean(DplLR(epsilon=eps, data_norm=data_norm, random_state=s).fit(Xtr, ytr).predict(Xte) == yte)
                )
                for s in range(seeds)
            ]
    return out


PEER_RUNS = {"sweep": diffprivlib_sweep, "defaults": diffprivlib_defaults}


def run_diffprivlib(python: str, kind: str, arrays, *args) -> dict:
    """``PEER_RUNS[kind](arrays, *args)`` in this process if diffprivlib imports here, else in the peer environment
    ``python`` on the same arrays (an .npz file); {} (with a note) when neither is available."""
    if diffprivlib_imports():
        result: dict = PEER_RUNS[kind](arrays, *args)
        return result
    if not os.path.exists(python):
        print(f"(peer environment {python} not found: diffprivlib rows left out)", file=sys.stderr)
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        npz = os.path.join(tmp, "data.npz")
        np.savez(npz, Xtr=arrays[0], ytr=arrays[1], Xte=arrays[2], yte=arrays[3])
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cmd = [python, os.path.abspath(__file__), "--peer", kind, npz, json.dumps(args)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        print(f"(diffprivlib run failed: {proc.stderr.strip()[-500:]})", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def peer_main(kind: str, npz: str, args: str) -> None:
    """The child side of :func:`run_diffprivlib`: prints the result as JSON."""
    data = np.load(npz)
    arrays = (data["Xtr"], data["ytr"], data["Xte"], data["yte"])
    print(json.dumps(PEER_RUNS[kind](arrays, *json.loads(args))))


# ---- report --------------------------------------------------------------------------------------------------------


def table(task: str, shape, results: dict, reference: dict, epsilons) -> str:
    lines = [
        f"**{task}** (n_train = {shape[0]}, d = {shape[1]}; non-private LR error {reference['error']:.3f} at "
        f"Λ = {reference['lam']:g}; majority class {reference['majority']:.3f})",
        "",
        "| method | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " | fit time (median) |",
        "|---|" + "---|" * (len(epsilons) + 1),
    ]
    for label, res in results.items():
        cells = [f"{res[str(e)]['error']:.3f} ({res[str(e)]['sd']:.3f}) [{res[str(e)]['lam']:g}]" for e in epsilons]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {res['time'] * 1e3:.0f} ms |")
    lines.append(
        f"| non-private sklearn lbfgs (Λ = 1e-3) | – | {reference['time_sklearn'] * 1e3:.0f} ms; our certified Newton "
        f"solve (‖∇‖ ≤ τ): {reference['time_exact'] * 1e3:.0f} ms |"
    )
    return "\n".join(lines)


HEAD_TO_HEAD = {
    "adult": ((0.1, 1e-3), (1.0, 1e-4)),
    "synthetic_easy": ((0.05, 1e-3), (0.5, 1e-4)),
    "breast_cancer": ((0.5, 1.0), (5.0, 0.01)),
    "digits": ((2.0, 1.0), (5.0, 1.0)),
}
"""(ε, Λ) pairs where both libraries implement exactly CMS'11 Algorithm 2 (no intercept, R = 1)."""
HEAD_TO_HEAD_RUNS = {"adult": 40, "synthetic_easy": 60, "breast_cancer": 300, "digits": 100}


def sklearn_time(Xtr, ytr, lam: float, repeats: int = 5) -> float:
    """Median CPU time of scikit-learn's non-private LogisticRegression (lbfgs, default tol) at C = 1/(nΛ), no
    intercept (the same objective without noise)."""
    from sklearn.linear_model import LogisticRegression as SkLR

    times = []
    for _ in range(repeats):
        start = time.process_time()
        SkLR(C=1 / (len(ytr) * lam), fit_intercept=False, max_iter=5000).fit(Xtr, ytr)
        times.append(time.process_time() - start)
    return statistics.median(times)


def head_to_head(tasks, peer_python: str, *, quick: bool) -> None:
    """The same algorithm in both libraries at fixed settings: mean test error ± standard error over many releases."""
    from threadpoolctl import threadpool_limits

    lines = [
        "| task | ε | Λ (C = 1/(nΛ)) | runs | diffpriv_py error ± se | diffprivlib error ± se | diffpriv_py fit | "
        "diffprivlib fit | non-private sklearn fit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    method = (("diffpriv_py LR objective (no intercept)", "LogisticRegression", "objective", False),)
    for task in tasks:
        Xtr, ytr, Xte, yte = load_task(task)
        runs = 3 if quick else HEAD_TO_HEAD_RUNS[task]
        for eps, lam in HEAD_TO_HEAD[task]:
            with threadpool_limits(1):
                mine = ours(Xtr, ytr, Xte, yte, [eps], runs, method, [lam])[method[0][0]]
                plain = sklearn_time(Xtr, ytr, lam)
            theirs = run_diffprivlib(peer_python, "sweep", (Xtr, ytr, Xte, yte), [eps], runs, [lam], [False])
            theirs = theirs.get("diffprivlib LR (no intercept)")
            a = mine[str(eps)]
            cell = f"{a['error']:.4f} ± {a['sd'] / math.sqrt(runs):.4f}"
            other, other_time = "–", "–"
            if theirs:
                b = theirs[str(eps)]
                other = f"{b['error']:.4f} ± {b['sd'] / math.sqrt(runs):.4f}"
                other_time = f"{theirs['time'] * 1e3:.0f} ms"
            lines.append(
                f"| {task} | {eps:g} | {lam:g} | {runs} | {cell} | {other} | {mine['time'] * 1e3:.0f} ms | "
                f"{other_time} | {plain * 1e3:.0f} ms |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


# ---- defaults against defaults -------------------------------------------------------------------------------------

DEFAULT_TASKS = ("breast_cancer", "digits_binary", "digits", "adult_bounded", "synthetic_easy")
DEFAULT_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)


def task_data_norm(name: str) -> float:
    """The public row-norm bound of each task's preprocessing (√13 for Adult's bounded encoding, else 1)."""
    return math.sqrt(13.0) if name == "adult_bounded" else 1.0


def defaults(tasks, peer_python: str, seeds: int) -> None:
    """Default against default: mean test accuracy (sd over seeds) of both libraries, and the Λ our rule picked."""
    from threadpoolctl import threadpool_limits

    import diffpriv_py as dp
    from diffpriv_py import estimators

    header = "| task (n_train, d, K) | method | " + " | ".join(f"ε = {e:g}" for e in DEFAULT_EPSILONS) + " |"
    lines = [header, "|---|---|" + "---|" * len(DEFAULT_EPSILONS)]
    for task in tasks:
        Xtr, ytr, Xte, yte = load_task(task)
        R = task_data_norm(task)
        classes = sorted(set(ytr.tolist()))
        theirs = run_diffprivlib(peer_python, "defaults", (Xtr, ytr, Xte, yte), R, DEFAULT_EPSILONS, seeds)
        ours_cells, lams = [], []
        mech = estimators.LogisticRegression(data_norm=R, classes=classes)
        with threadpool_limits(1):
            for eps in DEFAULT_EPSILONS:
                models = [mech.release_response(dp.Eps(eps), (Xtr, ytr), rng=s).response for s in range(seeds)]
                acc = [float(np.mean(m.predict(Xte) == yte)) for m in models]
                ours_cells.append(f"{statistics.fmean(acc):.3f} ({statistics.pstdev(acc):.3f})")
                lams.append(f"{models[0].reg_lambda:.1e}")
        label = f"{task} ({len(ytr)}, {Xtr.shape[1]}, {len(classes)})"
        lines.append(f"| {label} | diffpriv_py default | " + " | ".join(ours_cells) + " |")
        lines.append('| | its Λ (`"auto"`) | ' + " | ".join(lams) + " |")
        if theirs:
            cells = [
                f"{statistics.fmean(theirs[str(e)]):.3f} ({statistics.pstdev(theirs[str(e)]):.3f})"
                for e in DEFAULT_EPSILONS
            ]
            lines.append("| | diffprivlib default | " + " | ".join(cells) + " |")
        print("\n".join(lines[-3:]), file=sys.stderr, flush=True)
    print("\n".join(lines))


# ---- the solver against scikit-learn -------------------------------------------------------------------------------


def solver(repeats: int = 7) -> None:
    """One certified solve (‖∇‖ ≤ τ) against scikit-learn's lbfgs (default tol) on the same 10⁵ × 50 problem."""
    from sklearn.linear_model import LogisticRegression as SkLR
    from threadpoolctl import threadpool_limits

    from diffpriv_py.estimators import _erm
    from diffpriv_py.estimators.linear_models import build_problem

    rng = np.random.default_rng(0)
    n, d = 100_000, 50
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) / math.sqrt(d) + rng.logistic(size=n) > 0).astype(int)
    problem = build_problem((X / (3.0 * math.sqrt(d)), y), data_norm=1.0, fit_intercept=True, classes=(0, 1))
    Z, s = problem.Z, np.where(problem.codes == 1, 1.0, -1.0)
    tol = _erm.gradient_tolerance(n, _erm.LOGISTIC.curvature)

    def grad_norm(w, lam):
        return float(np.linalg.norm(Z.T @ (s * _erm.LOGISTIC.first(s * (Z @ w))) / n + lam * w))

    def certificate(w, lam):
        return _erm.certified_gradient(Z, s, _erm.LOGISTIC, lam, np.zeros(Z.shape[1]), w, s * (Z @ w))[1]

    print(
        f"| Λ (C = 1/(nΛ)) | ours (certified ‖∇‖ ≤ τ = {tol:.0e}) | sklearn lbfgs (tol 1e-4) | ratio | ‖∇‖ ours "
        "| certified bound | ‖∇‖ sklearn |"
    )
    print("|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for lam in (1e-3, 1e-4):
            mine, theirs = [], []
            for _ in range(repeats):  # interleaved, so both see the same machine load
                start = time.process_time()
                w = _erm.minimise(Z, s, _erm.LOGISTIC, lam)
                mine.append(time.process_time() - start)
                start = time.process_time()
                sk = SkLR(C=1 / (n * lam), fit_intercept=False).fit(Z, problem.codes)
                theirs.append(time.process_time() - start)
            a, b = statistics.median(mine), statistics.median(theirs)
            print(
                f"| {lam:g} | {a * 1e3:.0f} ms | {b * 1e3:.0f} ms | {a / b:.2f} | {grad_norm(w, lam):.1e} | "
                f"{certificate(w, lam):.1e} | {grad_norm(sk.coef_[0], lam):.1e} |"
            )


def certify(seeds: int = 5) -> None:
    """How often Newton fails to certify τ on adversarial problems (the fallback then runs), and the margin.

    Problems: separable labels (sign of one feature), pure label noise, rows on the sphere (features ×1e200 before
    clipping), rows near 0 (×1e-300), the Adult-like mix; logistic, Huber h = 0.5 and h = 0.01 (c = 50);
    Λ ∈ {1e-2, 1e-4, 1e-6, 1e-8}; output perturbation's problem (Λ, no linear term) and objective perturbation's
    (Λ + Δ with the noise term b/n, Algorithm 2 at ε₁ = 0.99ε) for ε ∈ {0.01, 1}.
    """
    from threadpoolctl import threadpool_limits

    from diffpriv_py._fixed_point import clip_rows
    from diffpriv_py.estimators import _erm

    real_fallback = _erm._accelerated_fallback
    fallbacks: list[str] = []

    def counting_fallback(*args):
        fallbacks.append(current[0])
        return real_fallback(*args)

    _erm._accelerated_fallback = counting_fallback
    current = [""]
    solves, worst_ratio, worst_allowance, times = 0, 0.0, 0.0, []
    with threadpool_limits(1):
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            for n, d in ((200, 5), (5000, 30)):
                X = rng.normal(size=(n, d))
                data = {
                    "separable": (clip_rows(X, 4.0, 0.25), np.where(X[:, 0] > 0, 1.0, -1.0)),
                    "label-noise": (clip_rows(X, 4.0, 0.25), np.where(rng.random(n) < 0.5, 1.0, -1.0)),
                    "sphere": (clip_rows(X * 1e200, 1.0, 1.0), np.where(X[:, 1] > 0, 1.0, -1.0)),
                    "near-zero": (clip_rows(X * 1e-300, 1.0, 1.0), np.where(X[:, 1] > 0, 1.0, -1.0)),
                }
                for name, (Z, s) in data.items():
                    for loss in (_erm.LOGISTIC, _erm.HUBER, _erm.huber_loss(0.01)):
                        tol = _erm.gradient_tolerance(n, loss.curvature)
                        for lam in (1e-2, 1e-4, 1e-6, 1e-8):
                            for eps in (None, 0.01, 1.0):
                                # What the mechanisms solve: output perturbation at Λ (no linear term); objective
                                # perturbation at Λ + Δ with b/n, Δ and ε' from Algorithm 2 at ε₁ = 0.99ε.
                                reg, lin = lam, np.zeros(d)
                                if eps is not None:
                                    eps_prime, extra = _erm.objective_perturbation_budget(
                                        0.99 * eps, n, lam, loss.curvature
                                    )
                                    reg, lin = lam + extra, _erm.sample_gamma_ball(d, 2 / eps_prime, rng) / n
                                current[0] = f"{name} n={n} {loss.name}{loss.width} Λ={lam:g} ε={eps}"
                                start = time.process_time()
                                w = _erm.minimise(Z, s, loss, reg, lin=lin)
                                times.append(time.process_time() - start)
                                if times[-1] > 1.0 or (fallbacks and fallbacks[-1] == current[0]):
                                    print(f"{current[0]}: {times[-1]:.1f} s", file=sys.stderr, flush=True)
                                grad, bound = _erm.certified_gradient(Z, s, loss, reg, lin, w, s * (Z @ w))
                                solves += 1
                                worst_ratio = max(worst_ratio, bound / tol)
                                worst_allowance = max(worst_allowance, (bound - float(np.linalg.norm(grad))) / tol)
    _erm._accelerated_fallback = real_fallback
    print(f"{solves} adversarial solves: Newton certified {solves - len(fallbacks)}, fallback used {len(fallbacks)}")
    for case in fallbacks:
        print(f"  fallback: {case}")
    print(f"largest certified bound / τ: {worst_ratio:.3f}; largest rounding allowance / τ: {worst_allowance:.2e}")
    print(f"solve time: median {statistics.median(times) * 1e3:.1f} ms, max {max(times) * 1e3:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", default=list(EPSILONS))
    parser.add_argument("--quick", action="store_true", help="2 runs per setting, for a smoke test")
    parser.add_argument("--peer-python", default=PEER_PYTHON)
    parser.add_argument("--peer", nargs=3, help=argparse.SUPPRESS)  # kind, .npz file, JSON arguments
    parser.add_argument(
        "--head-to-head", action="store_true", help="same (ε, Λ), no intercept in both, many runs (HEAD_TO_HEAD)"
    )
    parser.add_argument("--defaults", action="store_true", help="both libraries at their default regularisation")
    parser.add_argument("--seeds", type=int, default=10, help="releases per cell for --defaults")
    parser.add_argument("--solver", action="store_true", help="time the certified solver against sklearn's lbfgs")
    parser.add_argument("--certify", action="store_true", help="count fallbacks of the solver on adversarial data")
    args = parser.parse_args()
    if args.peer:
        peer_main(*args.peer)
        return
    if args.solver:
        solver()
        return
    if args.certify:
        certify()
        return
    if args.defaults:
        tasks = args.tasks if args.tasks != list(EPSILONS) else list(DEFAULT_TASKS)
        defaults(tasks, args.peer_python, args.seeds)
        return

    from threadpoolctl import threadpool_limits

    if args.head_to_head:
        head_to_head(args.tasks, args.peer_python, quick=args.quick)
        return

    for task in args.tasks:
        epsilons = EPSILONS[task]
        runs = 2 if args.quick else RUNS[task]
        Xtr, ytr, Xte, yte = load_task(task)
        print(f"{task}: {Xtr.shape}", file=sys.stderr, flush=True)
        with threadpool_limits(1):
            results = ours(Xtr, ytr, Xte, yte, epsilons, runs)
            reference = non_private(Xtr, ytr, Xte, yte)
        results.update(run_diffprivlib(args.peer_python, "sweep", (Xtr, ytr, Xte, yte), epsilons, runs))
        print(table(task, Xtr.shape, results, reference, epsilons))
        print(flush=True)


if __name__ == "__main__":
    main()
