"""Optional dependencies: every entry point that needs an extra says which one, before any budget is charged.

Each test runs a short script in a fresh interpreter in which the extra's packages cannot be imported (a meta-path
finder refuses them before diffpriv_py is imported), as after ``pip install diffpriv-py`` without that extra.
"""

from __future__ import annotations

import importlib.abc
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_BLOCK = """
import importlib.abc, sys

class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

BLOCKED = set(sys.argv[1].split(","))
for _name in [m for m in sys.modules if m.partition(".")[0] in BLOCKED]:
    del sys.modules[_name]
sys.meta_path.insert(0, _Blocked())

import numpy as np
import diffpriv_py as dp

def expect_missing(extra, call):
    from diffpriv_py._extras import MissingExtraError
    try:
        call()
    except MissingExtraError as err:
        message = str(err)
        assert isinstance(err, ModuleNotFoundError), type(err)
        assert f'pip install "diffpriv-py[{extra}]"' in message, message
        assert f'pip install ".[{extra}]"' in message, message
        print("MESSAGE:", message)
    else:
        raise AssertionError("no MissingExtraError")
"""


def _run(blocked: str, body: str) -> str:
    script = _BLOCK + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", script, blocked], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_groupby_without_pandas_names_the_extra_and_charges_nothing():
    """The regression: dp.stats.groupby charged ε = 1, then failed to build its DataFrame."""
    out = _run(
        "pandas",
        """
        acc = dp.Accountant(dp.Del(10.0, 1e-5))
        by = np.array(["a"] * 50 + ["b"] * 50)
        expect_missing("pandas", lambda: dp.stats.groupby(by, dp.Del(1.0, 1e-6), accountant=acc, rng=0))
        assert acc.ledger == () and acc.spent.epsilon == 0, acc.ledger
        """,
    )
    assert "dp.stats.groupby" in out and "pandas" in out


def test_groupby_result_to_frame_without_pandas_names_the_extra():
    """The mechanism itself needs no pandas; only its table does."""
    _run(
        "pandas",
        """
        from diffpriv_py.stats import GroupBy
        result = GroupBy(keys=["a", "b"]).release_response(dp.Eps(1.0), np.array(["a", "b", "a"]), rng=0).response
        assert list(result.keys) == ["a", "b"]
        # With people to bound (the kernel hashes pairs with pandas when it has it): no failure after the charge.
        acc = dp.Accountant(dp.Eps(10.0))
        by, unit = np.array(["a", "b", "c"] * 40), np.repeat(np.arange(40), 3)
        bounded = GroupBy(max_groups=2, keys=["a", "b", "c"]).release_response(
            dp.Eps(1.0), (by, None, unit), rng=0, accountant=acc
        ).response
        assert list(bounded.keys) == ["a", "b", "c"] and len(acc.ledger) == 1
        expect_missing("pandas", lambda: result.to_frame())
        """,
    )


def test_pandas_accessor_without_pandas_names_the_extra():
    _run("pandas", "expect_missing('pandas', lambda: __import__('diffpriv_py.pandas'))")


def test_sklearn_facades_without_scikit_learn_name_the_extra():
    """`import diffpriv_py.sklearn` failed with a bare ModuleNotFoundError for sklearn."""
    out = _run("sklearn", "expect_missing('sklearn', lambda: __import__('diffpriv_py.sklearn'))")
    assert "scikit-learn" in out


def test_bundled_datasets_without_their_extra_name_it():
    _run(
        "sklearn,pandas",
        """
        from diffpriv_py import datasets
        expect_missing("sklearn", lambda: datasets.load_dataset("iris"))
        expect_missing("pandas", lambda: datasets.load_adult(as_frame=True))
        assert datasets.load_dataset("adult").n_records > 0  # the core loader needs neither
        """,
    )


def test_evaluate_models_without_scikit_learn_name_the_extra():
    _run(
        "sklearn,matplotlib",
        """
        from diffpriv_py import evaluation
        expect_missing("sklearn", lambda: evaluation.resolve_models(["knn"], "laplace", "classification"))
        try:
            evaluation.resolve_models(None, "laplace", "classification")
        except ValueError as err:
            assert 'pip install "diffpriv-py[sklearn]"' in str(err), err
        else:
            raise AssertionError("no error")
        """,
    )


def test_evaluate_plot_without_matplotlib_names_the_extra(tmp_path):
    """Plots are drawn after the study: the command line checks for matplotlib before it starts the study."""
    pytest.importorskip("sklearn")  # only matplotlib is missing here: the study itself needs scikit-learn
    _run(
        "matplotlib",
        f"""
        import io, contextlib
        from diffpriv_py.cli import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
            status = main(["evaluate", "--dataset", "iris", "--repeats", "1", "-o", {str(tmp_path)!r}])
        assert status == 2, (status, err.getvalue())
        assert 'pip install "diffpriv-py[plot]"' in err.getvalue() and "--no-plot" in err.getvalue(), err.getvalue()
        assert "Evaluating" not in out.getvalue(), out.getvalue()  # refused before the study started
        """,
    )


def test_testing_kit_without_the_test_extra_names_it():
    _run(
        "hypothesis,pytest",
        """
        from diffpriv_py import testing
        expect_missing("test", lambda: __import__("diffpriv_py.testing.strategies"))
        expect_missing("test", lambda: testing.parametrize_with_checks([]))
        """,
    )


def test_the_core_works_without_any_extra():
    """`pip install diffpriv-py` alone: the mechanisms, statistics, accounting and the group-by mechanism."""
    _run(
        "pandas,sklearn,matplotlib,dask,distributed,hypothesis,pytest",
        """
        acc = dp.Accountant(dp.Eps(2.0))
        x = np.linspace(0, 1, 100)
        dp.stats.mean(x, dp.Eps(1.0), bounds=(0, 1), accountant=acc, rng=0)
        dp.Laplace(target=np.mean, sensitivity=0.01).release_response(dp.Eps(1.0), x, rng=0, accountant=acc)
        assert len(acc.ledger) == 2
        import diffpriv_py.estimators, diffpriv_py.testing, diffpriv_py.cli
        """,
    )


def test_a_broken_installation_is_not_reported_as_a_missing_extra(monkeypatch):
    """Only a missing package names the extra; an ImportError raised inside an installed package propagates."""
    from diffpriv_py._extras import MissingExtraError, require

    class Broken(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "pandas":
                raise ModuleNotFoundError("No module named 'pytz'", name="pytz")
            return None

    for name in [m for m in sys.modules if m == "pandas" or m.startswith("pandas.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])
    with pytest.raises(ModuleNotFoundError, match="pytz") as info:
        require("pandas", feature="x")
    assert not isinstance(info.value, MissingExtraError)


@pytest.mark.parametrize(
    ("blocked", "expected"),
    [
        ("sklearn,matplotlib", 'needs the sklearn and plot extras first: pip install "diffpriv-py[sklearn,plot]"'),
        ("sklearn", 'needs the sklearn extra first: pip install "diffpriv-py[sklearn]"'),
        ("matplotlib", 'evaluate --help\' (its plots need the plot extra: pip install "diffpriv-py[plot]"'),
        ("dask", "Next: 'diffpriv-py evaluate --help' and 'diffpriv-py audit --help'."),
    ],
)
def test_the_demo_names_the_extra_its_next_step_needs(blocked, expected):
    """`pip install . && diffpriv-py demo` ended with 'Next: diffpriv-py evaluate --help', which needs extras."""
    for module in {"sklearn", "matplotlib"} - set(blocked.split(",")):
        pytest.importorskip(module)  # each case blocks some extras and expects the others installed
    out = _run(
        blocked,
        """
        from diffpriv_py.cli import main
        assert main(["demo", "--seed", "1", "--steps", "mean"]) == 0
        """,
    )
    last = out.strip().splitlines()[-1]
    assert expected in last, last
    if "sklearn" in blocked:
        assert "Next: 'diffpriv-py audit --help';" in last, last  # evaluate is not offered as a next step
