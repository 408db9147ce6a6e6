"""Hostile inputs at every public entry point: a clear library error (or a finite answer), never a hang, a crash
from numpy's internals, a mutated input, or a budget charged for a failure that does not depend on the data.

The entry points are enumerated from the package itself (``diffpriv_py.__all__``, ``dp.stats``, ``dp.estimators``,
``dp.accounting``, ``dp.testing``, ``diffpriv_py.sklearn``, the pandas accessors and every mechanism's release), so
a new public function is covered without editing this file: its arguments get valid values by parameter name from
``GOOD`` (a new parameter name fails ``test_every_entry_point_has_a_valid_baseline_call`` until it is added), and
then each argument in turn is replaced by values from the hostile tables. The (entry point, argument, value)
product is sampled deterministically to keep the suite within about a minute.
"""

from __future__ import annotations

import copy
import decimal
import importlib
import inspect
import math
import re
import resource
import signal
import sys
import warnings
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffpriv_py as dp
from diffpriv_py.exceptions import DiffprivError

pd = pytest.importorskip("pandas")
import diffpriv_py.pandas  # noqa: E402 - registers the accessors

# ---- valid arguments by parameter name -----------------------------------------------------------------------------

_RNG = np.random.default_rng(20261124)
_X1 = np.linspace(0.05, 0.95, 40)
_X2 = np.column_stack([np.linspace(-0.5, 0.5, 40), np.cos(np.arange(40.0)) * 0.5])
_Y = np.where(np.arange(40) % 2 == 0, 1, 0)


def _mean_target(X: Any) -> float:
    return float(np.mean(X))


def _score_target(X: Any) -> Callable[[Any], float]:
    def _score(r: Any) -> float:
        return float(np.sum(np.asarray(X) > r))

    return _score


def _oracle(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n)


def _bernstein_target(X: Any) -> Callable[[Any], float]:
    level = float(np.mean(X))
    return lambda y: level * float(np.sum(y))


def _count_target(X: Any) -> int:
    return int(np.sum(np.asarray(X) > 0.5))


USER_CODE = {"_mean_target", "_score_target", "_score", "_oracle", "_bernstein_target", "_count_target"}
"""The test's targets and oracles: an exception raised inside them is the user's, passed on unchanged."""


GOOD: dict[str, Callable[[], Any]] = {
    # datasets (rows are records)
    "x": lambda: _X1.copy(),
    "X": lambda: _X1.copy(),
    "X_neighbour": lambda: np.r_[_X1[:-1], 0.5],
    "X1": lambda: _X1.copy(),
    "X2": lambda: np.r_[_X1[:-1], 0.5],
    # privacy
    "privacy_params": lambda: dp.Eps(1.0),
    "privacyParams": lambda: dp.Eps(1.0),
    "budget": lambda: dp.Eps(10.0),
    "epsilon": lambda: 1.0,
    "delta": lambda: 1e-6,
    "gamma": lambda: 0.2,
    "mu": lambda: 1.0,
    "rho": lambda: 0.5,
    "delta_slack": lambda: 1e-6,
    "epsilons": lambda: [1.0, 0.5],
    "deltas": lambda: [0.0, 0.0],
    "noise_multiplier": lambda: 1.0,
    "sampling_rate": lambda: 0.01,
    "steps": lambda: 10,
    "count": lambda: 1,
    "events": lambda: [dp.accounting.LaplaceEvent(epsilon=1.0)],
    "n_values": lambda: 1000,  # dp.stats.default_n_candidates: the public number of values a quantile ranks
    "holder": lambda: "LogisticRegression",  # DetachedAccountant: what was copied to another process
    # statistics
    "bounds": lambda: (0.0, 1.0),
    "q": lambda: 0.5,
    "bins": lambda: 4,
    "range": lambda: (0.0, 1.0),
    "percentiles": lambda: (0.25, 0.75),
    "by": lambda: np.array(["a", "b"] * 20),  # group labels (dp.stats.groupby)
    "keys": lambda: ["a", "b"],  # public group keys: a pure-ε group-by needs no partition selection
    # mechanisms and the sampler
    "target": lambda: _mean_target,
    "sensitivity": lambda: 1.0 / 40,
    "dims": lambda: 1,
    "f": lambda: np.sin,
    "k": lambda: 2,
    "m": lambda: 20,
    "n": lambda: 40,
    "lower": lambda: 0.0,
    "upper": lambda: 1.0,
    "n_candidates": lambda: 65,
    "data": lambda: _X1.copy(),
    "time_budget": lambda: 0.5,
    "max_pairs": lambda: 4,
    "screened": lambda: 4,
    "explored": lambda: 2,
    "n_explore": lambda: 40,
    "n_confirm": lambda: 40,
    "explore_pairs": lambda: 1,
    "confirm_pairs": lambda: 1,
    "oracle": lambda: _oracle,
    "lattice_k": lambda: 3,
    "response_set": lambda: [0.25, 0.5, 0.75],
    "mechanism": lambda: dp.Laplace(target=_mean_target, sensitivity=1.0 / 40),
    "mech": lambda: dp.Laplace(target=_mean_target, sensitivity=1.0 / 40),
    "object": lambda: dp.Laplace(target=_mean_target, sensitivity=1.0 / 40),
    # estimators
    "reg_lambda": lambda: 0.1,
    "data_norm": lambda: 1.0,
    "label_bound": lambda: 1.0,
    "n_clusters": lambda: 2,
    "n_components": lambda: 1,
    "components": lambda: np.eye(2)[:, :1],
    "reference": lambda: np.eye(2)[:, :1],
    "coeffs": lambda: np.zeros(3),  # (k + 1)^dims with k = 2, dims = 1
}
"""Valid values by parameter name. A required parameter whose name is missing here fails the baseline test."""

# Which arguments carry private data (their hostile values are read after the charge, so a charge may stand).
DATA_PARAMS = {"x", "X", "X_neighbour", "X1", "X2", "y"}
# Optional parameters that are set anyway (stats need bounds, histograms bins and range).
ALWAYS = {"bounds", "bins", "range", "m", "data_norm", "label_bound", "keys"}

# ---- hostile values --------------------------------------------------------------------------------------------


def _masked() -> Any:
    return np.ma.array(_X1, mask=np.arange(40) % 3 == 0)


HOSTILE_SCALARS: dict[str, Callable[[], Any]] = {
    "nan": lambda: math.nan,
    "inf": lambda: math.inf,
    "-inf": lambda: -math.inf,
    "neg-zero": lambda: -0.0,
    "subnormal": lambda: 5e-324,
    "1e308": lambda: 1e308,
    "-1e308": lambda: -1e308,
    "bool": lambda: True,
    "numpy-bool": lambda: np.bool_(True),
    "string": lambda: "1",
    "complex": lambda: 1 + 1j,
    "decimal": lambda: decimal.Decimal("0.5"),
    "huge-int": lambda: 2**70,
    "negative": lambda: -1,
    "zero": lambda: 0,
    "array": lambda: np.array([0.5, 0.6]),
    "0-d": lambda: np.array(0.5),
    "none": lambda: None,
    "empty-list": lambda: [],
    "object": lambda: object(),
}

HOSTILE_DATA: dict[str, Callable[[], Any]] = {
    "nan-values": lambda: np.r_[_X1[:-1], math.nan],
    "inf-values": lambda: np.r_[_X1[:-1], math.inf],
    "1e308-values": lambda: np.r_[_X1[:-1], 1e308],
    "subnormal-values": lambda: np.full(40, 5e-324),
    "neg-zero-values": lambda: np.full(40, -0.0),
    "bool-array": lambda: _X1 > 0.5,
    "string-array": lambda: np.array(["a"] * 40),
    "complex-array": lambda: _X1 + 1j,
    "decimal-objects": lambda: np.array([decimal.Decimal("0.5")] * 40, dtype=object),
    "object-array": lambda: np.array([object()] * 40, dtype=object),
    "masked-array": _masked,
    "empty": lambda: np.array([]),
    "0-d": lambda: np.array(0.5),
    "ragged": lambda: [[0.1, 0.2], [0.3]],
    "3-d": lambda: np.zeros((4, 3, 2)),
    "wrong-columns": lambda: np.zeros((40, 7)),
    "mismatched-xy": lambda: (_X2.copy(), _Y[:-3].copy()),
    "pandas-na": lambda: pd.Series(pd.array([0.5] * 39 + [None], dtype="Float64")),
    "categorical": lambda: pd.Series(pd.Categorical(["a", "b"] * 20)),
    "datetime": lambda: pd.Series(pd.date_range("2020-01-01", periods=40)),
    "huge-ints": lambda: np.array([2**70] * 40, dtype=object),
    "scalar": lambda: 0.5,
    "string": lambda: "data",
    "none": lambda: None,
}

# ---- entry points ----------------------------------------------------------------------------------------------


def _supervised() -> tuple[np.ndarray, np.ndarray]:
    return _X2.copy(), _Y.copy()


class EntryPoint:
    """One public callable and how to call it validly; ``call(kwargs)`` runs it with ``kwargs`` substituted."""

    def __init__(self, name: str, func: Callable[..., Any], params: list[inspect.Parameter], runner: Any = None):
        self.name, self.func, self.params, self.runner = name, func, params, runner

    @property
    def module(self) -> str:
        return getattr(self.func, "__module__", "") or ""


def _signature_params(func: Callable[..., Any]) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]


def _module_entry_points() -> list[EntryPoint]:
    modules = {
        "dp": dp,
        "dp.stats": dp.stats,
        "dp.estimators": dp.estimators,
        "dp.accounting": dp.accounting,
        "dp.testing": dp.testing,
        "dp.sensitivity": importlib.import_module("diffpriv_py.sensitivity"),  # the sampler with n_jobs, time_budget
        "dp.sklearn": importlib.import_module("diffpriv_py.sklearn"),
    }
    out, seen = [], set()
    for prefix, module in modules.items():
        # Python names before the R-parity aliases of the same objects: cases are named dp.Laplace, not DPMechLaplace.
        for name in sorted(getattr(module, "__all__", []), key=lambda n: n.startswith(("DPMech", "DPParams"))):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            seen.add(id(obj))
            if isinstance(obj, type) and issubclass(obj, dp.DPMech):
                if not inspect.isabstract(obj):
                    out.append(EntryPoint(f"{prefix}.{name}()", obj, _signature_params(obj)))
                    out.append(_release_entry(f"{prefix}.{name}", obj))
                continue
            if isinstance(obj, type) and hasattr(obj, "fit") and prefix == "dp.sklearn":
                if inspect.isabstract(obj):  # the facades' base classes: their concrete facades are listed too
                    continue
                out.append(EntryPoint(f"{prefix}.{name}().fit", obj, _signature_params(obj), runner="fit"))
                continue
            out.append(EntryPoint(f"{prefix}.{name}", obj, _signature_params(obj)))
    for kind, frame in (("Series", pd.Series(_X1)), ("DataFrame", pd.DataFrame({"a": _X1, "b": 1 - _X1}))):
        for method in (m for m in dir(frame.private) if not m.startswith("_")):
            func = getattr(frame.private, method)
            out.append(EntryPoint(f"{kind}.private.{method}", func, _signature_params(func), runner=("pandas", kind)))
    return out


def _release_entry(name: str, cls: type) -> EntryPoint:
    release = cls.release_response
    params = [p for p in _signature_params(release)]
    return EntryPoint(f"{name}.release_response", release, params, runner=("release", cls))


def _mechanism_for(cls: type) -> Any:
    """A valid instance of a DPMech subclass, built from GOOD (estimators get their own public constants)."""
    special: dict[str, dict[str, Any]] = {
        "Exponential": {"target": _score_target, "response_set": [0.25, 0.5, 0.75], "sensitivity": 1.0},
        "Bernstein": {
            "target": _bernstein_target,
            "lattice_k": 3,
            "dims": 1,
            "sensitivity": 1.0 / 40,
        },
        "DiscreteLaplace": {"target": _count_target, "sensitivity": 1.0},
    }
    if cls.__name__ in special:
        return cls(**special[cls.__name__])
    kwargs = {p.name: GOOD[p.name]() for p in _signature_params(cls) if p.default is p.empty and p.name in GOOD}
    for name in ("data_norm", "bounds", "label_bound"):
        if name in {p.name for p in _signature_params(cls)}:
            kwargs[name] = GOOD[name]() if name != "bounds" else (np.full(2, -1.0), np.full(2, 1.0))
    if "sensitivity" in {p.name for p in _signature_params(cls)} and issubclass(cls, dp.NumericMech):
        kwargs.setdefault("sensitivity", 1.0 / 40)
    if "classes" in {p.name for p in _signature_params(cls)}:
        kwargs["classes"] = [0, 1]  # a classifier's public label set (without it a release is refused)
    return cls(**kwargs)


_SUPERVISED = {"SVM", "LogisticRegression", "LinearRegression", "DPSGDClassifier"}
_TWO_D = {"PCA", "KMeans"}


def _dataset_for(entry: EntryPoint) -> Any:
    owner = entry.runner[1].__name__ if isinstance(entry.runner, tuple) and entry.runner[0] == "release" else ""
    if owner in _SUPERVISED:
        return _supervised()
    if owner in _TWO_D:
        return _X2.copy()
    return _X1.copy()


def _privacy_for(entry: EntryPoint, mech: Any = None) -> Any:
    kind = getattr(mech, "privacy_params_type", dp.Eps)
    return dp.Del(1.0, 1e-6) if issubclass(kind, dp.Del) else dp.Eps(1.0)


def baseline(entry: EntryPoint) -> tuple[Callable[[dict[str, Any]], Any], dict[str, Any]]:
    """``(run, kwargs)``: ``run(kwargs)`` calls the entry point; ``kwargs`` holds valid values for its arguments."""
    runner = entry.runner
    if isinstance(runner, tuple) and runner[0] == "release":
        mech = _mechanism_for(runner[1])
        kwargs = {"privacy_params": _privacy_for(entry, mech), "X": _dataset_for(entry), "rng": 0}
        return (lambda kw: mech.release_response(**kw)), kwargs
    if runner == "fit":
        cls = entry.func
        kwargs = {p.name: GOOD[p.name]() for p in entry.params if p.default is p.empty}
        if "delta" in {p.name for p in entry.params} and cls.__name__ in ("DPSGDClassifier", "LinearRegression"):
            kwargs["delta"] = 1e-6
        if "batch_size" in {p.name for p in entry.params}:
            kwargs["batch_size"] = 8
        for name in ("data_norm", "label_bound"):
            if name in {p.name for p in entry.params}:
                kwargs[name] = 1.0
        if "bounds" in {p.name for p in entry.params}:
            kwargs["bounds"] = (np.full(2, -1.0), np.full(2, 1.0))
        if "epochs" in {p.name for p in entry.params}:
            kwargs["epochs"] = 1.0
        if "classes" in {p.name for p in entry.params}:
            kwargs["classes"] = [0, 1]
        supervised = cls.__name__ in _SUPERVISED
        data = {"X": _X2.copy(), **({"y": _Y.copy()} if supervised else {})}

        def run_fit(kw: dict[str, Any]) -> Any:
            kw = dict(kw)
            fit_args = {name: kw.pop(name) for name in ("X", "y") if name in kw}
            return cls(**kw).fit(**fit_args)

        return run_fit, {**kwargs, **data}
    kwargs: dict[str, Any] = {}
    for p in entry.params:
        if p.name in ("rng", "random_state"):
            kwargs[p.name] = 0
        elif p.default is p.empty or p.name in ALWAYS:
            kwargs[p.name] = GOOD[p.name]() if p.name in GOOD else _missing(entry, p.name)
    if isinstance(runner, tuple) and runner[0] == "pandas" and runner[1] == "DataFrame":
        kwargs.pop("x", None)
    if entry.name.startswith("dp.stats.") and "bounds" in kwargs and entry.name.endswith("covariance"):
        kwargs["x"] = _X2.copy()
        kwargs["bounds"] = (-1.0, 1.0)
    if entry.name == "dp.estimators.q_f":
        kwargs["X"] = _X2.copy()
    if "accountant" in {p.name for p in entry.params}:
        kwargs["accountant"] = None
    return (lambda kw: entry.func(**kw)), kwargs


def _missing(entry: EntryPoint, name: str) -> Any:
    raise LookupError(f"no valid value for parameter {name!r} of {entry.name}; add it to GOOD")


ENTRY_POINTS = _module_entry_points()
# Entry points that are not called with hostile values: value classes built by the library itself, kit checks that
# take a MechCase, decorators; their inputs are validated where the library builds them.
NOT_HOSTILE = re.compile(
    r"^dp\.testing\.(check_(?!sensitivity$)|mechanism_checks|parametrize_with_checks|MechCase|AuditReport"
    r"|trailing_exponent|PairResult|SearchReport)|^dp\.(Response|SamplerPlan|Chunks|DPMech|NumericMech)\b|^dp\.accounting\.(Charge|Event|"
    r"Composition|DetachedAccountant)$|^dp\.sensitivity\.SensitivitySampling$"
    r"|^dp\.estimators\.(DPLloydPlan|DPSGDModel|KMeansModel|LinearClassifierModel|LinearModel|PCAModel)$"
    r"|^dp\.stats\.(ClippedStatistic|CovarianceTarget|HistogramTarget|Quantile|GroupBy)|^dp\.sklearn\.DPEstimator"
)
# Whose file each entry point lives in, for the report: a finding outside the fail-closed area is xfail'ed.
OWNERS = [
    (re.compile(r"^dp\.stats\.quantile|^dp\.stats\.median"), "stats/_quantile.py"),
    (re.compile(r"^dp\.stats\.histogram"), "stats/_histogram.py"),
    (re.compile(r"^dp\.stats\."), "stats moments/_common"),
    (re.compile(r"^dp\.estimators\.(PCA|subspace_overlap|q_f)|^dp\.sklearn\.PCA"), "estimators/pca.py"),
    (re.compile(r"^dp\.estimators\.KMeans|^dp\.sklearn\.KMeans"), "estimators/kmeans/"),
    (re.compile(r"^dp\.estimators\.DPSGD|^dp\.sklearn\.DPSGD"), "estimators/dpsgd.py"),
    (re.compile(r"^dp\.estimators\.LinearRegression|^dp\.sklearn\.LinearRegression"), "linear_regression"),
    (re.compile(r"^dp\.estimators\.|^dp\.sklearn\."), "estimators/linear_models.py + _erm.py"),
    (re.compile(r"^dp\.accounting\.|^dp\.Accountant"), "accounting/"),
    (re.compile(r"^dp\.testing\."), "testing/"),
    (re.compile(r"^dp\.(Eps|Del|Gam|DPParams)"), "privacy.py"),
    (re.compile(r"^dp\.(Laplace|Gaussian|DPMechLaplace|DPMechGaussian|DiscreteLaplace)"), "laplace/gaussian/base"),
]


def owner(entry_name: str) -> str | None:
    for pattern, area in OWNERS:
        if pattern.search(entry_name):
            return area
    return None  # the fail-closed area: sensitivity, r_compat, pandas, exponential, bernstein, approximation


HOSTILE_ENTRIES = [e for e in ENTRY_POINTS if not NOT_HOSTILE.search(e.name)]

# ---- the watchdog ----------------------------------------------------------------------------------------------

CALL_SECONDS = 5
MEMORY_HEADROOM = 2 * 1024**3


class Hang(Exception):
    """Raised by the watchdog alarm when one call runs longer than CALL_SECONDS."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"the call ran longer than {CALL_SECONDS} s")


def _vm_size() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * resource.getpagesize()
    except OSError:
        return 0


def guarded(run: Callable[[], Any]) -> Any:
    """Run with a time limit (SIGALRM) and an address-space cap (current size + 2 GiB); MemoryError = too big."""
    old_handler = signal.signal(signal.SIGALRM, _alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = _vm_size()
    if size:
        limit = size + MEMORY_HEADROOM
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    signal.alarm(CALL_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_handler)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# ---- the contract ----------------------------------------------------------------------------------------------

NUMPY_INTERNALS = re.compile(
    r"setting an array element with a sequence|could not convert|ufunc|could not be broadcast|has no len|"
    r"unsupported operand|not supported between|only length-1 arrays|truth value of an array|"
    r"object of type|must be real number, not|inhomogeneous|cannot convert float|int too large|"
    r"Python int too large|float\(\) argument|invalid literal"
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (pd.Series, pd.DataFrame)):
        return a.equals(b)
    if isinstance(a, np.ma.MaskedArray):
        return np.array_equal(a.mask, b.mask) and np.array_equal(a.data, b.data, equal_nan=a.dtype.kind == "f")
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:  # shallow copies: the same objects must still be there
            return all(x is y for x, y in zip(a.ravel(), b.ravel(), strict=True))
        return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return True  # scalars and objects are immutable or not compared


def _snapshot(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_snapshot(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.copy()  # a masked array keeps its mask; object arrays keep the same objects
    if isinstance(value, (list, pd.Series, pd.DataFrame)):
        return copy.deepcopy(value)
    return value


def _raised_here(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while running the test's own target or oracle (user code), not the library."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == __file__ and code.co_name in USER_CODE:
            return True
        tb = tb.tb_next
    return False


def _finite_output(value: Any) -> bool:
    """A successful release must not contain NaN or inf (no finite input yields NaN; the output is bounded)."""
    for v in (value.response,) if isinstance(value, dp.Response) else (value,):
        if isinstance(v, (float, np.floating)) and not math.isfinite(v):
            return False
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and not np.all(np.isfinite(v)):
            return False
        if isinstance(v, (pd.Series, pd.DataFrame)):
            values = np.asarray(v, dtype=object).ravel()
            if any(isinstance(x, float) and not math.isfinite(x) for x in values):
                return False
    return True


def check_hostile_call(entry: EntryPoint, param: str, value_name: str, make: Callable[[], Any]) -> str | None:
    """Run one hostile call; return a description of the contract violation, or None if it behaved."""
    run, kwargs = baseline(entry)
    hostile = make()
    kwargs[param] = hostile
    accountant = None
    if "accountant" in kwargs or (isinstance(entry.runner, tuple) and entry.runner[0] == "release"):
        accountant = dp.Accountant(budget=dp.Gam(1e6, 0.5, 0.9))
        kwargs["accountant"] = accountant
    before = {k: _snapshot(v) for k, v in kwargs.items()}
    try:
        result = guarded(lambda: run(kwargs))
    except Hang as exc:
        return f"hang: {exc}"
    except MemoryError:
        return "MemoryError: the call tried to allocate more than 2 GiB"
    except Exception as exc:
        text = str(exc)
        if _raised_here(exc):
            return None  # the test's own target or oracle failed on the data: the user's error, passed on unchanged
        if isinstance(exc, AssertionError) and entry.name.startswith("dp.testing.check_"):
            return None  # the kit's checks report a violated property as an AssertionError, like pytest
        if not isinstance(exc, (ValueError, TypeError, DiffprivError)) or isinstance(exc, (IndexError, KeyError)):
            return f"{type(exc).__name__}: {text[:200]}"
        if NUMPY_INTERNALS.search(text):
            return f"numpy internals leak: {type(exc).__name__}: {text[:200]}"
        public = param not in DATA_PARAMS or value_name not in _DATA_DEPENDENT
        if public and accountant is not None and accountant.ledger:
            return f"budget charged before a public failure: {type(exc).__name__}: {text[:160]}"
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", param).lower() if param != "X" else "x"  # privacyParams: R's name
        names = {param.lower(), snake, snake.replace("_", " "), snake.replace("_params", " parameters")}
        if param in DATA_PARAMS:
            names |= {"data", "record", "array", "'x'", "x ", "dataset", "value", "dtype", "column"}
        if not any(n in text.lower() for n in names):
            return f"message does not name {param!r}: {type(exc).__name__}: {text[:200]}"
    else:
        if not _finite_output(result):
            return f"silent non-finite answer: {result!r:.200}"
    for key, old in before.items():
        if not _same(old, kwargs[key]):
            return f"input {key!r} was mutated"
    return None


_DATA_DEPENDENT = {"nan-values", "inf-values", "1e308-values", "subnormal-values", "neg-zero-values", "pandas-na"}


def _cases() -> list[Any]:
    """Every (entry point, parameter) with a deterministic sample of hostile values (budget: ~1500 calls)."""
    cases = []
    for entry in HOSTILE_ENTRIES:
        try:
            _, kwargs = baseline(entry)
        except Exception:
            continue
        for param in kwargs:
            if param in ("rng", "random_state", "accountant"):
                continue
            table = HOSTILE_DATA if param in DATA_PARAMS else HOSTILE_SCALARS
            names = sorted(table, key=lambda v: zlib.crc32(f"{entry.name}|{param}|{v}".encode()))
            for value_name in names[: 10 if param in DATA_PARAMS else 5]:
                marks = []
                if f"{param}={value_name}" in KNOWN.get(entry.name, ()):
                    marks.append(pytest.mark.xfail(strict=False, reason=f"owned by {owner(entry.name)}"))
                cases.append(
                    pytest.param(entry, param, value_name, id=f"{entry.name}-{param}-{value_name}", marks=marks)
                )
    return cases


# Open findings, all in other areas' files (listed in the report to the lead; see owner()): each such case is
# xfail(strict=False) until fixed. "param=value" names the argument and the hostile value given to it.
KNOWN: dict[str, set[str]] = {}


def test_every_entry_point_has_a_valid_baseline_call():
    """Each enumerated entry point runs with the GOOD values, so the hostile cases below start from a valid call."""
    failures = {}
    for entry in HOSTILE_ENTRIES:
        try:
            run, kwargs = baseline(entry)
            result = guarded(lambda run=run, kwargs=kwargs: run(kwargs))
            assert _finite_output(result), result
        except Exception as exc:
            failures[entry.name] = f"{type(exc).__name__}: {str(exc)[:160]}"
    assert not failures, "\n".join(f"{k}: {v}" for k, v in failures.items())


def test_the_enumeration_reaches_every_public_namespace():
    """The walk finds the stats, estimators, accounting, testing, sklearn, pandas and mechanism entry points."""
    names = {e.name for e in HOSTILE_ENTRIES}
    for expected in (
        "dp.stats.mean",
        "dp.estimators.PCA.release_response",
        "dp.accounting.compose",
        "dp.testing.audit",
        "dp.sklearn.LogisticRegression().fit",
        "DataFrame.private.describe",
        "dp.Exponential.release_response",
        "dp.bernstein",
        "dp.sensitivitySampler",
    ):
        assert expected in names


@pytest.mark.parametrize(("entry", "param", "value_name"), _cases())
def test_hostile_argument_gives_a_clear_error_or_a_finite_answer(entry, param, value_name):
    """One hostile value in one argument: a clear library error naming it (no charge if public) or a finite answer."""
    table = HOSTILE_DATA if param in DATA_PARAMS else HOSTILE_SCALARS
    problem = check_hostile_call(entry, param, value_name, table[value_name])
    assert problem is None, f"{entry.name}({param}={value_name}): {problem}"


def test_open_findings_are_all_outside_the_fail_closed_area():
    """Every xfail'ed finding belongs to another area's file; none is left in this area's own entry points."""
    assert all(owner(name) is not None for name in KNOWN), [name for name in KNOWN if owner(name) is None]


def _bad_entry(func: Callable[..., Any]) -> EntryPoint:
    return EntryPoint(f"fake.{func.__name__}", func, _signature_params(func))


def test_the_harness_catches_each_kind_of_violation(monkeypatch):
    """A crash, a numpy-internals message, a mutation, a charge before a public failure, a NaN answer and a hang
    are each reported, so a passing case means the entry point really behaved."""
    monkeypatch.setattr(sys.modules[__name__], "CALL_SECONDS", 1)

    def crash(x, privacy_params):
        return 1 / 0

    def leak(x, privacy_params):
        return np.asarray([[1.0], [1.0, 2.0]], dtype=float)

    def mutate(x, privacy_params):
        x[0] = 7.0
        raise ValueError("bad data x")

    def charge(x, privacy_params, accountant=None):
        accountant.spend(dp.Eps(1.0))
        raise TypeError("bad privacy_params")

    def nan_answer(x, privacy_params):
        return math.nan

    def hang(x, privacy_params):
        while True:
            pass

    expected = {
        crash: ("privacy_params", "ZeroDivisionError"),
        leak: ("privacy_params", "numpy internals"),
        mutate: ("x", "mutated"),
        charge: ("privacy_params", "budget charged"),
        nan_answer: ("x", "non-finite"),
        hang: ("x", "hang"),
    }
    for func, (param, message) in expected.items():
        table = HOSTILE_DATA if param in DATA_PARAMS else HOSTILE_SCALARS
        value = "nan-values" if param in DATA_PARAMS else "string"
        problem = check_hostile_call(_bad_entry(func), param, value, table[value])
        assert problem is not None and message in problem, (func.__name__, problem)


_OWN_SCALAR_ENTRIES = [
    e
    for e in HOSTILE_ENTRIES
    if owner(e.name) is None and not e.name.startswith(("Series.", "DataFrame.")) and e.runner is None
]


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    value=st.one_of(
        st.floats(),
        st.integers(min_value=-(2**80), max_value=2**80),
        st.booleans(),
        st.text(max_size=3),
        st.complex_numbers(),
        st.lists(st.floats(), max_size=3),
        st.none(),
    ),
)
def test_random_hostile_scalars_at_the_sampler_and_approximation_entry_points(data, value):
    """Hypothesis-drawn scalars at every argument of this area's functions (sampler, bernstein, R aliases)."""
    entry = data.draw(st.sampled_from(_OWN_SCALAR_ENTRIES), label="entry point")
    _, kwargs = baseline(entry)
    params = [p for p in kwargs if p not in ("rng", "random_state", "accountant") and p not in DATA_PARAMS]
    if not params:
        return
    param = data.draw(st.sampled_from(params), label="parameter")
    problem = check_hostile_call(entry, param, "drawn", lambda: copy.copy(value))
    assert problem is None, f"{entry.name}({param}={value!r}): {problem}"


# ---- regressions: the cases a run over the full product found (always exercised, never sampled away) ---------------

# Values of the full run that are not in the tables above (for scalar and interval arguments).
EXTRA_VALUES: dict[str, Callable[[], Any]] = {
    "np.int64-2**62": lambda: np.int64(2**62),
    "1-elem-array": lambda: np.array([0.5]),
    "(0,nan)": lambda: (0.0, math.nan),
    "(True,1)": lambda: (True, 1.0),
    "('0','1')": lambda: ("0", "1"),
    "(1,0)": lambda: (1.0, 0.0),
    "(0,1e308)": lambda: (0.0, 1e308),
    "(-1e308,1e308)": lambda: (-1e308, 1e308),
    "1e-300": lambda: 1e-300,
    "10**12": lambda: 10**12,
    "ragged-X-of-(X,y)": lambda: ([[0.1, 0.2], [0.3]], [0.1, 0.2]),
    "2.5": lambda: 2.5,
    "10**6": lambda: 10**6,
}

FOUND: list[tuple[str, str, str]] = [
    # messages that did not name the argument, or numpy/Python internals (IndexError-like crashes)
    ("dp.Bernstein()", "bounds", "(0,nan)"),
    ("dp.bernstein", "bounds", "(True,1)"),
    ("dp.BernsteinApproximation", "bounds", "('0','1')"),
    ("dp.Exponential()", "response_set", "0-d"),
    ("dp.Exponential()", "method", "array"),
    ("dp.Exponential()", "log_base_measure", "string"),
    ("dp.Laplace()", "noise", "array"),
    ("dp.Gaussian()", "calibration", "array"),
    ("dp.DiscreteLaplace()", "noise", "array"),
    ("dp.Accountant", "composition", "array"),
    ("dp.stats.groupby", "keys", "0-d"),
    ("dp.stats.groupby", "quantiles", "zero"),
    ("dp.stats.histogram", "bins", "empty-list"),
    ("dp.stats.histogram", "bins", "1-elem-array"),
    ("dp.estimators.PCA.release_response", "X", "ragged"),
    ("dp.estimators.KMeans.release_response", "X", "ragged"),
    ("dp.estimators.PCA()", "method", "empty-list"),
    ("dp.estimators.PCA()", "sampler", "array"),
    ("dp.estimators.KMeans()", "bounds", "0-d"),
    ("dp.estimators.KMeans()", "bounds", "(1,0)"),
    ("dp.estimators.KMeans()", "method", "array"),
    ("dp.estimators.LinearRegression()", "label_bound", "0-d"),
    ("dp.estimators.SVM()", "loss", "array"),
    ("dp.estimators.DPSGDClassifier()", "hidden_layer_sizes", "0-d"),
    ("dp.estimators.DPSGDClassifier()", "activation", "array"),
    ("dp.accounting.compose", "events", "0-d"),
    ("dp.accounting.SubsampledGaussianEvent", "relation", "array"),
    ("dp.accounting.advanced_composition", "epsilon", "1e308"),
    ("dp.accounting.dpsgd_epsilon", "noise_multiplier", "subnormal"),
    ("dp.accounting.dpsgd_epsilon", "steps", "huge-int"),
    ("dp.accounting.dpsgd_epsilon", "method", "array"),
    ("dp.accounting.gdp_epsilon", "mu", "1e308"),
    ("dp.accounting.noise_multiplier_for", "steps", "np.int64-2**62"),
    ("dp.accounting.noise_multiplier_for", "neighbouring", "array"),
    ("dp.testing.audit", "n", "nan"),
    ("dp.testing.check_sensitivity", "rtol", "string"),
    ("dp.testing.search_audit", "replacements", "zero"),
    ("dp.sklearn.PCA().fit", "n_components", "huge-int"),
    ("dp.sklearn.PCA().fit", "delta", "array"),
    ("dp.sklearn.KMeans().fit", "n_clusters", "np.int64-2**62"),
    ("dp.sklearn.KMeans().fit", "n_iter", "huge-int"),
    ("dp.sklearn.KMeans().fit", "epsilon", "1e308"),
    ("dp.sklearn.LinearRegression().fit", "method", "array"),
    ("dp.sklearn.SVM().fit", "data_norm", "subnormal"),
    ("dp.sklearn.SVM().fit", "reg_lambda", "1e308"),
    ("dp.sklearn.SVM().fit", "huber_width", "subnormal"),
    ("dp.sklearn.LogisticRegression().fit", "data_norm", "subnormal"),
    ("dp.sklearn.DPSGDClassifier().fit", "delta", "array"),
    ("dp.sklearn.DPSGDClassifier().fit", "epochs", "1e308"),
    ("dp.sklearn.DPSGDClassifier().fit", "noise_multiplier", "subnormal"),
    ("dp.sklearn.DPSGDClassifier().fit", "noise_multiplier", "1e308"),
    # joblib's "Numeric literal ... too large", an out-of-memory audit, numpy's inhomogeneous-shape error
    ("dp.sensitivity.sample_sensitivity", "n_jobs", "10**6"),
    ("dp.sensitivity.sample_sensitivity_manual", "n_jobs", "10**6"),
    ("dp.testing.audit", "n", "10**12"),
    ("dp.estimators.LinearRegression.release_response", "X", "ragged-X-of-(X,y)"),
    # hangs
    ("dp.bernstein", "order", "huge-int"),
    ("dp.BernsteinApproximation", "order", "1e308"),
    # a budget charged for a failure that depends only on public arguments
    ("dp.stats.covariance", "bounds", "(-1e308,1e308)"),
    ("dp.stats.histogram", "range", "(-1e308,1e308)"),
    ("dp.stats.groupby", "name", "array"),
    ("dp.stats.groupby", "alpha", "subnormal"),
    # silent non-finite answers
    ("dp.stats.covariance", "bounds", "(0,1e308)"),
    ("Series.private.noise", "bounds", "(0,1e308)"),
    ("Series.private.std", "bounds", "(0,1e308)"),
    ("Series.private.sum", "bounds", "(0,1e308)"),
    ("DataFrame.private.cov", "bounds", "(0,1e308)"),
    ("DataFrame.private.describe", "bounds", "(0,1e308)"),
]

"""(entry point, argument, value) that once crashed with a numpy/Python error, named no argument, hung, charged the
budget for a public failure, or answered with inf; ``value`` is a key of the hostile tables or of EXTRA_VALUES."""


@pytest.mark.parametrize(("name", "param", "value_name"), FOUND, ids=["-".join(case) for case in FOUND])
def test_each_hostile_value_the_full_product_found_fails_closed(name, param, value_name):
    """A case the full (entry point × argument × value) product once failed on: a clear error, or a finite answer."""
    entry = next(e for e in HOSTILE_ENTRIES if e.name == name)
    table = {**(HOSTILE_DATA if param in DATA_PARAMS else HOSTILE_SCALARS), **EXTRA_VALUES}
    problem = check_hostile_call(entry, param, value_name, table[value_name])
    assert problem is None, f"{name}({param}={value_name}): {problem}"


# Values that were accepted silently (a finite answer, so the product above cannot see them), that failed only inside
# the user's target or oracle, or that joblib refused in its own words: each is now refused naming the argument in
# quotes, before any charge.
EXTRA_VALUES["1.5"] = lambda: 1.5
REFUSED: list[tuple[str, str, str]] = [
    ("dp.sensitivity.sample_sensitivity", "n_jobs", "zero"),  # joblib: "n_jobs == 0 in Parallel has no meaning"
    ("dp.sensitivity.sample_sensitivity", "n_jobs", "string"),  # joblib: "n_jobs could not be converted to int"
    ("dp.sensitivity.sample_sensitivity", "n_jobs", "bool"),  # joblib ran True as one worker
    ("dp.sensitivity.sample_sensitivity", "n_jobs", "2.5"),  # and 2.5 as two
    ("dp.sensitivity.sample_sensitivity_manual", "n_jobs", "bool"),
    ("dp.sensitivity.sample_sensitivity_manual", "n_jobs", "2.5"),
    ("dp.sensitivitySampler", "n", "huge-int"),  # the oracle was asked for 2**70 records
    ("dp.sensitivity.sample_sensitivity_manual", "n", "huge-int"),
    ("dp.testing.audit", "rng", "1.5"),  # int(1.5) == 1: a seed the user did not give
    ("dp.testing.audit", "rng", "bool"),
    ("dp.testing.audit", "X_neighbour", "none"),  # failed in the target: np.mean(None)
    ("dp.testing.search_audit", "rng", "nan"),  # int(nan): Python's "cannot convert float NaN to integer"
    ("dp.testing.search_audit", "rng", "negative"),  # numpy's SeedSequence error
    ("dp.testing.search_audit", "rng", "bool"),
    ("dp.Laplace()", "dims", "1e308"),
    ("dp.Gaussian()", "dims", "huge-int"),
    ("dp.accounting.LaplaceEvent", "count", "1e308"),
    ("dp.accounting.GaussianEvent", "count", "huge-int"),
]


@pytest.mark.parametrize(("name", "param", "value_name"), REFUSED, ids=["-".join(case) for case in REFUSED])
def test_each_silently_accepted_hostile_value_is_refused_naming_the_argument(name, param, value_name):
    """Passing the contract above by answering is not enough for these: the value is meaningless, so it is refused."""
    entry = next(e for e in HOSTILE_ENTRIES if e.name == name)
    make = {**(HOSTILE_DATA if param in DATA_PARAMS else HOSTILE_SCALARS), **EXTRA_VALUES}[value_name]
    run, kwargs = baseline(entry)
    kwargs[param] = make()
    with pytest.raises((ValueError, TypeError), match=f"'{param}'"):
        guarded(lambda: run(kwargs))
    assert check_hostile_call(entry, param, value_name, make) is None


@pytest.mark.parametrize("gamma", [5e-324, 1e-320, 1e-300, 1e-10, 2e-4])
def test_plan_sampler_refuses_a_gamma_too_small_to_plan_for(gamma):
    """Below 2.5e-4 more than 10^8 draws are needed; far below, ρ == γ in floating point gave 0/0 (NaN, division by
    zero) instead of that answer."""
    with pytest.raises(ValueError, match=r"'gamma'.*larger gamma"):
        dp.plan_sampler(gamma=gamma)
    assert dp.plan_sampler(gamma=3e-4).m <= 10**8  # just above the limit, a plan within the cap


@pytest.mark.parametrize("mech", ["Laplace", "Gaussian", "DiscreteLaplace"])
def test_a_target_returning_a_masked_array_is_refused_not_unmasked(mech):
    """np.asarray drops a mask: the masked values were released. The target's output is read after the charge (it
    depends on the data), so the refusal carries the charged note."""
    cls = getattr(dp, mech)
    kind = dp.Del(1.0, 1e-6) if issubclass(cls.privacy_params_type, dp.Del) else dp.Eps(1.0)
    target = lambda X: np.ma.array([1.0, 2.0], mask=[True, False])  # noqa: E731
    for sensitivity in (1.0,):
        with pytest.raises(dp.exceptions.TargetOutputError, match="masked array"):
            cls(target=target, sensitivity=sensitivity, dims=2).release_response(kind, _X1, rng=0)
    with pytest.raises(dp.exceptions.TargetOutputError, match="masked array"):
        cls(target=target, sensitivity=1.0).sensitivity_norm(_X1, _X1)


@pytest.mark.parametrize("vectorized", [False, True])
@pytest.mark.parametrize("score", ["1", "a", 1 + 1j, None, object()], ids=repr)
def test_exponential_scores_must_be_real_numbers(score, vectorized):
    """A string score was parsed ("1" -> 1.0) or failed in numpy's words; complex failed in Python's."""

    def target(X):
        return (lambda rs: [score] * len(rs)) if vectorized else (lambda r: score)

    mech = dp.Exponential(target=target, response_set=[0.25, 0.5], sensitivity=1.0, vectorized=vectorized)
    with pytest.raises(dp.exceptions.TargetOutputError, match="real numbers") as info:
        mech.release_response(dp.Eps(1.0), _X1, rng=0)
    assert not NUMPY_INTERNALS.search(str(info.value))
    big = dp.Exponential(target=target, response_set=[0.25, 0.5], sensitivity=1.0)
    assert big._evaluate(lambda r: 2**70)[0] == 2.0**70  # Python ints beyond int64 are real numbers all the same


@pytest.mark.parametrize("method", ["noise", "mean", "sum"])
def test_complex_pandas_columns_are_refused_before_the_charge(method):
    """Complex values have no order to clip to bounds: noise dropped the imaginary part or released it unprotected."""
    acc = dp.Accountant(budget=dp.Eps(10.0))
    func = getattr(pd.Series(_X1 + 1j).private, method)
    with pytest.raises(TypeError, match="complex"):
        func(dp.Eps(1.0), bounds=(0.0, 1.0), rng=0, accountant=acc)
    assert not acc.ledger


_MIXED_LABELS = {
    "int-str": np.array([1, "a"] * 20, dtype=object),
    "int-None": np.array([1, None] * 20, dtype=object),
    "str-float": np.array(["a", 0.5] * 20, dtype=object),
}


@pytest.mark.parametrize("labels", sorted(_MIXED_LABELS))
@pytest.mark.parametrize("model", ["LogisticRegression", "SVM"])
def test_observed_labels_of_mixed_types_are_refused_naming_y(model, labels):
    """classes='observed' orders the labels present in y; mixed types have no order: numpy's '<' not supported."""
    y = _MIXED_LABELS[labels]
    acc = dp.Accountant(budget=dp.Eps(10.0))
    mech = getattr(dp.estimators, model)(data_norm=1.0, classes="observed")
    with pytest.raises(TypeError, match="'y'") as info:
        mech.release_response(dp.Eps(1.0), (_X2, y), rng=0, accountant=acc)
    assert not NUMPY_INTERNALS.search(str(info.value)) and not acc.ledger
    facade = getattr(importlib.import_module("diffpriv_py.sklearn"), model)
    estimator = facade(epsilon=1.0, data_norm=1.0, classes="observed", accountant=acc)
    with pytest.raises((TypeError, ValueError)) as info:  # scikit-learn's own "Unknown label type" for some mixes
        estimator.fit(_X2, y)
    assert not NUMPY_INTERNALS.search(str(info.value)) and not acc.ledger


@pytest.mark.parametrize("models", [",", "", " , "])
def test_evaluate_with_an_empty_model_list_says_so(models, capsys):
    """``--models ','`` parsed to no model, and the study failed with "list index out of range"."""
    from diffpriv_py.cli import main

    try:
        status = main(["evaluate", "--models", models, "--no-plot", "--no-progress"])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and "--models names no model" in err and "Traceback" not in err


def test_std_of_bounds_near_the_float_limit_is_finite_and_their_sum_is_refused():
    """The std of values in [0, 1e308] is below 1e308, so it is released finite (its square, the variance, is not
    formed); their sum over 40 values would overflow, so it is refused before any charge."""
    x = np.linspace(0.05, 0.95, 40)
    for seed in range(6):
        assert math.isfinite(dp.stats.std(x, dp.Eps(1.0), bounds=(0.0, 1e308), rng=seed))
        assert math.isfinite(dp.stats.std(x, dp.Eps(1.0), bounds=(0.0, 1e308), nan_policy="omit", rng=seed))
    acc = dp.Accountant(budget=dp.Eps(5.0))
    with pytest.raises(ValueError, match="too wide for a sum"):
        dp.stats.sum(x, dp.Eps(1.0), bounds=(0.0, 1e308), rng=0, accountant=acc)
    assert not acc.ledger


def test_covariance_noise_is_clipped_so_wide_bounds_give_a_finite_matrix():
    """At width 1e153 (products 1e306) and ε = 1e-3 the noisy entries, clipped to their public range before
    scaling, never overflow to inf (unclipped, some seeds did)."""
    for seed in range(20):
        cov = dp.stats.covariance(_X2, dp.Eps(1e-3), bounds=(0.0, 1e153), rng=seed)
        assert np.all(np.isfinite(cov)), seed


def test_an_epsilon_too_small_for_safe_noise_is_refused_before_the_charge():
    """ε = 1e-13 cannot be sampled safely on the grid; the refusal comes before the accountant is charged."""
    acc = dp.Accountant(budget=dp.Eps(1.0))
    mech = dp.Laplace(target=_mean_target, sensitivity=1.0, dims=1)
    with pytest.raises(ValueError, match="too small"):
        mech.release_response(dp.Eps(1e-13), np.ones(3), accountant=acc, rng=0)
    assert not acc.ledger


HOSTILE_COLUMNS: dict[str, Callable[[], Any]] = {
    "categorical": lambda: pd.Categorical(["a", "b"] * 20),
    "datetime": lambda: pd.date_range("2020-01-01", periods=40),
    "timedelta": lambda: pd.to_timedelta(np.arange(40), unit="s"),
    "object": lambda: np.array([1.0, "a"] * 20, dtype=object),
    "nullable-with-NA": lambda: pd.array([0.5] * 39 + [None], dtype="Float64"),
    "boolean": lambda: _X1 > 0.5,
    "huge": lambda: np.full(40, 1e308),
    "complex": lambda: _X1 + 1j,
}


@pytest.mark.parametrize("column", sorted(HOSTILE_COLUMNS))
@pytest.mark.parametrize("kind", ["Series", "DataFrame"])
def test_pandas_accessors_on_hostile_columns_fail_clearly_or_answer_finitely(kind, column):
    """pandas NA, categorical, datetime, object and huge columns: each accessor method errs clearly or is finite."""
    values = HOSTILE_COLUMNS[column]()
    obj = pd.Series(values, name="c") if kind == "Series" else pd.DataFrame({"c": values, "ok": _X1})
    for method in (m for m in dir(obj.private) if not m.startswith("_")):
        func = getattr(obj.private, method)
        entry = EntryPoint(f"{kind}.private.{method}", func, _signature_params(func), runner=("pandas", kind))
        run, kwargs = baseline(entry)
        kwargs = {**kwargs, "accountant": dp.Accountant(budget=dp.Eps(1e6))} if "accountant" in kwargs else kwargs
        snapshot = obj.copy(deep=True)
        try:
            result = guarded(lambda run=run, kwargs=kwargs: run(kwargs))
        except (ValueError, TypeError) as exc:
            assert not NUMPY_INTERNALS.search(str(exc)), (method, str(exc))
        else:
            assert _finite_output(result), (method, result)
        assert obj.equals(snapshot), f"{method} modified the {kind}"


_DATASET_ENTRIES = [
    e
    for e in HOSTILE_ENTRIES
    if (e.name.startswith("dp.stats.") and ({"x", "X"} & {p.name for p in e.params}))
    or (isinstance(e.runner, tuple) and e.runner[0] == "release")
    or e.runner == "fit"
]


@pytest.mark.parametrize("entry", _DATASET_ENTRIES, ids=lambda e: e.name)
def test_masked_arrays_are_refused_at_every_release_before_any_charge(entry):
    """numpy would silently read the masked values: every release, statistic and fit refuses a masked array."""
    run, kwargs = baseline(entry)
    data_param = next(p for p in ("x", "X", "by") if p in kwargs)
    data = kwargs[data_param]
    features = data[0] if isinstance(data, tuple) else data
    masked = np.ma.array(features, mask=np.zeros(features.shape, dtype=bool))
    kwargs[data_param] = (masked, *data[1:]) if isinstance(data, tuple) else masked
    if isinstance(entry.runner, tuple) or "accountant" in kwargs:
        kwargs["accountant"] = acc = dp.Accountant(budget=dp.Gam(1e6, 0.5, 0.9))
    with pytest.raises(TypeError, match="masked array"):
        guarded(lambda: run(kwargs))
    if "accountant" in kwargs:
        assert not acc.ledger


_RAGGED = {
    "quantile q": lambda acc: dp.stats.quantile(
        np.arange(10.0), [[0.1], [0.2, 0.3]], dp.Eps(1), bounds=(0, 10), accountant=acc
    ),
    "groupby keys": lambda acc: dp.stats.groupby(
        np.array(["a", "b"] * 5), dp.Eps(1), keys=[["a"], ["b", "c"]], accountant=acc
    ),
    "histogram bins": lambda acc: dp.stats.histogram(np.arange(10.0), dp.Eps(1), bins=[[0, 5], [10]], accountant=acc),
    "classifier classes": lambda acc: dp.estimators.LogisticRegression(0.1, data_norm=1.0, classes=[[0], [1, 2]]),
}


@pytest.mark.parametrize("case", sorted(_RAGGED))
def test_a_ragged_nested_sequence_is_refused_naming_the_parameter(case):
    """A ragged list gives the library's error naming the parameter (not numpy's 'inhomogeneous shape'), uncharged."""
    name = case.split()[1]
    accountant = dp.accounting.Accountant(dp.Eps(10.0))
    with pytest.raises(ValueError, match=rf"'{name}' parameter.*ragged") as info:
        _RAGGED[case](accountant)
    assert "inhomogeneous" not in str(info.value)
    assert accountant.spent.epsilon == 0


@pytest.mark.parametrize("fn", ["basic_composition", "kov_composition"])
def test_composition_errors_name_the_sequence_argument(fn):
    """The element errors of basic/kov_composition name 'epsilons'/'deltas', the arguments the user passed."""
    compose = getattr(dp.accounting, fn)
    extra = {"delta_slack": 1e-6} if fn == "kov_composition" else {}
    with pytest.raises(ValueError, match="'epsilons' parameter"):
        compose([1.0, -2.0], [0.0, 0.0], **extra)
    with pytest.raises(ValueError, match="'deltas' parameter"):
        compose([1.0, 2.0], [0.0, 2.0], **extra)
