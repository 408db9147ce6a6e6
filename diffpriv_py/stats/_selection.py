"""Set-union partition selection for group-by: the weighted Gaussian policy, and the public rule choosing it.

A person who may be in up to G groups spreads a total L2 weight of at most 1 over the groups they kept, instead of a
count of 1 in each; the per-group weights get Gaussian noise and are released above a threshold that pays for the
groups one person can create alone (Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, "Differentially Private Set
Union", ICML 2020, weighted Gaussian), here under the library's replace-one-person relation and computed so that the
guarantee holds for what floating point computes. The proof is in :class:`~diffpriv_py.stats.GroupBy`'s Notes.
"""

from __future__ import annotations

import functools
import math

import attrs
import numpy as np
from scipy.special import ndtri

from .._fixed_point import rounding_allowance
from ..events import Relation
from ..mechanisms.gaussian import analytic_gaussian_sigma
from ..noise import gaussian_grid_calibration, grid_gaussian
from ..privacy import Eps

__all__ = ["SELECTIONS", "WEIGHT_BITS", "TruncatedGeometric", "WeightedGaussian", "weight_units"]

SELECTIONS = ("auto", "threshold", "weighted_gaussian", "truncated_geometric")

WEIGHT_BITS = 20
"""A person in t groups gives each ⌊2²⁰/√t⌋·2⁻²⁰ ≤ 1/√t: integers on a power-of-two grid, summed exactly."""

_TAIL_SLACK = 2.0**-20  # relative share of the tail budget kept back for the sampler's and Φ⁻¹'s float errors


@functools.lru_cache(maxsize=64)
def weight_units(max_groups: int) -> np.ndarray:
    """k_t = ⌊2ᴮ/√t⌋ for t = 0 … G (k_0 unused), exactly: ⌊√⌊4ᴮ/t⌋⌋ by integer square roots, so t·k_t² ≤ 4ᴮ."""
    return np.array([0] + [math.isqrt((1 << (2 * WEIGHT_BITS)) // t) for t in range(1, max_groups + 1)], np.int64)


@attrs.frozen
class WeightedGaussian:
    """The public plan of weighted-Gaussian selection for one (ε_s, δ_s) and G: the noise σ on the grid r and the
    threshold ρ (all from public numbers; see :meth:`of`)."""

    max_groups: int
    r: float
    sigma: float
    rho: float

    @classmethod
    def of(cls, select: Eps, max_groups: int, n_people: int, relation: Relation = "replace_one") -> WeightedGaussian:
        """Plan for selection parameters (ε_s, δ_s), G groups per person, at most ``n_people`` people (public) and
        the neighbouring ``relation``.

        δ_s is split as δ_g = δ_s/2 for the Gaussian comparison of the groups both neighbours hold, and
        p = δ_s/(2(1 + e^{ε_s})) (add/remove: δ_s/2) for the probability that any group one person holds alone is
        released. The L2 sensitivity is √2 (add/remove: 1; see GroupBy's Notes) plus the float64 conversion of the
        exact sums (each below n_people in weight units), on at most 2G (add/remove: G) coordinates.
        """
        return _plan(select.epsilon, select.delta, max_groups, n_people, relation)

    @staticmethod
    def share_weights(max_groups: int) -> np.ndarray:
        """What a kept (person, group) pair adds to its group's total weight, in units of 2⁻ᴮ, indexed by the
        number t of groups its person kept: k_t = ⌊2ᴮ/√t⌋ (:func:`weight_units`), so a person's weights have L2
        norm at most 1."""
        return weight_units(max_groups)

    def release(self, total: np.ndarray, people: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The released groups (ascending codes) among those holding a person, from their total weights in units
        of 2⁻ᴮ (exact integers: each kept pair adds ``weight_units(max_groups)[t]``, t the number of groups its
        person kept; see :func:`~diffpriv_py._contribution.bound_table`); one noise batch."""
        candidates = np.flatnonzero(people > 0)
        # One correctly rounded conversion per group (paid for by the plan's allowance), then an exact power of two.
        weight = np.asarray(total[candidates], dtype=np.float64) * 2.0**-WEIGHT_BITS
        noisy = grid_gaussian(weight, self.r, self.sigma, rng)
        released: np.ndarray = candidates[noisy >= self.rho]
        return released

    def people_at_half(self) -> float:
        """People needed for a group to be released with probability ½ when each of them fills all G groups
        (weight 1/√G each): ρ·√G. Compared with the threshold policy's τ by ``auto``."""
        return self.rho * math.sqrt(self.max_groups)


@functools.lru_cache(maxsize=256)
def _plan(epsilon: float, delta: float, g: int, n_people: int, relation: Relation) -> WeightedGaussian:
    replace = relation == "replace_one"
    delta_g = delta / 2.0
    p = delta / (2.0 * (1.0 + math.exp(epsilon)) if replace else 2.0) * (1.0 - _TAIL_SLACK)
    # The converted sums lie within rounding_allowance(n_people) of the exact ones (each group's weight ≤ n_people).
    touched = 2 * g if replace else g
    sensitivity = (math.sqrt(2.0) if replace else 1.0) + math.sqrt(touched) * float(rounding_allowance(n_people))
    r, sigma = gaussian_grid_calibration(analytic_gaussian_sigma, sensitivity, epsilon, delta_g, touched)
    k = weight_units(g)
    rho = -math.inf
    for t in range(1, g + 1):
        q = -math.expm1(math.log1p(-p) / t)  # 1 − (1 − p)^{1/t}: each of t lone groups stays below ρ w.p. ≥ 1 − q
        z = float(-ndtri(q))
        rho = max(rho, float(k[t]) * 2.0**-WEIGHT_BITS + sigma * z * (1.0 + 2.0**-30))
    # 2r covers the grid rounding of the lone weight and the sampler's nearest-integer discretisation (Notes).
    return WeightedGaussian(max_groups=g, r=r, sigma=sigma, rho=math.nextafter(rho + 2.0 * r, math.inf))


_MAX_TABLE = 1 << 20
"""Most people a group may need before the truncated geometric's keep probability reaches 1 (a table that long
means ε_s/G below about 10⁻⁵; the policy is refused there, before the charge)."""


@attrs.frozen(eq=False)
class TruncatedGeometric:
    """The optimal partition selection for a count of people (Desfontaines, Voss, Gipson & Mandayam, "Differentially
    private partition selection", PoPETs 2022; PipelineDP's default), for one (ε_s, δ_s), G and relation.

    ``keep[n]`` is the probability of releasing a group of n people (n ≥ len(keep) − 1: 1). See :meth:`of`."""

    keep: np.ndarray
    epsilon: float
    delta: float

    @classmethod
    def of(cls, select: Eps, max_groups: int, relation: Relation = "replace_one") -> TruncatedGeometric:
        """Plan for selection parameters (ε_s, δ_s), G groups per person and the neighbouring ``relation``.

        Per group, under add/remove, the pair (ε, δ) = (ε_s/G, δ_s/G); under replace-one the add/remove pair that
        implies (ε_s, δ_s) by group privacy, (ε_s/(2G), δ_s/((1 + e^{ε_s/2})G)). Raises ``ValueError`` when δ is below
        2⁻⁴⁰ (the float slack would eat it) or the table would be longer than 2²⁰.
        """
        g = max_groups
        if relation == "replace_one":
            epsilon, delta = select.epsilon / 2.0, select.delta / (1.0 + math.exp(select.epsilon / 2.0))
        else:
            epsilon, delta = select.epsilon, select.delta
        return _keep_table(epsilon / g, delta / g)

    def release(self, people: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The released groups (ascending codes) among those holding a person: group g w.p. keep[people[g]]."""
        candidates = np.flatnonzero(people > 0)
        n = np.minimum(people[candidates], self.keep.shape[0] - 1)
        released: np.ndarray = candidates[rng.random(candidates.shape[0]) < self.keep[n]]
        return released

    def people_at_half(self) -> float:
        """The smallest number of people a group is released with probability ≥ ½ at (compared by ``auto``)."""
        return float(np.searchsorted(self.keep, 0.5))


@functools.lru_cache(maxsize=64)
def _keep_table(epsilon: float, delta: float) -> TruncatedGeometric:
    """π(0) = 0, π(n) = min(e^ε·π(n−1) + δ′, 1 − e^{−ε}·(1 − π(n−1) − δ′), 1) until π = 1, for a δ′ below δ.

    *Proof.* For neighbours whose counts are n − 1 and n (a person added to or removed from the group), releasing
    with probability π(count) is (ε, δ)-DP iff π(n) ≤ e^ε·π(n−1) + δ and 1 − π(n−1) ≤ e^ε·(1 − π(n)) + δ, which the
    recursion meets with equality where it is not 1 (it is the largest such sequence: Desfontaines et al. 2022).
    *Floats.* A comparison U < p of ``rng.random()`` (a multiple of 2⁻⁵³) with p happens with probability
    q ∈ [p, p + 2⁻⁵³), and each computed π(n) (with e^{±ε} themselves rounded) is within 4·2⁻⁵³ of the formula
    applied to the stored π(n − 1). So the probabilities actually sampled meet the first inequality with
    δ′ + 5·2⁻⁵³ and the second with δ′ + 5e^ε·2⁻⁵³ in place of δ, both at most δ for the choice
    δ′ = δ − 8(e^ε + 1)·2⁻⁵² (refused unless δ′ ≥ δ/2).
    """
    slack = 8.0 * (math.exp(epsilon) + 1.0) * 2.0**-52
    small = delta - slack
    if not (delta >= 2.0**-40 and small >= delta / 2.0):
        raise ValueError(
            f"truncated_geometric partition selection needs a per-group delta of at least 2**-40 (about 1e-12), "
            f"far above the float slack; got {delta!r}. Pass a larger delta or selection='threshold'."
        )
    up, down = math.exp(epsilon), math.exp(-epsilon)
    keep = [0.0]
    while keep[-1] < 1.0:
        if len(keep) > _MAX_TABLE:
            raise ValueError(
                f"truncated_geometric partition selection at a per-group epsilon of {epsilon!r} needs more than "
                f"{_MAX_TABLE} people per group before a group is surely released; pass a larger epsilon or "
                "selection='threshold'."
            )
        prev = keep[-1]
        keep.append(min(up * prev + small, 1.0 - down * (1.0 - prev - small), 1.0))
    return TruncatedGeometric(keep=np.array(keep), epsilon=epsilon, delta=delta)
