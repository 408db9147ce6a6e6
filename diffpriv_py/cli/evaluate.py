"""``diffpriv-py evaluate``: utility-vs-ε studies (CSV files and figures) through :mod:`diffpriv_py.evaluation`."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

import numpy as np

from diffpriv_py.extras import MissingExtraError, require

from ._args import _count, _epsilons, _jobs, _positive_float, _seed
from ._output import EXIT_OK, PROG, CLIError, _fmt_number, _symbols, format_table


def _run_evaluate(args: argparse.Namespace) -> int:
    import secrets

    from diffpriv_py import datasets, evaluation

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
    evaluation.resolve_models(models, args.privatisation, data.task)  # fail before any output if unavailable
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


def add_parser(commands: Any) -> None:
    """Add the ``evaluate`` command to the sub-parsers of ``diffpriv-py``."""
    from diffpriv_py.evaluation import DEFAULT_EPSILONS

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
