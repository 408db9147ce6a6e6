"""The Bingham samplers behind PPCA: the vector sampler and the sequential draws are exact, the Gibbs sampler mixes.

Distribution tests use fixed seeds and reject at p < 1e-6 (so a correct sampler fails with probability below
1e-6 per test), and each is paired with a test showing the same statistic rejects a realistic bug.
"""

import math

import numpy as np
import pytest
from scipy import stats
from sphere_quadrature import sphere_second_moments

from diffpriv_py.estimators import _bingham
from diffpriv_py.estimators._bingham import (
    default_sweeps,
    gibbs_matrix_bingham,
    sample_matrix_bingham,
    sample_sequential_subspace,
    sample_vector_bingham,
    sample_vector_bingham_eig,
    sequential_steps,
)

ALPHA = 1e-6


def _rotation(theta: float) -> np.ndarray:
    return np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def _circle_matrix(kappa: float, theta0: float) -> np.ndarray:
    """M with exp(xᵀMx) = exp(κ·cos²(θ − θ₀)) on the circle."""
    r = _rotation(theta0)
    return r @ np.diag([kappa, 0.0]) @ r.T


def _doubled_angle(z: np.ndarray, theta0: float) -> np.ndarray:
    """φ = 2(θ − θ₀) wrapped to (−π, π]: for density ∝ exp(κcos²(θ − θ₀)), φ is von Mises with concentration κ/2."""
    theta = np.arctan2(z[:, 1], z[:, 0])
    return np.angle(np.exp(2j * (theta - theta0)))


def _kgm_with_diffprivlib_acceptance(lam: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
    """KGM with diffprivlib's acceptance rule (divides by (xᵀΩx)^(q/2)); the bug the exactness test must catch."""
    q = lam.size
    b = _bingham._acg_shape_single(lam)
    omega = 1.0 + 2.0 * lam / b
    log_m = -(q - b) / 2.0 + (q / 2.0) * math.log(q / b)
    out = []
    while len(out) < size:
        y = rng.standard_normal((4 * size, q)) / np.sqrt(omega)
        x = y / np.linalg.norm(y, axis=1, keepdims=True)
        log_accept = -(x**2 @ lam) - (q / 2.0) * np.log(x**2 @ omega) - log_m
        out.extend(x[np.log(rng.random(4 * size)) < log_accept])
    return np.array(out[:size])


# ---- the exact vector sampler -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kappa", [0.3, 8.0, 1e3, 1e7])
def test_vector_sampler_matches_the_exact_angular_law_on_the_circle(kappa):
    """At q = 2 the doubled angle of the draws passes a KS test (α = 1e-6) against the exact von Mises law."""
    rng = np.random.default_rng(11)
    theta0 = 0.7
    z = sample_vector_bingham(_circle_matrix(kappa, theta0), rng, size=20_000)
    assert z.shape == (20_000, 2)
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), 1.0, atol=1e-12)
    assert stats.kstest(_doubled_angle(z, theta0), stats.vonmises(kappa / 2).cdf).pvalue > ALPHA


@pytest.mark.parametrize("kappa", [0.3, 8.0, 1e5])
def test_batched_eigenbasis_sampler_matches_the_exact_angular_law(kappa):
    """The batched path (one matrix per draw, used by multi-chain Gibbs) passes the same KS test."""
    rng = np.random.default_rng(12)
    theta0 = -1.1
    stack = np.broadcast_to(_circle_matrix(kappa, theta0), (20_000, 2, 2))
    z = sample_vector_bingham(stack, rng)
    assert stats.kstest(_doubled_angle(z, theta0), stats.vonmises(kappa / 2).cdf).pvalue > ALPHA


def test_angular_test_rejects_the_wrong_concentration():
    """Power: draws with twice the concentration (the ε-instead-of-ε/2 bug) are rejected at p < 1e-6."""
    rng = np.random.default_rng(13)
    kappa, theta0 = 8.0, 0.7
    z = sample_vector_bingham(_circle_matrix(2 * kappa, theta0), rng, size=20_000)
    assert stats.kstest(_doubled_angle(z, theta0), stats.vonmises(kappa / 2).cdf).pvalue < ALPHA


def test_angular_test_rejects_diffprivlibs_acceptance_rule():
    """Power: KGM with diffprivlib's acceptance rule (f*·g*² instead of f*) is rejected at p < 1e-6."""
    rng = np.random.default_rng(14)
    kappa = 8.0
    lam = np.array([0.0, kappa])  # exp(−λ·y²) with y = (cos θ, sin θ): κcos²θ up to a constant
    z = _kgm_with_diffprivlib_acceptance(lam, rng, 20_000)
    assert stats.kstest(_doubled_angle(z, 0.0), stats.vonmises(kappa / 2).cdf).pvalue < ALPHA


def test_vector_sampler_second_moments_match_quadrature_at_q3():
    """At q = 3, E[x_i²] of 20 000 draws agrees with numerical integration within 6 standard errors."""
    rng = np.random.default_rng(15)
    lam = np.array([3.0, 1.0, -2.0])
    basis = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    z = sample_vector_bingham(basis @ np.diag(lam) @ basis.T, rng, size=20_000)
    y2 = (z @ basis) ** 2
    exact = sphere_second_moments(lam)
    se = y2.std(axis=0) / math.sqrt(len(y2))
    assert np.all(np.abs(y2.mean(axis=0) - exact) < 6 * se)


def test_tridiagonal_and_eigenbasis_paths_draw_the_same_law():
    """For a rotated, spread spectrum at q = 6 the single-matrix and batched paths agree (two-sample KS, α = 1e-6)."""
    rng = np.random.default_rng(16)
    basis = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    m = basis @ np.diag([40.0, 38.0, 10.0, 3.0, 0.0, -5.0]) @ basis.T
    single = sample_vector_bingham(m, rng, size=20_000)
    batched = sample_vector_bingham(np.broadcast_to(m, (20_000, 6, 6)), rng)
    for direction in basis.T[:3]:
        assert stats.ks_2samp((single @ direction) ** 2, (batched @ direction) ** 2).pvalue > ALPHA


@pytest.mark.slow
def test_single_draw_path_of_the_gibbs_step_draws_the_same_law():
    """The lean one-draw path used inside every Gibbs step agrees with the batched path at q = 6 (KS, α = 1e-6)."""
    rng = np.random.default_rng(19)
    basis = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    m = basis @ np.diag([40.0, 38.0, 10.0, 3.0, 0.0, -5.0]) @ basis.T
    single = np.array([_bingham._draw_one_tridiagonal(m, rng) for _ in range(3000)])
    np.testing.assert_allclose(np.linalg.norm(single, axis=1), 1.0, atol=1e-12)
    batched = sample_vector_bingham(np.broadcast_to(m, (20_000, 6, 6)), rng)
    for direction in basis.T[:3]:
        assert stats.ks_2samp((single @ direction) ** 2, (batched @ direction) ** 2).pvalue > ALPHA


@pytest.mark.parametrize("q", [3, 10, 46])
@pytest.mark.parametrize("scale", [1e2, 1e6, 1e10])
def test_acceptance_stays_bounded_however_concentrated(q, scale):
    """The mean number of proposals stays within 1.5× the √(e·q/2) limit at any concentration."""
    rng = np.random.default_rng(17)
    eig = np.concatenate([[scale], np.linspace(0, scale / 2, q - 1)])
    _, proposals = sample_vector_bingham_eig(np.broadcast_to(eig, (3000, q)), rng, return_proposals=True)
    assert proposals.mean() <= 1.5 * math.sqrt(math.e * q / 2)
    _, proposals = sample_vector_bingham(np.diag(eig), rng, size=3000, return_proposals=True)
    assert proposals.mean() <= 1.5 * math.sqrt(math.e * q / 2)
    assert proposals.min() >= 1


def test_acceptance_is_nearly_one_for_a_flat_target():
    """For a nearly uniform target (tiny concentration) almost every proposal is accepted."""
    _, proposals = sample_vector_bingham(np.eye(20) * 1e-3, np.random.default_rng(18), size=2000, return_proposals=True)
    assert proposals.mean() < 1.05


def test_householder_reflection_is_accurate_next_to_the_first_axis():
    """The reflection mapping e₀ to z is orthogonal to machine precision even when z is within 1e-12 of e₀."""
    z = np.zeros((1, 5))
    z[0, 0], z[0, 3] = math.sqrt(1 - 1e-24), 1e-12
    u, c = _bingham._householder_to(z)
    h = np.eye(5) - c[0] * np.outer(u[0], u[0])
    np.testing.assert_allclose(h @ h.T, np.eye(5), atol=1e-15)
    np.testing.assert_allclose(h[:, 0], z[0], atol=1e-15)


# ---- the Gibbs sampler --------------------------------------------------------------------------------------------


def _spiked(d: int, spectrum: list[float], seed: int) -> tuple[np.ndarray, np.ndarray]:
    basis = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))[0]
    return basis @ np.diag(spectrum) @ basis.T, basis


def _energy(v: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.einsum("mik,ij,mjk->m", v, p, v)


@pytest.mark.slow
def test_gibbs_from_a_random_start_matches_gibbs_from_the_true_eigenvectors():
    """After the default burn-in, chains started at random and at the top eigenvectors are indistinguishable."""
    p, basis = _spiked(6, [60.0, 45.0, 30.0, 28.0, 5.0, 0.0], seed=1)
    k, chains = 2, 2000
    rng = np.random.default_rng(21)
    sweeps = default_sweeps(k)
    v_random, _ = gibbs_matrix_bingham(p, k, sweeps, rng, n_chains=chains)
    v_top, _ = gibbs_matrix_bingham(p, k, sweeps, rng, n_chains=chains, start=basis[:, :k])
    assert stats.ks_2samp(_energy(v_random, p), _energy(v_top, p)).pvalue > ALPHA
    overlap = [np.square(np.swapaxes(v, 1, 2) @ basis[:, :k]).sum(axis=(1, 2)) for v in (v_random, v_top)]
    assert stats.ks_2samp(*overlap).pvalue > ALPHA


def test_start_comparison_rejects_an_unconverged_chain():
    """Power: after a single sweep the random-start chains are still distinguishable from the top-start ones."""
    p, basis = _spiked(6, [600.0, 450.0, 300.0, 280.0, 50.0, 0.0], seed=1)
    rng = np.random.default_rng(22)
    v_random, _ = gibbs_matrix_bingham(p, 2, 1, rng, n_chains=2000)
    v_top, _ = gibbs_matrix_bingham(p, 2, 1, rng, n_chains=2000, start=basis[:, :2])
    assert stats.ks_2samp(_energy(v_random, p), _energy(v_top, p)).pvalue < ALPHA


@pytest.mark.slow
def test_gibbs_matches_the_exact_sampler_when_k_is_d_minus_1():
    """At d = 3, k = 2 the Gibbs output's normal vector has the exact law Bingham(−P) (two-sample KS, α = 1e-6)."""
    p, basis = _spiked(3, [9.0, 4.0, 0.0], seed=3)
    rng = np.random.default_rng(23)
    v, _ = gibbs_matrix_bingham(p, 2, 10, rng, n_chains=10_000)
    normal_gibbs = np.cross(v[:, :, 0], v[:, :, 1])
    normal_exact = sample_vector_bingham(-p, rng, size=10_000)
    for direction in basis.T:
        assert stats.ks_2samp((normal_gibbs @ direction) ** 2, (normal_exact @ direction) ** 2).pvalue > ALPHA


@pytest.mark.slow
def test_single_chain_gibbs_matches_the_exact_complement_sampler():
    """The single-chain path (used by releases) also draws the exact law at d = 3, k = 2."""
    p, basis = _spiked(3, [9.0, 4.0, 0.0], seed=3)
    rng = np.random.default_rng(24)
    normals = []
    for _ in range(600):
        v, exact = sample_matrix_bingham(p, 2, rng, sampler="gibbs", n_sweeps=2)
        assert not exact
        normals.append(np.cross(v[:, 0], v[:, 1]))
    exact_normals = sample_vector_bingham(-p, rng, size=20_000)
    assert stats.ks_2samp((np.array(normals) @ basis[:, 2]) ** 2, (exact_normals @ basis[:, 2]) ** 2).pvalue > ALPHA


def test_gibbs_keeps_orthonormal_columns_and_reports_a_trace():
    """Columns stay orthonormal to 1e-12 over many sweeps; the trace has one energy per sweep plus the start."""
    p, _ = _spiked(8, [1e6, 5e5, 1e5, 10.0, 1.0, 0.0, 0.0, 0.0], seed=4)
    v, energy = gibbs_matrix_bingham(p, 3, 200, np.random.default_rng(25), n_chains=2, trace=True)
    assert v.shape == (2, 8, 3)
    np.testing.assert_allclose(np.swapaxes(v, 1, 2) @ v, np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    assert energy.shape == (2, 201)
    np.testing.assert_allclose(energy[:, -1], _energy(v, p), rtol=1e-9)


def test_dispatcher_is_exact_for_k_1_d_minus_1_and_d():
    """sample_matrix_bingham reports exact draws for k ∈ {1, d − 1, d} and the Gibbs chain otherwise."""
    p, _ = _spiked(5, [5.0, 4.0, 3.0, 2.0, 1.0], seed=5)
    rng = np.random.default_rng(26)
    for k, exact in ((1, True), (2, False), (3, False), (4, True), (5, True)):
        v, got = sample_matrix_bingham(p, k, rng, n_sweeps=3)
        assert got is exact and v.shape == (5, k)
        np.testing.assert_allclose(v.T @ v, np.eye(k), atol=1e-12)


def test_default_burn_in_is_data_independent_and_grows_with_k():
    """The default number of sweeps depends only on k: max(50, 10·k)."""
    assert [default_sweeps(k) for k in (1, 5, 6, 20)] == [50, 50, 60, 200]


# ---- the sequential draws (PPCA's default) and bounded loops -----------------------------------------------------


def test_sequential_draws_are_orthonormal_and_use_the_fewer_steps():
    """Every k gives d×k orthonormal columns; m = min(k, d − k) steps; k = d is Haar and ignores the parameter."""
    p, _ = _spiked(6, [5.0, 4.0, 3.0, 2.0, 1.0, 0.5], seed=3)
    rng = np.random.default_rng(40)
    assert [sequential_steps(k, 6) for k in range(1, 7)] == [1, 2, 3, 2, 1, 0]
    for k in range(1, 7):
        v = sample_sequential_subspace(p, k, rng, size=3)
        assert v.shape == (3, 6, k)
        np.testing.assert_allclose(np.swapaxes(v, 1, 2) @ v, np.broadcast_to(np.eye(k), (3, k, k)), atol=1e-12)


def test_first_sequential_direction_is_an_exact_bingham_draw():
    """The first released column is θ₁ ~ Bingham(P): its energy matches the exact vector sampler (KS p > 1e-6)."""
    p, _ = _spiked(5, [3.0, 2.5, 1.0, 0.5, 0.0], seed=9)
    rng = np.random.default_rng(41)
    first = sample_sequential_subspace(p, 2, rng, size=20_000)[:, :, 0]  # QR keeps the first direction's span
    exact = sample_vector_bingham(p, rng, size=20_000)
    doubled = sample_vector_bingham(2.0 * p, rng, size=20_000)
    energy = np.einsum("ni,ij,nj->n", first, p, first)
    assert stats.ks_2samp(energy, np.einsum("ni,ij,nj->n", exact, p, exact)).pvalue > ALPHA
    assert stats.ks_2samp(energy, np.einsum("ni,ij,nj->n", doubled, p, doubled)).pvalue < ALPHA


@pytest.mark.parametrize("scale", [1e12, 1e100, 1e250])
def test_huge_parameters_are_sampled_promptly_on_every_path(scale):
    """Parameters of scale up to 1e250 draw the top eigenvector (no cancellation hang in the tridiagonal test)."""
    p, basis = _spiked(6, [5.0, 4.0, 3.0, 2.0, 1.0, 0.5], seed=4)
    rng = np.random.default_rng(42)
    top = basis[:, 0]
    for z in (sample_vector_bingham(scale * p, rng), _bingham._draw_one_tridiagonal(scale * p, rng)):
        assert abs(z @ top) > 1 - 1e-9
    v, _ = gibbs_matrix_bingham(scale * p, 2, 2, rng)  # a Gibbs chain only approaches the top plane geometrically
    assert np.linalg.norm(v[0].T @ basis[:, :2]) ** 2 > 1.99


def test_rejection_loops_are_bounded_and_fail_clearly(monkeypatch):
    """No rejection loop runs unboundedly: a NaN target, or an exhausted round limit, raises a clear RuntimeError."""
    rng = np.random.default_rng(43)
    with pytest.raises(RuntimeError, match="accepted no proposal"):
        sample_vector_bingham_eig(np.array([[np.nan, 0.0, 0.0]]), rng)  # every acceptance test is False
    monkeypatch.setattr(_bingham, "MAX_PROPOSAL_ROUNDS", 0)
    p, _ = _spiked(4, [3.0, 2.0, 1.0, 0.0], seed=6)
    with pytest.raises(RuntimeError, match="accepted no proposal"):
        _bingham._sample_bingham_tridiagonal(p, 2, rng)
    with pytest.raises(RuntimeError, match="accepted no proposal"):
        _bingham._draw_one_tridiagonal(p, rng)
