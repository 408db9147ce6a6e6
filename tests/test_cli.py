"""The diffpriv-py command line: the demo, --help everywhere, and one-line errors with a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from diffpriv_py.cli import build_parser, main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run argv expecting an error; return the single stderr line after checking the exit status and no traceback."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    assert status == 2, (status, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.slow
def test_demo_prints_private_next_to_non_private_answers(capsys):
    """The whole demo succeeds and prints one row per example: the R vignettes, DP PCA and DP logistic regression."""
    assert main(["demo", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "Non-private" in out and "Private" in out
    for row in (
        "Mean of 100 values",
        "Top letter in 10 names",
        "Kernel regression",
        "PCA of UCI Adult",
        "Logistic regression",
    ):
        assert row in out
    assert "γ=0.1" in out or "gamma=0.1" in out
    assert "skipped" not in out and "failed" not in out


def test_demo_with_a_seed_is_reproducible(capsys):
    """Two demo runs with the same --seed print the same table."""
    main(["demo", "--seed", "11", "--steps", "mean,letter"])
    first = capsys.readouterr().out
    main(["demo", "--seed", "11", "--steps", "mean,letter"])
    second = capsys.readouterr().out
    assert "Top letter" in first
    strip = [line for line in first.splitlines() if not line.startswith("Done in")]
    assert strip == [line for line in second.splitlines() if not line.startswith("Done in")]


def test_a_failing_demo_step_is_reported_and_the_rest_still_runs(capsys, monkeypatch):
    """If one example breaks, the demo prints the others, names the failure in one line, and exits 2."""
    from diffpriv_py import cli

    def broken(seed):
        raise RuntimeError("boom")

    monkeypatch.setitem(cli.DEMO_STEPS, "letter", ("a broken step", broken))
    assert main(["demo", "--seed", "1", "--steps", "mean,letter"]) == 2
    out = capsys.readouterr().out
    assert "Mean of 100 values" in out and "failed 'a broken step': RuntimeError: boom" in out


def test_no_command_prints_the_help(capsys):
    """Running without a command shows the list of commands instead of failing."""
    assert main([]) == 0
    assert "demo" in capsys.readouterr().out


@pytest.mark.parametrize("command", [None, *_commands()])
def test_every_command_has_help(command, capsys):
    """--help works on the program and on every command, and exits 0."""
    argv = ["--help"] if command is None else [command, "--help"]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_an_unknown_command_is_one_line_and_exit_2(capsys):
    """A typo in the command name gives one clear line, not a usage dump or a traceback."""
    assert "invalid choice" in _one_line_error(capsys, ["demoo"])


def test_an_unknown_demo_step_is_one_line_and_exit_2(capsys):
    """--steps names must be known demo examples."""
    assert "unknown demo step" in _one_line_error(capsys, ["demo", "--steps", "mean,nope"])


def test_a_negative_seed_is_one_line_and_exit_2(capsys):
    """--seed must be a non-negative integer."""
    assert "--seed" in _one_line_error(capsys, ["demo", "--seed", "-3"])


@pytest.mark.slow
def test_python_dash_m_runs_the_same_command_line():
    """``python -m diffpriv_py`` is the same program as the diffpriv-py entry point."""
    done = subprocess.run(
        [sys.executable, "-m", "diffpriv_py", "demo", "--seed", "1", "--steps", "letter"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Top letter in 10 names" in done.stdout


# ---- evaluate ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_evaluate_writes_csvs_and_plots_and_prints_the_table(tmp_path, capsys):
    """A small sweep on a bundled dataset writes the raw and summary CSVs, one PNG per metric, and a table."""
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    argv = ["evaluate", "--dataset", "iris", "--privatisation", "laplace", "--epsilons", "1,inf", "--repeats", "2"]
    assert main([*argv, "--models", "knn,linear", "--seed", "3", "--output", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "accuracy on the test split" in out and "knn" in out and "linear" in out
    # iris has no public feature bounds: the run says plainly that it is not private and never labels it with ε.
    assert "NOT PRIVATE" in out and "noise level" in out
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == [
        "iris_laplace_accuracy.png",
        "iris_laplace_f1.png",
        "iris_laplace_results.csv",
        "iris_laplace_summary.csv",
    ]
    summary = (tmp_path / "iris_laplace_summary.csv").read_text().splitlines()
    assert summary[0] == "dataset,privatisation,model,private,noise_epsilon,metric,mean,sd,n"
    assert len(summary) == 1 + 3 * 2 * 2  # (models + the majority class) x epsilons x metrics
    assert any(",inf," in line for line in summary)


@pytest.mark.slow
def test_evaluate_on_public_bounds_reports_a_per_record_epsilon(tmp_path, capsys):
    """digits has public pixel bounds: the features are scaled with them, ε is per record and the files say ε."""
    pytest.importorskip("sklearn")
    argv = ["evaluate", "--dataset", "digits", "--privatisation", "laplace", "--epsilons", "50,inf", "--repeats", "1"]
    argv += ["--models", "knn", "--seed", "1", "--no-plot", "--max-records", "300", "-o", str(tmp_path)]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Private:" in out and "NOT PRIVATE" not in out
    assert "Why the models sit at the majority class" in out  # per-record input perturbation explains itself
    header = (tmp_path / "digits_laplace_summary.csv").read_text().splitlines()[0]
    assert header == "dataset,privatisation,model,private,epsilon,metric,mean,sd,n"


@pytest.mark.slow
def test_evaluate_labels_privacy_per_model_row(tmp_path, capsys):
    """A non-private model (dp-pca-svm) gets NOT PRIVATE on its own row; dp-logreg's row stays private."""
    pytest.importorskip("sklearn")
    argv = ["evaluate", "--dataset", "digits", "--models", "dp-logreg,dp-pca-svm", "--epsilons", "5,inf"]
    argv += ["--repeats", "1", "--max-records", "300", "--seed", "0", "--no-plot", "-o", str(tmp_path)]
    assert main([*argv, "--no-progress", "--n-jobs", "1"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith(("dp-", "maj"))}
    assert rows["dp-logreg"].split()[1] == "yes"
    assert rows["dp-pca-svm"].split()[1:3] == ["NOT", "PRIVATE"]
    assert rows["majority"].split()[1] == "constant"


@pytest.mark.slow
def test_evaluate_shows_progress_on_stderr_in_a_pipe(tmp_path):
    """With stdout and stderr both pipes (no terminal), the bar still goes to stderr and stdout keeps the table."""
    pytest.importorskip("sklearn")
    argv = [sys.executable, "-m", "diffpriv_py", "evaluate", "--dataset", "iris", "--privatisation", "laplace"]
    argv += ["--models", "knn", "--epsilons", "1,inf", "--repeats", "1", "--no-plot", "--n-jobs", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [*argv, "--seed", "0", "-o", str(tmp_path)], capture_output=True, text=True, timeout=120, env=env, check=True
    )
    assert "evaluate iris" in done.stderr and "2/2" in done.stderr
    assert "evaluate iris" not in done.stdout and "accuracy on the test split" in done.stdout


@pytest.mark.slow
def test_evaluate_runs_on_a_user_csv_regression_with_gaussian_noise(tmp_path, capsys):
    """A user CSV with a continuous target gives an RMSE sweep; Gaussian input perturbation works."""
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    x = rng.random((60, 2))
    y = x @ [2.0, -1.0] + rng.normal(0, 0.1, 60)
    path = tmp_path / "mine.csv"
    path.write_text("a,b,y\n" + "".join(f"{a},{b},{t}\n" for (a, b), t in zip(x, y, strict=True)))
    argv = ["evaluate", "--csv", str(path), "--target", "y", "--privatisation", "gaussian", "--epsilons", "2,inf"]
    argv += ["--models", "linear", "--repeats", "1", "--cv", "3", "--no-plot", "--seed", "1", "-o", str(tmp_path)]
    assert main(argv) == 0
    assert "rmse on the test split" in capsys.readouterr().out
    assert (tmp_path / "mine_gaussian_summary.csv").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["evaluate", "--epsilons", "0,1"], "epsilon must be > 0"),
        (["evaluate", "--epsilons", "-1"], "epsilon must be > 0"),
        (["evaluate", "--epsilons", "nan"], "epsilon must be > 0"),
        (["evaluate", "--dataset", "mnist"], "Unknown dataset 'mnist'"),
        (["evaluate", "--csv", "/no/such/file.csv", "--target", "y"], "No such CSV file"),
        (["evaluate", "--csv", "x.csv"], "--csv needs --target"),
        (["evaluate", "--models", "xgboost"], "Unknown model 'xgboost'"),
        (["evaluate", "--repeats", "0"], "--repeats must be an integer >= 1"),
        (["evaluate", "--delta", "1.5"], "--delta must be > 0 and < 1"),
        (["audit", "no_such_mechanism"], "unknown mechanism"),
        (["audit", "no_such_module_xyz:mech"], "cannot import"),
        (["audit", "--epsilon", "0", "laplace"], "--epsilon must be > 0"),
    ],
)
def test_user_errors_are_one_line_with_exit_status_2(argv, expected, capsys):
    """Bad paths, unknown names and invalid values give one clear line on stderr and exit 2, never a traceback."""
    if argv[0] == "evaluate" and "--models" in argv:
        pytest.importorskip("sklearn")
    assert expected in _one_line_error(capsys, argv)


def test_a_malformed_csv_is_one_line_with_exit_status_2(tmp_path, capsys):
    """A CSV file whose rows do not match the header is reported as malformed."""
    path = tmp_path / "broken.csv"
    path.write_text("a,b,y\n1,2,3\n4,5,6,7,8\n")
    assert "Malformed CSV" in _one_line_error(capsys, ["evaluate", "--csv", str(path), "--target", "y"])


def test_a_binary_file_as_csv_is_one_line_with_exit_status_2(tmp_path, capsys):
    """A file that is not text is reported as malformed, not as a decoding traceback."""
    path = tmp_path / "image.csv"
    path.write_bytes(bytes(range(256)) * 4)
    assert "Malformed CSV" in _one_line_error(capsys, ["evaluate", "--csv", str(path), "--target", "y"])


def test_audit_list_names_the_built_in_mechanisms(capsys):
    """audit --list shows the built-in mechanisms, including the deliberately broken one."""
    assert main(["audit", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("laplace", "gaussian", "exponential", "broken-laplace"):
        assert name in out


# ---- audit ------------------------------------------------------------------------------------------------------

USER_MODULE = """
import numpy as np
import diffpriv_py as dp

mechanism = dp.Laplace(target=np.sum, sensitivity=1.0, dims=1)
too_little_noise = dp.Laplace(target=np.sum, sensitivity=0.25, dims=1)


def audit_case():
    X = np.zeros(10)
    X_neighbour = X.copy()
    X_neighbour[-1] = 1.0
    return {"mechanism": mechanism, "X": X, "X_neighbour": X_neighbour, "privacy_params": dp.Eps(1.0)}


not_a_mechanism = 42
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A user's mechanism file in the current directory."""
    (tmp_path / "my_mechanism.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "my_mechanism", raising=False)
    yield tmp_path / "my_mechanism.py"
    sys.modules.pop("my_mechanism", None)


def _audit(capsys, argv):
    status = main(["audit", *argv, "--seed", "5"])
    return status, capsys.readouterr().out


@pytest.mark.slow
def test_audit_of_a_correct_built_in_mechanism_passes(capsys):
    """A correctly calibrated built-in mechanism is not refuted: exit 0 and a report with the lower bound."""
    status, out = _audit(capsys, ["laplace"])
    assert status == 0, out
    assert "lower bound" in out and "claim not refuted" in out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["broken-laplace", "float-laplace"])
def test_audit_refutes_the_deliberately_broken_built_ins(name, capsys):
    """Half the noise, or textbook float noise, is refuted: exit 1 and a REFUTED verdict."""
    status, out = _audit(capsys, [name])
    assert status == 1, out
    assert "REFUTED" in out


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["my_mechanism:audit_case", "my_mechanism.py:audit_case", "my_mechanism:mechanism"])
def test_audit_loads_a_users_mechanism_from_module_object(spec, user_module, capsys):
    """MODULE:OBJECT works with a module name or a .py path, and with an audit-case function or a bare mechanism."""
    status, out = _audit(capsys, [spec])
    assert status == 0, out
    assert f"({spec})" in out


@pytest.mark.slow
def test_audit_refutes_a_users_undercalibrated_mechanism(user_module, capsys):
    """A user's mechanism with a quarter of the sensitivity it needs is refuted."""
    status, out = _audit(capsys, ["my_mechanism:too_little_noise"])
    assert status == 1 and "REFUTED" in out


@pytest.mark.slow
def test_audit_accepts_a_conformance_kit_case(capsys, monkeypatch, tmp_path):
    """A testing.MechCase (mechanism, privacy_params, dataset, neighbour) can be audited directly."""
    testing = pytest.importorskip("diffpriv_py.testing")
    (tmp_path / "cases.py").write_text("from diffpriv_py.testing import EXAMPLE_CASES\nfirst = EXAMPLE_CASES[0]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "cases", raising=False)
    assert testing.EXAMPLE_CASES
    status, out = _audit(capsys, ["cases:first"])
    assert status == 0, out


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("my_mechanism:nope", "has no object 'nope'"),
        ("my_mechanism:not_a_mechanism", "cannot audit a int"),
        ("missing_file.py:x", "no such file"),
        ("my_mechanism:", "MODULE:OBJECT"),
    ],
)
def test_audit_errors_on_user_objects_are_one_line(spec, expected, user_module, capsys):
    """A missing object, a non-mechanism or a missing file gives one line and exit 2."""
    assert expected in _one_line_error(capsys, ["audit", spec])


def test_evaluate_without_scikit_learn_says_what_to_install(capsys, monkeypatch):
    """Without the optional scikit-learn, evaluate fails in one line that names the extra to install."""
    for name in [m for m in sys.modules if m == "sklearn" or m.startswith("sklearn.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sklearn", None)  # makes "import sklearn" raise ImportError
    line = _one_line_error(capsys, ["evaluate", "--dataset", "adult"])
    assert "scikit-learn" in line and "diffpriv-py[sklearn]" in line


def test_audit_of_a_module_that_calls_sys_exit_is_an_error_naming_the_module(tmp_path, capsys):
    """A script's own sys.exit(0) must not end the audit silently with the script's exit code."""
    script = tmp_path / "exiting.py"
    script.write_text("import sys\nsys.exit(0)\n")
    assert main(["audit", f"{script}:mech"]) == 2
    err = capsys.readouterr().err
    assert "exiting.py" in err and "sys.exit(0)" in err


def test_audit_reports_an_exception_in_the_user_s_target_as_theirs(tmp_path, capsys):
    """An error raised by the user's own target names their file and line, not an 'internal error'."""
    script = tmp_path / "broken.py"
    script.write_text(
        "import diffpriv_py as dp\n\ndef boom(X):\n    raise RuntimeError('my target broke')\n\n"
        "mech = dp.Laplace(target=boom, sensitivity=1.0)\n"
    )
    assert main(["audit", f"{script}:mech", "--samples", "1000", "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "my target broke" in err and "broken.py:4" in err and "internal error" not in err


def test_audit_refuses_a_sample_count_no_machine_can_hold(capsys):
    """--samples 10**12 is refused by the parser instead of hanging."""
    with pytest.raises(SystemExit) as exc:
        main(["audit", "laplace", "--samples", str(10**12)])
    assert exc.value.code == 2 and "at most" in capsys.readouterr().err


# ---- audit --search -----------------------------------------------------------------------------------------------

TRIMMED_MEAN_MODULE = """
import numpy as np
from scipy import stats
import diffpriv_py as dp


def trimmed_mean(X):
    return stats.trim_mean(np.clip(X, 0.0, 1.0), 0.1)  # of 10 records: drops the lowest and the highest


# Replacing one record in [0, 1] moves the mean of the 8 kept ones by up to 1/8.
too_small = dp.Laplace(target=trimmed_mean, sensitivity=1 / 80)  # 10x too small
correct = dp.Laplace(target=trimmed_mean, sensitivity=1 / 8)
"""


@pytest.fixture
def trimmed_module(tmp_path, monkeypatch):
    (tmp_path / "trimmed.py").write_text(TRIMMED_MEAN_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "trimmed", raising=False)
    yield tmp_path / "trimmed.py"
    sys.modules.pop("trimmed", None)


@pytest.mark.slow
def test_audit_search_refutes_a_sensitivity_the_pair_audit_misses(trimmed_module, capsys):
    """The default pair 0,…,0 vs 0,…,0,1 is trimmed away, so the pair audit passes a sensitivity 10x too small;
    --search finds a pair that moves the kept records and refutes it, printing that pair and its ε bound."""
    status, out = _audit(capsys, ["trimmed:too_small"])
    assert status == 0 and "claim not refuted" in out, out
    status, out = _audit(capsys, ["trimmed:too_small", "--search", "--time-budget", "10"])
    assert status == 1, out
    assert "REFUTED" in out and "worst pair" in out and "record" in out, out
    bound = float(next(line for line in out.splitlines() if "lower bound" in line).split()[-1])  # ε comes first
    assert bound > 1.0, out


@pytest.mark.slow
def test_audit_search_passes_the_correct_sensitivity(trimmed_module, capsys):
    """No false alarm: the same trimmed mean with its true sensitivity 1/8 is not refuted by the search."""
    status, out = _audit(capsys, ["trimmed:correct", "--search", "--time-budget", "10"])
    assert status == 0, out
    assert "claim not refuted" in out and "worst pair" in out


@pytest.mark.slow
def test_audit_search_on_the_built_ins_uses_their_domain(capsys):
    """The built-ins' targets assume records in [0, 1] (np.mean does not clip): the search replaces records by 0 and
    1 there, so the correct one passes and the broken one is refuted."""
    assert _audit(capsys, ["laplace", "--search", "--time-budget", "5"])[0] == 0
    status, out = _audit(capsys, ["broken-laplace", "--search", "--time-budget", "5"])
    assert status == 1 and "REFUTED" in out, out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["laplace", "--time-budget", "5"], "add --search"),
        (["laplace", "--replacements", "0,1"], "add --search"),
        (["laplace", "--search", "--samples", "1000"], "--time-budget"),
        (["laplace", "--search", "--time-budget", "0"], "--time-budget must be > 0"),
        (["laplace", "--search", "--replacements", "a,b"], "comma-separated numbers"),
    ],
)
def test_audit_search_options_are_checked_in_one_line(argv, expected, capsys):
    assert expected in _one_line_error(capsys, ["audit", *argv])
