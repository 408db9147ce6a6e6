"""A shared accountant and parallel scikit-learn: threads share it, other processes get a clear refusal.

``GridSearchCV(n_jobs=2)`` with joblib's default (process) backend pickles the facade for each worker. An
accountant cannot cross processes (a copy would spend the budget again), and joblib turned its refusal to be
pickled into an opaque ``PicklingError: Could not pickle the task``. A facade is now pickled with a stand-in that
refuses in the worker, before any charge, where joblib and scikit-learn report the reason and the fix.
"""

from __future__ import annotations

import copy
import pickle

import joblib
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.accounting import DetachedAccountant
from diffpriv_py.exceptions import AccountantProcessError

pytest.importorskip("sklearn", reason="needs the sklearn extra")
from sklearn.model_selection import GridSearchCV

import diffpriv_py.sklearn as dps

FIX = ("n_jobs=1", 'joblib.parallel_backend("threading")')


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (120, 3))
    return X, (X[:, 0] > 0).astype(int)


def _search(acc, **kwargs):
    est = dps.LogisticRegression(epsilon=0.5, data_norm=2.0, classes=[0, 1], accountant=acc, rng=0)
    return GridSearchCV(est, {"reg_lambda": [0.1, 1.0]}, cv=2, n_jobs=2, **kwargs)


@pytest.mark.slow
def test_grid_search_in_processes_says_why_and_charges_nothing():
    """Default backend (processes): the user sees the reason and both fixes, not joblib's PicklingError."""
    acc = dp.Accountant(dp.Eps(10.0))
    X, y = _data()
    with pytest.raises(ValueError, match="All the 4 fits failed") as info:
        _search(acc).fit(X, y)
    message = str(info.value)
    assert "AccountantProcessError" in message and "another process" in message
    assert all(fix in message for fix in FIX), message
    assert acc.ledger == ()  # the copies charged nothing, the original was never asked


@pytest.mark.slow
def test_grid_search_in_processes_with_error_score_raise_raises_the_error_itself():
    acc = dp.Accountant(dp.Eps(10.0))
    X, y = _data()
    with pytest.raises(AccountantProcessError, match="n_jobs=1") as info:
        _search(acc, error_score="raise").fit(X, y)
    assert 'joblib.parallel_backend("threading")' in str(info.value)
    assert acc.ledger == ()


def test_grid_search_in_threads_shares_the_one_accountant():
    """The documented fix works: 2 settings x 2 folds + the refit = 5 charges of ε = 0.5 on the one ledger."""
    acc = dp.Accountant(dp.Eps(10.0))
    X, y = _data()
    with joblib.parallel_backend("threading"):
        search = _search(acc).fit(X, y)
    assert len(acc.ledger) == 5 and acc.spent.epsilon == pytest.approx(2.5)
    assert search.best_estimator_.accountant is acc


FACADES = [
    lambda acc: dps.PCA(2, epsilon=1.0, data_norm=10.0, rng=0, accountant=acc),
    lambda acc: dps.LogisticRegression(epsilon=5.0, data_norm=10.0, classes=[0, 1], rng=0, accountant=acc),
    lambda acc: dps.SVM(epsilon=5.0, data_norm=10.0, classes=[0, 1], rng=0, accountant=acc),
    lambda acc: dps.KMeans(3, epsilon=1.0, bounds=(-10, 10), rng=0, accountant=acc),
    lambda acc: dps.LinearRegression(epsilon=1.0, delta=1e-5, data_norm=10.0, label_bound=10.0, rng=0, accountant=acc),
    lambda acc: dps.DPSGDClassifier((), epsilon=5.0, delta=1e-5, classes=[0, 1], rng=0, accountant=acc),
]


@pytest.mark.parametrize(
    "make", FACADES, ids=["PCA", "LogisticRegression", "SVM", "KMeans", "LinearRegression", "DPSGD"]
)
def test_a_pickled_facade_keeps_its_model_but_cannot_charge(make):
    """A fitted facade saved to a file (or sent to a worker) predicts as before; its fit refuses before the charge
    until it is given an accountant of its process; the original keeps its accountant."""
    acc = dp.Accountant(dp.Del(100.0, 1e-3))
    X, y = _data()
    fitted = make(acc).fit(X, y)
    charges = len(acc.ledger)
    copy_ = pickle.loads(pickle.dumps(fitted))
    assert fitted.accountant is acc and isinstance(copy_.accountant, DetachedAccountant)
    for method in ("predict", "transform"):
        if hasattr(fitted, method):
            np.testing.assert_array_equal(getattr(copy_, method)(X), getattr(fitted, method)(X))
    with pytest.raises(AccountantProcessError, match="set_params"):
        copy_.fit(X, y)
    assert len(acc.ledger) == charges
    other = dp.Accountant(dp.Del(100.0, 1e-3))
    copy_.set_params(accountant=other).fit(X, y)
    assert len(other.ledger) == 1 and len(acc.ledger) == charges


def test_an_accountant_itself_is_never_pickled_and_says_why():
    acc = dp.Accountant(dp.Eps(1.0))
    with pytest.raises(TypeError, match="cannot be pickled") as info:
        pickle.dumps(acc)
    assert all(fix in str(info.value) for fix in FIX)


def test_the_stand_in_refuses_reports_and_charges_but_copies_freely():
    """It holds no budget: every use refuses (so a release through it fails before anything is computed)."""
    stand_in = DetachedAccountant("LogisticRegression", "Eps(epsilon=1.0)")
    uses = (
        lambda: stand_in.spend(dp.Eps(0.1)),
        lambda: stand_in.check(dp.Eps(0.1)),
        lambda: stand_in.spent,
        lambda: stand_in.remaining_per_release(2),
        lambda: stand_in.summary(),
        lambda: stand_in.scope("x"),
    )
    for use in uses:
        with pytest.raises(AccountantProcessError, match="LogisticRegression"):
            use()
    assert not hasattr(stand_in, "get_params")  # an ordinary missing attribute (scikit-learn probes parameters so)
    assert isinstance(copy.deepcopy(stand_in), DetachedAccountant)
    assert isinstance(pickle.loads(pickle.dumps(stand_in)), DetachedAccountant)
    x = np.linspace(0, 1, 10)
    with pytest.raises(AccountantProcessError):
        dp.stats.mean(x, dp.Eps(1.0), bounds=(0, 1), accountant=stand_in)
