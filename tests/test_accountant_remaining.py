"""acc.remaining is a value of the budget's own class that can also be called; its copies are the plain value."""

from __future__ import annotations

import copy
import pickle

import pytest

import diffpriv_py as dp


@pytest.mark.parametrize(
    ("budget", "left"),
    [
        (dp.Eps(1.0), dp.Eps(0.75)),
        (dp.Del(1.0, 1e-6), dp.Del(0.75, 1e-6)),
        (dp.Gam(1.0, 1e-6, 0.1), dp.Gam(0.75, 1e-6, 0.1)),
    ],
)
def test_remaining_is_the_plain_value_of_the_budgets_class_and_callable(budget, left):
    acc = dp.Accountant(budget=budget)
    acc.spend(dp.Eps(0.25))
    remaining = acc.remaining
    assert remaining == left and left == remaining and hash(remaining) == hash(left)
    assert repr(remaining) == repr(left) and str(remaining) == str(left)
    assert isinstance(remaining, type(budget))
    assert isinstance(remaining, dp.Gam) == isinstance(budget, dp.Gam)
    assert remaining(2) == acc.remaining_per_release(2)
    for twin in (copy.copy(remaining), copy.deepcopy(remaining), pickle.loads(pickle.dumps(remaining))):
        assert type(twin) is type(left) and twin == left  # a copy does not carry the accountant with it


def test_nothing_left_is_reported_as_epsilon_zero():
    acc = dp.Accountant(budget=dp.Eps(1.0))
    acc.spend(dp.Eps(1.0))
    assert repr(acc.remaining) == "Eps(epsilon=0.0)"
    assert acc.remaining(3).epsilon == 0.0
    assert pickle.loads(pickle.dumps(acc.remaining)).epsilon == 0.0
