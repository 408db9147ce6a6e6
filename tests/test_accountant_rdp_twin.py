"""The accountant's fixed-orders Rényi conversion is a twin of ``rdp.epsilon_from_rdp``: same bits on every curve.

The twin skips validation for speed (see its docstring for the measured ratio); these tests draw both on the same
curves, including the edges the accountant produces (infinite orders, zero curves, tiny and huge δ).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from diffpriv_py.accounting import GaussianEvent, LaplaceEvent, compose
from diffpriv_py.accounting.rdp import _ACCOUNTANT_ORDERS, _fixed_orders_epsilon_from_rdp, epsilon_from_rdp


def _curves() -> list[np.ndarray]:
    rng = np.random.default_rng(20261128)
    a = _ACCOUNTANT_ORDERS
    curves = [np.zeros(a.size), a * 0.5**2 / 2, a * 1e-8, a * 1e3]
    curves += [LaplaceEvent(epsilon=e)._rdp(a) for e in (1e-6, 0.1, 1.0, 30.0)]
    curves += [rng.exponential(scale, a.size) for scale in (1e-9, 1e-3, 1.0, 1e3, 1e300)]
    partly = a * 0.01
    partly[a > 100] = np.inf  # orders whose evaluation failed are +inf in the accountant's curves
    curves.append(partly)
    curves.append(np.full(a.size, np.inf))
    return curves


@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-6, 0.01, 0.5, 1 - 2**-53])
def test_fixed_orders_twin_gives_the_bits_of_epsilon_from_rdp(delta):
    for curve in _curves():
        expected = epsilon_from_rdp(_ACCOUNTANT_ORDERS, curve, delta)[0]
        got = _fixed_orders_epsilon_from_rdp(curve, delta)
        assert got == expected or (math.isinf(got) and math.isinf(expected)), (curve[:3], delta)


def test_composition_reports_the_rdp_bound_of_the_single_path():
    """A mixed ledger's Rényi bound, read through compose(), is epsilon_from_rdp on the summed curve."""
    events = [LaplaceEvent(epsilon=0.1, count=50), GaussianEvent(mu=0.3, count=20)]
    comp = compose(events)
    curve = sum(e.count * e._key()._rdp(_ACCOUNTANT_ORDERS) for e in comp.events)
    eps, method = comp.epsilon_with_method(1e-6, cheap_enough=1e9)
    assert method == "rdp"
    assert eps == epsilon_from_rdp(_ACCOUNTANT_ORDERS, curve, 1e-6)[0]


def test_the_twin_test_catches_a_twin_that_drifts_by_one_bit(monkeypatch):
    """The comparison above is strict: a twin rounded one ulp differently is caught."""
    import diffpriv_py.accounting.rdp as rdp

    original = rdp._fixed_orders_epsilon_from_rdp
    monkeypatch.setattr(rdp, "_fixed_orders_epsilon_from_rdp", lambda r, d: math.nextafter(original(r, d), 0.0))
    with pytest.raises(AssertionError):
        for curve in _curves():
            assert (
                rdp._fixed_orders_epsilon_from_rdp(curve, 1e-6) == epsilon_from_rdp(_ACCOUNTANT_ORDERS, curve, 1e-6)[0]
            )
