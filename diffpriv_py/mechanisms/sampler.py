"""The sensitivity sampler (Rubinstein & Aldà, ICML 2017): make a black-box target private without a derivation.

It draws ``m`` pairs of replace-one neighbouring datasets from a public population (the *oracle*), measures the
target's change on each in the mechanism's norm, and uses the ``k``-th smallest change as the sensitivity. The
release is then (ε, δ, γ)-random DP: the DP inequality holds with probability ≥ 1 − γ over datasets drawn from
the oracle's population.
"""

from __future__ import annotations

import inspect
import logging
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from .._datasets import append_record, n_records
from .._rng import RNGLike, spawn_seeds
from .._validation import check_in_range, check_int, check_n_jobs, check_size
from ..exceptions import DiffprivWarning, SensitivityError
from .base import DPMech, check_mechanism
from .sampling import SensitivitySampling, attached_to

__all__ = ["SamplerPlan", "SensitivitySampling", "plan_sampler", "sample_sensitivity", "sample_sensitivity_manual"]

logger = logging.getLogger("diffpriv_py")

MAX_SAMPLES = 10**8
"""Largest number of sampled sensitivities: more would take days of target evaluations (and 800 MB to hold)."""

_MIN_GAMMA = 2.5e-4
"""Smallest γ the sampler can plan for: γ = ρ + √(ln(1/ρ)/(2m)) at m = MAX_SAMPLES is 2.4992e-4."""

MAX_N = 10**8
"""Largest dataset size the sampler accepts: every sampled pair asks the oracle for n records (800 MB of float64)."""

CHUNKS = 64
"""Number of work chunks a sampling run is split into (independent of ``n_jobs``, so results do not depend on it)."""


@attrs.frozen
class SamplerPlan:
    """The sampler's settings: ``m`` draws, the ``k``-th order statistic, the random-DP ``gamma`` and DKW ``rho``."""

    m: int
    gamma: float
    k: int
    rho: float


def _gamma_lo(m: int, rho: float) -> float:
    return rho + math.sqrt(math.log(1.0 / rho) / (2.0 * m))


def _rho_for_m(m: int) -> float:
    # Minimises gamma_lo over rho: 8 m rho^2 ln(1/rho) = 1, solved with the lower Lambert-W branch.
    from scipy.special import lambertw  # lazy: scipy.special costs ~0.25 s at import

    return math.exp(0.5 * lambertw(-1.0 / (4.0 * m), k=-1).real)


def plan_sampler(m: int | None = None, gamma: float | None = None) -> SamplerPlan:
    """Choose the sensitivity sampler's ``(m, gamma, k)`` exactly as R's ``.sensitivity_sampler_config``.

    Parameters
    ----------
    m : int, optional
        Number of sampled sensitivities. Given alone, γ is made as small as ``m`` allows and ``k = m``.
    gamma : float, optional
        Target γ in (0, 1). Given alone, the smallest sufficient ``m`` is used (with ``k = m``); given with ``m``,
        ``k`` is the smallest order statistic that achieves ``gamma`` (which must be at least the γ ``m`` allows).

    Returns
    -------
    SamplerPlan

    Notes
    -----
    With ρ the failure probability of the (one-sided) DKW bound, γ ≥ ρ + √(ln(1/ρ)/(2m)) and
    k = ⌈m(1 − γ + ρ + √(ln(1/ρ)/(2m)))⌉. The optimal ρ uses the W₋₁ branch of Lambert W (Rubinstein & Aldà 2017).

    Examples
    --------
    >>> plan_sampler(gamma=0.1)
    SamplerPlan(m=285, gamma=0.1, k=285, rho=0.00974...)
    """
    if m is None and gamma is None:
        raise ValueError("Must specify at least one input m or gamma for the sensitivity sampler.")
    if m is not None:
        m = check_size(m, "m", maximum=MAX_SAMPLES, owner="the sensitivity sampler")
    if gamma is not None:
        gamma = check_in_range(
            gamma, "gamma", 0.0, 1.0, low_closed=False, high_closed=False, owner="the sensitivity sampler"
        )
    if m is None:
        assert gamma is not None  # for type checkers: one of m, gamma is given (checked above)
        from scipy.special import lambertw

        if gamma < _MIN_GAMMA:  # m would exceed MAX_SAMPLES; far below, rho == gamma in floating point (0/0)
            raise ValueError(
                f"The 'gamma' parameter of the sensitivity sampler is {gamma!r}: below {_MIN_GAMMA:g}, more than "
                f"{MAX_SAMPLES:.0e} sampled sensitivities would be needed. Use a larger gamma (e.g. 0.01 needs "
                "m = 41971)."
            )
        rho = math.exp(lambertw(-gamma / (2.0 * math.sqrt(math.e)), k=-1).real + 0.5)
        m = math.ceil(math.log(1.0 / rho) / (2.0 * (gamma - rho) ** 2))
        assert m <= MAX_SAMPLES  # m falls as gamma grows, and gamma = _MIN_GAMMA needs m = 99,930,886
    else:
        rho = _rho_for_m(m)
    gamma_lo = _gamma_lo(m, rho)
    if gamma is None:
        if not gamma_lo < 1.0:
            raise ValueError(
                f"m={m} sampled sensitivities cannot give any gamma < 1 (the smallest is {gamma_lo:.4f}). Use m >= 2."
            )
        gamma = gamma_lo
    elif gamma < gamma_lo:
        raise ValueError(
            f"Given gamma {gamma} must exceed {gamma_lo:.6f}, the smallest gamma that m={m} samples allow. "
            "Increase m, or pass gamma alone to get the m it needs."
        )
    # Clamp: at gamma == gamma_lo floating point can push the ceiling to m + 1.
    k = min(m, max(1, math.ceil(m * (1.0 - gamma + gamma_lo))))
    return SamplerPlan(m=m, gamma=gamma, k=k, rho=rho)


def _oracle_caller(oracle: Callable[..., Any]) -> tuple[Callable[[int, np.random.Generator], Any], bool]:
    """Wrap an oracle as ``f(n, rng)``; the flag says whether it takes the library's rng (reproducible)."""
    if not callable(oracle):
        raise TypeError(f"The oracle must be a function oracle(n, rng) -> dataset of n records. Got {oracle!r}.")
    try:
        params = [
            p
            for p in inspect.signature(oracle).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
    except (TypeError, ValueError):  # builtins without a signature: assume the R-style one-argument form
        params = []
    takes_rng = len(params) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)
    if takes_rng:
        return oracle, True
    return (lambda n, rng: oracle(n)), False


def _draw(oracle: Callable[[int, np.random.Generator], Any], size: int, rng: np.random.Generator) -> Any:
    data = oracle(size, rng)
    got = n_records(data)
    if got != size:
        raise ValueError(f"The oracle returned {got} records when asked for {size}; it must return exactly n records.")
    return data


def _neighbour_pair(oracle: Callable[..., Any], n: int, rng: np.random.Generator) -> tuple[Any, Any]:
    """R's pair: a shared base ``oracle(n − 1)`` and one fresh record ``oracle(1)`` appended to each copy."""
    # Separate oracle calls, not one call for n + 1 records: an oracle may draw per-call state (a regime, a
    # mixture component) once per call, and R's sampler, whose guarantee is stated for its pairs, calls it so.
    base = _draw(oracle, n - 1, rng) if n > 1 else None
    first = _draw(oracle, 1, rng)
    second = _draw(oracle, 1, rng)
    return append_record(base, first), append_record(base, second)


def _sample_chunk(
    mech: DPMech, oracle: Callable[..., Any], n: int, size: int, seed: np.random.SeedSequence
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty(size)
    for i in range(size):
        out[i] = mech.sensitivity_norm(*_neighbour_pair(oracle, n, rng))
        if not math.isfinite(out[i]):
            raise SensitivityError(
                f"A sampled sensitivity is {out[i]}: the target's change between two neighbouring datasets must be "
                "finite. Fix the target (or the oracle) so it returns finite values."
            )
    return out


def _sample(
    mech: DPMech,
    oracle: Callable[..., Any],
    n: int,
    m: int,
    *,
    rng: RNGLike,
    n_jobs: int | None,
    progress: bool,
    time_budget: float | None = None,
) -> tuple[DPMech, np.ndarray]:
    """Probe ``mech`` on one public dataset and draw up to ``m`` sensitivities, chunk by chunk, in chunk order.

    With a ``time_budget`` (seconds) the run stops at the first chunk boundary after the budget: a stopping time
    that depends on the clock only, never on the sampled values.
    """
    call, reproducible = _oracle_caller(oracle)
    if not reproducible and n_jobs not in (None, 1):
        warnings.warn(
            "The oracle takes no rng argument, so parallel sampling is not reproducible. Write it as "
            "oracle(n, rng) and draw from rng.",
            DiffprivWarning,
            stacklevel=4,
        )
    probe_seed, *seeds = spawn_seeds(rng, 1 + min(CHUNKS, m))
    mech = mech._probe(_draw(call, n, np.random.default_rng(probe_seed)))
    sizes = np.diff(np.linspace(0, m, len(seeds) + 1).round().astype(int))
    tasks = [(size, seed) for size, seed in zip(sizes, seeds, strict=True) if size > 0]

    if n_jobs in (None, 1):
        results = (_sample_chunk(mech, call, n, size, seed) for size, seed in tasks)
    else:
        from joblib import Parallel, delayed

        # A generator lets us stop early (time budget, first error); closing it cancels the outstanding chunks.
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_sample_chunk)(mech, call, n, size, seed) for size, seed in tasks
        )
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=m, desc="sampling sensitivity", unit="pair")
    deadline = None if time_budget is None else time.monotonic() + time_budget
    done: list[np.ndarray] = []
    try:
        for chunk in results:
            done.append(chunk)
            if bar is not None:
                bar.update(chunk.size)
            if deadline is not None and time.monotonic() > deadline:
                break
    finally:
        if hasattr(results, "close"):
            results.close()
        if bar is not None:
            bar.close()
    return mech, np.concatenate(done)


def sample_sensitivity_manual(
    mech: DPMech,
    oracle: Callable[..., Any],
    n: int,
    m: int,
    k: int,
    *,
    rng: RNGLike = None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> DPMech:
    """Return a copy of ``mech`` whose sensitivity is the ``k``-th smallest of ``m`` sampled sensitivities.

    Parameters
    ----------
    mech : DPMech
        The mechanism; it is not modified.
    oracle : callable
        ``oracle(n, rng)`` returns a dataset of ``n`` records drawn i.i.d. from the public population, using the
        numpy Generator ``rng``. An R-style ``oracle(n)`` is accepted, but then runs with ``n_jobs > 1`` are not
        reproducible. The oracle must never resample the private data.
    n : int
        Size of the private dataset that will be released on.
    m, k : int
        Number of sampled sensitivities and the order statistic to use, ``1 <= k <= m``.
    rng : None, int, SeedSequence or Generator, optional
        Seeds the oracle; for a given seed the result is identical whatever ``n_jobs`` or the joblib backend is:
        the work is split into chunks independently of the workers, each with its own spawned seed.
    n_jobs : int, optional
        Number of joblib workers (``None`` or 1: in-process; -1: all cores). The active joblib backend is used,
        so a dask or ray cluster can take over through ``joblib.parallel_config(backend="dask")``.
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    DPMech
        A new mechanism with the sampled sensitivity; ``gamma_sensitivity`` is left unchanged (on a mechanism whose
        sensitivity is derived it is ``None``: the caller's (m, k) carry no γ, so the derived floor applies).

    Notes
    -----
    Each draw builds the replace-one neighbours exactly as R's ``sensitivitySamplerManual``: a shared base
    ``oracle(n − 1, rng)`` and two independent single records ``oracle(1, rng)``, one appended last to each copy
    of the base (for n = 1 the two records alone). Three oracle calls per pair, so an oracle that draws a latent
    state once per call (a regime, a cluster) gives the two fresh records their own states, as in R. The first
    error (a failing target, a non-finite sensitivity) stops the run and cancels the outstanding work.
    """
    check_mechanism(mech, "mech", owner="the sensitivity sampler")._check_samplable()
    n = _check_n(n)
    m = check_size(m, "m", maximum=MAX_SAMPLES, owner="the sensitivity sampler")
    k = check_int(k, "k", minimum=1, owner="the sensitivity sampler")
    n_jobs = check_n_jobs(n_jobs, owner="the sensitivity sampler")
    if k > m:
        raise ValueError(f"The order statistic index k is not in {{1,...,m}}: k={k}, m={m}.")
    mech, sampled = _sample(mech, oracle, n, m, rng=rng, n_jobs=n_jobs, progress=progress)
    # A user's own γ on a plain mechanism is kept (R parity); a derived sensitivity's γ is only ever the sampler's.
    gamma = None if mech.sensitivity_is_derived else mech.gamma_sensitivity
    return _with_sampling(mech, SensitivitySampling(n, m, k, gamma, _order_statistic(sampled, k)))


def _check_n(n: Any) -> int:
    why = "each sampled pair asks the oracle for n records; a larger dataset cannot be sampled in memory"
    return check_int(n, "n", minimum=1, maximum=MAX_N, why=why, owner="the sensitivity sampler")


def _with_sampling(mech: DPMech, record: SensitivitySampling) -> DPMech:
    """A copy of ``mech`` with the sampled fields set and the record of the sampling attached (the only way it is)."""
    with attached_to(type(mech), record):
        return attrs.evolve(mech, sensitivity=record.sensitivity, gamma_sensitivity=record.gamma, sampled_n=record.n)


def _order_statistic(sampled: np.ndarray, k: int) -> float:
    return float(np.partition(sampled, k - 1)[k - 1])


def sample_sensitivity(
    mech: DPMech,
    oracle: Callable[..., Any],
    n: int,
    m: int | None = None,
    gamma: float | None = None,
    *,
    rng: RNGLike = None,
    n_jobs: int | None = None,
    progress: bool = False,
    time_budget: float | None = None,
) -> DPMech:
    """Estimate ``mech``'s sensitivity by sampling and return a new mechanism that releases with random DP.

    Parameters
    ----------
    mech : DPMech
        The mechanism; it is not modified.
    oracle : callable
        ``oracle(n, rng)`` returns ``n`` records drawn from the public population (see
        :func:`sample_sensitivity_manual`).
    n : int
        Size of the private dataset that will be released on.
    m, gamma : optional
        At least one; see :func:`plan_sampler`.
    rng, n_jobs, progress
        As in :func:`sample_sensitivity_manual`.
    time_budget : float, optional
        Wall-clock seconds. If the ``m`` draws are not done by then, sampling stops at the next chunk boundary and
        the guarantee is recomputed for the ``m'`` draws completed (γ as small as ``m'`` allows, or the requested γ
        if ``m'`` still achieves it); the achieved γ is what the mechanism reports, and a warning says so.

    Returns
    -------
    DPMech
        A copy with the sampled sensitivity and ``gamma_sensitivity`` set; its releases report
        ``Gam(epsilon, delta, gamma)``.

    Notes
    -----
    The guarantee is (ε, δ, γ)-random DP (Hall, Rinaldo & Wasserman 2013) with respect to the oracle's
    population: it holds for typical datasets drawn from it, not for worst-case ones, and only if the private
    data really are drawn from that population. Sample once per release; re-running the sampler to keep the
    smallest sensitivity voids γ. A time budget is valid because where it stops depends on the clock, not on the
    sampled values (assuming the target's run time does not depend on them); stopping because the estimate
    "looks stable" would not be.

    References
    ----------
    Rubinstein, B. I. P. & Aldà, F. (2017). Pain-free random differential privacy with sensitivity sampling.
    ICML, PMLR 70:2950–2959.
    """
    check_mechanism(mech, "mech", owner="the sensitivity sampler")._check_samplable()
    plan = plan_sampler(m=m, gamma=gamma)
    if time_budget is not None:
        time_budget = check_in_range(
            time_budget, "time_budget", 0.0, math.inf, low_closed=False, high_closed=False, owner="the sampler"
        )
    n = _check_n(n)
    n_jobs = check_n_jobs(n_jobs, owner="the sensitivity sampler")
    logger.info("Sampling sensitivity with m=%d gamma=%g k=%d", plan.m, plan.gamma, plan.k)
    probed, sampled = _sample(
        mech, oracle, n, plan.m, rng=rng, n_jobs=n_jobs, progress=progress, time_budget=time_budget
    )
    if sampled.size < plan.m:
        plan = _plan_after_timeout(sampled.size, gamma)
        warnings.warn(
            f"The time budget stopped the sensitivity sampler after {sampled.size} of the planned draws; the "
            f"guarantee is recomputed for them: gamma={plan.gamma:.4g} (k={plan.k}).",
            DiffprivWarning,
            stacklevel=3,
        )
    record = SensitivitySampling(n, sampled.size, plan.k, plan.gamma, _order_statistic(sampled, plan.k))
    return _with_sampling(probed, record)


def _plan_after_timeout(m_done: int, gamma: float | None) -> SamplerPlan:
    """The plan for the draws actually completed: the requested γ if still feasible, else the best γ for them."""
    if m_done < 2:
        raise SensitivityError(
            f"The time budget allowed only {m_done} sampled sensitivity; at least 2 are needed for any gamma < 1. "
            "Give the sampler more time or a cheaper target."
        )
    if gamma is not None:
        try:
            return plan_sampler(m=m_done, gamma=gamma)
        except ValueError:
            pass
    return plan_sampler(m=m_done)
