"""The ``diffpriv-py`` command line: a guided demo, utility-vs-ε evaluations, and the privacy auditor.

Run ``diffpriv-py --help`` (or ``python -m diffpriv_py --help``) for the commands. Every command has ``--help``.
Errors print one line to stderr and exit with status 2; ``DIFFPRIV_PY_DEBUG=1`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from ._extras import MissingExtraError, require

__all__ = ["CLIError", "main"]

PROG = "diffpriv-py"
EXIT_OK, EXIT_REFUTED, EXIT_ERROR = 0, 1, 2
DEFAULT_SEARCH_SECONDS = 30.0  # audit --search: long enough for the screen, explore and confirm stages


class CLIError(Exception):
    """A user error the command line reports as one line (bad path, unknown name, invalid value)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (with a pointer to --help) instead of a usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# ---- output helpers -------------------------------------------------------------------------------------------------


def _can_print(text: str, stream: Any = None) -> bool:
    encoding = getattr(stream or sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _symbols() -> dict[str, str]:
    fancy = _can_print("εδγΔ∞±")
    return {
        "Delta": "Δ" if fancy else "Delta",
        "eps": "ε" if fancy else "eps",
        "delta": "δ" if fancy else "delta",
        "gamma": "γ" if fancy else "gamma",
        "inf": "∞" if fancy else "inf",
        "pm": "±" if fancy else "+/-",
    }


def _fmt_number(value: float, digits: int = 4) -> str:
    if value == math.inf:
        return _symbols()["inf"]
    return f"{value:.{digits}g}"


def describe_guarantee(params: Any) -> str:
    """A short human-readable form of a privacy-parameter object, e.g. ``(ε=1, γ=0.1)-random DP``."""
    sym = _symbols()
    parts = [f"{sym['eps']}={_fmt_number(params.epsilon)}"]
    from .privacy import Gam

    if params.delta:
        parts.append(f"{sym['delta']}={_fmt_number(params.delta)}")
    if isinstance(params, Gam):
        parts.append(f"{sym['gamma']}={_fmt_number(params.gamma)}")
        return f"({', '.join(parts)})-random DP"
    return f"({', '.join(parts)})-DP"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Render rows as a plain-text table with a rule under the header."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip(), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(out)


# ---- demo -----------------------------------------------------------------------------------------------------------


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

    from ._extras import EXTRAS, install_hint

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


# ---- argument types -------------------------------------------------------------------------------------------------


def _demo_steps(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in DEMO_STEPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown demo step(s) {unknown or text!r}; choose from {', '.join(DEMO_STEPS)}"
        )
    return names


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"--n-jobs must be a positive integer or -1 (all cores), got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed must be a non-negative integer, got {text!r}")
    return value


def _epsilons(text: str) -> list[float]:
    values = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if part.lower() in ("inf", "infinity", "∞"):
            values.append(math.inf)
            continue
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"epsilon values must be numbers or 'inf', got {part!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"epsilon must be > 0 (or 'inf' for no privacy), got {part!r}")
        values.append(value)
    if not values:
        raise argparse.ArgumentTypeError("give at least one epsilon, e.g. --epsilons 0.5,1,2,inf")
    return values


def _numbers(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values:
        raise argparse.ArgumentTypeError(f"--replacements must be comma-separated numbers, e.g. 0,1; got {text!r}")
    return values


def _positive_float(name: str, *, upper: float = math.inf) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (math.isfinite(value) and 0 < value < upper):
            bound = "" if upper == math.inf else f" and < {upper:g}"
            raise argparse.ArgumentTypeError(f"{name} must be > 0{bound}, got {text!r}")
        return value

    return parse


def _count(name: str, minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        if maximum is not None and value > maximum:
            # A size the machine cannot hold would hang or exhaust memory instead of failing.
            raise argparse.ArgumentTypeError(f"{name} must be at most {maximum:.0e}, got {text!r}")
        return value

    return parse


# ---- evaluate -------------------------------------------------------------------------------------------------------


def _run_evaluate(args: argparse.Namespace) -> int:
    import secrets

    from . import datasets, evaluation

    sym = _symbols()
    if args.csv is not None:
        if args.target is None:
            raise CLIError("--csv needs --target COLUMN, the column to predict")
        data = datasets.load_csv(args.csv, target=args.target, task=args.task)
    else:
        if args.target is not None:
            raise CLIError("--target is only for --csv files; bundled datasets know their target")
        data = datasets.load_dataset(args.dataset)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    models = None if args.models is None else [m for m in args.models.split(",") if m.strip()]
    if models == []:
        raise CLIError(
            f"--models names no model (got {args.models!r}); pass comma-separated names, e.g. --models knn,svm"
        )
    evaluation._resolve_models(models, args.privatisation, data.task)  # fail before any output if unavailable
    if args.plot:  # the plots are drawn after the study: find a missing matplotlib before it starts
        try:
            require("matplotlib", feature=f"{PROG} evaluate --plot")
        except MissingExtraError as err:
            raise CLIError(f"{err}; or pass --no-plot") from None
    max_records = args.max_records if args.max_records > 0 else None
    used = min(data.n_records, max_records or data.n_records)
    how = {
        "laplace": "Laplace input perturbation",
        "gaussian": f"Gaussian input perturbation ({sym['delta']}={args.delta:g})",
        "estimators": "DP estimators",
    }[args.privatisation]
    runs = (
        f"{args.repeats} x {args.cv}-fold CV"
        if args.cv
        else f"{args.repeats} random {1 - args.test_size:.0%}/{args.test_size:.0%} splits"
    )
    print(
        f"Evaluating {data.name} ({used} records"
        + (f", a random subset of {data.n_records}" if used < data.n_records else "")
        + f", {data.n_features} features, {data.task}) with {how}; {runs}; seed {seed}."
    )
    if used < data.n_records:
        print(f"  (--max-records {args.max_records} keeps the run short; --max-records 0 uses every record)")
    sys.stdout.flush()  # the header before the progress bar on stderr, also when stdout is a pipe
    result = evaluation.evaluate(
        data,
        privatisation=args.privatisation,
        models=models,
        epsilons=args.epsilons,
        delta=args.delta,
        sensitivity=args.sensitivity,
        repeats=args.repeats,
        cv=args.cv,
        test_size=args.test_size,
        scale=args.scale,
        max_records=max_records,
        rng=seed,
        progress=args.progress,
        n_jobs=args.n_jobs,
    )
    os.makedirs(args.output, exist_ok=True)
    stem = os.path.join(args.output, f"{data.name}_{args.privatisation}")
    written = [result.to_csv(f"{stem}_results.csv"), result.to_csv(f"{stem}_summary.csv", summary=True)]
    if args.plot:
        try:
            for metric in result.metrics:
                result.plot(metric, f"{stem}_{metric}.png")
                written.append(f"{stem}_{metric}.png")
        except ImportError as err:
            print(f"  (no plots: {err})")
    _print_settings(data, result)
    _print_results(result)
    print("\nWrote:\n" + "\n".join(f"  {path}" for path in written))
    return EXIT_OK


def _print_settings(data: Any, result: Any) -> None:
    """What the study chose from public information: the feature bounds, the row-norm bound, the hyper-parameters."""
    sym = _symbols()
    settings = result.settings
    if settings["scale"] == "public" and data.bounds is not None:
        low, high = (np.asarray(b, dtype=float) for b in data.bounds)
        same = bool(np.all(low == low[0]) and np.all(high == high[0]))
        span = f"[{low[0]:g}, {high[0]:g}] each" if same else "per-feature public bounds"
        print(
            f"\nFeatures: {data.n_features}, clipped to {span} (public, not read from the data) and scaled to [0, 1]."
        )
    else:
        print(f"\nFeatures: {data.n_features}, scaled with {settings['scale']!r} (not public bounds).")
    if result.privatisation == "estimators":
        print(
            f"Data norm: every record's L2 norm <= {settings['data_norm']:.4g} (public bound given to the estimators)."
        )
    else:
        print(f"Input-perturbation sensitivity per record: {settings['sensitivity']:.4g}.")
    chosen = result.hyperparameters()
    if any(any(params for params in by_eps.values()) for by_eps in chosen.values()):
        print("Hyper-parameters (first split; chosen from public quantities only):")
        for model, by_eps in chosen.items():
            finite = {eps: params for eps, params in by_eps.items() if eps < math.inf and params}
            if not finite:
                continue
            pairs = [dict(item.split("=", 1) for item in params.split("; ")) for params in finite.values()]
            fixed = {k: v for k, v in pairs[0].items() if all(p.get(k) == v for p in pairs)}
            varying = [k for k in pairs[0] if k not in fixed]
            text = ", ".join(f"{k}={v}" for k, v in fixed.items())
            for key in varying:
                steps = ", ".join(f"{_fmt_number(eps)}: {p[key]}" for eps, p in zip(finite, pairs, strict=True))
                text += f"; {key} by {sym['eps']} ({steps})"
            print(f"  {model}: {text}")


def _print_results(result: Any) -> None:
    """The table: one row per model labelled private or not, one column per ε, then the constant baseline."""
    sym = _symbols()
    if result.utility_note:
        print(f"\nWhy the models sit at the majority class: {result.utility_note}.")
    if result.private:
        print(f"\nPrivate: {result.privacy_note}.")
    elif any(result.model_private.values()):
        print(f"\nPrivacy per model (column 'private'): {result.privacy_note}.")
    else:
        print(
            f"\nNOT PRIVATE: {result.privacy_note}. The column headers are only the level of the noise "
            "(noise_epsilon), not a privacy guarantee."
        )
    metric = result.metrics[0]
    table = {(r["model"], r["epsilon"]): r for r in result.summary() if r["metric"] == metric}
    rows = []
    for model in (*result.models, result.baseline):
        cells = [
            f"{table[(model, eps)]['mean']:.3f} {sym['pm']} {table[(model, eps)]['sd']:.3f}"
            if (model, eps) in table
            else "-"
            for eps in result.epsilons
        ]
        if model == result.baseline:
            label = "constant (not private)"
        else:
            label = "yes" if result.model_private.get(model, False) else "NOT PRIVATE"
        rows.append([model, label, *cells])
    what = sym["eps"] if result.epsilon_label == "epsilon" else "noise level"
    print(f"\n{metric} on the test split (mean {sym['pm']} sd) by {what}; {sym['inf']} = the non-private model:")
    header = ["model", "private", *(f"{what}={_fmt_number(eps)}" for eps in result.epsilons)]
    print(format_table(header, rows))


# ---- audit ----------------------------------------------------------------------------------------------------------


def _builtin_audit_cases() -> dict[str, tuple[str, Callable[[float, float], tuple[Any, Any, Any]]]]:
    """Built-in mechanisms to audit: name -> (description, build(epsilon, delta) -> (mechanism, X, X_neighbour))."""
    import diffpriv_py as dp

    n = 10
    zeros = np.zeros(n)
    one_changed = np.concatenate([np.zeros(n - 1), [1.0]])

    def laplace(eps: float, delta: float) -> tuple[Any, Any, Any]:
        return dp.Laplace(target=np.mean, sensitivity=1.0 / n, dims=1), zeros, one_changed

    def broken_laplace(eps: float, delta: float) -> tuple[Any, Any, Any]:
        # The classic bug: the sensitivity understated by half, so the noise is half what ε needs.
        return dp.Laplace(target=np.mean, sensitivity=0.5 / n, dims=1), zeros, one_changed

    def gaussian(eps: float, delta: float) -> tuple[Any, Any, Any]:
        return dp.Gaussian(target=np.mean, sensitivity=1.0 / n, dims=1), zeros, one_changed

    def float_laplace(eps: float, delta: float) -> tuple[Any, Any, Any]:
        return dp.Laplace(target=np.mean, sensitivity=1.0 / n, dims=1, noise="float"), zeros, one_changed

    def discrete_laplace(eps: float, delta: float) -> tuple[Any, Any, Any]:
        return dp.DiscreteLaplace(target=np.sum, sensitivity=1, dims=1), zeros.astype(int), one_changed.astype(int)

    def exponential(eps: float, delta: float) -> tuple[Any, Any, Any]:
        def votes(X: np.ndarray) -> Callable[[Sequence[int]], np.ndarray]:
            counts = np.bincount(np.asarray(X, dtype=int), minlength=3).astype(float)
            return lambda candidates: counts[list(candidates)]

        mech = dp.Exponential(target=votes, response_set=[0, 1, 2], sensitivity=1.0, vectorized=True)
        return mech, zeros, one_changed

    return {
        "laplace": ("mean of 10 records in [0,1], Laplace (sensitivity 1/n, safe noise)", laplace),
        "gaussian": ("mean of 10 records in [0,1], Gaussian (L2 sensitivity 1/n, safe noise)", gaussian),
        "discrete-laplace": ("count of 10 records in {0,1}, discrete Laplace (sensitivity 1)", discrete_laplace),
        "exponential": ("vote among 3 options by 10 records, exponential mechanism", exponential),
        "broken-laplace": ("Laplace with half the noise it needs: the audit should refute it", broken_laplace),
        "float-laplace": (
            "Laplace with textbook floating-point noise (Mironov 2012): the audit should refute it",
            float_laplace,
        ),
    }


def _load_object(spec: str) -> Any:
    """Import ``module:object`` (module may also be a path to a .py file); the current directory is importable."""
    import importlib
    import importlib.util

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise CLIError(f"expected a built-in name or MODULE:OBJECT, got {spec!r}")
    sys.path.insert(0, os.getcwd())
    try:
        if module_name.endswith(".py") or os.sep in module_name:
            if not os.path.isfile(module_name):
                raise CLIError(f"no such file: {module_name!r}")
            loader_spec = importlib.util.spec_from_file_location(
                os.path.splitext(os.path.basename(module_name))[0], module_name
            )
            if loader_spec is None or loader_spec.loader is None:
                raise CLIError(f"cannot load {module_name!r} as a Python module")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except CLIError:
        raise
    except ModuleNotFoundError as err:
        raise CLIError(f"cannot import {module_name!r}: {err}") from None
    except SystemExit as err:
        # The module's own sys.exit would otherwise end the CLI silently with the module's exit code.
        raise CLIError(
            f"importing {module_name!r} called sys.exit({err.code!r}); put the script's own code under "
            "'if __name__ == \"__main__\":' so it can be imported"
        ) from None
    except Exception as err:
        raise CLIError(f"importing {module_name!r} failed: {type(err).__name__}: {err}") from None
    finally:
        sys.path.pop(0)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CLIError(f"module {module_name!r} has no object {attr!r}")
        obj = getattr(obj, part)
    return obj


@contextlib.contextmanager
def _user_code(spec: str, doing: str) -> Iterator[None]:
    """Report an exception (or sys.exit) raised by the user's own code as theirs, not as a library error."""
    try:
        yield
    except CLIError:
        raise
    except (Exception, SystemExit) as err:
        if os.environ.get("DIFFPRIV_PY_DEBUG"):
            raise
        frame = _innermost_frame(err)
        if frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
            raise  # raised inside diffpriv_py itself: reported by main() as the library's error
        where = f" at {frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
        what = f"sys.exit({err.code!r})" if isinstance(err, SystemExit) else f"{type(err).__name__}: {err}"
        raise CLIError(
            f"your code in {spec!r} raised {what}{where} while {doing}; fix it (rerun with DIFFPRIV_PY_DEBUG=1 for "
            "the traceback)"
        ) from None


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _innermost_frame(err: BaseException) -> Any:
    tb = err.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame


def _audit_case(obj: Any, args: argparse.Namespace) -> tuple[Any, Any, Any, Any, bool]:
    """Turn a user's object into (mechanism, X, X_neighbour, privacy_params or None, whether the pair is the
    default one of a bare mechanism)."""
    from .mechanisms import DPMech

    if callable(obj) and not isinstance(obj, DPMech) and not isinstance(obj, type):
        with _user_code(args.mechanism, "building the audit case"):
            obj = obj()
    if all(hasattr(obj, name) for name in ("mechanism", "privacy_params", "dataset", "neighbour")):
        case: Any = obj  # a testing.MechCase, or any object with its four attributes
        return case.mechanism, case.dataset, case.neighbour, case.privacy_params, False
    if isinstance(obj, DPMech):
        n = args.records
        return obj, np.zeros(n), np.concatenate([np.zeros(n - 1), [1.0]]), None, True
    if isinstance(obj, dict):
        missing = {"mechanism", "X", "X_neighbour"} - set(obj)
        if missing:
            raise CLIError(f"the audit case dict lacks the key(s) {', '.join(sorted(missing))}")
        return obj["mechanism"], obj["X"], obj["X_neighbour"], obj.get("privacy_params"), False
    if isinstance(obj, tuple) and len(obj) in (3, 4) and isinstance(obj[0], DPMech):
        return obj[0], obj[1], obj[2], obj[3] if len(obj) == 4 else None, False
    raise CLIError(
        f"cannot audit a {type(obj).__name__}: give a DPMech instance, a testing.MechCase, a dict with keys "
        "mechanism, X, X_neighbour (and optionally privacy_params), or a function returning one"
    )


def _run_audit(args: argparse.Namespace) -> int:
    from . import Del, Eps

    builtins = _builtin_audit_cases()
    if args.list:
        print(format_table(["Name", "What"], [[name, about] for name, (about, _) in builtins.items()]))
        return EXIT_OK
    if not args.search:
        for flag, value in (("--time-budget", args.time_budget), ("--replacements", args.replacements)):
            if value is not None:
                raise CLIError(f"{flag} is an option of the search: add --search")
    elif args.samples is not None:
        raise CLIError("--samples is for the pair audit; --search sizes its samples to fit --time-budget")
    if args.mechanism is None:
        raise CLIError(f"name a mechanism to audit: one of {', '.join(builtins)}, or MODULE:OBJECT")
    if args.mechanism in builtins:
        about, build = builtins[args.mechanism]
        mechanism, X, X_neighbour = build(args.epsilon, args.delta or 0.0)
        params, default_pair = None, False
        source = f"built-in {args.mechanism!r}: {about}"
    elif ":" in args.mechanism:
        mechanism, X, X_neighbour, params, default_pair = _audit_case(_load_object(args.mechanism), args)
        source = args.mechanism
    else:
        raise CLIError(f"unknown mechanism {args.mechanism!r}: use one of {', '.join(builtins)}, or MODULE:OBJECT")
    if params is None:
        needs_delta = issubclass(getattr(mechanism, "privacy_params_type", Eps), Del)
        delta = args.delta if args.delta is not None else (1e-5 if needs_delta else 0.0)
        params = Del(args.epsilon, delta) if delta > 0 or needs_delta else Eps(args.epsilon)
    if args.search:
        data, replacements = X, args.replacements
        if args.mechanism in builtins:
            replacements = [0.0, 1.0] if replacements is None else replacements  # their targets assume [0, 1]
        elif default_pair:
            # A bare mechanism's default records 0, …, 0 are degenerate data to search from (a trimmed or robust
            # target ignores any one of them): the search starts from records spread over the same domain [0, 1].
            data = np.linspace(0.0, 1.0, args.records)
        return _run_search(mechanism, data, params, source, replacements, args)
    from .testing import audit

    print(f"Auditing {type(mechanism).__name__} ({source}) ...", flush=True)
    start = time.perf_counter()
    with _user_code(source, "being audited") if ":" in args.mechanism else contextlib.nullcontext():
        report = audit(mechanism, X, X_neighbour, params, alpha=args.alpha, n=args.samples, rng=args.seed)
    sym = _symbols()
    rows = [
        ("claimed guarantee", describe_guarantee(report.claim if hasattr(report, "claim") else params)),
        (f"{sym['eps']} lower bound", _fmt_number(float(report.epsilon_lower_bound))),
        (f"{sym['delta']} lower bound", _fmt_number(float(report.delta_lower_bound))),
        ("confidence", f"1 - {args.alpha:g} (both bounds hold together)"),
        ("releases per dataset", str(report.n)),
        ("strongest event", f"{report.event} (counts {report.counts[0]} vs {report.counts[1]})"),
        ("seed", f"{report.seed} (rerun with --seed {report.seed})"),
        ("time", f"{time.perf_counter() - start:.1f} s"),
        ("verdict", "claim not refuted" if report.passed else "REFUTED: the mechanism leaks more than it claims"),
    ]
    if getattr(report, "curve_violation", ""):
        rows.insert(-1, ("violated curve point", str(report.curve_violation)))
    width = max(len(key) for key, _ in rows)
    print("\n".join(f"  {key.ljust(width)}  {value}" for key, value in rows))
    print(
        f"\nNo violation found: the bound does not exceed the claimed {sym['eps']} (evidence, not a proof)."
        if report.passed
        else f"\nThe privacy loss exceeds the claim with confidence 1 - {args.alpha:g}: do not release with it."
    )
    return EXIT_OK if report.passed else EXIT_REFUTED


def _run_search(
    mechanism: Any, data: Any, params: Any, source: str, replacements: Any, args: argparse.Namespace
) -> int:
    """``audit --search``: :func:`diffpriv_py.testing.search_audit` within ``--time-budget``; prints the worst pair."""
    from .testing import search_audit

    budget = args.time_budget if args.time_budget is not None else DEFAULT_SEARCH_SECONDS
    print(
        f"Searching neighbouring pairs for {type(mechanism).__name__} ({source}) for about {budget:g} s ...",
        flush=True,
    )
    with _user_code(source, "being audited") if ":" in args.mechanism else contextlib.nullcontext():
        report = search_audit(
            mechanism, data, params, alpha=args.alpha, rng=args.seed, time_budget=budget, replacements=replacements
        )
    sym = _symbols()
    worst = report.worst
    audit = None if worst is None else worst.confirm
    explored = sum(p.explore is not None for p in report.pairs)
    rows = [
        ("claimed guarantee", describe_guarantee(getattr(audit, "claim", params))),
        ("worst pair", "none confirmed" if worst is None else worst.description),
        (f"{sym['eps']} lower bound", _fmt_number(float(report.epsilon_lower_bound))),
    ]
    if audit is not None:
        rows += [
            (f"{sym['delta']} lower bound", _fmt_number(float(audit.delta_lower_bound))),
            ("strongest event", f"{audit.event} (counts {audit.counts[0]} vs {audit.counts[1]})"),
            ("releases per dataset", str(audit.n)),
        ]
    rows += [
        ("pairs", f"{len(report.pairs)} screened, {explored} explored, {len(report.confirmed)} confirmed"),
        ("confidence", f"1 - {args.alpha:g} (every confirmed bound together)"),
        ("seed", f"{report.seed} (rerun with --seed {report.seed})"),
        ("time", f"{report.elapsed:.1f} s"),
        ("verdict", "claim not refuted" if report.passed else "REFUTED: the mechanism leaks more than it claims"),
    ]
    width = max(len(key) for key, _ in rows)
    print("\n".join(f"  {key.ljust(width)}  {value}" for key, value in rows))
    for finding in report.findings[:3]:
        print(f"  screen: {finding}")
    print(
        f"\nNo violation found on the pairs tried: the bound does not exceed the claimed {sym['eps']} (evidence, not "
        "a proof)."
        if report.passed
        else f"\nThe privacy loss exceeds the claim with confidence 1 - {args.alpha:g}: do not release with it."
    )
    return EXIT_OK if report.passed else EXIT_REFUTED


# ---- parser ---------------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``diffpriv-py`` (one sub-parser per command)."""
    from . import __version__
    from .evaluation import DEFAULT_EPSILONS

    parser = _Parser(
        prog=PROG,
        description="Differential privacy from the command line: a demo, utility-vs-epsilon evaluations, and a "
        "privacy auditor.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", parser_class=_Parser)

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

    evaluate = commands.add_parser(
        "evaluate",
        help="utility-vs-epsilon sweeps (CSV and PNG plots)",
        description="Train models privately for each epsilon and score them on a clean test split, with "
        "repetitions (mean ± sd), next to the non-private model (epsilon = inf) and the majority class: by default "
        "this library's DP estimators (objective perturbation, DP-SGD) on the bundled Adult census data; or the "
        "PyPryvacy study's input perturbation (Laplace or Gaussian noise on the training data, then scikit-learn's "
        "kNN, SVM, random forest and logistic/linear regression). Writes a CSV of every run, a summary CSV, and one "
        "PNG per metric (accuracy and F1, or RMSE and R²). Progress goes to stderr. Needs scikit-learn (and "
        "matplotlib for plots).",
    )
    source = evaluate.add_argument_group("data")
    source.add_argument(
        "--dataset",
        default="adult",
        metavar="NAME",
        help="bundled dataset: adult, breast_cancer, diabetes, digits, iris, wine (default: adult)",
    )
    source.add_argument("--csv", metavar="PATH", help="your own CSV file with a header row (instead of --dataset)")
    source.add_argument("--target", metavar="COLUMN", help="the column of --csv to predict")
    source.add_argument("--task", choices=["classification", "regression"], help="what --target is (default: inferred)")
    source.add_argument(
        "--max-records",
        type=_count("--max-records", 0),
        default=0,
        metavar="N",
        help="use a random subset of N records when the data are larger (default 0 = all; DP estimators need many)",
    )
    how = evaluate.add_argument_group("privatisation")
    how.add_argument(
        "--privatisation",
        choices=["laplace", "gaussian", "estimators"],
        default="estimators",
        help="DP estimators (the default), or input perturbation with Laplace or Gaussian noise on every training "
        "value (its models fall to the majority class: the noise per record is d/epsilon per feature)",
    )
    how.add_argument(
        "--epsilons",
        type=_epsilons,
        default=list(DEFAULT_EPSILONS),
        metavar="LIST",
        help="comma-separated epsilons, 'inf' = no noise (default: 0.01,0.1,0.5,1,2,5,inf; the PyPryvacy "
        "study's grid is 0.01,0.5,0.75,1,2,3,4,6,9,14,19,inf)",
    )
    how.add_argument(
        "--delta",
        type=_positive_float("--delta", upper=1.0),
        default=1e-5,
        help="delta for Gaussian noise and (epsilon, delta) estimators (default 1e-5; PyPryvacy used 0.05)",
    )
    how.add_argument(
        "--sensitivity",
        type=_positive_float("--sensitivity"),
        default=None,
        help="sensitivity of input perturbation (default: a whole record's, d for Laplace or sqrt(d) for Gaussian on "
        "features in [0,1]; the PyPryvacy study's 1 per value does not protect a record)",
    )
    how.add_argument(
        "--scale",
        choices=["public", "minmax", "none"],
        default=None,
        help="scale features to [0,1]: 'public' with the dataset's public bounds (the default when it has them: "
        "adult, digits), 'minmax' with ranges read from the data (not private), 'none'",
    )
    study = evaluate.add_argument_group("study")
    study.add_argument(
        "--models",
        metavar="LIST",
        help="comma-separated models: knn, svm, rf, linear for input perturbation; dp-logreg, dp-svm, ... for "
        "estimators (default: all available)",
    )
    study.add_argument("--repeats", type=_count("--repeats", 1), default=3, help="repetitions (default 3)")
    study.add_argument("--cv", type=_count("--cv", 2), metavar="K", help="K-fold cross-validation instead of a holdout")
    study.add_argument(
        "--test-size",
        type=_positive_float("--test-size", upper=1.0),
        default=0.2,
        help="holdout fraction (default 0.2)",
    )
    study.add_argument("--seed", type=_seed, help="make the study reproducible (default: a fresh seed, printed)")
    study.add_argument(
        "--n-jobs",
        type=_jobs,
        default=-1,
        metavar="N",
        help="run the (split, epsilon) cells in N processes (default -1: all cores; results do not depend on N)",
    )
    out = evaluate.add_argument_group("output")
    out.add_argument(
        "--output", "-o", default="diffpriv-py-results", metavar="DIR", help="directory for the CSVs and plots"
    )
    out.add_argument("--plot", action=argparse.BooleanOptionalAction, default=True, help="write PNG plots")
    out.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="progress bar on stderr, terminal or pipe (default: on)",
    )
    evaluate.set_defaults(func=_run_evaluate)

    audit = commands.add_parser(
        "audit",
        help="measure a lower bound on a mechanism's epsilon",
        description="Run the privacy auditor: release the mechanism many times on two neighbouring datasets and "
        "report a statistical lower bound on its privacy loss. MECHANISM is a built-in name (see --list) or "
        "MODULE:OBJECT, where OBJECT is a DPMech instance (audited on 0,...,0 vs 0,...,0,1 records), a dict with "
        "keys mechanism, X, X_neighbour and optionally privacy_params, or a function returning either. MODULE may "
        "be a path to a .py file. Exit status 1 means the claimed guarantee was refuted.",
    )
    audit.add_argument("mechanism", nargs="?", metavar="MECHANISM", help="built-in name or MODULE:OBJECT")
    audit.add_argument("--list", action="store_true", help="list the built-in mechanisms and exit")
    audit.add_argument("--epsilon", type=_positive_float("--epsilon"), default=1.0, help="claimed epsilon (default 1)")
    audit.add_argument(
        "--delta", type=_positive_float("--delta", upper=1.0), help="claimed delta (default 0, or 1e-5 if needed)"
    )
    audit.add_argument(
        "--alpha",
        type=_positive_float("--alpha", upper=1.0),
        default=1e-6,
        help="false-alarm probability of the bound (default 1e-6)",
    )
    audit.add_argument(
        "--samples", type=_count("--samples", 100, 10**8), help="releases per dataset (default: the auditor's)"
    )
    audit.add_argument(
        "--records", type=_count("--records", 2, 10**7), default=10, help="records in the default datasets (default 10)"
    )
    audit.add_argument("--seed", type=_seed, help="make the audit reproducible")
    search = audit.add_argument_group(
        "search",
        "Instead of one pair, search many neighbouring pairs (records replaced by bounds, extreme, tiny and nearby "
        "values) for one that refutes the claim, and report the worst (diffpriv_py.testing.search_audit).",
    )
    search.add_argument("--search", action="store_true", help="search neighbouring pairs for the worst one")
    search.add_argument(
        "--time-budget",
        type=_positive_float("--time-budget", upper=86400.0),
        metavar="SECONDS",
        help=f"seconds the search aims for (default {DEFAULT_SEARCH_SECONDS:g})",
    )
    search.add_argument(
        "--replacements",
        type=_numbers,
        metavar="LIST",
        help="comma-separated replacement values to try instead of the built-in adversarial ones, e.g. the data "
        "domain your target assumes (default: the adversarial values; 0,1 for the built-in mechanisms)",
    )
    audit.set_defaults(func=_run_audit)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``diffpriv-py`` command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 when ``audit`` refutes the claimed guarantee, 2 on an error (printed as one line).
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # io.TextIOWrapper's; typing.TextIO does not declare it
        if reconfigure is not None:  # never crash on a terminal that cannot show a symbol
            reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if os.environ.get("DIFFPRIV_PY_DEBUG"):
            raise
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if not isinstance(err, (CLIError, ValueError, TypeError, OSError, ImportError, LookupError)):
            message = f"internal error ({type(err).__name__}): {message}; rerun with DIFFPRIV_PY_DEBUG=1 for details"
        print(f"{PROG} {args.command}: error: {message}", file=sys.stderr)
        return EXIT_ERROR
