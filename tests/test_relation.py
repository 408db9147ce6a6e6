"""The add/remove-one-person relation: group-by's sensitivities and selection under it, the accountant's conversion
to replace-one, the relation each Response states, audits of add/remove pairs and the mutants they catch."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from scipy import stats as sps

import diffpriv_py as dp
from diffpriv_py.events import ApproxDPEvent, guarantee_event

pd = pytest.importorskip("pandas")  # a group-by releases a pandas DataFrame

from group_audit import Flattened  # noqa: E402

from diffpriv_py.stats._groupby import GroupBy  # noqa: E402
from diffpriv_py.testing import audit  # noqa: E402

P_FALSE_ALARM = 1e-7
AR = "add_remove"


# ---- the conversion ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (0.1, 0.0), (3.0, 1e-9)])
def test_add_remove_is_charged_as_replace_one_by_group_privacy(eps, delta):
    """(ε, δ) under add/remove implies (2ε, (1 + e^ε)δ) under replace-one: that is the event and the charge."""
    event = guarantee_event(eps, delta, AR)
    assert event == ApproxDPEvent(epsilon=2 * eps, delta=(1 + math.exp(eps)) * delta)
    assert guarantee_event(eps, delta) == ApproxDPEvent(epsilon=eps, delta=delta)
    mech = GroupBy(neighbouring=AR)
    assert mech.privacy_events(dp.Del(eps, delta) if delta else dp.Eps(eps)) == (event,)


def test_a_huge_epsilon_caps_the_converted_delta_below_one():
    event = guarantee_event(800.0, 1e-6, AR)
    assert event.epsilon == 1600.0 and 0.99 < event.delta < 1.0


def test_a_replace_one_accountant_composes_both_relations_in_replace_one_terms():
    rng = np.random.default_rng(0)
    by, unit = rng.integers(0, 5, 2000), rng.integers(0, 400, 2000)
    acc = dp.Accountant(dp.Del(10.0, 1e-3), composition="basic")
    kw = {"privacy_unit": unit, "max_groups": 2, "keys": list(range(5)), "accountant": acc, "rng": 1}
    one = dp.stats.groupby(by, dp.Eps(0.5), full_response=True, **kw)
    two = dp.stats.groupby(by, dp.Eps(0.5), neighbouring=AR, full_response=True, **kw)
    assert one.relation == "replace_one" and two.relation == AR
    assert two.privacy_params == dp.Eps(0.5)  # the response states its own (add/remove) guarantee
    assert "relation='add_remove'" in repr(two) and "relation" not in repr(one)
    assert acc.spent.epsilon == pytest.approx(0.5 + 1.0)  # basic composition: 0.5 + 2·0.5


def test_audit_refuses_an_add_remove_pair_for_a_replace_one_mechanism():
    with pytest.raises(ValueError, match="add/remove pair"):
        audit(dp.Laplace(target=np.sum, sensitivity=1.0), np.zeros(3), np.zeros(2), dp.Eps(1.0), relation=AR)


# ---- validation, before the charge ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"neighbouring": "add"}, "neighbouring"),
        ({"neighbouring": AR, "max_people": 0}, "max_people"),
        ({"neighbouring": AR, "max_people": 2.5}, "max_people"),
        ({"max_people": 1000}, "max_people"),  # meaningless under replace-one, where n is public
    ],
)
def test_bad_relation_arguments_are_refused_before_the_charge(kw, match):
    acc = dp.Accountant(dp.Del(10.0, 1e-3))
    with pytest.raises((TypeError, ValueError), match=match):
        dp.stats.groupby(np.array(["a", "b"]), dp.Del(1.0, 1e-6), accountant=acc, **kw)
    assert acc.spent.epsilon == 0


# ---- sensitivities ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("g", [1, 3])
@pytest.mark.parametrize("r", [1, 4])
def test_add_remove_halves_the_sensitivities_and_counts_touch_g_groups(g, r):
    stats = ("count", "sum", "var")
    rep = GroupBy(statistics=stats, bounds=(-3.0, 5.0), max_groups=g, max_rows=r)
    ar = GroupBy(statistics=stats, bounds=(-3.0, 5.0), max_groups=g, max_rows=r, neighbouring=AR, max_people=1000)
    for m in rep.measurements():
        l1_rep = rep.sensitivities(m, 1000)[0]
        l1_ar, l2_ar = ar.sensitivities(m, 1000)
        assert l1_ar == pytest.approx(g * r * m.bound, rel=1e-9)
        assert l2_ar == pytest.approx(r * m.bound * math.sqrt(g), rel=1e-9)
        assert l1_ar <= l1_rep / 2 * (1 + 1e-9)


def test_exact_sums_of_an_added_person_move_within_the_add_remove_sensitivity():
    """Attack: one person added with G·R rows at the bound of largest magnitude, straddling 0 and at the other
    bound; the exact per-group integer sums (released units) move by at most L1 (and L2) of add/remove."""
    g, r = 3, 2
    mech = GroupBy(statistics=("count", "sum", "var"), bounds=(-3.0, 5.0), max_groups=g, max_rows=r, keys=(0, 1, 2, 3))
    ar = attrs.evolve(mech, neighbouring=AR, max_people=10_000)
    rng = np.random.default_rng(3)
    base_by, base_unit = rng.integers(0, 4, 300), rng.integers(0, 100, 300)
    base_x = rng.uniform(-3, 5, 300)
    for value in (5.0, -3.0, 0.0, -1e-300, 1e300):
        by = np.concatenate([base_by, np.repeat([0, 1, 2], r)])
        unit = np.concatenate([base_unit, np.full(g * r, 10_000)])
        x = np.concatenate([base_x, np.full(g * r, value)])
        with_person = _exact(ar, by, x, unit)
        without = _exact(ar, base_by, base_x, base_unit)
        for m in ar.measurements():
            diff = with_person[m.name] - without[m.name]
            l1, l2 = ar.sensitivities(m, 10_000)
            assert np.abs(diff).sum() <= l1 and np.sqrt((diff**2).sum()) <= l2


def _exact(mech: GroupBy, by, x, unit) -> dict[str, np.ndarray]:
    """The exact vectors the noise is added to: the release's own bounding and sums, with every row kept (each
    person here has at most max_groups groups and max_rows rows per group)."""
    keys = np.asarray(mech.keys)
    slot = np.searchsorted(keys, by)
    return mech._exact_sums(slot, np.clip(x, -3.0, 5.0), keys.size)[0]


# ---- partition selection: a person who alone makes groups exist --------------------------------------------------


def _lone_hits(g: int, params: dp.Del, selection: str, runs: int, n_people: int, relation: str = AR) -> int:
    """Runs × people alone in g labels of their own, next to a 400-person group: how many people had any of their
    labels released (every one of them is the added person of an add/remove pair)."""
    by = np.concatenate([np.arange(n_people * g).astype(str), np.full(400, "big")])
    unit = np.concatenate([np.repeat(np.arange(n_people), g), np.arange(n_people, n_people + 400)])
    hit = 0
    for seed in range(runs):
        keys = dp.stats.groupby(
            by,
            params,
            privacy_unit=unit,
            max_groups=g,
            selection=selection,
            neighbouring=relation,
            max_people=10**6 if relation == AR else None,
            rng=seed,
        ).index
        own = keys[keys != "big"].astype(int) // g
        hit += np.unique(own).size
        assert "big" in keys
    return hit


@pytest.mark.parametrize("selection", ["threshold", "weighted_gaussian", "truncated_geometric"])
@pytest.mark.parametrize("g", [1, 4])
def test_an_added_person_alone_in_their_groups_has_one_released_at_most_at_rate_delta(selection, g):
    """δ = 0.3 so the rate is measurable: the share of lone people with any group released is ≤ the δ the selection
    pays for lone groups under add/remove (all of δ for the threshold, δ/2 for the weighted Gaussian)."""
    params = dp.Del(1.0, 0.3)
    runs, n_people = 10, 2000
    hit = _lone_hits(g, params, selection, runs, n_people)
    bound = params.delta / 2 if selection == "weighted_gaussian" else params.delta
    assert sps.beta.ppf(P_FALSE_ALARM, hit, runs * n_people - hit + 1) <= bound


def test_the_lone_rate_test_catches_a_threshold_that_forgets_the_union_over_g_groups(monkeypatch):
    """Mutant: δ₀ = δ per lone group (no division by G). With G = 4 a lone person then has a group released far more
    often than δ, and the test above refutes it."""
    real = GroupBy.threshold

    def loose(self, select):
        return real(self, attrs.evolve(select, delta=min(0.99, select.delta * self.max_groups)))

    monkeypatch.setattr(GroupBy, "threshold", loose)
    params = dp.Del(1.0, 0.3)
    hit = _lone_hits(4, params, "threshold", 10, 2000)
    assert sps.beta.ppf(P_FALSE_ALARM, hit, 10 * 2000 - hit + 1) > params.delta


# ---- audits -------------------------------------------------------------------------------------------------------


def _pair() -> tuple[tuple, tuple]:
    """D: 30 one-row people in 'big' and person 99 alone in 'rare1' and 'rare2'; D′: person 99 removed."""
    by = np.array(["big"] * 30 + ["rare1", "rare2"])
    unit = np.concatenate([np.arange(30), [99, 99]])
    x = np.concatenate([np.linspace(0, 1, 30), [1.0, 1.0]])
    return (by, x, unit), (by[:30], x[:30], unit[:30])


@pytest.mark.slow
@pytest.mark.parametrize("selection", ["threshold", "weighted_gaussian", "truncated_geometric"])
def test_audit_does_not_refute_an_added_person_who_alone_makes_two_groups_exist(selection):
    d1, d2 = _pair()
    inner = GroupBy(statistics=("count", "mean"), bounds=(0, 1), max_groups=2, selection=selection, neighbouring=AR)
    mech = Flattened(inner=inner, labels=("big", "rare1", "rare2"))
    report = audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1)
    assert report.passed, report


@pytest.mark.slow
def test_the_add_remove_audit_catches_a_threshold_set_for_a_larger_delta(monkeypatch):
    """Mutant: the threshold computed for 20·δ (lone groups then pass it often): the audit of the lone-person pair
    refutes (1, 0.05)."""
    real = GroupBy.threshold
    monkeypatch.setattr(
        GroupBy, "threshold", lambda self, select: real(self, attrs.evolve(select, delta=min(0.9, 20 * select.delta)))
    )
    d1, d2 = _pair()
    inner = GroupBy(max_groups=2, selection="threshold", neighbouring=AR)
    mech = Flattened(inner=inner, labels=("big", "rare1", "rare2"))
    assert not audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1).passed


def test_search_audit_checks_an_add_remove_mechanism_against_its_replace_one_implication():
    from diffpriv_py.testing import search_audit

    mech = GroupBy(max_groups=1, neighbouring=AR, keys=("a", "b"))
    data = (np.array(["a"] * 20 + ["b"] * 10), None, None)
    report = search_audit(mech, data, dp.Eps(1.0), rng=0, time_budget=3)
    assert report.passed, report
    assert all(p.confirm.claim == dp.Eps(2.0) for p in report.confirmed)


# ---- truncated geometric selection -------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (0.05, 1e-9), (3.0, 0.2), (1e-3, 1e-5)])
def test_the_keep_table_meets_both_dp_inequalities_for_what_is_sampled(eps, delta):
    """For counts n − 1 and n, with q = p + 2⁻⁵³ the most ``rng.random() < p`` can give: q(n) ≤ e^ε·π(n−1) + δ and
    1 − π(n−1) ≤ e^ε·(1 − q(n)) + δ (checked in exact rationals); π rises to 1 and is the largest such sequence up
    to the float slack (each step within 16(e^ε + 1)·2⁻⁵² of the bound it meets)."""
    from fractions import Fraction as F

    plan = _selection_plan(eps, delta)
    keep = plan.keep
    assert keep[0] == 0 and keep[-1] == 1 and np.all(np.diff(keep) >= 0)
    e = F(math.exp(eps)) * (1 + F(1, 2**50))  # e^ε rounded up, generously
    d, ulp = F(delta), F(1, 2**53)
    slack = 16 * (math.exp(eps) + 1) * 2.0**-52
    for n in range(1, keep.size):
        prev, cur = F(float(keep[n - 1])), F(float(keep[n]))
        q = min(cur + ulp, F(1))  # the largest probability the comparison with rng.random() can give
        assert q <= e * prev + d
        assert 1 - prev <= e * (1 - q) + d
        tight = min(math.exp(eps) * keep[n - 1] + delta, 1 - math.exp(-eps) * (1 - keep[n - 1] - delta), 1.0)
        assert keep[n] >= tight - slack


def _selection_plan(eps: float, delta: float):
    from diffpriv_py.stats._selection import TruncatedGeometric

    return TruncatedGeometric.of(dp.Del(eps, delta), 1, AR)


def test_auto_under_add_remove_picks_the_policy_needing_fewest_people_from_public_numbers():
    mech = GroupBy(max_groups=1, neighbouring=AR, statistics=("count", "mean"), bounds=(0, 1))
    select = mech.split(dp.Del(1.0, 1e-6))[0]
    assert mech.selection_policy(select) == "truncated_geometric"
    assert GroupBy(max_groups=1).selection_policy(select) == "threshold"  # replace-one default: bit for bit as before
    assert GroupBy(max_groups=10, neighbouring=AR).selection_policy(select) == "weighted_gaussian"


def test_a_truncated_geometric_below_its_range_is_refused_before_the_charge():
    acc = dp.Accountant(dp.Del(10.0, 1e-3))
    with pytest.raises(ValueError, match="truncated_geometric"):
        dp.stats.groupby(
            np.array(["a", "b"]), dp.Del(1.0, 1e-15), selection="truncated_geometric", neighbouring=AR, accountant=acc
        )
    assert acc.spent.epsilon == 0


@pytest.mark.slow
def test_the_add_remove_audit_catches_a_keep_table_for_a_larger_delta(monkeypatch):
    """Mutant: the keep probabilities computed for 20·δ: the audit of the lone-person pair refutes (1, 0.05)."""
    from diffpriv_py.stats import _selection

    real = _selection._keep_table
    monkeypatch.setattr(_selection, "_keep_table", lambda eps, delta: real(eps, min(0.9, 20 * delta)))
    d1, d2 = _pair()
    inner = GroupBy(max_groups=2, selection="truncated_geometric", neighbouring=AR)
    mech = Flattened(inner=inner, labels=("big", "rare1", "rare2"))
    assert not audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1).passed


@pytest.mark.parametrize("g", [1, 3])
def test_replace_one_truncated_geometric_releases_a_lone_persons_group_at_most_at_the_converted_delta(g):
    """Under replace-one the truncated geometric runs at the add/remove pair (ε_s/2, δ_s/(1 + e^{ε_s/2})) that
    implies (ε_s, δ_s): a person alone in g groups has one released at most at that δ (the lone groups of one
    side of the replacement)."""
    params = dp.Del(1.0, 0.3)
    hit = _lone_hits(g, params, "truncated_geometric", 10, 2000, relation="replace_one")
    select = GroupBy(max_groups=g).split(params)[0]
    assert select is not None
    bound = select.delta / (1 + math.exp(select.epsilon / 2))
    assert sps.beta.ppf(P_FALSE_ALARM, hit, 10 * 2000 - hit + 1) <= bound
