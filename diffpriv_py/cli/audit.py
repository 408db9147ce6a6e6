"""``diffpriv-py audit``: a statistical lower bound on a mechanism's ε, for built-in mechanisms or the user's own."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

import diffpriv_py as dp
from diffpriv_py import Del, DPMech, Eps

from ._args import _count, _numbers, _positive_float, _seed
from ._output import EXIT_OK, EXIT_REFUTED, CLIError, _fmt_number, _symbols, describe_guarantee, format_table

DEFAULT_SEARCH_SECONDS = 30.0  # audit --search: long enough for the screen, explore and confirm stages


def _builtin_audit_cases() -> dict[str, tuple[str, Callable[[float, float], tuple[Any, Any, Any]]]]:
    """Built-in mechanisms to audit: name -> (description, build(epsilon, delta) -> (mechanism, X, X_neighbour))."""
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


_PACKAGE_DIR = os.path.dirname(os.path.abspath(dp.__file__)) + os.sep


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
    from diffpriv_py.testing import audit

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
    from diffpriv_py.testing import search_audit

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


def add_parser(commands: Any) -> None:
    """Add the ``audit`` command to the sub-parsers of ``diffpriv-py``."""
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
