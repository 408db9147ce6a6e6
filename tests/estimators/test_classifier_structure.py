"""A classifier's structure never depends on private labels: the attack of replacing the only record of a class.

Replace the only record of class 2 in a three-class problem, or the only record of one class in a two-class problem:
with a declared ``classes=`` the model's shape, classes, budget split and success are identical on both neighbours;
without it the release is refused before any charge on both; ``classes="observed"`` is the user's declaration,
recorded in the Response.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.estimators import SVM, DPSGDClassifier, LogisticRegression, _erm


def _pair(n_classes: int, n: int = 60, seed: int = 0):
    """(X, y) where record 0 is the only one of class n_classes − 1, and its neighbour where it is class 0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 3.0
    y = np.arange(n) % (n_classes - 1)
    y[0] = n_classes - 1
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = -X[0], 0
    return (X, y), (X2, y2)


def _estimators(classes):
    return [
        LogisticRegression(0.1, perturbation="objective", data_norm=1.0, classes=classes),
        LogisticRegression("auto", perturbation="output", data_norm=1.0, classes=classes),
        LogisticRegression((0.01, 0.1), data_norm=1.0, classes=classes),
        SVM(0.1, perturbation="objective", data_norm=1.0, classes=classes),
        SVM("auto", perturbation="output", data_norm=1.0, classes=classes),
        DPSGDClassifier(hidden_layer_sizes=(4,), sampling_rate=0.2, epochs=1, classes=classes),
    ]


def _params(mech):
    return dp.Del(1.0, 1e-5) if isinstance(mech, DPSGDClassifier) else dp.Eps(1.0)


def _structure(response):
    model = response.response
    shapes = [w.shape for w in model.weights] if hasattr(model, "weights") else [model.coef.shape]
    return shapes, model.classes.tolist(), getattr(model, "reg_lambda", None), response.assumptions


@pytest.mark.parametrize("n_classes", [3, 2], ids=["only-record-of-class-2-of-3", "only-record-of-a-class-of-2"])
@pytest.mark.parametrize("index", range(6))
def test_with_declared_classes_both_neighbours_give_the_same_structure(n_classes, index):
    """Shapes, classes, the Λ of the budget split and success are identical whichever neighbour is released."""
    classes = list(range(n_classes))
    mech = _estimators(classes)[index]
    D, D2 = _pair(n_classes)
    results = []
    for data in (D, D2):
        acc = dp.Accountant(budget=dp.Del(10.0, 1e-3))
        results.append(_structure(mech.release_response(_params(mech), data, rng=1, accountant=acc)))
        assert len(acc.ledger) == 1
    assert results[0] == results[1]
    shapes, labels, _, assumptions = results[0]
    assert labels == classes and assumptions == ()
    if not isinstance(mech, DPSGDClassifier):
        assert shapes == [(1 if n_classes == 2 else n_classes, 3)]
    else:
        assert shapes[-1] == (4, n_classes)


def test_the_per_class_budget_split_depends_on_classes_only():
    """reg_lambda="auto" is computed at ε/K, K = len(classes), on both neighbours, though one holds only 2 labels."""
    mech = LogisticRegression(data_norm=1.0, classes=[0, 1, 2])
    D, D2 = _pair(3)
    regs = {mech.release_response(dp.Eps(1.5), data, rng=0).response.reg_lambda for data in (D, D2)}
    assert regs == {_erm.default_reg_lambda(60, 4, 0.5, 0.25)}


@pytest.mark.parametrize("n_classes", [3, 2])
@pytest.mark.parametrize("index", range(6))
def test_without_classes_the_release_is_refused_before_any_charge(n_classes, index):
    """classes=None never reads the label set from y: both neighbours are refused, and nothing is spent."""
    mech = _estimators(None)[index]
    for data in _pair(n_classes):
        acc = dp.Accountant(budget=dp.Del(10.0, 1e-3))
        spent = acc.spent
        with pytest.raises(ValueError, match=r"classes=\[\.\.\.\] with every possible label.*classes='observed'"):
            mech.release_response(_params(mech), data, rng=1, accountant=acc)
        assert acc.spent == spent and len(acc.ledger) == 0


@pytest.mark.parametrize("index", range(6))
def test_observed_classes_are_the_users_declaration_and_the_response_records_it(index):
    """classes="observed" reads the label set from y, as declared, and every release says so in its assumptions."""
    mech = _estimators("observed")[index]
    D, D2 = _pair(3)
    first, second = (mech.release_response(_params(mech), data, rng=1) for data in (D, D2))
    assert first.response.classes.tolist() == [0, 1, 2] and second.response.classes.tolist() == [0, 1]
    for response in (first, second):
        assert len(response.assumptions) == 1 and "classes='observed'" in response.assumptions[0]
        assert "assumptions=" in repr(response)


@pytest.mark.parametrize("index", range(6))
def test_a_record_outside_the_declared_classes_neither_fails_nor_changes_the_structure(index):
    """Replacing a record by one with a label nobody declared (NaN or an unknown value) keeps the release's structure
    and success: its neighbour without it is released alike."""
    mech = _estimators([0, 1])[index]
    (X, y), _ = _pair(2)
    structures = set()
    for odd in (0, np.nan, 7, "?"):
        labels = y.astype(object)
        labels[0] = odd
        response = mech.release_response(_params(mech), (X, labels), rng=1)
        shapes, classes, _, assumptions = _structure(response)
        structures.add((repr(shapes), tuple(classes), assumptions))
    assert len(structures) == 1


def test_classes_must_be_a_label_list_or_observed():
    """Other strings, one label, repeated labels and NaN labels are refused at construction with the rule."""
    for bad in ("all", [1], [1, 1], [0.0, float("nan")]):
        with pytest.raises(ValueError, match="classes"):
            LogisticRegression(0.1, data_norm=1.0, classes=bad)
        with pytest.raises(ValueError, match="classes"):
            DPSGDClassifier(classes=bad)
