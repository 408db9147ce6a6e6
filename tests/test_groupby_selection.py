"""Set-union partition selection (weighted Gaussian) and the public 'auto' choice: the plan, lone groups, a person
with many groups, structure, audits and a mutant each statistical test catches."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from scipy import stats as sps

pd = pytest.importorskip("pandas")  # a group-by releases a pandas DataFrame

from group_audit import Flattened, WithUnlisted, spy_on_bounding  # noqa: E402

import diffpriv_py as dp  # noqa: E402
from diffpriv_py.stats import _selection  # noqa: E402
from diffpriv_py.stats._groupby import GroupBy  # noqa: E402
from diffpriv_py.stats._selection import WEIGHT_BITS, WeightedGaussian, weight_units  # noqa: E402
from diffpriv_py.testing import audit  # noqa: E402

P_FALSE_ALARM = 1e-7
WG = "weighted_gaussian"


def _plan(params: dp.Del, g: int, n_people: int = 10**6) -> tuple[WeightedGaussian, float]:
    """The selection's plan and p, the bound on releasing any group one person holds alone."""
    select = GroupBy(max_groups=g, selection=WG).split(params)[0]
    assert select is not None
    return WeightedGaussian.of(select, g, n_people), select.delta / (2 * (1 + math.exp(select.epsilon)))


def _lone_rate(plan: WeightedGaussian, t: int) -> float:
    """P(a person alone in t groups has one of them released), for the continuous Gaussian the sampler follows."""
    w = float(weight_units(plan.max_groups)[t]) * 2.0**-WEIGHT_BITS
    return float(-np.expm1(t * sps.norm.logcdf((plan.rho - w) / plan.sigma)))


# ---- the plan --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("g", [1, 2, 5, 10, 64])
def test_weights_are_the_largest_grid_weights_of_norm_at_most_one(g):
    k = [int(v) for v in weight_units(g)]
    for t in range(1, g + 1):
        assert t * k[t] ** 2 <= 4**WEIGHT_BITS < t * (k[t] + 1) ** 2  # k_t = ⌊2ᴮ/√t⌋ exactly


@pytest.mark.parametrize(("g", "params"), [(2, dp.Del(1.0, 1e-6)), (5, dp.Del(0.3, 1e-9)), (10, dp.Del(2.0, 0.2))])
def test_threshold_keeps_every_lone_set_below_p_and_is_tight(g, params):
    """For every t ≤ G, t lone groups of weight w_t are released with probability ≤ p (with the 2r margin), and
    the threshold is the smallest such: lowered by 1% of σ some t exceeds p."""
    plan, p = _plan(params, g)
    worst = 0.0
    for t in range(1, g + 1):
        w = float(weight_units(g)[t]) * 2.0**-WEIGHT_BITS
        tail = -np.expm1(t * sps.norm.logcdf((plan.rho - w - plan.r) / plan.sigma))
        assert tail <= p * (1 - 2.0**-21)
        worst = max(worst, -np.expm1(t * sps.norm.logcdf((plan.rho - 0.01 * plan.sigma - w) / plan.sigma)))
    assert worst > p


def test_auto_is_a_function_of_public_numbers_and_keeps_the_threshold_at_one_group():
    params = dp.Del(1.0, 1e-6)
    assert GroupBy(max_groups=1).selection_policy(GroupBy(max_groups=1).split(params)[0]) == "threshold"
    for g in (2, 5, 10):
        mech = GroupBy(max_groups=g)
        select = mech.split(params)[0]
        plan = WeightedGaussian.of(select, g, 1)
        assert plan.people_at_half() < mech.threshold(select)[1]
        assert mech.selection_policy(select) == WG


def test_auto_at_one_group_is_bit_identical_to_the_threshold():
    rng = np.random.default_rng(3)
    by = rng.integers(0, 50, 5000)
    x = rng.uniform(0, 10, 5000)
    kwargs = {"values": x, "statistics": ("count", "mean"), "bounds": (0, 10), "rng": 7}
    a = dp.stats.groupby(by, dp.Del(1.0, 1e-6), **kwargs)
    b = dp.stats.groupby(by, dp.Del(1.0, 1e-6), selection="threshold", **kwargs)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("bad", ["gaussian", None, "WEIGHTED_GAUSSIAN"])
def test_a_bad_selection_is_refused_before_the_charge(bad):
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    with pytest.raises((TypeError, ValueError), match="selection"):
        dp.stats.groupby(np.array(["a", "b"]), dp.Del(1.0, 1e-6), selection=bad, accountant=acc)
    assert len(acc.ledger) == 0


# ---- lone groups: measured release rates -----------------------------------------------------------------------------


def _lone_people(n_people: int, g: int) -> tuple[np.ndarray, np.ndarray]:
    """n_people people, each alone in g labels of their own (one row each), and one group of 400 one-row people."""
    by = np.concatenate([np.arange(n_people * g).astype(str), np.repeat(["big"], 400)])
    unit = np.concatenate([np.repeat(np.arange(n_people), g), np.arange(n_people, n_people + 400)])
    return by, unit


def _count_lone_releases(g: int, params: dp.Del, runs: int, n_people: int) -> tuple[int, int]:
    by, unit = _lone_people(n_people, g)
    hit = big = 0
    for seed in range(runs):
        keys = dp.stats.groupby(by, params, privacy_unit=unit, max_groups=g, selection=WG, rng=seed).index
        own = keys[keys != "big"].astype(int) // g  # the person each released lone label belongs to
        hit += np.unique(own).size
        big += "big" in keys
    return hit, big


@pytest.mark.parametrize("g", [1, 5])
def test_a_person_alone_in_their_groups_has_one_released_at_most_at_rate_p(g):
    """2000 people alone in g groups each (δ = 0.3 so the rate is measurable): the share of people with any group
    released is ≤ p (Clopper–Pearson) and matches the exact rate; the 400-person group is always released."""
    params = dp.Del(1.0, 0.3)
    runs, n_people = 10, 2000
    hit, big = _count_lone_releases(g, params, runs, n_people)
    plan, p = _plan(params, g, n_people * g + 400)
    trials = runs * n_people
    lower = sps.beta.ppf(P_FALSE_ALARM, hit, trials - hit + 1) if hit else 0.0
    assert lower <= p
    exact = _lone_rate(plan, g)
    assert sps.binom.ppf(P_FALSE_ALARM, trials, exact) <= hit <= sps.binom.isf(P_FALSE_ALARM, trials, exact)
    assert big == runs


def test_the_lone_rate_test_catches_unnormalised_weights(monkeypatch):
    """Mutant: every person gives weight 1 to each of their groups (a count, not an L2-normalised weight). With
    G = 5 a lone person's groups then clear ρ far more often than p, and the rate test above refutes it."""
    g, params = 5, dp.Del(1.0, 0.3)
    monkeypatch.setattr(_selection, "weight_units", lambda m: np.full(m + 1, 1 << WEIGHT_BITS, dtype=np.int64))
    runs, n_people = 10, 2000
    hit, _ = _count_lone_releases(g, params, runs, n_people)
    _, p = _plan(params, g)
    trials = runs * n_people
    assert sps.beta.ppf(P_FALSE_ALARM, hit, trials - hit + 1) > p


OWNER = 10**6


def test_a_person_with_many_labels_releases_only_kept_groups_at_rate_p(monkeypatch):
    """Attack: one person owns 10⁴ labels (max_groups 3). Only the ≤ 3 labels the bounding kept may be released,
    and one of them at most at rate p; released groups ⊆ groups surviving bounding."""
    n_labels, g = 10_000, 3
    own = np.char.add("own", np.arange(n_labels).astype(str))
    by = np.concatenate([np.repeat(["big1", "big2"], 300), own])
    unit = np.concatenate([np.arange(600), np.full(n_labels, OWNER)])
    masks = spy_on_bounding(monkeypatch)
    params = dp.Del(1.0, 1e-3)
    runs, with_own = 20, 0
    for seed in range(runs):
        out = dp.stats.groupby(by, params, privacy_unit=unit, max_groups=g, selection=WG, rng=seed)
        kept = set(by[masks[-1]].tolist())
        assert set(out.index) <= kept
        assert len(kept & set(own.tolist())) == g
        assert {"big1", "big2"} <= set(out.index)
        with_own += bool(np.isin(out.index, own).any())
    _, p = _plan(params, g)
    assert with_own <= sps.binom.isf(P_FALSE_ALARM, runs, p)


# ---- structure -------------------------------------------------------------------------------------------------------


def test_with_a_huge_budget_every_group_holding_a_person_is_released_with_todays_dtypes():
    rng = np.random.default_rng(0)
    unit = rng.integers(0, 3000, 20_000)
    by = rng.integers(0, 40, 20_000)
    x = rng.uniform(0, 1, 20_000)
    kw = {"values": x, "statistics": ("count", "sum"), "bounds": (0, 1), "privacy_unit": unit, "max_groups": 4}
    a = dp.stats.groupby(by, dp.Del(300.0, 0.5), selection=WG, rng=1, **kw)
    b = dp.stats.groupby(by, dp.Del(300.0, 0.5), selection="threshold", rng=1, **kw)
    assert list(a.index) == list(range(40)) == list(b.index)
    assert a.index.dtype == b.index.dtype and list(a.columns) == list(b.columns)
    assert (a.dtypes == b.dtypes).all()
    empty = dp.stats.groupby(np.array(["x", "y"]), dp.Del(0.1, 1e-9), selection=WG, rng=1)
    assert empty.empty and empty.index.dtype == pd.Index(np.array(["x"])).astype(object).dtype


def test_selection_on_dask_input_is_the_in_memory_release():
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"by": rng.integers(0, 30, 4000), "u": rng.integers(0, 500, 4000)})
    ddf = dd.from_pandas(frame, npartitions=3)
    kw = {"privacy_unit": None, "max_groups": 3, "selection": WG, "rng": 2}
    a = dp.stats.groupby(frame["by"], dp.Del(1.0, 1e-6), **{**kw, "privacy_unit": frame["u"]})
    b = dp.stats.groupby(ddf["by"], dp.Del(1.0, 1e-6), **{**kw, "privacy_unit": ddf["u"]})
    pd.testing.assert_frame_equal(a, b)


# ---- audits ----------------------------------------------------------------------------------------------------------


def _people(groups_rows: dict[str, list[int]]) -> tuple[np.ndarray, None, np.ndarray]:
    by, unit = [], []
    pid = 0
    for g, rows in groups_rows.items():
        for r in rows:
            by += [g] * r
            unit += [pid] * r
            pid += 1
    return np.array(by), None, np.array(unit)


@pytest.mark.slow
def test_audit_does_not_refute_a_person_who_alone_makes_two_groups_exist():
    """Replace-one: in D a person is alone in 'rare1' and 'rare2' (max_groups 2); in D′ they join 'big'."""
    d1 = _people({"big": [1] * 30})
    d1 = (np.concatenate([d1[0], ["rare1", "rare2"]]), None, np.concatenate([d1[2], [99, 99]]))
    d2 = _people({"big": [1] * 31})
    mech = Flattened(inner=GroupBy(max_groups=2, selection=WG), labels=("big", "rare1", "rare2"))
    report = audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1)
    assert report.passed, report


@pytest.mark.slow
def test_the_lone_group_audit_catches_a_threshold_without_the_lone_group_term(monkeypatch):
    """Mutant: ρ set one σ above the lone weight instead of by the (1 − p)^{1/t} quantile; the audit above then
    refutes (1, 0.05)."""
    real = WeightedGaussian.of

    def low(select, g, n_people, relation="replace_one"):
        plan = real(select, g, n_people, relation)
        return attrs.evolve(plan, rho=1.0 / math.sqrt(2) + plan.sigma)

    monkeypatch.setattr(WeightedGaussian, "of", staticmethod(low))
    d1 = _people({"big": [1] * 30})
    d1 = (np.concatenate([d1[0], ["rare1", "rare2"]]), None, np.concatenate([d1[2], [99, 99]]))
    d2 = _people({"big": [1] * 31})
    mech = Flattened(inner=GroupBy(max_groups=2, selection=WG), labels=("big", "rare1", "rare2"))
    assert not audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1).passed


@pytest.mark.slow
def test_audit_does_not_refute_a_person_with_many_labels_of_their_own():
    by = np.concatenate([np.repeat(["big1", "big2"], 300), np.char.add("own", np.arange(1000).astype(str))])
    unit = np.concatenate([np.arange(600), np.full(1000, OWNER)])
    d1 = (by, None, unit)
    d2 = (np.concatenate([by[:600], ["big1"]]), None, np.concatenate([unit[:600], [OWNER]]))
    mech = WithUnlisted(inner=GroupBy(max_groups=3, selection=WG), labels=("big1", "big2"))
    report = audit(mech, d1, d2, dp.Del(1.0, 1e-3), n=1500, rng=4)
    assert report.passed, report


def test_a_weighted_gaussian_beyond_the_safe_samplers_range_is_refused_before_the_charge():
    """ε_s ≥ 500 is beyond the safe Gaussian's calibration: refused before the charge, while 'auto' falls back to
    the threshold for the same public numbers."""
    acc = dp.Accountant(budget=dp.Del(1e5, 1e-3))
    by, unit = np.array(list("aabbb")), np.arange(5)
    with pytest.raises(ValueError, match="safe Gaussian"):
        dp.stats.groupby(by, dp.Del(3000.0, 1e-6), privacy_unit=unit, max_groups=2, selection=WG, accountant=acc)
    assert len(acc.ledger) == 0
    assert GroupBy(max_groups=2).selection_policy(dp.Del(1500.0, 1e-6)) == "threshold"
