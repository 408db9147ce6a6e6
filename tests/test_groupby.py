"""dp.stats.groupby: contribution bounding, partition selection, error bars, one charge, audits on neighbours."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

pd = pytest.importorskip("pandas")  # a group-by releases a pandas DataFrame

from group_audit import Flattened as _Flattened  # noqa: E402
from group_audit import WithUnlisted, spy_on_bounding  # noqa: E402

import diffpriv_py as dp  # noqa: E402
import diffpriv_py.pandas  # noqa: E402  (registers the accessor)
from diffpriv_py import _contribution  # noqa: E402
from diffpriv_py._contribution import bound_contributions, label_hashes  # noqa: E402
from diffpriv_py.stats._groupby import GroupBy  # noqa: E402
from diffpriv_py.testing import audit  # noqa: E402

P_FALSE_ALARM = 1e-7
HUGE = dp.Del(1e7, 1e-6)  # so much budget that the release is the exact (bounded) statistic


def table(rng: np.random.Generator, n: int = 3000) -> pd.DataFrame:
    """People with 1–6 rows each, spread over three cities, ages 0–99."""
    rows = rng.integers(1, 7, n // 3)
    pid = np.repeat(np.arange(rows.size), rows)
    city = rng.choice(np.array(["Lyon", "Nice", "Paris"]), pid.size, p=[0.3, 0.2, 0.5])
    return pd.DataFrame({"pid": pid, "city": city, "age": rng.integers(0, 100, pid.size).astype(float)})


# ---- exact values with a huge budget ------------------------------------------------------------------------------


def test_huge_budget_gives_the_pandas_groupby_of_the_clipped_values(rng):
    """Without identifier, public keys and ε → ∞: count, sum, mean, var, std equal pandas on the clipped data."""
    df = table(rng)
    out = df.private.groupby(
        "city",
        HUGE,
        column="age",
        statistics=["count", "sum", "mean", "var", "std"],
        bounds=(10, 90),
        keys=["Lyon", "Nice", "Paris"],
        rng=1,
    )
    grouped = df.assign(age=df.age.clip(10, 90)).groupby("city").age
    ref = grouped.agg(["count", "sum", "mean"]).assign(var=grouped.var(ddof=0), std=grouped.std(ddof=0))
    assert list(out.index) == ["Lyon", "Nice", "Paris"] and out.index.name == "city"
    np.testing.assert_array_equal(out["count"], ref["count"])
    for stat in ("sum", "mean", "var", "std"):
        np.testing.assert_allclose(out[stat], ref[stat], rtol=1e-6, atol=1e-4)
    assert {f"{s}_accuracy" for s in ("count", "sum", "mean")} <= set(out.columns)


def test_public_keys_are_all_released_even_when_empty_and_other_groups_ignored(rng):
    """keys=: every key is a row of the result (an absent one as an empty group); rows of other groups are dropped."""
    by = np.array(["a"] * 50 + ["b"] * 20 + ["zzz"] * 5)
    out = dp.stats.groupby(by, HUGE, keys=["b", "c", "a"], rng=0)
    assert list(out.index) == ["b", "c", "a"]
    assert list(out["count"]) == [20, 0, 50]


# ---- contribution bounding (grey-box) ------------------------------------------------------------------------------


def _bound(unit, group, max_groups, max_rows, gen) -> np.ndarray:
    """The keep mask of one bounding with a key drawn from ``gen``; the codes are their own labels."""
    key = int(gen.integers(0, 2**63))
    hashes = label_hashes(np.arange(int(unit.max()) + 1)), label_hashes(np.arange(int(group.max()) + 1))
    return bound_contributions(unit, group, max_groups, max_rows, key, *hashes).keep


def _no_mixing(monkeypatch) -> None:
    """Mutant: every priority is 0, so each person keeps their first groups and each pair its first rows."""
    monkeypatch.setattr(_contribution, "mix64", lambda x: np.zeros_like(x))


def test_contribution_bounding_caps_every_person_at_max_groups_and_max_rows(rng):
    """After bounding, each person has ≤ max_groups groups and ≤ max_rows rows per group; smaller ones keep all."""
    unit = rng.integers(0, 200, 5000)
    group = rng.integers(0, 12, 5000)
    keep = _bound(unit, group, 3, 2, rng)
    kept = pd.DataFrame({"u": unit[keep], "g": group[keep]})
    assert kept.groupby("u").g.nunique().max() <= 3
    assert kept.groupby(["u", "g"]).size().max() <= 2
    full = pd.DataFrame({"u": unit, "g": group})
    small = full.groupby("u").filter(lambda f: f.g.nunique() <= 3 and f.groupby("g").size().max() <= 2)
    assert keep[small.index].all()


def test_contribution_bounding_keeps_a_uniformly_random_subset():
    """One person with rows in 4 groups, max_groups=1: each group is kept with frequency 1/4 (binomial bounds)."""
    unit, group = np.zeros(8, dtype=np.int64), np.repeat(np.arange(4), 2)
    runs = 4000
    gen = np.random.default_rng(5)
    chosen = np.array([group[_bound(unit, group, 1, 2, gen)][0] for _ in range(runs)])
    counts = np.bincount(chosen, minlength=4)
    low, high = sps.binom.ppf(P_FALSE_ALARM, runs, 0.25), sps.binom.isf(P_FALSE_ALARM, runs, 0.25)
    assert np.all((counts >= low) & (counts <= high))


def _kept_subset_counts(gen, runs: int) -> tuple[dict[tuple[int, ...], int], dict[tuple[int, ...], float]]:
    """Person 0 owns rows 0-5: three rows in group 0, two in group 1, one in group 2 (max_groups = max_rows = 2),
    interleaved with 40 other people's rows in the same groups. Frequencies of person 0's kept row sets over
    ``runs`` boundings, and their exact law: a uniform pair of groups, and in group 0 a uniform pair of rows."""
    own_group = np.array([0, 0, 0, 1, 1, 2])
    other_unit = np.repeat(np.arange(1, 41), 3)
    other_group = np.random.default_rng(1).integers(0, 3, other_unit.size)
    unit = np.concatenate([np.zeros(6, dtype=np.int64), other_unit])
    group = np.concatenate([own_group, other_group])
    mix = np.random.default_rng(2).permutation(unit.size)  # person 0's rows spread among the others
    unit, group = unit[mix], group[mix]
    mine = np.argsort(mix)[:6]  # where person 0's rows went, in the order of own_group
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(runs):
        kept = tuple(np.flatnonzero(_bound(unit, group, 2, 2, gen)[mine]))
        counts[kept] = counts.get(kept, 0) + 1
    law: dict[tuple[int, ...], float] = {(3, 4, 5): 1 / 3}
    for rows in ((0, 1), (0, 2), (1, 2)):
        law[(*rows, 3, 4)] = law[(*rows, 5)] = 1 / 9
    return counts, law


def _chi_square_p(counts: dict[tuple[int, ...], int], law: dict[tuple[int, ...], float]) -> float:
    if set(counts) - set(law):
        return 0.0  # a kept set the law forbids
    runs = sum(counts.values())
    observed = np.array([counts.get(k, 0) for k in law])
    return float(sps.chisquare(observed, runs * np.array(list(law.values()))).pvalue)


def test_each_persons_kept_subset_is_uniform_among_others_rows():
    """The bounding rule's law over its random key: person 0's kept rows follow the exact uniform law (chi-square
    over the 7 possible sets, 3000 draws, false alarm 10⁻⁷), whatever other people's rows interleave with theirs."""
    counts, law = _kept_subset_counts(np.random.default_rng(3), 3000)
    assert _chi_square_p(counts, law) > P_FALSE_ALARM


def test_the_uniformity_test_catches_a_rule_that_keeps_the_first_rows(monkeypatch):
    """The same test run on the mutant "keep each person's first groups and rows" rejects it."""
    _no_mixing(monkeypatch)
    counts, law = _kept_subset_counts(np.random.default_rng(3), 3000)
    assert _chi_square_p(counts, law) < P_FALSE_ALARM


@pytest.mark.parametrize(("max_groups", "max_rows"), [(1, 1), (2, 3), (5, 2)])
def test_per_person_limits_hold_exactly_on_adversarial_tables(rng, max_groups, max_rows):
    """One person with 10⁴ rows over 10⁴ groups, one with 10⁴ rows in one group, one with 3 rows in each of 50
    groups, and 7·10⁴ people with one row each, shuffled: each heavy person keeps exactly min(limits) — never more,
    never fewer — and every light person keeps their row."""
    n_light = 70_000
    unit = np.concatenate([np.zeros(10_000), np.ones(10_000), np.full(150, 2), np.arange(3, 3 + n_light)])
    group = np.concatenate(
        [np.arange(10_000), np.full(10_000, 7), np.repeat(np.arange(50), 3), rng.integers(0, 9, n_light)]
    )
    unit, group = unit.astype(np.int64), group.astype(np.int64)
    mix = rng.permutation(unit.size)
    unit, group = unit[mix], group[mix]
    keep = _bound(unit, group, max_groups, max_rows, rng)
    kept = pd.DataFrame({"u": unit[keep], "g": group[keep]})
    per_pair = kept.groupby(["u", "g"]).size()
    assert per_pair.max() <= max_rows
    assert kept.groupby("u").g.nunique().max() <= max_groups
    assert (kept.u == 0).sum() == max_groups  # 10⁴ groups of one row
    assert (kept.u == 1).sum() == max_rows  # one group of 10⁴ rows
    assert (kept.u == 2).sum() == max_groups * min(max_rows, 3)
    assert keep[unit >= 3].all()


def _dropped_positions(people: int) -> np.ndarray:
    """7·10⁴ people with 3 rows in one group each (max_rows = 2): how often each of the 3 positions is dropped."""
    unit = np.repeat(np.arange(people), 3)
    per_person = _bound(unit, np.zeros_like(unit), 1, 2, np.random.default_rng(4)).reshape(people, 3)
    assert (per_person.sum(axis=1) == 2).all()
    return np.bincount(np.argmin(per_person, axis=1), minlength=3)


def test_heavy_pairs_keep_a_uniform_subset(monkeypatch):
    """Which of a pair's 3 rows is dropped is uniform over 7·10⁴ people and one key (chi-square, false alarm 10⁻⁷):
    the priorities of different people are independent-looking; the mutant without mixing fails the same test."""
    assert sps.chisquare(_dropped_positions(70_000)).pvalue > P_FALSE_ALARM
    _no_mixing(monkeypatch)
    assert sps.chisquare(_dropped_positions(70_000)).pvalue < P_FALSE_ALARM


def _others_kept(unit, group, key, person) -> set[tuple[int, int, int]]:
    """(person, group, occurrence within the pair) of every kept row of the people other than ``person``."""
    keep = bound_contributions(unit, group, 2, 2, key, label_hashes(np.arange(10**6)), label_hashes(np.arange(50)))
    frame = pd.DataFrame({"u": unit, "g": group})
    frame["j"] = frame.groupby(["u", "g"]).cumcount()
    kept = frame[keep.keep & (unit != person)]
    return set(map(tuple, kept[["u", "g", "j"]].to_numpy().tolist()))


@pytest.mark.parametrize("key", [0, 12345, 2**62 + 7])
def test_for_every_key_replacing_one_person_leaves_everyone_elses_kept_rows(rng, key):
    """The coupling the sensitivities rely on, for a fixed key (no randomness involved): person 7's rows replaced by
    more rows, fewer rows, rows moved before or after everyone else's, or rows alone in fresh groups — every other
    person keeps exactly the same rows. A rule drawing one random order over all rows (the previous rule) fails this
    for a fixed seed whenever the replaced person's number of rows changes."""
    unit = rng.integers(0, 40, 600)
    group = rng.integers(0, 30, 600)
    base = _others_kept(unit, group, key, 7)
    others = unit != 7
    for mine_g in (np.array([1, 1, 1, 2, 3, 4, 5]), np.array([1]), np.array([40, 41, 42, 43]), np.arange(30)):
        mine_u = np.full(mine_g.size, 7)
        for front in (True, False):
            parts_u = [mine_u, unit[others]] if front else [unit[others], mine_u]
            parts_g = [mine_g, group[others]] if front else [group[others], mine_g]
            assert _others_kept(np.concatenate(parts_u), np.concatenate(parts_g), key, 7) == base


def test_the_kept_set_does_not_depend_on_how_people_are_ordered_or_split(rng):
    """Any order of the people (each person's own rows in their order) and any split of the people into parts
    give the same kept rows: what a partitioned (dask) run relies on."""
    unit = np.repeat(np.arange(300), rng.integers(1, 9, 300))
    group = rng.integers(0, 20, unit.size)
    key = 99
    hashes = label_hashes(np.arange(300)), label_hashes(np.arange(20))
    whole = bound_contributions(unit, group, 2, 2, key, *hashes).keep
    people = rng.permutation(300)
    order = np.concatenate([np.flatnonzero(unit == p) for p in people])  # people reordered, rows kept in order
    reordered = bound_contributions(unit[order], group[order], 2, 2, key, *hashes).keep
    assert np.array_equal(reordered, whole[order])
    part = np.isin(unit, people[:150])
    split = np.empty(unit.size, dtype=bool)
    for mask in (part, ~part):
        split[mask] = bound_contributions(unit[mask], group[mask], 2, 2, key, *hashes).keep
    assert np.array_equal(split, whole)


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 16])
@pytest.mark.parametrize("layout", ["sorted", "grouped", "shuffled"])
@pytest.mark.parametrize("limits", [(1, 1), (2, 3), (9, 2), (3, 12)])
def test_bounding_slice_by_slice_keeps_the_rows_of_the_whole_table(monkeypatch, rng, chunk, layout, limits):
    """bound_table (slices of whole people, a radix order when the people are not together, rows outside the groups
    ignored) keeps exactly the rows bound_contributions keeps on the whole table, and counts each group's people and
    set-union weights exactly: slices of 1 row to all rows, a person with 400 rows straddling many slices, small
    limits (passes of minima) and large ones (a sort)."""
    from diffpriv_py import _contribution as C

    g_max, r_max = limits
    unit = np.concatenate([np.repeat(np.arange(300), rng.integers(1, 9, 300)), np.full(400, 300)])
    if layout == "grouped":  # each person's rows together, the people in a random order
        unit = np.concatenate([unit[unit == p] for p in rng.permutation(301)])
    if layout == "shuffled":
        unit = unit[rng.permutation(unit.size)]
    group = rng.integers(0, 25, unit.size)
    group[rng.random(unit.size) < 0.05] = -1  # rows outside the public keys
    key, n_people = 12345, 301
    hashes = label_hashes(np.arange(n_people)), label_hashes(np.arange(25))
    inside = group >= 0
    whole = bound_contributions(unit[inside], group[inside], g_max, r_max, key, *hashes)
    expected = np.full(unit.size, -1)
    expected[np.flatnonzero(inside)[whole.keep]] = group[inside][whole.keep]
    monkeypatch.setattr(C, "CHUNK_ROWS", chunk)
    codes = unit if layout == "sorted" else np.unique(unit, return_index=True)[1].argsort().argsort()[unit]
    order = C.person_order(codes, n_people)
    assert (order is None) == (layout != "shuffled")
    hash_of = (
        label_hashes
        if layout == "sorted"
        else (lambda c: hashes[0][np.unique(unit, return_index=True)[1].argsort()[c]])
    )
    shares = np.arange(g_max + 1, dtype=np.int64) * 1000 + 1
    got = C.bound_table(codes, group, 25, g_max, r_max, key, hash_of, hashes[1], order, shares)
    assert np.array_equal(got.row_group, expected)
    assert np.array_equal(got.people, np.bincount(whole.pair_group, minlength=25))
    kept_groups = np.bincount(whole.pair_person)[whole.pair_person]
    assert np.array_equal(got.weight, np.bincount(whole.pair_group, weights=shares[kept_groups], minlength=25))


@pytest.mark.parametrize("width", [1, 3, 4, 7, 12])
def test_string_labels_factorise_as_np_unique(rng, width):
    """The packed-integer factorisation of fixed-width strings (empty strings, accents, the largest code point)
    gives np.unique's sorted labels and codes."""
    from diffpriv_py.stats._groupby import _factorize

    alphabet = list("ab\u00e9\U0010ffff")
    labels = np.array(["".join(rng.choice(alphabet, rng.integers(0, width + 1))) for _ in range(3000)])
    uniques, codes = _factorize(labels)
    expected, inverse = np.unique(labels, return_inverse=True)
    assert np.array_equal(uniques, expected) and np.array_equal(codes, inverse)


def test_a_person_with_many_rows_moves_a_count_by_at_most_max_rows(rng):
    """A person with 50 rows in one group adds at most max_rows to its exact (bounded) count."""
    base = pd.DataFrame({"pid": np.arange(100), "city": ["x"] * 100})
    heavy = pd.concat([base, pd.DataFrame({"pid": [999] * 50, "city": ["x"] * 50})])
    kw = {"keys": ["x"], "privacy_unit": "pid", "max_rows": 3, "rng": 0}
    a = base.private.groupby("city", HUGE, **kw)["count"].iloc[0]
    b = heavy.private.groupby("city", HUGE, **kw)["count"].iloc[0]
    assert b - a == 3


# ---- partition selection -------------------------------------------------------------------------------------------


def test_selection_threshold_is_the_smallest_meeting_delta():
    """τ: a one-person group clears it with probability ≤ δ₀ exactly, and τ − 1 would exceed δ₀."""
    for g, params in ((1, dp.Del(1.0, 1e-6)), (3, dp.Del(0.3, 1e-9)), (2, dp.Del(2.0, 0.2))):
        mech = GroupBy(max_groups=g)
        select = mech.split(params)[0]
        t, tau = mech.threshold(select)
        delta0 = select.delta / ((1 + math.exp(select.epsilon)) * g)
        law = sps.dlaplace(t)
        assert law.sf(tau - 2) <= delta0 < law.sf(tau - 3)  # P(1 + K ≥ τ) = P(K > τ − 2)


def test_a_group_of_one_person_is_released_at_most_at_rate_delta_and_large_groups_almost_always():
    """Measured: many one-person groups are released at a rate ≤ δ₀ (Clopper–Pearson), 200-person groups ≥ 99.9%."""
    params = dp.Del(1.0, 0.3)  # a large δ so the rate is measurable
    singles = np.arange(3000).astype(str)
    by = np.concatenate([singles, np.repeat(["big1", "big2"], 200)])
    mech = GroupBy()
    select = mech.split(params)[0]
    delta0 = select.delta / ((1 + math.exp(select.epsilon)) * 1)
    released = big = 0
    runs = 15
    for seed in range(runs):
        keys = dp.stats.groupby(by, params, rng=seed).index
        released += int(np.isin(keys, singles).sum())
        big += int(np.isin(["big1", "big2"], keys).sum())
    trials = runs * singles.size
    lower = sps.beta.ppf(P_FALSE_ALARM, released, trials - released + 1) if released else 0.0
    assert lower <= delta0
    t, tau = mech.threshold(select)
    exact = sps.dlaplace(t).sf(tau - 2)
    assert sps.binom.ppf(P_FALSE_ALARM, trials, exact) <= released <= sps.binom.isf(P_FALSE_ALARM, trials, exact)
    # The test has power: a threshold one lower releases single-person groups measurably more often than δ₀.
    assert sps.binom.ppf(P_FALSE_ALARM, trials, sps.dlaplace(t).sf(tau - 3)) > trials * delta0
    assert big == 2 * runs


OWNER = 10**6  # the privacy unit of the attacker who owns many labels


def _owner_table(n_labels: int = 10_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two groups of 300 one-row people, and one person with one row in each of ``n_labels`` labels of their own."""
    own = np.char.add("own", np.arange(n_labels).astype(str))
    by = np.concatenate([np.repeat(["big1", "big2"], 300), own])
    unit = np.concatenate([np.arange(600), np.full(n_labels, OWNER)])
    return by, unit, own


@pytest.mark.parametrize("max_groups", [1, 3])
def test_labels_emptied_by_bounding_are_never_candidates(monkeypatch, max_groups):
    """Attack: one person owns 10⁴ labels, max_groups 1 and 3 (ε = 1, δ = 10⁻³). Only the ≤ max_groups labels the
    bounding kept may be released (each at rate ≤ δ₀); a label it emptied exists in no neighbour without that
    person, so it must never appear. The candidates used to be the raw labels: an emptied label then appeared in
    most releases (measured: 88% with max_groups 1, 74% with 3, so δ ≥ 0.7), and this test failed at seed 0."""
    by, unit, own = _owner_table()
    params = dp.Del(1.0, 1e-3)
    masks = spy_on_bounding(monkeypatch)
    is_owner = unit == OWNER
    runs, with_own = 20, 0
    for seed in range(runs):
        out = dp.stats.groupby(by, params, privacy_unit=unit, max_groups=max_groups, rng=seed)
        kept = set(by[masks[-1] & is_owner].tolist())
        assert len(kept) == max_groups
        released_own = set(out.index[np.isin(out.index, own)].tolist())
        assert released_own <= kept, (seed, released_own - kept)
        assert {"big1", "big2"} <= set(out.index)
        with_own += bool(released_own)
    # The kept labels hold one person each: a release shows one with probability ≤ max_groups·δ₀ ≈ 10⁻³.
    select = GroupBy(max_groups=max_groups).split(params)[0]
    rate = select.delta / (1 + math.exp(select.epsilon))  # = max_groups·δ₀
    assert with_own <= sps.binom.isf(P_FALSE_ALARM, runs, rate)


def test_selection_on_dask_input_is_the_in_memory_release_for_a_persons_many_labels(monkeypatch):
    """The same attack on dask columns: each partition bounds its own people with the same rule and the groups go
    through the same candidate rule, so the release is the in-memory one bit for bit for a seed, and never shows an
    emptied label."""
    dd = pytest.importorskip("dask.dataframe")
    by, unit, own = _owner_table()
    gen = np.random.default_rng(0)
    df = pd.DataFrame({"g": by, "pid": unit, "x": gen.uniform(0, 10, by.size)})
    ddf = dd.from_pandas(df, npartitions=4)
    masks = spy_on_bounding(monkeypatch)
    kw = {"statistics": ["count", "mean"], "bounds": (0, 10), "name": "g"}
    for max_groups in (1, 3):
        for seed in range(3):
            params = dp.Del(1.0, 1e-3)
            in_memory = dp.stats.groupby(df["g"], params, values=df["x"], privacy_unit=df["pid"],
                                         max_groups=max_groups, rng=seed, **kw)  # fmt: skip
            # The in-memory bounding's kept rows (on dask each partition bounds its own people: the same rows).
            kept = set(by[masks[-1] & (unit == OWNER)].tolist())
            out_of_core = dp.stats.groupby(ddf["g"], params, values=ddf["x"], privacy_unit=ddf["pid"],
                                           max_groups=max_groups, rng=seed, **kw)  # fmt: skip
            pd.testing.assert_frame_equal(in_memory, out_of_core, check_exact=True)
            assert set(out_of_core.index[np.isin(out_of_core.index, own)].tolist()) <= kept


@pytest.mark.parametrize("max_groups", [1, 3])
def test_a_person_straddling_public_keys_and_unknown_labels_is_bounded_over_the_keys_only(max_groups):
    """Attack with keys=: one person has one row in key 'a' and rows in 10⁴ labels outside the keys. Every release
    lists exactly the keys, in their order (never an unknown label), and the person always counts in 'a': rows
    outside the keys are dropped before bounding, so their max_groups are spent on keys (bounding first would keep
    'a' with probability about max_groups/10⁴). In memory and on dask, with and without an identifier."""
    dd = pytest.importorskip("dask.dataframe")
    _, _, own = _owner_table()
    by = np.concatenate([np.repeat(["a", "b"], [50, 30]), ["a"], own])
    unit = np.concatenate([np.arange(80), np.full(1 + own.size, OWNER)])
    keys = ["c", "a", "b"]
    df = pd.DataFrame({"g": by, "pid": unit})
    ddf = dd.from_pandas(df, npartitions=3)
    for seed in range(3):
        for params in (HUGE, dp.Del(1.0, 1e-3)):
            out = df.private.groupby("g", params, keys=keys, privacy_unit="pid", max_groups=max_groups, rng=seed)
            assert list(out.index) == keys
            if params is HUGE:
                assert list(out["count"]) == [0, 51, 30]
            lazy = dp.stats.groupby(ddf["g"], params, keys=keys, privacy_unit=ddf["pid"], max_groups=max_groups,
                                    rng=seed, name="g")  # fmt: skip
            pd.testing.assert_frame_equal(out, lazy, check_exact=True)
            if max_groups == 1:  # without an identifier every row is a person: the keyed rows are counted
                rows = df.private.groupby("g", params, keys=keys, rng=seed)
                assert list(rows.index) == keys
                if params is HUGE:
                    assert list(rows["count"]) == [0, 51, 30]


def test_the_released_keys_dtype_does_not_depend_on_unreleased_labels():
    """A fixed-width string dtype used to be as wide as the longest label of the data, released or not: one person's
    100-character label changed the result's dtype. It is now as wide as the longest released label."""
    by = np.concatenate([np.repeat(["big1", "big2"], 300), ["x" * 100]])
    res = GroupBy().release_response(dp.Del(1.0, 1e-6), (by, None, None), rng=0).response
    assert list(res.keys) == ["big1", "big2"] and res.keys.dtype == np.dtype("<U4")
    none = GroupBy().release_response(dp.Del(1.0, 1e-6), (by[-1:], None, None), rng=0).response
    assert none.keys.size == 0 and none.keys.dtype == np.dtype("<U1")


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([1, 2, 2] * 100, dtype="Int64"),
        pd.Series([True, False, False] * 100, dtype="boolean"),
        pd.Series([1, 2, 2] * 100, dtype="category"),
        pd.Series(["a", "b", "b"] * 100, dtype="category"),
        pd.Series([1.0, 2.0, 2.0] * 100, dtype="Float64"),
    ],
    ids=["Int64", "boolean", "int-category", "str-category", "Float64"],
)
def test_one_missing_label_changes_neither_the_index_dtype_nor_the_keyed_counts(column):
    """Attack: a pandas nullable or categorical column with one person whose label is missing. to_numpy() used to
    pick int64/bool without a missing value and float64/object with one: the released index's dtype told whether
    someone's label was missing (their group is not released), and with keys=[False, True] every count of the
    boolean column became 0. The labels' type is now fixed by the column's dtype."""
    with_na = pd.concat([column, pd.Series([None], dtype=column.dtype)], ignore_index=True)
    keys = sorted(set(column.tolist()))
    for seed in range(3):
        a = dp.stats.groupby(column, dp.Del(5.0, 1e-6), rng=seed)
        b = dp.stats.groupby(with_na, dp.Del(5.0, 1e-6), rng=seed)
        assert a.index.dtype == b.index.dtype and list(a.index) == list(b.index)
        exact_a = dp.stats.groupby(column, HUGE, keys=keys, rng=seed)
        exact_b = dp.stats.groupby(with_na, HUGE, keys=keys, rng=seed)
        assert list(exact_a["count"]) == list(exact_b["count"]) == [int((column == k).sum()) for k in keys]
    dd = pytest.importorskip("dask.dataframe")  # dask reads the labels the same way: the in-memory release
    lazy = dd.from_pandas(with_na, npartitions=2)
    for kw in ({"privacy_params": dp.Del(5.0, 1e-6)}, {"privacy_params": HUGE, "keys": keys}):
        pd.testing.assert_frame_equal(
            dp.stats.groupby(with_na, rng=0, **kw), dp.stats.groupby(lazy, rng=0, **kw), check_exact=True
        )


# ---- error bars ----------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_error_bars_cover_every_statistic_at_the_stated_rate(mechanism):
    """Each released statistic is within its accuracy column of the exact bounded value at rate ≥ 1 − α."""
    gen = np.random.default_rng(3)
    by = np.repeat(["a", "b", "c"], [40, 80, 160])
    age = gen.uniform(0, 100, by.size)
    stats = ["count", "sum", "mean", "var", "std"]
    grouped = pd.DataFrame({"by": by, "x": age}).groupby("by").x
    exact = grouped.agg(["count", "sum", "mean"]).assign(var=grouped.var(ddof=0), std=grouped.std(ddof=0))
    params = dp.Del(3.0, 1e-4)
    alpha, runs = 0.2, 300
    hits = dict.fromkeys(stats, 0)
    small = dict.fromkeys(stats, 0)
    for seed in range(runs):
        out = dp.stats.groupby(
            by,
            params,
            values=age,
            statistics=stats,
            bounds=(0, 100),
            keys=["a", "b", "c"],
            mechanism=mechanism,
            alpha=alpha,
            rng=seed,
        )
        for s in stats:
            err = np.abs(out[s].to_numpy() - exact.loc[out.index, s].to_numpy())
            hits[s] += int(np.sum(err <= out[f"{s}_accuracy"].to_numpy()))
            small[s] += int(np.sum(err <= out[f"{s}_accuracy"].to_numpy() / 4))
    trials = 3 * runs
    low = sps.binom.ppf(P_FALSE_ALARM, trials, 1 - alpha)
    for s in stats:
        assert hits[s] >= low, s
    # Count and sum bars are exact quantiles: a bar four times too small is refuted.
    assert small["count"] < low and small["sum"] < low


# ---- one charge, public checks first --------------------------------------------------------------------------------


def test_the_whole_query_is_charged_once_with_the_given_guarantee(rng):
    """A group-by with five statistics and partition selection is one ledger entry of exactly privacy_params."""
    acc = dp.Accountant(budget=dp.Del(2.0, 1e-5))
    df = table(rng)
    df.private.groupby(
        "city",
        dp.Del(1.0, 1e-6),
        column="age",
        statistics=["count", "sum", "mean", "var", "std"],
        bounds=(0, 100),
        privacy_unit="pid",
        max_groups=1,
        max_rows=2,
        accountant=acc,
        rng=0,
    )
    assert len(acc.ledger) == 1
    assert acc.ledger[0].guarantee == dp.Del(1.0, 1e-6)


BAD = [
    ({"statistics": ["median"]}, ValueError, "statistics"),
    ({"statistics": ["mean"]}, TypeError, "bounds"),
    ({"statistics": ["mean"], "bounds": (5, 1)}, ValueError, "lower < upper"),
    ({"statistics": ["mean"], "bounds": (0, math.nan)}, ValueError, "finite"),
    ({"max_groups": 2}, ValueError, "privacy_unit"),
    ({"max_rows": 0, "privacy_unit": np.zeros(5)}, ValueError, "max_rows"),
    ({"privacy_params": dp.Eps(1.0)}, ValueError, "delta > 0"),
    ({"privacy_params": dp.Eps(1.0), "mechanism": "gaussian", "keys": ["a"]}, TypeError, "Del"),
    ({"alpha": 1.5}, ValueError, "alpha"),
    ({"keys": ["a", "a"]}, ValueError, "distinct"),
    ({"privacy_unit": np.zeros(3)}, ValueError, "one entry per row"),
    ({"statistics": ["sum"], "bounds": (0, 1), "values": np.array(["x"] * 5)}, TypeError, "numeric"),
    ({"mechanism": "cauchy"}, ValueError, "mechanism"),
    ({"quantiles": [1.5], "bounds": (0, 1)}, ValueError, "Quantile levels"),
    ({"quantiles": [0.5]}, TypeError, "bounds"),
    ({"keys": [1, 2]}, TypeError, "type of the 'by' labels"),  # would match no row: all groups empty
]


@pytest.mark.parametrize(("kwargs", "error", "match"), BAD)
def test_bad_public_inputs_are_refused_before_the_budget_is_charged(kwargs, error, match):
    """Every public mistake raises a clear error naming the parameter, and the accountant is not charged."""
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    kw = {"values": np.arange(5.0), "privacy_params": dp.Del(1.0, 1e-6), **kwargs}
    params = kw.pop("privacy_params")
    with pytest.raises(error, match=match):
        dp.stats.groupby(np.array(list("aabbc")), params, accountant=acc, rng=0, **kw)
    assert len(acc.ledger) == 0


def test_a_released_float_label_does_not_carry_the_bits_of_one_row():
    """Attack: −0.0 and 0.0 (or NaNs with different payloads) are one group, and its label used to be the first
    row's: the sign bit of the released 0 told whether that row held −0.0. Neighbours differing only there now give
    the same release bit for bit."""
    quiet_nan = np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0]  # a NaN with a payload
    for first, rest in ((-0.0, 0.0), (quiet_nan, np.nan)):
        a = np.concatenate([[rest], np.full(200, rest), np.ones(100)])
        b = np.concatenate([[first], np.full(200, rest), np.ones(100)])
        for seed in range(2):
            out_a = dp.stats.groupby(a, dp.Del(1.0, 1e-6), rng=seed)
            out_b = dp.stats.groupby(b, dp.Del(1.0, 1e-6), rng=seed)
            np.testing.assert_array_equal(
                out_a.index.to_numpy().view(np.uint64), out_b.index.to_numpy().view(np.uint64)
            )
            pd.testing.assert_frame_equal(out_a, out_b, check_exact=True)


def test_a_nan_key_is_the_group_of_missing_labels():
    """keys=[…, nan] releases the number of rows whose float label is missing (NaN ≠ NaN made it always 0)."""
    for by in (np.array([1.0, np.nan, np.nan, 2.0]), pd.Series([1, None, None, 2], dtype="Int64")):
        out = dp.stats.groupby(by, HUGE, keys=[1.0, np.nan], rng=0)
        assert list(out["count"]) == [1, 2]


def test_a_selection_epsilon_beyond_float64_is_refused_before_the_charge():
    """e^ε of the threshold overflows for ε_s > 709: it used to raise OverflowError after the charge."""
    acc = dp.Accountant(budget=dp.Del(1e8, 1e-3))
    with pytest.raises(ValueError, match="beyond float64"):
        dp.stats.groupby(np.array(list("aab")), dp.Del(1e7, 1e-6), accountant=acc, rng=0)
    assert len(acc.ledger) == 0
    assert list(dp.stats.groupby(np.array(list("aab")), dp.Del(1e7, 1e-6), keys=["a"], rng=0)["count"]) == [2]


def test_nan_values_are_refused_after_the_charge_with_a_note():
    """NaN is data: it is found after the charge, and the error says the budget was spent."""
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    with pytest.raises(dp.exceptions.TargetOutputError, match="NaN") as info:
        dp.stats.groupby(
            np.array(list("ab")), dp.Del(1.0, 1e-6), values=[1.0, np.nan], statistics="sum", bounds=(0, 1),
            accountant=acc, rng=0,
        )  # fmt: skip
    assert len(acc.ledger) == 1 and "charged" in " ".join(getattr(info.value, "__notes__", []))


# ---- audits on neighbouring tables ----------------------------------------------------------------------------------


def _people(groups_rows: dict[str, list[int]]) -> tuple[np.ndarray, None, np.ndarray]:
    """A table from {group: [rows of person 0, rows of person 1, …]} with person ids unique per group."""
    by, unit = [], []
    pid = 0
    for g, rows in groups_rows.items():
        for r in rows:
            by += [g] * r
            unit += [pid] * r
            pid += 1
    return np.array(by), None, np.array(unit)


@pytest.mark.slow
def test_audit_does_not_refute_a_person_who_alone_makes_a_group_exist():
    """Replace-one person: D has a person alone in group 'rare'; D′ moves them into 'big'. Claim not refuted."""
    base = {"big": [1] * 30}
    d1 = _people({**base, "rare": [1]})
    d2 = _people({"big": [1] * 31})
    mech = _Flattened(inner=GroupBy(max_groups=1, max_rows=1), labels=("big", "rare"))
    report = audit(mech, d1, d2, dp.Del(1.0, 0.05), n=2000, rng=1)
    assert report.passed, report


@pytest.mark.slow
def test_audit_does_not_refute_a_person_with_many_labels_of_their_own():
    """Replace-one person: in D a person owns 1000 labels (max_groups=1), in D′ they are replaced by a person in
    'big1'. The auditor sees how many released groups are outside ('big1', 'big2'); the claim (1, 10⁻³) is not
    refuted. With the raw labels as candidates one of them appeared in about a fifth of releases on D and never
    on D′, and this audit refuted the claim (δ ≥ 0.11)."""
    by, unit, _ = _owner_table(1000)
    d1 = (by, None, unit)
    d2 = (np.concatenate([by[:600], ["big1"]]), None, np.concatenate([unit[:600], [OWNER]]))
    mech = WithUnlisted(inner=GroupBy(max_groups=1), labels=("big1", "big2"))
    report = audit(mech, d1, d2, dp.Del(1.0, 1e-3), n=1500, rng=4)
    assert report.passed, report


@pytest.mark.slow
def test_audit_does_not_refute_a_person_with_many_rows_and_catches_missing_bounding(monkeypatch):
    """A person with 20 rows in 2 groups (max_rows=3, max_groups=2) passes; without bounding the audit refutes it."""
    base = {"a": [1] * 40, "b": [1] * 40}
    d1 = _people(base)
    heavy = _people({"a": [20], "b": [20]})
    by = np.concatenate([d1[0][:-1], heavy[0]])
    unit = np.concatenate([d1[2][:-1], np.full(40, 10_000)])  # the last person of d1 replaced by a heavy one
    d2 = (by, None, unit)
    mech = _Flattened(inner=GroupBy(max_groups=2, max_rows=3, keys=("a", "b")), labels=("a", "b"))
    params = dp.Eps(1.0)
    assert audit(mech, d1, d2, params, n=2000, rng=2).passed
    real = _contribution.bound_table
    monkeypatch.setattr(  # mutant: no bounding (limits beyond every person's rows)
        "diffpriv_py.stats._groupby.bound_table", lambda p, g, k, mg, mr, *rest: real(p, g, k, 10**9, 10**9, *rest)
    )
    assert not audit(mech, d1, d2, params, n=2000, rng=2).passed


# ---- out of core ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", [False, True])
def test_dask_group_by_is_bit_identical_to_in_memory_for_a_seed(rng, unit):
    """A dask DataFrame (values streamed block by block, exact integer sums) gives the in-memory frame, bit for bit."""
    dd = pytest.importorskip("dask.dataframe")
    df = table(rng, 6000)
    ddf = dd.from_pandas(df, npartitions=5)
    kw = {"statistics": ["count", "sum", "mean", "var", "std"], "quantiles": [0.5], "bounds": (0, 100), "rng": 11}
    if unit:
        kw.update(privacy_unit="pid", max_groups=2, max_rows=3)
    params = dp.Del(1.0, 1e-6)
    in_memory = df.private.groupby("city", params, column="age", **kw)
    kw_dask = {**kw, "privacy_unit": ddf["pid"]} if unit else kw
    out_of_core = dp.stats.groupby(ddf["city"], params, values=ddf["age"], name="city", **kw_dask)
    pd.testing.assert_frame_equal(in_memory, out_of_core, check_exact=True)
    # Different blocks of the same rows: still identical (the sums are exact integers).
    rechunked = dd.from_pandas(df, npartitions=2)
    again = dp.stats.groupby(
        rechunked["city"], params, values=rechunked["age"], name="city",
        **({**kw, "privacy_unit": rechunked["pid"]} if unit else kw),
    )  # fmt: skip
    pd.testing.assert_frame_equal(in_memory, again, check_exact=True)


def test_dask_values_with_nan_are_refused_after_the_charge():
    """NaN found while streaming out-of-core values raises, with the charge noted."""
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame({"g": list("aabb"), "x": [1.0, 2.0, np.nan, 4.0]})
    ddf = dd.from_pandas(df, npartitions=2)
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    with pytest.raises(dp.exceptions.TargetOutputError, match="NaN"):
        dp.stats.groupby(ddf["g"], dp.Eps(1.0), values=ddf["x"], statistics="sum", bounds=(0, 5), keys=["a", "b"],
                         accountant=acc, rng=0)  # fmt: skip
    assert len(acc.ledger) == 1


# ---- quantiles per group --------------------------------------------------------------------------------------------


def test_quantiles_per_group_with_a_huge_budget_are_the_data_quantiles_on_the_grid(rng):
    """ε → ∞: each released quantile is within one grid step of numpy's quantile of the group's clipped values."""
    by = rng.choice(np.array(["a", "b"]), 4000)
    x = rng.normal(50, 15, 4000)
    out = dp.stats.groupby(by, HUGE, values=x, quantiles=[0.1, 0.5, 0.9], bounds=(0, 100), keys=["a", "b"], rng=0)
    step = 100 / 1024
    for g in ("a", "b"):
        for q in (0.1, 0.5, 0.9):
            assert abs(out.loc[g, f"q{q:g}"] - np.quantile(np.clip(x[by == g], 0, 100), q)) <= step
    assert "q0.5_rank_accuracy" in out.columns


def _scores(values: np.ndarray, q: float) -> np.ndarray:
    from diffpriv_py.stats._quantile import _rank_counts, candidate_grid

    less, at_most, n = _rank_counts(values, candidate_grid(0.0, 100.0), "raise")
    return -np.maximum(np.maximum(less - q * n, q * n - at_most), 0.0)


def test_replacing_a_person_moves_a_groups_quantile_scores_by_at_most_twice_max_rows(rng):
    """Grey-box: a person's R rows replaced by another's R rows in the same group move every score by ≤ 2R."""
    base = rng.uniform(0, 100, 300)
    for q in (0.1, 0.5, 0.97):
        for r in (1, 3):
            a = np.concatenate([base, np.full(r, 0.0)])  # the replaced person at the bottom …
            b = np.concatenate([base, np.full(r, 100.0)])  # … and the new one at the top
            c = base  # and removal alone (a group touched by one person only)
            assert np.abs(_scores(a, q) - _scores(b, q)).max() <= 2 * r * max(q, 1 - q) + 1e-9
            assert np.abs(_scores(a, q) - _scores(c, q)).max() <= r * max(q, 1 - q) + 1e-9


@pytest.mark.slow
def test_quantile_rank_error_per_group_stays_within_the_rank_bar():
    """Released medians' rank errors (beyond the grid's own) are within the rank bar at rate ≥ 1 − α."""
    gen = np.random.default_rng(4)
    by = np.repeat(["a", "b"], [150, 300])
    x = gen.uniform(0, 100, by.size)
    alpha, runs, hits = 0.2, 200, 0
    for seed in range(runs):
        out = dp.stats.groupby(by, dp.Eps(0.3), values=x, quantiles=0.5, bounds=(0, 100), keys=["a", "b"],
                               alpha=alpha, rng=seed)  # fmt: skip
        for g in ("a", "b"):
            scores = _scores(x[by == g], 0.5)
            grid_idx = int(np.rint(out.loc[g, "q0.5"] / (100 / 1024)))
            hits += -scores[grid_idx] <= -scores.max() + out.loc[g, "q0.5_rank_accuracy"]
    assert hits >= sps.binom.ppf(P_FALSE_ALARM, 2 * runs, 1 - alpha)


@pytest.mark.slow
def test_audit_does_not_refute_means_when_a_heavy_person_is_added_or_removed():
    """Add/remove (half a replacement): a person with 30 extreme rows in one group; count and mean not refuted."""
    gen = np.random.default_rng(8)
    by = np.repeat(["a", "b"], 40)
    unit = np.arange(80)
    x = gen.uniform(0, 10, 80)
    d1 = (by, x, unit)
    d2 = (np.concatenate([by, ["a"] * 30]), np.concatenate([x, np.full(30, 10.0)]), np.concatenate([unit, [999] * 30]))
    inner = GroupBy(statistics=("count", "mean"), bounds=(0, 10), keys=("a", "b"), max_rows=2)
    mech = _Flattened(inner=inner, labels=("a", "b"))
    assert audit(mech, d1, d2, dp.Eps(1.0), n=2000, rng=3).passed


# ---- several value columns in one release ---------------------------------------------------------------------------


def two_columns(rng: np.random.Generator, n: int = 3000) -> pd.DataFrame:
    """:func:`table` with an income column too."""
    df = table(rng, n)
    return df.assign(income=rng.uniform(0, 1e5, len(df)))


BOTH_BOUNDS = {"age": (10, 90), "income": (0, 8e4)}


def test_one_value_column_is_released_as_before_and_a_one_column_mapping_is_the_same_release_renamed(rng):
    """values=array keeps today's columns; values={'age': array} is the same release bit for bit, prefixed."""
    df = table(rng)
    kw = {"statistics": ["count", "sum", "mean", "var", "std"], "quantiles": [0.5], "privacy_unit": df["pid"],
          "max_groups": 2, "max_rows": 2, "rng": 7}  # fmt: skip
    one = dp.stats.groupby(df["city"], dp.Del(1.0, 1e-6), values=df["age"], bounds=(10, 90), **kw)
    assert list(one.columns) == [
        "count", "count_accuracy", "sum", "sum_accuracy", "mean", "mean_accuracy", "var", "var_accuracy", "std",
        "std_accuracy", "q0.5", "q0.5_rank_accuracy",
    ]  # fmt: skip
    named = dp.stats.groupby(df["city"], dp.Del(1.0, 1e-6), values={"age": df["age"]}, bounds={"age": (10, 90)}, **kw)
    assert list(named.columns) == [f"age_{c}" for c in one.columns]
    pd.testing.assert_frame_equal(one, named.rename(columns=lambda c: c.removeprefix("age_")), check_exact=True)


def test_two_columns_with_a_huge_budget_are_pandas_on_the_same_kept_rows(rng):
    """ε → ∞ with public keys: each column's statistics are pandas' on its clipped values; with people owning many
    rows, both columns sum the *same* kept rows (one bounding): the same column given twice gives equal sums, where
    a bounding per column would keep different rows."""
    df = two_columns(rng)
    keys = ["Lyon", "Nice", "Paris"]
    stats = ["count", "sum", "mean", "var", "std"]
    out = df.private.groupby("city", HUGE, column=["age", "income"], statistics=stats, bounds=BOTH_BOUNDS, keys=keys,
                             rng=1)  # fmt: skip
    for col, (lo, hi) in BOTH_BOUNDS.items():
        grouped = df.assign(x=df[col].clip(lo, hi)).groupby("city").x
        ref = grouped.agg(["count", "sum", "mean"]).assign(var=grouped.var(ddof=0), std=grouped.std(ddof=0))
        np.testing.assert_array_equal(out[f"{col}_count"], ref["count"])
        for stat in stats[1:]:
            np.testing.assert_allclose(out[f"{col}_{stat}"], ref[stat], rtol=1e-6, atol=1e-3)
    frame = dp.stats.groupby(df["city"], HUGE, values=df[["age", "income"]], statistics=stats, bounds=BOTH_BOUNDS,
                             keys=keys, rng=1)  # fmt: skip
    pd.testing.assert_frame_equal(frame, out, check_exact=True, check_names=False)  # a DataFrame is its columns
    twice = dp.stats.groupby(df["city"], HUGE, values={"a": df["age"], "b": df["age"]}, statistics=["count", "sum"],
                             bounds=(0, 100), keys=keys, privacy_unit=df["pid"], max_rows=2, rng=3)  # fmt: skip
    np.testing.assert_array_equal(twice["a_count"], twice["b_count"])
    np.testing.assert_allclose(twice["a_sum"], twice["b_sum"], atol=1e-3)
    assert (twice["a_count"] < df.groupby("city").size()).all()  # the bounding did drop rows


def test_the_budget_is_split_over_one_selection_one_shared_count_and_each_columns_sums():
    """Statistics count+mean on two columns: selection, one count (shared), Σu of each column — four equal shares."""
    mech = GroupBy(columns=("age", "income"), statistics=("count", "mean"), bounds={"age": (0, 1), "income": (0, 9)})
    assert [(m.name, m.column) for m in mech.measurements()] == [("count", None), ("sum_u", "age"), ("sum_u", "income")]
    select, parts = mech.split(dp.Del(1.0, 1e-6))
    assert select == dp.Del(0.25, 1e-6) and parts == [dp.Eps(0.25)] * 3
    assert isinstance(hash(mech), int)  # still a hashable frozen mechanism
    mixed = GroupBy(columns=("a", "b"), statistics={"a": ["sum"], "b": ["var"]}, bounds=(0, 1), quantiles=[0.5],
                    keys=("x",), noise="gaussian")  # fmt: skip
    names = [(m.name, m.column) for m in mixed.measurements()]
    assert names == [("count", None), ("sum", "a"), ("sum_u", "b"), ("sum_u2", "b")]
    select, parts = mixed.split(dp.Del(1.2, 6e-6))
    assert select is None and len(parts) == 4 + 2  # and one quantile draw per column
    assert all(p == dp.Del(1.2 / 6, 1e-6) for p in parts)


def test_several_columns_are_one_charge_and_the_result_names_each_column_and_statistic(rng):
    df = two_columns(rng)
    acc = dp.Accountant(budget=dp.Del(2.0, 1e-5))
    out = df.private.groupby("city", dp.Del(1.0, 1e-6), column=["age", "income"],
                             statistics={"age": ["count", "mean"], "income": ["sum"]}, quantiles=[0.5],
                             bounds=BOTH_BOUNDS, privacy_unit="pid", max_rows=2, accountant=acc, rng=0)  # fmt: skip
    assert len(acc.ledger) == 1 and acc.ledger[0].guarantee == dp.Del(1.0, 1e-6)
    assert list(out.columns) == [
        "age_count", "age_count_accuracy", "age_mean", "age_mean_accuracy", "age_q0.5", "age_q0.5_rank_accuracy",
        "income_sum", "income_sum_accuracy", "income_q0.5", "income_q0.5_rank_accuracy",
    ]  # fmt: skip
    assert out.index.name == "city" and out.attrs["alpha"] == 0.05


def test_the_structure_of_a_several_column_release_depends_only_on_public_facts_and_the_selection():
    """Neighbouring tables (a person replaced), with public keys: the same index and columns, even when a key is
    empty; with private keys, a table whose groups are all too small releases no group but every column."""
    base = {"by": np.array(list("aaabbb")), "x": np.arange(6.0), "y": np.arange(6.0) * 10}
    other = {"by": np.array(list("aaaaab")), "x": np.r_[np.arange(5.0), 1e9], "y": np.full(6, -1e9)}
    kw = {"statistics": ["count", "sum", "std"], "quantiles": [0.5], "bounds": (0, 50), "keys": ["a", "b", "c"]}
    frames = [dp.stats.groupby(t["by"], dp.Eps(1.0), values={"x": t["x"], "y": t["y"]}, rng=0, **kw)
              for t in (base, other)]  # fmt: skip
    assert list(frames[0].index) == list(frames[1].index) == ["a", "b", "c"]
    assert list(frames[0].columns) == list(frames[1].columns)
    assert [str(d) for d in frames[0].dtypes] == [str(d) for d in frames[1].dtypes]
    empty = dp.stats.groupby(base["by"], dp.Del(1.0, 1e-9), values={"x": base["x"], "y": base["y"]}, rng=0,
                             **{**kw, "keys": None})  # fmt: skip
    assert empty.shape == (0, len(frames[0].columns)) and list(empty.columns) == list(frames[0].columns)


def test_one_person_alone_in_a_group_is_released_at_most_at_rate_delta_with_two_value_columns():
    """Measured: with two value columns, one-person groups are released at the rate of ONE selection with that
    threshold (≤ δ₀, Clopper–Pearson); a selection per column would release a group when either passes, about
    twice as often, and this test would catch it (its lower bound would exceed δ₀)."""
    params = dp.Del(1.0, 0.3)
    singles = np.arange(3000).astype(str)
    by = np.concatenate([singles, np.repeat(["big1", "big2"], 200)])
    x = np.linspace(0, 1, by.size)
    mech = GroupBy(columns=("x", "y"), statistics=("mean",), bounds=(0, 1))
    select = mech.split(params)[0]
    delta0 = select.delta / (1 + math.exp(select.epsilon))
    released = 0
    runs = 15
    for seed in range(runs):
        out = dp.stats.groupby(by, params, values={"x": x, "y": 1 - x}, statistics="mean", bounds=(0, 1), rng=seed)
        assert out[["x_mean", "y_mean"]].notna().all().all()
        released += int(np.isin(out.index, singles).sum())
        assert {"big1", "big2"} <= set(out.index)
    trials = runs * singles.size
    assert (sps.beta.ppf(P_FALSE_ALARM, released, trials - released + 1) if released else 0.0) <= delta0
    t, tau = mech.threshold(select)
    exact = sps.dlaplace(t).sf(tau - 2)
    assert sps.binom.ppf(P_FALSE_ALARM, trials, exact) <= released <= sps.binom.isf(P_FALSE_ALARM, trials, exact)
    either = 1 - (1 - exact) ** 2  # two independent selections, a group released when either passes
    assert sps.binom.ppf(P_FALSE_ALARM, trials, either) > sps.binom.isf(P_FALSE_ALARM, trials, exact)


@pytest.mark.slow
def test_audit_does_not_refute_a_person_who_alone_makes_a_group_exist_with_two_value_columns():
    """The one-column audit with two value columns (count, mean of each): D has a person alone in 'rare' with
    extreme values, D′ moves them into 'big'. The claim (1, 0.05) is not refuted."""
    d1 = _people({"big": [1] * 30, "rare": [1]})
    d2 = _people({"big": [1] * 31})
    values1 = {"a": np.r_[np.full(30, 0.5), 1.0], "b": np.r_[np.full(30, 0.5), 0.0]}
    values2 = {"a": np.r_[np.full(30, 0.5), 0.0], "b": np.r_[np.full(30, 0.5), 1.0]}
    inner = GroupBy(columns=("a", "b"), statistics=("count", "mean"), bounds=(0, 1))
    mech = _Flattened(inner=inner, labels=("big", "rare"))
    report = audit(mech, (d1[0], values1, d1[2]), (d2[0], values2, d2[2]), dp.Del(1.0, 0.05), n=2000, rng=1)
    assert report.passed, report


BAD_COLUMNS = [
    ({"statistics": {"x": ["mean"]}}, ValueError, r"missing \['y'\]"),
    ({"statistics": {"x": ["mean"], "y": ["mean"], "z": ["sum"]}}, ValueError, r"unknown \['z'\]"),
    ({"statistics": {"x": ["mean"], "y": ["median"]}}, ValueError, "column 'y'"),
    ({"bounds": {"x": (0, 1)}}, TypeError, "bounds for the value column 'y'"),
    ({"bounds": {"x": (0, 1), "y": (0, 1), "w": (0, 1)}}, ValueError, r"unknown \['w'\]"),
    ({"bounds": {"x": (0, 1), "y": (3, 1)}}, ValueError, "column 'y'"),
    ({"values": {"x": np.arange(5.0), 3: np.arange(5.0)}}, TypeError, "distinct non-empty strings"),
    ({"values": {}}, ValueError, "empty"),
    ({"values": {"x": np.arange(5.0), "y": np.array(["s"] * 5)}}, TypeError, r"values\['y'\].*numeric"),
    ({"values": {"x": np.arange(5.0), "y": np.arange(4.0)}}, ValueError, r"values\['y'\].*one entry per row"),
    ({"values": np.arange(5.0), "statistics": {"x": ["mean"]}}, TypeError, "needs several named value columns"),
    ({"values": np.arange(5.0), "bounds": {"x": (0, 1)}}, TypeError, "needs several named value columns"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), BAD_COLUMNS)
def test_bad_public_column_inputs_are_refused_before_the_budget_is_charged(kwargs, error, match):
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    kw = {"values": {"x": np.arange(5.0), "y": np.arange(5.0)}, "statistics": ["mean"], "bounds": (0, 5), **kwargs}
    with pytest.raises(error, match=match):
        dp.stats.groupby(np.array(list("aabbc")), dp.Del(1.0, 1e-6), accountant=acc, rng=0, **kw)
    assert len(acc.ledger) == 0


def test_nan_in_any_value_column_is_refused_after_the_charge():
    acc = dp.Accountant(budget=dp.Del(5.0, 1e-3))
    with pytest.raises(dp.exceptions.TargetOutputError, match="NaN"):
        dp.stats.groupby(np.array(list("ab")), dp.Del(1.0, 1e-6), values={"x": [1.0, 0.0], "y": [0.0, np.nan]},
                         statistics="sum", bounds=(0, 1), accountant=acc, rng=0)  # fmt: skip
    assert len(acc.ledger) == 1


@pytest.mark.parametrize("unit", [False, True])
def test_dask_several_columns_are_bit_identical_to_in_memory_for_a_seed(rng, unit):
    dd = pytest.importorskip("dask.dataframe")
    df = two_columns(rng, 6000)
    kw = {"statistics": {"age": ["count", "mean", "std"], "income": ["sum", "var"]}, "quantiles": [0.5],
          "bounds": BOTH_BOUNDS, "rng": 11}  # fmt: skip
    if unit:
        kw.update(max_groups=2, max_rows=3)
    params = dp.Del(1.0, 1e-6)
    in_memory = df.private.groupby("city", params, column=["age", "income"], privacy_unit="pid" if unit else None,
                                   **kw)  # fmt: skip
    for parts in (5, 2):
        ddf = dd.from_pandas(df, npartitions=parts)
        out_of_core = dp.stats.groupby(ddf["city"], params, values={"age": ddf["age"], "income": ddf["income"]},
                                       privacy_unit=ddf["pid"] if unit else None, name="city", **kw)  # fmt: skip
        pd.testing.assert_frame_equal(in_memory, out_of_core, check_exact=True)


def test_codes_beyond_packed_sort_keys_keep_the_same_rows(rng, monkeypatch):
    """Tables of billions of rows cannot pack (person, group) or (run, priority) into one int64 key; the two-key
    sorts used there give the same kept rows (checked by lowering the packing limit so that they run here)."""
    unit = rng.integers(0, 300, 5000)
    group = rng.integers(0, 40, 5000)
    hashes = label_hashes(np.arange(300)), label_hashes(np.arange(40))
    packed = bound_contributions(unit, group, 2, 2, 77, *hashes)
    monkeypatch.setattr(_contribution, "PACKED", 4)
    split = bound_contributions(unit, group, 2, 2, 77, *hashes)
    assert np.array_equal(packed.keep, split.keep)
    assert np.array_equal(packed.pair_group, split.pair_group)
