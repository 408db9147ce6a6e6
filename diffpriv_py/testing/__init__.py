"""The mechanism conformance kit and the privacy auditor, for anyone who writes a mechanism.

* :class:`MechCase` bundles a mechanism, privacy parameters and a pair of replace-one neighbouring datasets.
* :func:`check_mechanism` runs every shared invariant on a case (a release returns a Response with the right
  guarantee, zero sensitivity adds no noise, unset or non-finite sensitivity and wrong parameter types are refused,
  seeded releases reproduce, inputs are not mutated, ``sensitivity_norm`` is a semimetric, the declared sensitivity
  bounds the neighbours' change, the noise matches its declared distribution, its ``privacy_events`` are accounting
  events implying the claim and its ``half_width`` error bar is consistent, the sampler sets γ, and the auditor
  does not refute the claim; opt-in, the searching auditor finds no refuting neighbour).
  :func:`parametrize_with_checks` turns the same checks into pytest cases.
* :func:`audit` gives a statistically valid lower bound on a mechanism's ε and δ from events on the values *and the
  structure* of the releases (layout, keys carried, a failure after the charge); :func:`check_sensitivity` is its
  sample-free grey-box companion; :func:`search_audit` searches adversarial neighbouring pairs (fresh labels and
  values included) for one that refutes.
* :data:`EXAMPLE_CASES` holds a case for every built-in mechanism; a new built-in adds its case here.

Example
-------
In a test file::

    from diffpriv_py.testing import MechCase, parametrize_with_checks

    CASES = [MechCase(mechanism=MyMech(target=..., sensitivity=1.0), privacy_params=dp.Eps(1.0),
                      dataset=X, neighbour=X_neighbour)]

    @parametrize_with_checks(CASES)
    def test_my_mechanism_conforms(case, check):
        check(case)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..mechanisms.base import DPMech
from ..privacy import Eps
from ._audit import AuditReport, audit, check_sensitivity, trailing_exponent
from ._checks import (
    DISTRIBUTIONAL_CHECKS,
    KS_P_THRESHOLD,
    SLOW_CHECKS,
    MechCase,
    check_audit_passes,
    check_half_width_is_consistent,
    check_infinite_sensitivity_is_refused,
    check_noise_matches_distribution,
    check_noise_scale_shrinks_as_epsilon_grows,
    check_privacy_events_are_accounting_events,
    check_release_is_reproducible_with_seed,
    check_release_leaves_dataset_unmodified,
    check_release_returns_response,
    check_response_reports_actual_guarantee,
    check_sampler_sets_gamma_sensitivity,
    check_search_audit_passes,
    check_sensitivity_bounds_neighbour_change,
    check_sensitivity_norm_is_semimetric,
    check_wrong_privacy_params_type_is_refused,
    check_zero_sensitivity_adds_no_noise,
    mechanism_checks,
)
from ._examples import EXAMPLE_CASES
from ._search import PairResult, SearchPlan, SearchReport, search_audit

__all__ = [
    "DISTRIBUTIONAL_CHECKS",
    "EXAMPLE_CASES",
    "KS_P_THRESHOLD",
    "SLOW_CHECKS",
    "AuditReport",
    "MechCase",
    "PairResult",
    "SearchPlan",
    "SearchReport",
    "audit",
    "check_audit_passes",
    "check_half_width_is_consistent",
    "check_infinite_sensitivity_is_refused",
    "check_mechanism",
    "check_noise_matches_distribution",
    "check_noise_scale_shrinks_as_epsilon_grows",
    "check_privacy_events_are_accounting_events",
    "check_release_is_reproducible_with_seed",
    "check_release_leaves_dataset_unmodified",
    "check_release_returns_response",
    "check_response_reports_actual_guarantee",
    "check_sampler_sets_gamma_sensitivity",
    "check_search_audit_passes",
    "check_sensitivity",
    "check_sensitivity_bounds_neighbour_change",
    "check_sensitivity_norm_is_semimetric",
    "check_wrong_privacy_params_type_is_refused",
    "check_zero_sensitivity_adds_no_noise",
    "mechanism_checks",
    "parametrize_with_checks",
    "search_audit",
    "trailing_exponent",
]


def _as_case(case: Any, privacy_params: Any, dataset: Any, neighbour: Any) -> MechCase:
    if isinstance(case, MechCase):
        return case
    if privacy_params is None or dataset is None or neighbour is None:
        raise TypeError(
            "check_mechanism needs a MechCase, or a mechanism together with privacy_params=, dataset= and neighbour=."
        )
    return MechCase(mechanism=case, privacy_params=privacy_params, dataset=dataset, neighbour=neighbour)


def check_mechanism(
    case: DPMech | MechCase,
    privacy_params: Eps | None = None,
    dataset: Any = None,
    neighbour: Any = None,
    *,
    expected_failed_checks: Iterable[str] | None = None,
    include_slow: bool = True,
) -> list[str]:
    """Run every shared invariant on a mechanism; raise AssertionError listing every check that failed.

    Parameters
    ----------
    case : MechCase or DPMech
        A case, or a mechanism (then ``privacy_params``, ``dataset`` and ``neighbour`` are required).
    privacy_params, dataset, neighbour : optional
        See :class:`MechCase`.
    expected_failed_checks : iterable of str, optional
        Names of checks known to fail for this mechanism (documented exceptions); they must fail.
    include_slow : bool, default True
        Whether to run the checks that draw many samples (noise distribution, sampler, audit).

    Returns
    -------
    list of str
        The names of the checks that ran and passed.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> from diffpriv_py.testing import check_mechanism
    >>> X = np.zeros(50); X2 = X.copy(); X2[0] = 1.0
    >>> mech = dp.Laplace(target=np.mean, sensitivity=1 / 50)
    >>> "check_release_returns_response" in check_mechanism(mech, dp.Eps(1.0), X, X2, include_slow=False)
    True
    """
    case = _as_case(case, privacy_params, dataset, neighbour)
    expected = set(expected_failed_checks or ())
    passed, failures, unexpected_passes = [], [], []
    for check in mechanism_checks(case):
        name = check.__name__
        if not include_slow and (name in SLOW_CHECKS or name in DISTRIBUTIONAL_CHECKS or case.slow):
            continue
        try:
            check(case)
        except AssertionError as exc:
            if name not in expected:
                failures.append(f"{name}: {exc}")
            continue
        if name in expected:
            unexpected_passes.append(name)
        else:
            passed.append(name)
    if failures or unexpected_passes:
        lines = [f"{case.name} fails {len(failures)} conformance check(s):", *failures]
        lines += [f"{name}: expected to fail but passed" for name in unexpected_passes]
        raise AssertionError("\n".join(lines))
    return passed


_Test = TypeVar("_Test", bound=Callable[..., Any])


def parametrize_with_checks(cases: Iterable[MechCase]) -> Callable[[_Test], _Test]:
    """A ``pytest.mark.parametrize`` over (case, check) pairs, ids such as ``Laplace[safe]-check_...``.

    Checks that draw many samples (and every check of a case with ``slow=True``) get ``pytest.mark.slow``.
    The decorated test takes the arguments ``case`` and ``check`` and calls ``check(case)``.
    """
    from .._extras import require

    pytest: Any = require("pytest", feature="dp.testing.parametrize_with_checks")
    params = []
    for case in cases:
        for check in mechanism_checks(case):
            name = check.__name__
            slow = case.slow or name in SLOW_CHECKS or name in DISTRIBUTIONAL_CHECKS
            marks = [pytest.mark.slow] if slow else []
            params.append(pytest.param(case, check, id=f"{case.name}-{name}", marks=marks))
    decorate: Callable[[_Test], _Test] = pytest.mark.parametrize(("case", "check"), params)
    return decorate
