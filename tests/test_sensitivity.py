"""The sensitivity sampler: R's (m, γ, k) plan, neighbour construction, reproducibility and failure modes."""

import math

import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.exceptions import SensitivityError


def uniform_oracle(n, rng):
    """n records from the public population Uniform[0, 1]."""
    return rng.random(n)


@pytest.mark.parametrize(
    ("m", "gamma", "expected_m", "expected_k"),
    # R's printed values (its README, pkgdown site and vignettes) and R's (m, k) formulas evaluated at other (m, γ).
    [
        (None, 0.01, 41971, 41971),
        (None, 0.05, 1305, 1305),
        (None, 0.1, 285, 285),
        (None, 0.2, 61, 61),
        (None, 0.33, 20, 20),
        (None, 0.5, 8, 8),
        (50, 0.33, 50, 45),
        (500, 0.2, 500, 439),
        (50000, 0.1, 50000, 45461),
        (50000, 0.01, 50000, 49961),
    ],
)
def test_plan_reproduces_r(m, gamma, expected_m, expected_k):
    """plan_sampler gives R's m and k (lower Lambert-W branch; the k=1 branch gives m=292 at γ=0.1)."""
    plan = dp.plan_sampler(m=m, gamma=gamma)
    assert (plan.m, plan.k) == (expected_m, expected_k)


@pytest.mark.parametrize(("m", "gamma"), [(10, 0.434623), (50, 0.217040), (100, 0.159724), (1000, 0.056468)])
def test_plan_with_m_only_gives_the_smallest_gamma(m, gamma):
    """Given m alone, γ is the smallest achievable and k = m (the sample maximum)."""
    plan = dp.plan_sampler(m=m)
    assert plan.gamma == pytest.approx(gamma, abs=1e-6) and plan.k == m


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one"),
        ({"m": 1.1}, "'m'"),
        ({"m": 0}, "'m'"),
        ({"m": True}, "bool"),
        ({"gamma": 1.1}, "'gamma'"),
        ({"gamma": 0.0}, "'gamma'"),
        ({"gamma": math.nan}, "'gamma'"),
        ({"m": 100, "gamma": 0.0001}, "must exceed 0.159724"),
        ({"m": 1}, "Use m >= 2"),
    ],
)
def test_plan_refuses_bad_configurations(kwargs, message):
    """R's config checks, plus NaN, bools and the m = 1 case R let through to fail later."""
    with pytest.raises((ValueError, TypeError), match=message):
        dp.plan_sampler(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 1.1, "m": 100, "k": 100}, "integer"),
        ({"n": 0, "m": 100, "k": 100}, "integer"),
        ({"n": 10, "m": 100.1, "k": 100}, "integer"),
        ({"n": 10, "m": 0, "k": 1}, "integer"),
        ({"n": 10, "m": 100, "k": 99.9}, "integer"),
        ({"n": 10, "m": 100, "k": 101}, "k is not in"),
        ({"n": 10, "m": 100, "k": 0}, "integer"),
    ],
)
def test_manual_sampler_argument_checks(kwargs, message):
    """R's test_ssampler.R argument checks on sensitivitySamplerManual."""
    mech = dp.Laplace(target=np.mean, dims=1)
    with pytest.raises((ValueError, TypeError), match=message):
        mech.sensitivity_sampler_manual(uniform_oracle, rng=0, **kwargs)


def test_sampler_returns_a_new_mechanism_and_leaves_the_old_one_unset():
    """R: the original starts with Δ = inf and no γ; the sampled copy has a finite Δ and γ = 0.33."""
    mech = dp.Laplace(target=np.mean, dims=1)
    sampled = mech.sensitivity_sampler(uniform_oracle, n=100, gamma=0.33, rng=1)
    assert math.isinf(mech.sensitivity) and mech.gamma_sensitivity is None
    assert math.isfinite(sampled.sensitivity) and sampled.gamma_sensitivity == 0.33


def test_sampled_sensitivity_of_a_mean_is_close_to_the_true_one():
    """The mean of 100 values in [0, 1] has Δ = 0.01; the sample maximum of 285 draws is just below it."""
    sampled = dp.Laplace(target=np.mean).sensitivity_sampler(uniform_oracle, n=100, gamma=0.1, rng=2)
    assert 0.009 < sampled.sensitivity <= 0.01


@pytest.mark.parametrize("sampler", [{"gamma": 0.33}, {"m": 50}, {"m": 50, "gamma": 0.33}])
def test_every_mode_releases_with_gam_params(sampler):
    """R: γ only, m only, and both all yield Gam(ε, 0, γ) on release."""
    mech = dp.Laplace(target=np.mean, dims=1).sensitivity_sampler(uniform_oracle, n=100, rng=3, **sampler)
    out = mech.release_response(dp.Eps(0.1), np.random.default_rng(0).random(100), rng=4)
    assert isinstance(out.privacy_params, dp.Gam)
    assert (out.privacy_params.epsilon, out.privacy_params.delta) == (0.1, 0.0)
    assert out.privacy_params.gamma == pytest.approx(mech.gamma_sensitivity)


def test_manual_sampler_does_not_set_gamma():
    """sensitivity_sampler_manual leaves γ unset: the caller owns the (m, k) choice."""
    mech = dp.Laplace(target=np.mean, dims=1).sensitivity_sampler_manual(uniform_oracle, n=10, m=20, k=19, rng=0)
    assert mech.gamma_sensitivity is None and math.isfinite(mech.sensitivity)


def test_dims_are_probed_when_unset():
    """R: a column-means target with a 3-column matrix oracle gets dims = 3 after sampling."""
    mech = dp.Laplace(target=lambda X: X.mean(axis=0)).sensitivity_sampler(
        lambda n, rng: rng.random((n, 3)), n=20, m=30, rng=5
    )
    assert mech.dims == 3


def test_result_is_identical_for_any_number_of_workers():
    """For a given seed the sampled sensitivity does not depend on n_jobs."""
    mech = dp.Laplace(target=np.median)
    one = mech.sensitivity_sampler(uniform_oracle, n=50, m=200, rng=9)
    two = mech.sensitivity_sampler(uniform_oracle, n=50, m=200, rng=9, n_jobs=2)
    assert one.sensitivity == two.sensitivity


def test_k_th_order_statistic_is_used():
    """With a deterministic G sequence the k-th smallest is selected."""
    mech = dp.Laplace(target=np.sum)
    draws = [mech.sensitivity_sampler_manual(uniform_oracle, n=5, m=40, k=k, rng=12).sensitivity for k in (1, 20, 40)]
    assert draws[0] <= draws[1] <= draws[2]


def test_lists_dataframes_and_supervised_tuples_work():
    """Oracles may return lists, pandas DataFrames, or (X, y) tuples; neighbours keep the type."""
    pd = pytest.importorskip("pandas")
    names = dp.Exponential(target=lambda X: lambda r: "".join(X).count(r), response_set=list("abc"), sensitivity=1)
    sampled = names.sensitivity_sampler(lambda n, rng: list(rng.choice(["ab", "bc", "ca"], n)), n=10, m=20, rng=0)
    assert 0 < sampled.sensitivity <= 2

    frame = dp.Laplace(target=lambda df: df["x"].mean())
    sampled = frame.sensitivity_sampler(lambda n, rng: pd.DataFrame({"x": rng.random(n)}), n=10, m=20, rng=0)
    assert 0 < sampled.sensitivity <= 0.1

    def xy_oracle(n, rng):
        return rng.random((n, 2)), rng.integers(0, 2, n)

    supervised = dp.Laplace(target=lambda data: data[1].mean())
    assert supervised.sensitivity_sampler(xy_oracle, n=10, m=20, rng=0).sensitivity == pytest.approx(0.1)


def test_r_style_one_argument_oracle_is_accepted():
    """oracle(n) works (sequentially reproducible only through numpy's global state)."""
    rng = np.random.default_rng(0)
    sampled = dp.Laplace(target=np.mean).sensitivity_sampler(lambda n: rng.random(n), n=10, m=20)
    assert 0 < sampled.sensitivity <= 0.1


def test_oracle_returning_the_wrong_number_of_records_is_refused():
    """An oracle must return exactly the n records asked for."""
    with pytest.raises(ValueError, match="returned 3 records"):
        dp.Laplace(target=np.mean).sensitivity_sampler(lambda n, rng: rng.random(3), n=10, m=20, rng=0)


def test_non_finite_sampled_sensitivity_is_refused():
    """A target whose change is infinite on some pair never yields a sensitivity."""
    mech = dp.Laplace(target=lambda x: np.log(x).sum() * 0 + (np.inf if x[-1] < 0.5 else 0.0), dims=1)
    with pytest.raises((SensitivityError, ValueError)):
        mech.sensitivity_sampler(uniform_oracle, n=5, m=50, rng=0)


def test_unsupported_dataset_types_are_refused():
    """A dataset that is not an array, list, tuple or pandas object is refused with the accepted types."""
    with pytest.raises(TypeError, match="Datasets must be"):
        dp.Laplace(target=len).sensitivity_sampler(lambda n, rng: "x" * n, n=3, m=10, rng=0)


def test_unset_sensitivity_is_refused_at_release():
    """An unsampled mechanism (Δ = inf) refuses to release instead of returning pure noise or NaN."""
    with pytest.raises(SensitivityError, match="sensitivity_sampler"):
        dp.Laplace(target=np.mean).release_response(dp.Eps(1), np.ones(3), rng=0)


def test_progress_bar_does_not_change_the_result(capsys):
    """progress=True shows a bar and samples the same values."""
    mech = dp.Laplace(target=np.mean)
    a = mech.sensitivity_sampler(uniform_oracle, n=10, m=30, rng=4, progress=True)
    b = mech.sensitivity_sampler(uniform_oracle, n=10, m=30, rng=4)
    assert a.sensitivity == b.sensitivity


def test_pairs_are_built_from_a_shared_base_and_two_single_records_as_in_r():
    """Each pair takes oracle(n − 1), then oracle(1) twice (R's sensitivitySamplerManual), in that order."""
    sizes = []

    def recording_oracle(n, rng):
        sizes.append(n)
        return rng.random(n)

    dp.Laplace(target=np.mean, dims=1).sensitivity_sampler_manual(recording_oracle, n=7, m=5, k=5, rng=0)
    # The first call is the dims probe on one dataset of n records (none here: dims is set).
    assert sizes == [7] + [6, 1, 1] * 5


def test_an_oracle_with_per_call_state_gives_r_s_sensitivity_not_zero():
    """An oracle that draws one value per call for all its records: R's pairs differ in their last record (Δ > 0);
    one oracle(n + 1) call would make both neighbours identical and sample Δ = 0."""

    def regime_oracle(n, rng):
        return np.full(n, rng.random())

    sampled = dp.Laplace(target=np.mean, dims=1).sensitivity_sampler(regime_oracle, n=10, m=50, rng=0)
    assert 0.05 < sampled.sensitivity <= 0.1


def test_a_single_record_dataset_is_two_independent_records():
    """n = 1: no base; the neighbours are two oracle(1) draws."""
    sampled = dp.Laplace(target=np.mean, dims=1).sensitivity_sampler(uniform_oracle, n=1, m=50, rng=0)
    assert 0.5 < sampled.sensitivity <= 1.0 and sampled.sampled_n == 1


def test_a_mechanism_sampled_at_one_n_refuses_another_n_without_charging():
    """Sampled at n = 500, a release on 10 records is a SensitivityError and the accountant stays at zero."""
    mech = dp.Laplace(target=np.mean).sensitivity_sampler(uniform_oracle, n=500, m=20, rng=0)
    assert mech.sampled_n == 500
    acc = dp.Accountant(budget=dp.Gam(5.0, 0.0, 0.5))
    with pytest.raises(SensitivityError, match="n=500"):
        mech.release_response(dp.Eps(1.0), np.ones(10), rng=0, accountant=acc)
    assert acc.spent.epsilon == 0
    assert isinstance(mech.release_response(dp.Eps(1.0), np.ones(500), rng=0, accountant=acc), dp.Response)


def test_target_defaults_to_r_s_constant_zero():
    """Like R, a mechanism built without a target releases noise around 0."""
    mech = dp.Laplace(sensitivity=1.0)
    assert mech.target(np.ones(3)) == 0.0
    assert isinstance(mech.release_response(dp.Eps(1.0), np.ones(3), rng=0).response, float)
