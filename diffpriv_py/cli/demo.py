"""``diffpriv-py demo``: a tour on built-in data, private answers next to the non-private ones they protect."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._args import _seed
from ._output import EXIT_ERROR, EXIT_OK, PROG, _symbols, describe_guarantee, format_table


def _demo_rng(seed: int | None, index: int) -> Any:
    """Independent randomness for each demo step: the secure default, or reproducible children of ``--seed``."""
    if seed is None:
        return None
    return np.random.SeedSequence(seed).spawn(index + 1)[index]


def _demo_laplace_mean(seed: int | None) -> list[str]:
    import diffpriv_py as dp

    n = 100
    data = np.random.default_rng(_demo_rng(seed, 0)).uniform(0.0, 1.0, size=n)
    mech = dp.Laplace(target=np.mean, sensitivity=1.0 / n, dims=1)
    r = mech.release_response(dp.Eps(epsilon=1.0), data, rng=_demo_rng(seed, 1))
    return [
        f"Mean of 100 values in [0,1] (Laplace, {_symbols()['Delta']}=1/n)",
        describe_guarantee(r.privacy_params),
        f"{np.mean(data):.4f}",
        f"{r.response:.4f}",
    ]


def _demo_letter(seed: int | None) -> list[str]:
    import diffpriv_py as dp
    from diffpriv_py.datasets import COMPUTER_SCIENTISTS, letter_counts, random_names

    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]

    def target(names: Sequence[str]) -> Callable[[Sequence[str]], np.ndarray]:
        counts = letter_counts(names)
        return lambda candidates: counts[[ord(c) - ord("a") for c in candidates]]

    names = list(COMPUTER_SCIENTISTS)
    mech: dp.DPMech = dp.Exponential(target=target, response_set=letters, vectorized=True)
    # gamma=0.1 alone plans m=285 draws and the k=285-th (largest) sampled sensitivity, as R's sampler does.
    mech = mech.sensitivity_sampler(oracle=random_names, n=len(names), gamma=0.1, rng=_demo_rng(seed, 2))
    r = mech.release_response(dp.Eps(epsilon=1.0), names, rng=_demo_rng(seed, 3))
    best = letters[int(np.argmax(letter_counts(names)))]
    return [
        f"Top letter in 10 names (exponential, sampled {_symbols()['Delta']}={mech.sensitivity:g})",
        describe_guarantee(r.privacy_params),
        best,
        str(r.response),
    ]


def _demo_bernstein(seed: int | None) -> list[str]:
    import diffpriv_py as dp

    n, k = 250, 25
    data_rng = np.random.default_rng(_demo_rng(seed, 4))
    x = data_rng.uniform(size=n)
    data = np.column_stack([x, np.sin(10 * x) * x + data_rng.normal(0.0, 0.2, n)])

    def kernel_regression(D: np.ndarray, bandwidth: float = 0.1) -> Callable[[Any], np.ndarray]:
        # Priestley-Chao with a Gaussian kernel, the R vignette's target; it returns the fitted function.
        D = D[np.argsort(D[:, 0], kind="stable")]
        xs, weights = D[1:, 0], np.diff(D[:, 0]) * D[1:, 1]
        return lambda y: np.exp(-0.5 * ((np.asarray(y)[..., None] - xs) / bandwidth) ** 2) @ weights / bandwidth

    def plausible(size: int, rng: np.random.Generator) -> np.ndarray:
        # The vignette's public population P of datasets shaped like the private one.
        dx = rng.uniform(size=size)
        dy = np.zeros(size)
        if rng.uniform() < 0.95:
            dy = dy + dx
        if rng.uniform() < 0.5:
            dy = dy * np.sin(dx)
        if rng.uniform() < 0.5:
            dy = dy * np.cos(dx)
        return np.column_stack([dx, dy + rng.normal(0.0, 0.2, size)])

    mech: dp.DPMech = dp.Bernstein(target=kernel_regression, lattice_k=k, dims=1, vectorized=True)
    mech = mech.sensitivity_sampler(plausible, n=n, m=500, gamma=0.2, rng=_demo_rng(seed, 5))
    r = mech.release_response(dp.Eps(epsilon=5.0), data, rng=_demo_rng(seed, 6))
    return [
        "Kernel regression of 250 points, fit at x=0.5 (Bernstein, K=25)",
        describe_guarantee(r.privacy_params),
        f"{float(kernel_regression(data)(0.5)):.4f}",
        f"{float(r.response(0.5)):.4f}",
    ]


def _logistic_fit(Z: np.ndarray, y: np.ndarray, reg_lambda: float) -> np.ndarray:
    """Non-private L2-regularised logistic regression by Newton's method (the demo's baseline, no scikit-learn)."""
    signs = np.where(y == 1, 1.0, -1.0)
    w = np.zeros(Z.shape[1])
    for _ in range(30):
        p = 0.5 * (1.0 + np.tanh(-0.5 * signs * (Z @ w)))  # sigmoid(-margin), overflow-free
        grad = -(Z.T @ (signs * p)) / len(y) + reg_lambda * w
        if np.linalg.norm(grad) < 1e-9:
            break
        root = Z * np.sqrt(p * (1.0 - p))[:, None]
        w -= np.linalg.solve(root.T @ root / len(y) + reg_lambda * np.eye(Z.shape[1]), grad)
    return w


def _demo_logistic(seed: int | None) -> list[str]:
    import diffpriv_py as dp
    from diffpriv_py.datasets import load_adult
    from diffpriv_py.estimators import LogisticRegression

    train, test = load_adult(bounded=True), load_adult(subset="test", bounded=True)
    reg_lambda, norm = 1e-4, math.sqrt(13)  # every bounded Adult row has L2 norm <= sqrt(13): a public bound
    mech = LogisticRegression(reg_lambda, perturbation="objective", data_norm=norm, classes=[0, 1])
    r = mech.release_response(dp.Eps(epsilon=1.0), train.as_tuple(), rng=_demo_rng(seed, 7))
    private_accuracy = np.mean(r.response.predict(test.data) == test.target)

    def augment(X: np.ndarray) -> np.ndarray:
        return np.column_stack([X / norm, np.ones(len(X))]) / math.sqrt(2)

    w = _logistic_fit(augment(train.data), train.target, reg_lambda)
    baseline_accuracy = np.mean((augment(test.data) @ w > 0) == (test.target == 1))
    return [
        f"Logistic regression, UCI Adult ({train.n_records} records), test accuracy",
        describe_guarantee(r.privacy_params),
        f"{baseline_accuracy:.4f}",
        f"{private_accuracy:.4f}",
    ]


def _demo_pca(seed: int | None) -> list[str]:
    import diffpriv_py as dp
    from diffpriv_py.datasets import load_adult
    from diffpriv_py.estimators import PCA, q_f

    train = load_adult(bounded=True)
    X = train.data / math.sqrt(13)  # public bound: every bounded Adult row has norm <= sqrt(13)
    # k = 1 has an exact sampler, so the release is exactly the PPCA exponential mechanism (CSS'12).
    r = PCA(1, method="ppca", data_norm=1.0).release_response(dp.Eps(epsilon=1.0), X, rng=_demo_rng(seed, 8))
    top = float(np.linalg.eigvalsh(X.T @ X / len(X))[-1])
    return [
        f"PCA of UCI Adult ({train.n_features} features): variance of top component (PPCA)",
        describe_guarantee(r.privacy_params),
        f"{top:.4f}",
        f"{q_f(r.response, X):.4f}",
    ]


DEMO_STEPS: dict[str, tuple[str, Callable[[int | None], list[str]]]] = {
    "mean": ("R vignette: a private mean", _demo_laplace_mean),
    "letter": ("R vignette: the most frequent letter, sampled sensitivity", _demo_letter),
    "bernstein": ("R vignette: private kernel regression with the Bernstein mechanism", _demo_bernstein),
    "pca": ("DP principal components (PPCA) on UCI Adult", _demo_pca),
    "logistic": ("DP logistic regression on UCI Adult", _demo_logistic),
}
"""The demo's steps: name -> (title, function(seed) -> table row [example, guarantee, non-private, private])."""


def _run_demo(args: argparse.Namespace) -> int:
    sym = _symbols()
    print("diffpriv-py demo: private answers next to the non-private ones they protect.")
    if args.seed is None:
        print("Randomness: cryptographically secure (run with --seed N to reproduce a run).\n")
    else:
        print(f"Randomness: seeded with --seed {args.seed} (reproducible; never seed a real release).\n")
    rows, failures = [], []
    start = time.perf_counter()
    chosen = list(DEMO_STEPS) if args.steps is None else args.steps
    status = EXIT_OK
    show_progress = sys.stderr.isatty()
    for number, name in enumerate(chosen, start=1):
        title, step = DEMO_STEPS[name]
        if show_progress:
            print(f"  [{number}/{len(chosen)}] {title} ...", file=sys.stderr, flush=True)
        try:
            rows.append(step(args.seed))
        except ImportError as err:
            # An optional dependency is missing: skip this example, keep the tour going.
            failures.append(f"skipped '{title}': {err}")
        except Exception as err:
            if os.environ.get("DIFFPRIV_PY_DEBUG"):
                raise
            failures.append(f"failed '{title}': {type(err).__name__}: {str(err).strip().splitlines()[0]}")
            status = EXIT_ERROR
    if rows:
        print(format_table(["Example", "Guarantee", "Non-private", "Private"], rows))
    for note in failures:
        print(f"\n  ({note})")
    print(
        f"\nEach private answer is one random draw: run again for another. Smaller {sym['eps']} means more noise.\n"
        f"Done in {time.perf_counter() - start:.1f} s. {_demo_next_steps()}"
    )
    return status


def _demo_next_steps() -> str:
    """The demo's last words: what to run next, naming the extra a suggested command needs when it is missing.

    The demo runs on the core alone (``pip install diffpriv-py``); ``evaluate`` needs scikit-learn (the ``sklearn``
    extra) and matplotlib for its figures (``plot``), so the demo never points at a command that would fail.
    """
    import importlib.util

    from diffpriv_py.extras import EXTRAS, install_hint

    def missing(module: str) -> str | None:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a finder that refuses the module outright
            found = False
        return None if found else EXTRAS[module][1]

    audit = f"'{PROG} audit --help'"
    needed, for_plots = missing("sklearn"), missing("matplotlib")
    if needed is not None:
        extras = [e for e in (needed, for_plots) if e]
        names = " and ".join(extras) + (" extras" if len(extras) > 1 else " extra")
        return f"Next: {audit}; '{PROG} evaluate' needs the {names} first: {install_hint(','.join(extras))}."
    evaluate = f"'{PROG} evaluate --help'"
    if for_plots is not None:
        evaluate += f" (its plots need the {for_plots} extra: {install_hint(for_plots)})"
    return f"Next: {evaluate} and {audit}."


def _demo_steps(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in DEMO_STEPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown demo step(s) {unknown or text!r}; choose from {', '.join(DEMO_STEPS)}"
        )
    return names


def add_parser(commands: Any) -> None:
    """Add the ``demo`` command to the sub-parsers of ``diffpriv-py``."""
    demo = commands.add_parser(
        "demo",
        help="a one-minute tour on built-in data (no download)",
        description="A tour on built-in data, with nothing to download: the R diffpriv vignette's examples "
        "(a private mean with the Laplace mechanism; the most frequent letter in ten names with the exponential "
        "mechanism and the sensitivity sampler) and the DP estimators on bundled data, printing private next to "
        "non-private answers.",
    )
    demo.add_argument("--seed", type=_seed, default=None, help="make the run reproducible (default: secure randomness)")
    demo.add_argument(
        "--steps",
        type=_demo_steps,
        metavar="LIST",
        help=f"run only these examples, comma-separated (default: all of {','.join(DEMO_STEPS)})",
    )
    demo.set_defaults(func=_run_demo)
