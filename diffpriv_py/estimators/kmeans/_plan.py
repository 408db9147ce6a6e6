"""The budget plans of a k-means release: how ε is split over the noisy passes, and the rules that choose them.

Functions of public quantities only (ε, n, d, k and the settings), so a plan reveals nothing about the data.
"""

from __future__ import annotations

import math

import attrs

RHO = 0.225
"""Su et al.'s constant ρ in the count/sum budget ratio (4dρ²)^{1/3} and the iteration rule."""

PLAIN_N_ITER = 5
"""Iterations of the original DPLloyd (Su et al.'s baseline setting)."""

AUTO_SIGNAL = 30.0
"""``method="auto"`` seeds from a private coreset when ε·n/(k·d) reaches this, else runs improved DPLloyd."""

SEED_FRACTION = 0.5
"""Share of ε the coreset seeding spends; the rest goes to the final Lloyd step(s)."""

N_CANDIDATES = 200
"""Minimum number of data-independent candidate centres whose Voronoi cells form the coreset (at least 4k)."""


@attrs.frozen
class DPLloydPlan:
    """How a DPLloyd release spends ε: the iteration count and the per-iteration count/sum split.

    Attributes
    ----------
    n_iter : int
        Number of noisy Lloyd iterations T.
    epsilon_count : float
        ε of the noisy cluster-count histogram in each iteration.
    epsilon_sums : float
        ε of the noisy cluster sums in each iteration, shared equally by the d coordinates.
    n_features : int
        d.

    Notes
    -----
    By sequential composition the release is ``total``-DP with ``total = n_iter·(epsilon_count + epsilon_sums)``;
    :meth:`KMeans.plan` makes that equal to the requested ε (to the last bit it rounds down, never up).
    """

    n_iter: int
    epsilon_count: float
    epsilon_sums: float
    n_features: int

    @property
    def epsilon_per_coordinate(self) -> float:
        """ε of each coordinate's sums in one iteration."""
        return self.epsilon_sums / self.n_features

    @property
    def spends(self) -> list[float]:
        """Every ε the release charges, in order (count, sums) per iteration."""
        return [self.epsilon_count, self.epsilon_sums] * self.n_iter

    @property
    def total(self) -> float:
        """The composed ε of the whole release (an exactly rounded sum of :attr:`spends`)."""
        return math.fsum(self.spends)


@attrs.frozen
class CoresetPlan:
    """How a coreset-seeded release spends ε: one noisy pass over candidate cells, then DPLloyd step(s).

    Attributes
    ----------
    n_candidates : int
        m, the number of data-independent candidate centres whose Voronoi cells are counted and summed.
    epsilon_seed_count : float
        ε of the noisy count histogram over the m cells.
    epsilon_seed_sums : float
        ε of the noisy m×d cell sums, shared equally by the d coordinates.
    lloyd : DPLloydPlan
        The noisy Lloyd iteration(s) that refine the k centres chosen from the coreset.

    Notes
    -----
    By sequential composition the release is ``total``-DP with ``total = epsilon_seed_count + epsilon_seed_sums +
    lloyd.total``; :meth:`KMeans.plan` makes that equal to the requested ε (rounding down by an ulp if at all).
    """

    n_candidates: int
    epsilon_seed_count: float
    epsilon_seed_sums: float
    lloyd: DPLloydPlan

    @property
    def n_iter(self) -> int:
        """Noisy Lloyd iterations after the seeding pass."""
        return self.lloyd.n_iter

    @property
    def spends(self) -> list[float]:
        """Every ε the release charges, in order: the seeding count and sums, then (count, sums) per iteration."""
        return [self.epsilon_seed_count, self.epsilon_seed_sums, *self.lloyd.spends]

    @property
    def total(self) -> float:
        """The composed ε of the whole release (an exactly rounded sum of :attr:`spends`)."""
        return math.fsum(self.spends)


def auto_method(epsilon: float, n: int, d: int, k: int) -> str:
    """The method ``KMeans(method="auto")`` runs: ``"coreset"`` if ε·n/(k·d) ≥ 30, else ``"dplloyd"``.

    A function of public quantities only (ε, and n, d, k, which replace-one neighbours share), so the choice
    reveals nothing about the data. ε·n/(k·d) is an average cluster's size over the Laplace scale d/ε of its
    coordinate sums; when it is small the seeding pass cannot afford half of ε and improved DPLloyd (all of ε on
    Lloyd steps) does better. The threshold is the measured crossover of the two methods (mean inertia over 10
    seeds): between ε·n/(k·d) = 25 and 37.5 on iris (d = 4, k = 3), 16.7 and 25 on a 2-D 15-cluster mixture, and
    20 and 30 on 10-D blobs with k = 5. No single value fits all three; 30 keeps iris on the better side and costs
    the 2-D mixture near ε·n/(k·d) = 25; see ``docs/kmeans.md``.
    """
    if not all(map(math.isfinite, (epsilon, n, d, k))) or min(epsilon, n, d, k) <= 0:
        raise ValueError(
            f"auto_method needs a positive finite ε and positive n, d, k. Got ε={epsilon!r}, n={n!r}, d={d!r}, "
            f"k={k!r}. Pass the release's ε and the data's public shape."
        )
    return "coreset" if epsilon * n / (k * d) >= AUTO_SIGNAL else "dplloyd"


def su_n_iter(epsilon: float, n: int, d: int, k: int) -> int:
    """Su et al.'s iteration count T = ⌊clip(ε/ε_m, 2, 7)⌋, ε_m = √(500·k³/n²·(d + (4dρ²)^{1/3})³).

    ``epsilon`` is the budget in Su et al.'s add/remove units (see :class:`KMeans` Notes).
    """
    ratio = (4.0 * d * RHO**2) ** (1.0 / 3.0)
    epsilon_m = math.sqrt(500.0 * k**3 / n**2 * (d + ratio) ** 3)
    return int(max(min(epsilon / epsilon_m, 7.0), 2.0))


def _split(epsilon: float, n_iter: int, ratio: float, d: int) -> DPLloydPlan:
    per_iteration = epsilon / n_iter
    eps_count = per_iteration * ratio / (d + ratio)
    eps_sums = per_iteration - eps_count
    plan = DPLloydPlan(n_iter=n_iter, epsilon_count=eps_count, epsilon_sums=eps_sums, n_features=d)
    while plan.total > epsilon:  # float rounding may overshoot by an ulp; never spend more than asked
        plan = attrs.evolve(plan, epsilon_sums=math.nextafter(plan.epsilon_sums, 0.0))
    return plan


def _coreset_plan(epsilon: float, n_iter: int, d: int, n_candidates: int) -> CoresetPlan:
    ratio = (4.0 * d * RHO**2) ** (1.0 / 3.0)
    seed = _split(epsilon * SEED_FRACTION, 1, ratio, d)
    lloyd = _split(epsilon - seed.total, n_iter, ratio, d)
    plan = CoresetPlan(n_candidates, seed.epsilon_count, seed.epsilon_sums, lloyd)
    while plan.total > epsilon:  # float rounding may overshoot by an ulp; never spend more than asked
        lloyd = attrs.evolve(lloyd, epsilon_sums=math.nextafter(lloyd.epsilon_sums, 0.0))
        plan = attrs.evolve(plan, lloyd=lloyd)
    return plan
