"""Each built-in mechanism states its own privacy events and error bar; the rules that used to live in the
accountant's and accuracy.py's switches hold on the mechanisms, unchanged."""

import math

import attrs
import numpy as np
import pytest

import diffpriv_py as dp
from diffpriv_py.accounting import ApproxDPEvent, GaussianEvent, LaplaceEvent
from diffpriv_py.accuracy import discrete_laplace_half_width


def _charged(mech, params):
    acc = dp.Accountant(budget=dp.Del(100.0, 0.5))
    mech.release_response(params, np.zeros(10), rng=0, accountant=acc)
    return acc.ledger[-1].events


def test_laplace_and_gaussian_describe_their_noise_and_the_accountant_charges_exactly_that():
    """Laplace: LaplaceEvent(Δ/b); Gaussian: GaussianEvent(Δ/σ); the ledger holds what privacy_events returns."""
    lap = dp.Laplace(target=np.mean, sensitivity=0.1)
    assert lap.privacy_events(dp.Eps(0.5)) == (LaplaceEvent(epsilon=0.5),) == _charged(lap, dp.Eps(0.5))
    gau = dp.Gaussian(target=np.mean, sensitivity=0.1)
    sigma = gau.noise_scale(dp.Del(0.5, 1e-6))
    events = (GaussianEvent(mu=0.1 / sigma),)
    assert gau.privacy_events(dp.Del(0.5, 1e-6)) == events == _charged(gau, dp.Del(0.5, 1e-6))


def test_zero_sensitivity_releases_cost_nothing_for_laplace_and_gaussian_only():
    """Δ = 0: Laplace and Gaussian add no noise and charge no events; the others keep their claim (as before)."""
    assert dp.Laplace(target=np.mean, sensitivity=0.0).privacy_events(dp.Eps(1.0)) == ()
    assert dp.Gaussian(target=np.mean, sensitivity=0.0).privacy_events(dp.Del(1.0, 1e-6)) == ()
    geo = dp.DiscreteLaplace(target=lambda X: int(np.sum(X)), sensitivity=0.0)
    assert geo.privacy_events(dp.Eps(1.0)) == (ApproxDPEvent(epsilon=1.0, delta=0.0),)


def test_noise_weaker_than_the_claim_is_not_trusted():
    """A Laplace subclass whose noise gives ε = 3 while claiming ε = 1 is charged its claim, not LaplaceEvent(3)
    (which the accountant would compose as a larger, but differently shaped, loss); within 1e-9 it is trusted."""

    @attrs.frozen(kw_only=True)
    class ThinNoise(dp.Laplace):
        factor: float = 3.0

        def noise_scale(self, privacy_params):
            return self.sensitivity / (self.factor * privacy_params.epsilon)

    thin = ThinNoise(target=np.mean, sensitivity=0.1, noise="float")
    assert thin.privacy_events(dp.Eps(1.0)) == (ApproxDPEvent(epsilon=1.0, delta=0.0),) == _charged(thin, dp.Eps(1.0))
    close = attrs.evolve(thin, factor=1 + 1e-10)
    assert close.privacy_events(dp.Eps(1.0)) == (LaplaceEvent(epsilon=0.1 / close.noise_scale(dp.Eps(1.0))),)


def test_sampled_sensitivity_claims_a_gam_and_keeps_its_events():
    """The default event is the guarantee's (ε, δ): a sampled (Gam) release of an exponential mechanism is charged
    ApproxDPEvent(ε, δ) and its γ by the accountant's union bound."""
    ex = dp.Exponential(target=lambda X: lambda r: -abs(r - np.mean(X)), response_set=[0, 1], sensitivity=1.0)
    sampled = attrs.evolve(ex, gamma_sensitivity=0.05)
    assert sampled.privacy_events(dp.Eps(0.7)) == (ApproxDPEvent(epsilon=0.7, delta=0.0),)


def test_error_bars_come_from_the_mechanism_and_match_the_closed_forms():
    """Laplace float: b·ln(1/α) + ulp; DiscreteLaplace exact: the integer quantile; mechanisms without a bar raise."""
    lap = dp.Laplace(target=np.mean, sensitivity=0.1, noise="float")
    assert lap.half_width(dp.Eps(1.0), 0.5, 0.05) == 0.1 * math.log(20.0) + np.spacing(0.5)
    geo = dp.DiscreteLaplace(target=lambda X: int(np.sum(X)), sensitivity=1.0, noise="exact")
    assert geo.half_width(dp.Eps(1.0), 7, 0.05) == float(discrete_laplace_half_width(1.0, 0.05))
    assert np.array_equal(geo.half_width(dp.Eps(1.0), np.array([1, 2]), 0.05), [3.0, 3.0])
    ex = dp.Exponential(target=lambda X: lambda r: float(r == "a"), response_set=["a", "b"], sensitivity=1.0)
    r = ex.release_response(dp.Eps(1.0), np.ones(3), rng=0)  # a label: no error bar (was a float-conversion error)
    with pytest.raises(NotImplementedError, match=r"no\s+closed-form error bar"):
        r.accuracy(0.05, simultaneous=True)
