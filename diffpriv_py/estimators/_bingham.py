"""Samplers for the Bingham distribution on the sphere and the matrix Bingham distribution on the Stiefel manifold.

PPCA (Chaudhuri, Sarwate & Sinha 2012) releases a draw from the matrix Bingham distribution with density
∝ exp(tr(VᵀPV)) on the d×k matrices with orthonormal columns, P = (ε/2)·XᵀX. This module provides:

* :func:`sample_vector_bingham`: *exact* draws from the vector Bingham density ∝ exp(zᵀMz) on the unit sphere,
  by the rejection sampler of Kent, Ganeiber & Mardia (2018) with an angular central Gaussian envelope;
* :func:`sample_sequential_subspace`: PPCA's default release, m = min(k, d − k) exact vector-Bingham draws on
  the successively deflated parameter (k top directions, or d − k normal directions when k > d/2); for k = 1,
  k = d − 1 and k = d it *is* an exact matrix-Bingham draw;
* :func:`gibbs_matrix_bingham`: Hoff's (2009) column-wise Gibbs sampler for the matrix Bingham, whose column
  conditionals are vector Binghams drawn exactly with the sampler above (PPCA's opt-in, unproven path);
* :func:`sample_matrix_bingham`: exact for k = 1, k = d − 1 and k = d, Gibbs otherwise (validation and diagnostics).

Every rejection loop is bounded (:data:`MAX_PROPOSAL_ROUNDS`) and parameters of huge scale are sampled in the
eigenbasis, where the acceptance test has no cancellation, so no input makes a sampler loop forever.

Every function is batched over independent chains/draws (a leading axis of size ``m``) so that diagnostics and
tests can run thousands of draws with one LAPACK call per step. Randomness comes only from the ``rng`` argument.
"""

from __future__ import annotations

import math
from typing import Literal, overload

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

__all__ = [
    "MAX_PROPOSAL_ROUNDS",
    "default_sweeps",
    "gibbs_matrix_bingham",
    "haar_orthogonal",
    "sample_matrix_bingham",
    "sample_sequential_subspace",
    "sample_vector_bingham",
    "sample_vector_bingham_eig",
    "sequential_steps",
]

_NEWTON_STEPS = 100

MAX_PROPOSAL_ROUNDS = 10_000
"""Rounds of proposals a rejection loop may run before it gives up with RuntimeError. Each round holds at least
√(e·q/2) proposals and the KGM acceptance rate stays above about √(2/(e·q)) (measured up to q = 300 and
concentrations of 10¹⁰), so a correct target exhausts it with probability below e^(−10⁴): hitting it means a
numerically degenerate parameter, never bad luck."""

_TRIDIAGONAL_SCALE = 1e8
"""Largest eigenvalue spread sampled in the tridiagonal basis. There, s = xᵀ(λ_max I − T)x is a difference of terms
of size ‖T‖, so its rounding error grows like 2⁻⁵³·‖T‖; beyond this spread the eigenbasis sampler (a sum of
non-negative terms, no cancellation) draws the same law instead."""


def _exhausted(q: int) -> RuntimeError:
    return RuntimeError(
        f"The Bingham rejection sampler (dimension {q}) accepted no proposal in {MAX_PROPOSAL_ROUNDS} rounds, which "
        "a finite, well-scaled parameter makes practically impossible: the parameter is numerically degenerate. "
        "Lower epsilon or check the data for extreme values."
    )


def default_sweeps(k: int) -> int:
    """Default number of Gibbs sweeps for a rank-``k`` PPCA release: ``max(50, 10·k)``, fixed before seeing data.

    Measured on d = 50, k = 5 problems (n = 10⁴, ε from 0.1 to 100; ``docs/pca.md``): from a uniformly random
    start the chain's q_F distribution is indistinguishable (two-sample KS, 100 chains) from that of a chain started
    at the non-private top-k eigenvectors after at most 6 sweeps when the spectrum has a clear gap after the k-th
    eigenvalue, and after about 20 sweeps when λ_k and λ_(k+1) differ by only 10 % at ε = 10. The default keeps a
    margin over both; one sweep costs k tridiagonalisations of size d − k + 1.
    """
    return max(50, 10 * k)


def _acg_shape(lam: np.ndarray) -> np.ndarray:
    """Solve Σᵢ 1/(b + 2λᵢ) = 1 for b ∈ [1, q] row by row (KGM's optimal envelope), λ ≥ 0 with row minimum 0.

    The left side is convex and decreasing in b, so Newton's method started where it is ≥ 1 increases
    monotonically to the root without overshooting. The start max(1, q − 2·Σλ/q) qualifies: at b = 1 the λ = 0 term
    alone is 1, and by the harmonic–arithmetic mean inequality the sum is ≥ q²/(qb + 2Σλ) ≥ 1 for b ≤ q − 2Σλ/q.
    The envelope is valid for *any* b in (0, q]; the root only maximises the acceptance rate, so the tolerance
    never affects exactness.
    """
    q = lam.shape[-1]
    b = np.maximum(1.0, q - 2.0 * lam.sum(-1) / q)
    for _ in range(_NEWTON_STEPS):
        r = 1.0 / (b[..., None] + 2.0 * lam)
        f = r.sum(-1) - 1.0
        b = np.minimum(b + f / np.square(r).sum(-1), q)
        if np.all(f < 1e-9):
            break
    result: np.ndarray = b
    return result


def _acg_shape_single(lam: np.ndarray) -> float:
    """:func:`_acg_shape` for one vector λ, with scalar arithmetic (a Gibbs step calls it once)."""
    q = lam.size
    two_lam = 2.0 * lam
    b = max(1.0, q - float(two_lam.sum()) / q)
    for _ in range(_NEWTON_STEPS):
        r = 1.0 / (b + two_lam)
        f = float(r.sum()) - 1.0
        if f < 1e-9:
            break
        b = min(b + f / float(r @ r), float(q))
    return b


@overload
def _log_bound(q: int, b: np.ndarray) -> np.ndarray: ...
@overload
def _log_bound(q: int, b: float) -> float: ...
def _log_bound(q: int, b: np.ndarray | float) -> np.ndarray | float:
    """log M for the KGM envelope: M = exp(−(q − b)/2)·(q/b)^(q/2)."""
    return -(q - b) / 2.0 + (q / 2.0) * np.log(q / b)


def _batch_size(q: int) -> int:
    # About twice the expected number of proposals in the concentrated limit (acceptance ≈ √(2/(e·q))), so most
    # draws finish in one round while weakly concentrated targets waste little.
    return max(2, math.ceil(2.0 * math.sqrt(math.e * q / 2.0)))


@overload
def sample_vector_bingham_eig(
    eigenvalues: np.ndarray, rng: np.random.Generator, *, return_proposals: Literal[False] = False
) -> np.ndarray: ...
@overload
def sample_vector_bingham_eig(
    eigenvalues: np.ndarray, rng: np.random.Generator, *, return_proposals: Literal[True]
) -> tuple[np.ndarray, np.ndarray]: ...
def sample_vector_bingham_eig(
    eigenvalues: np.ndarray, rng: np.random.Generator, *, return_proposals: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Exact draws from the Bingham densities ∝ exp(Σⱼ lⱼ yⱼ²) on the unit sphere, in the eigenbasis.

    Parameters
    ----------
    eigenvalues : ndarray, shape (m, q)
        One row of eigenvalues l per draw (any order, any sign, finite).
    rng : numpy.random.Generator
    return_proposals : bool, default False
        Also return the number of envelope proposals each draw needed.

    Returns
    -------
    y : ndarray, shape (m, q)
        Unit vectors, y[i] ~ Bingham(diag(eigenvalues[i])) independently.
    proposals : ndarray of int, shape (m,)
        Only when ``return_proposals``.

    Notes
    -----
    Kent, Ganeiber & Mardia (2018), "A new unified approach for the simulation of a wide class of directional
    distributions", JCGS 27(2). With λ = max(l) − l ≥ 0 the target is f*(y) = exp(−Σλⱼyⱼ²) (the shift is a
    constant on the sphere). The envelope is the angular central Gaussian ACG(Ω), Ω = I + 2Λ/b, drawn as
    y = g/‖g‖ with g ~ N(0, Ω⁻¹), and f*(y) ≤ M·(yᵀΩy)^(−q/2) with M = exp(−(q − b)/2)·(q/b)^(q/2) because
    s ↦ −s + (q/2)·log(1 + 2s/b) is maximised at s = (q − b)/2. A proposal is accepted with probability
    f*(y)(yᵀΩy)^(q/2)/M, so accepted draws follow the target *exactly*. The acceptance rate tends to 1 for weak
    concentration and to about √(2/(e·q)) for strong concentration, however large (measured in
    ``tests/estimators/test_bingham.py``).

    This is the correct acceptance rule; diffprivlib's ``Bingham`` divides by (yᵀΩy)^(q/2) instead, which samples
    a more concentrated law than the exponential mechanism prescribes (see ``docs/pca.md``).
    """
    l = np.asarray(eigenvalues, dtype=np.float64)
    m, q = l.shape
    lam = l.max(axis=1, keepdims=True) - l
    b = _acg_shape(lam)
    std = 1.0 / np.sqrt(1.0 + 2.0 * lam / b[:, None])
    log_m = _log_bound(q, b)

    out = np.empty((m, q))
    proposals = np.zeros(m, dtype=np.int64)
    pending = np.arange(m)
    batch = _batch_size(q)
    for _ in range(MAX_PROPOSAL_ROUNDS):
        if not pending.size:
            break
        g = rng.standard_normal((pending.size, batch, q)) * std[pending, None, :]
        g2 = np.square(g)
        norm2 = g2.sum(-1)
        s = (g2 * lam[pending, None, :]).sum(-1) / norm2  # yᵀΛy
        log_accept = -s + (q / 2.0) * np.log1p(2.0 * s / b[pending, None]) - log_m[pending, None]
        accepted = -rng.standard_exponential(log_accept.shape) <= log_accept  # log U ≤ log acceptance probability
        hit = accepted.any(axis=1)
        first = accepted.argmax(axis=1)
        rows = pending[hit]
        out[rows] = g[hit, first[hit]] / np.sqrt(norm2[hit, first[hit]])[:, None]
        proposals[rows] += first[hit] + 1
        proposals[pending[~hit]] += batch
        pending = pending[~hit]
    if pending.size:
        raise _exhausted(q)
    return (out, proposals) if return_proposals else out


def _sample_bingham_tridiagonal(
    matrix: np.ndarray, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``size`` exact draws from Bingham(M) for one symmetric M, via its tridiagonal form; returns (z, proposals).

    The same KGM sampler as :func:`sample_vector_bingham_eig`, without an eigendecomposition: M = Q T Qᵀ with T
    tridiagonal (LAPACK ``sytrd``, about a quarter of the work of ``syevr`` for q ≈ 50), the eigenvalues of T
    (``sterf``, O(q²)) give the envelope shape b, and in T's basis Ω = I + 2(λ_max I − T)/b is tridiagonal and
    positive definite, so N(0, Ω⁻¹) proposals cost O(q) each: with Ω = L·D·Lᵀ (``pttrf``), y = Ω⁻¹·L·D^(1/2)·g
    has covariance Ω⁻¹. Accepted unit vectors are mapped back with Q (``ormqr``).
    """
    q = matrix.shape[0]
    if q == 1:
        return rng.choice(np.array([-1.0, 1.0]), size=(size, 1)), np.ones(size, dtype=np.int64)
    # sytrd reads one triangle only; passing the transpose of a C-ordered array avoids a Fortran copy.
    reflectors, diag, off, tau, _ = lapack.dsytrd(np.asarray(matrix).T, lower=1)
    eig, _ = lapack.dsterf(diag.copy(), off.copy())
    top = float(eig.max())
    b = _acg_shape_single(top - eig)
    gap = top - diag
    d_fac, l_fac, info = lapack.dpttrf(1.0 + (2.0 / b) * gap, (-2.0 / b) * off)
    if info != 0 or not top - float(eig.min()) <= _TRIDIAGONAL_SCALE:  # same law, no cancellation in the test
        values, vectors = linalg.eigh(matrix, check_finite=False)
        y, proposals = sample_vector_bingham_eig(np.broadcast_to(values, (size, q)), rng, return_proposals=True)
        return y @ vectors.T, proposals
    root_d = np.sqrt(d_fac)
    sub = (l_fac * root_d[:-1])[:, None]
    log_m = _log_bound(q, b)
    half_q = q / 2.0
    batch = _batch_size(q) * size
    chosen: list[np.ndarray] = []
    proposals = np.empty(size, dtype=np.int64)
    found, since_last, rounds = 0, 0, 0
    while found < size:
        rounds += 1
        if rounds > MAX_PROPOSAL_ROUNDS * size:
            raise _exhausted(q)
        g = rng.standard_normal((q, batch))
        h = root_d[:, None] * g
        h[1:] += sub * g[:-1]
        y, _ = lapack.dpttrs(d_fac, l_fac, h, overwrite_b=1)
        y2 = y * y
        norm2 = y2.sum(0)
        # s = xᵀ(λ_max I − T)x for x = y/‖y‖, from T's diagonal and off-diagonal.
        s = np.maximum((gap @ y2 - 2.0 * (off @ (y[:-1] * y[1:]))) / norm2, 0.0)
        log_accept = half_q * np.log1p((2.0 / b) * s) - s - log_m
        take = np.flatnonzero(log_accept >= -rng.standard_exponential(batch))[: size - found]
        if take.size:
            counts = take + 1
            counts[1:] -= take[:-1] + 1
            counts[0] += since_last
            proposals[found : found + take.size] = counts
            since_last = batch - 1 - int(take[-1])
            chosen.append(y[:, take] / np.sqrt(norm2[take]))
            found += take.size
        else:
            since_last += batch
    x = chosen[0] if len(chosen) == 1 else np.concatenate(chosen, axis=1)
    z = np.empty_like(x)
    z[0] = x[0]
    z[1:], _, _ = lapack.dormqr("L", "N", reflectors[1:, :-1], tau, x[1:], max(1, size))
    return z.T, proposals


def _draw_one_tridiagonal(matrix: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One exact draw from Bingham(M): :func:`_sample_bingham_tridiagonal` with ``size=1``, without bookkeeping.

    This is the inner step of every single-chain Gibbs update, so it makes as few numpy calls as possible; the
    algorithm and the random stream are the same as the general function's (tests compare the two).
    """
    q = matrix.shape[0]
    if q < 3:
        result: np.ndarray = _sample_bingham_tridiagonal(matrix, 1, rng)[0][0]
        return result
    reflectors, diag, off, tau, _ = lapack.dsytrd(matrix.T, lower=1)
    eig, _ = lapack.dsterf(diag.copy(), off.copy())
    top = float(eig[-1])  # sterf sorts ascending
    b = _acg_shape_single(top - eig)
    gap = top - diag
    d_fac, l_fac, info = lapack.dpttrf(1.0 + (2.0 / b) * gap, (-2.0 / b) * off)
    if info != 0 or not top - float(eig[0]) <= _TRIDIAGONAL_SCALE:  # the general function takes the eigenbasis
        result = _sample_bingham_tridiagonal(matrix, 1, rng)[0][0]
        return result
    root_d = np.sqrt(d_fac)
    sub = (l_fac * root_d[:-1])[:, None]
    root_d = root_d[:, None]
    log_m = _log_bound(q, b)
    half_q, two_over_b = q / 2.0, 2.0 / b
    batch = _batch_size(q)
    for _ in range(MAX_PROPOSAL_ROUNDS):
        g = rng.standard_normal((q, batch))
        h = root_d * g
        h[1:] += sub * g[:-1]
        y = lapack.dpttrs(d_fac, l_fac, h, overwrite_b=1)[0]
        norm2 = np.einsum("ij,ij->j", y, y)
        s = np.maximum((gap @ (y * y) - 2.0 * (off @ (y[:-1] * y[1:]))) / norm2, 0.0)
        accepted = half_q * np.log1p(two_over_b * s) - s - log_m >= -rng.standard_exponential(batch)
        first = int(accepted.argmax())
        if accepted[first]:
            break
    else:
        raise _exhausted(q)
    z = np.empty(q)
    z[0] = y[0, first]
    z[1:] = lapack.dormqr("L", "N", reflectors[1:, :-1], tau, y[1:, first : first + 1], 1)[0][:, 0]
    return z / math.sqrt(float(norm2[first]))


@overload
def sample_vector_bingham(
    matrix: np.ndarray, rng: np.random.Generator, *, size: int | None = None, return_proposals: Literal[False] = False
) -> np.ndarray: ...
@overload
def sample_vector_bingham(
    matrix: np.ndarray, rng: np.random.Generator, *, size: int | None = None, return_proposals: Literal[True]
) -> tuple[np.ndarray, np.ndarray]: ...
def sample_vector_bingham(
    matrix: np.ndarray, rng: np.random.Generator, *, size: int | None = None, return_proposals: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Exact draws from the Bingham density ∝ exp(zᵀMz) on the unit sphere of ℝ^q.

    Parameters
    ----------
    matrix : ndarray, shape (q, q) or (m, q, q)
        Symmetric parameter matrix M (or a stack of them, one per draw).
    rng : numpy.random.Generator
    size : int, optional
        Number of independent draws from a single ``matrix``; ``None`` gives one draw (shape (q,)).
    return_proposals : bool, default False
        Also return the number of envelope proposals per draw.

    Returns
    -------
    ndarray, shape (q,), (size, q) or (m, q)
    """
    mat = np.asarray(matrix, dtype=np.float64)
    if mat.ndim == 2:
        z, proposals = _sample_bingham_tridiagonal(mat, 1 if size is None else size, rng)
        if size is None:
            z, proposals = z[0], proposals[0]
    else:
        l, vecs = np.linalg.eigh(mat)
        y, proposals = sample_vector_bingham_eig(l, rng, return_proposals=True)
        z = np.einsum("mij,mj->mi", vecs, y)
    return (z, proposals) if return_proposals else z


def haar_orthogonal(d: int, rng: np.random.Generator, *, m: int = 1) -> np.ndarray:
    """``m`` independent uniformly (Haar) distributed d×d orthogonal matrices, shape (m, d, d) (Mezzadri 2007)."""
    q, r = np.linalg.qr(rng.standard_normal((m, d, d)))
    signs = np.sign(np.diagonal(r, axis1=1, axis2=2))
    signs[signs == 0] = 1.0
    result: np.ndarray = q * signs[:, None, :]
    return result


def _householder_to(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For unit rows z with z₀ ≥ 0: (u, c) such that H = I − c·uuᵀ is orthogonal with H e₀ = z.

    u = e₀ − z is formed without cancellation (u₀ = Σⱼ₌₁ zⱼ²/(1 + z₀)), so H stays accurate when z ≈ e₀.
    """
    tail = np.square(z[:, 1:]).sum(-1)
    u = -z.copy()
    u[:, 0] = tail / (1.0 + z[:, 0])
    uu = np.square(u).sum(-1)
    c = np.divide(2.0, uu, out=np.zeros_like(uu), where=uu > 0)
    return u, c


def _complete_basis(start: np.ndarray, d: int, m: int) -> np.ndarray:
    start = np.broadcast_to(np.asarray(start, dtype=np.float64), (m, d, start.shape[-1]))
    q, _ = np.linalg.qr(start, mode="complete")
    return np.ascontiguousarray(q)


def gibbs_matrix_bingham(
    param: np.ndarray,
    k: int,
    n_sweeps: int,
    rng: np.random.Generator,
    *,
    n_chains: int = 1,
    start: np.ndarray | None = None,
    trace: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Hoff's column-wise Gibbs sampler for the matrix Bingham density ∝ exp(tr(VᵀPV)) on d×k Stiefel matrices.

    Parameters
    ----------
    param : ndarray, shape (d, d)
        Symmetric parameter P.
    k : int
        Number of columns, 1 ≤ k < d.
    n_sweeps : int
        Number of sweeps (each updates all k columns once, in a random order); the final state is returned.
    rng : numpy.random.Generator
    n_chains : int, default 1
        Independent chains run side by side (batched linear algebra).
    start : ndarray, shape (d, k) or (n_chains, d, k), optional
        Starting matrices (their column spans are used). ``None`` starts every chain at an independent uniformly
        random point, which is what a private release must do.
    trace : bool, default False
        Also return tr(VᵀPV) after every sweep (and at the start).

    Returns
    -------
    V : ndarray, shape (n_chains, d, k)
        Orthonormal columns.
    energy : ndarray, shape (n_chains, n_sweeps + 1), or None

    Notes
    -----
    Hoff (2009), "Simulation of the matrix Bingham–von Mises–Fisher distribution", JCGS 18(2). Given the other
    columns, column r is x = N z where N spans the orthogonal complement of the other columns and z follows the
    vector Bingham with matrix NᵀPN on the sphere of dimension q − 1, q = d − k + 1. Hoff updates z by one scan of
    a coordinate sampler; here z is drawn *exactly* (:func:`sample_vector_bingham_eig`), so every step is an exact
    Gibbs step and the chain has the matrix Bingham as its stationary law.

    The orthonormal basis Q = [V, W] of ℝ^d is kept for the whole run: W spans the complement of V, so the
    complement of the other columns is [v_r, W] and needs no QR factorisation. After drawing z, the Householder
    reflection H with H e₀ = z maps [v_r, W] to [v_r', W'], a new orthonormal basis whose first column is the new
    v_r. One column step costs one symmetric eigendecomposition of size q plus O(d²q) products.

    Column signs do not matter (the density and the uniform measure are invariant under V → V·diag(±1)), so z is
    taken in the half-space z₀ ≥ 0; the chain then runs on the quotient by column signs, which is all PCA needs.
    """
    p = np.asarray(param, dtype=np.float64)
    d = p.shape[0]
    q = haar_orthogonal(d, rng, m=n_chains) if start is None else _complete_basis(start, d, n_chains)
    energy = np.empty((n_chains, n_sweeps + 1)) if trace else None
    # Rows of qt are the basis vectors: [v_1 … v_k | W]. Column r is swapped into row k − 1 before its update, so
    # that [v_r, W] is the contiguous block qt[:, k - 1:] (the order of V's columns is irrelevant).
    qt = np.ascontiguousarray(np.swapaxes(q, 1, 2))
    pivot = k - 1

    def record(t: int) -> None:
        if energy is not None:
            v = qt[:, :k]
            energy[:, t] = np.einsum("mki,ij,mkj->m", v, p, v)

    record(0)
    for sweep in range(n_sweeps):
        for r in rng.permutation(k):
            if n_chains == 1:
                _gibbs_step_single(qt[0], p, int(r), pivot, rng)
                continue
            if r != pivot:
                qt[:, [r, pivot]] = qt[:, [pivot, r]]
            basis = qt[:, pivot:]
            cond = basis @ (p @ np.swapaxes(basis, 1, 2))
            values, vectors = np.linalg.eigh(cond)
            z = np.einsum("mij,mj->mi", vectors, sample_vector_bingham_eig(values, rng))
            z /= np.linalg.norm(z, axis=1, keepdims=True)
            z *= np.where(z[:, :1] < 0.0, -1.0, 1.0)
            u, c = _householder_to(z)
            basis -= (c[:, None] * u)[:, :, None] * np.einsum("mq,mqd->md", u, basis)[:, None, :]
        record(sweep + 1)
    v, _ = np.linalg.qr(np.swapaxes(qt[:, :k], 1, 2))  # same span; removes O(sweeps·ε_machine) drift
    return v, energy


def _gibbs_step_single(qt: np.ndarray, p: np.ndarray, r: int, pivot: int, rng: np.random.Generator) -> None:
    """One exact Gibbs update of column r of a single chain, in place (basis vectors are the rows of ``qt``).

    The conditional is drawn with the tridiagonal KGM sampler (no eigendecomposition); ``sytrd`` reads only the
    lower triangle of the conditional matrix, so it is not symmetrised.
    """
    if r != pivot:
        qt[[r, pivot]] = qt[[pivot, r]]
    basis = qt[pivot:]
    z = _draw_one_tridiagonal(basis @ (p @ basis.T), rng)
    z /= math.sqrt(float(z @ z))
    if z[0] < 0.0:
        z = -z
    u = -z
    u[0] = float(z[1:] @ z[1:]) / (1.0 + z[0])
    uu = float(u @ u)
    if uu > 0.0:
        basis -= np.outer((2.0 / uu) * u, u @ basis)


def sequential_steps(k: int, d: int) -> int:
    """Number of exact vector draws :func:`sample_sequential_subspace` makes for a rank-``k`` subspace of ℝ^d."""
    return min(k, d - k)


def sample_sequential_subspace(param: np.ndarray, k: int, rng: np.random.Generator, *, size: int = 1) -> np.ndarray:
    """``size`` independent d×k orthonormal matrices from m = min(k, d − k) successive exact vector-Bingham draws.

    Parameters
    ----------
    param : ndarray, shape (d, d)
        Symmetric parameter P (PPCA passes a·C, with the concentration a set by its privacy analysis).
    k : int
        Dimension of the subspace, 1 ≤ k ≤ d.
    rng : numpy.random.Generator
    size : int, default 1
        Number of independent draws (batched linear algebra).

    Returns
    -------
    ndarray, shape (size, d, k)
        Orthonormal columns spanning the drawn subspaces.

    Notes
    -----
    For k ≤ d − k, step i = 1 … k draws θᵢ from the Bingham density ∝ exp(θᵀPθ) on the unit sphere of the orthogonal
    complement of θ₁ … θᵢ₋₁ (that is, u ~ Bingham(WᵢᵀPWᵢ) for an orthonormal basis Wᵢ of the complement and θᵢ = Wᵢu),
    and the result is [θ₁ … θ_k], columns in the order drawn (up to sign and rounding). For k > d − k the same is done
    with −P for m = d − k normal directions and the result is an orthonormal basis of their orthogonal complement, a
    fixed function of the ordered draws; this needs fewer steps, and for k = d − 1 it is the exact matrix Bingham
    (tr(VᵀPV) = tr(P) − wᵀPw). For k = 1 the single step is the exact matrix Bingham too, and for k = d the span is ℝ^d
    whatever P is, so the draw is Haar-uniform and ignores P.

    Every step is an exact draw (:func:`sample_vector_bingham_eig`, in the eigenbasis of the conditional matrix,
    which stays accurate at any scale of P), so the law of (θ₁ … θ_m) is exactly the product of these conditionals;
    PPCA's privacy proof is about that law (see :class:`~diffpriv_py.estimators.PCA`). The bases Wᵢ depend only on
    the earlier draws: W₁ = I and W_(i+1) is Wᵢ times the Householder reflection that maps e₀ to u, without its
    first column (Hoff's Gibbs sampler keeps its complement the same way). The columns are returned in draw order
    and PPCA releases them as they are: the order is part of the release, covered by the proof, which is about the
    law of the ordered sequence.
    """
    p = np.asarray(param, dtype=np.float64)
    d = p.shape[0]
    if k == d:
        return haar_orthogonal(d, rng, m=size)
    steps = sequential_steps(k, d)
    signed = p if steps == k else -p
    # Rows of qt are the basis vectors: the drawn directions θ₁ … θᵢ, then an orthonormal basis of their complement.
    qt = np.broadcast_to(np.eye(d), (size, d, d)).copy()
    for i in range(steps):
        block = qt[:, i:]
        cond = block @ signed @ np.swapaxes(block, 1, 2)
        values, vectors = np.linalg.eigh(cond)
        z = np.einsum("mij,mj->mi", vectors, sample_vector_bingham_eig(values, rng))
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        z *= np.where(z[:, :1] < 0.0, -1.0, 1.0)  # θ and −θ span the same line
        u, c = _householder_to(z)
        block -= (c[:, None] * u)[:, :, None] * np.einsum("mq,mqd->md", u, block)[:, None, :]
    kept = qt[:, :k] if steps == k else qt[:, steps:]
    v, _ = np.linalg.qr(np.swapaxes(kept, 1, 2))  # same span; removes rounding drift from the reflections
    return v


def sample_matrix_bingham(
    param: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    sampler: str = "auto",
    n_sweeps: int | None = None,
) -> tuple[np.ndarray, bool]:
    """One draw from the matrix Bingham density ∝ exp(tr(VᵀPV)) on d×k Stiefel matrices; returns (V, exact).

    ``sampler="auto"`` draws exactly whenever an exact method exists and runs the Gibbs sampler otherwise:

    * k = 1: the vector Bingham, exact (:func:`sample_vector_bingham`);
    * k = d − 1: tr(VᵀPV) = tr(P) − wᵀPw for the unit normal w of span(V), so w ~ Bingham(−P) exactly and V is an
      orthonormal basis of w^⊥;
    * k = d: the span is all of ℝ^d whatever the data, so a uniformly random orthogonal matrix is exact;
    * otherwise: :func:`gibbs_matrix_bingham` from a uniformly random start with ``n_sweeps`` sweeps (default
      :func:`default_sweeps`), which is exact only in the limit of infinitely many sweeps.

    ``sampler="gibbs"`` forces the Gibbs sampler for every 1 ≤ k < d (used to validate it against the exact ones).
    """
    p = np.asarray(param, dtype=np.float64)
    d = p.shape[0]
    if sampler == "auto":
        if k == d:
            return haar_orthogonal(d, rng)[0], True
        if k == 1:
            return sample_vector_bingham(p, rng)[:, None], True
        if k == d - 1:
            w = sample_vector_bingham(-p, rng)
            w = w * (-1.0 if w[0] < 0 else 1.0)
            u, c = _householder_to(w[None, :])
            reflection = np.eye(d) - c[0] * np.outer(u[0], u[0])
            return reflection[:, 1:], True
    sweeps = default_sweeps(k) if n_sweeps is None else n_sweeps
    v, _ = gibbs_matrix_bingham(p, k, sweeps, rng)
    return v[0], False
