"""Noise samplers whose set of possible outputs does not depend on the input, one floor below the mechanisms.

Safe noise rounds a value to a power-of-two grid and adds an integer draw on it (:mod:`.grid`), with the integer
from a vectorised two-sided geometric (:mod:`.geometric`, grid Laplace) or discrete Gaussian (:mod:`.gaussian`, grid
Gaussian) sampler whose float error is paid for by a reserve in the calibration; exact noise draws the same integers
with CKS20 on ints and Fractions (:mod:`.exact`); and :mod:`.selection` draws Gumbel and Exp(1) variables with their
full range for the exponential mechanism. This package imports no mechanism, and the names below are the only ones
the rest of the library imports from it.
"""

from .exact import (
    exact_discrete_gaussian,
    exact_discrete_laplace,
    exact_discrete_laplace_many,
    exact_grid_gaussian,
    exact_grid_laplace,
)
from .gaussian import discrete_gaussian, gaussian_grid_calibration, grid_gaussian, grid_gaussian_scalar
from .geometric import (
    grid_laplace,
    grid_laplace_noise,
    grid_laplace_scalar,
    laplace_grid,
    one_two_sided_geometric,
    two_sided_geometric,
)
from .grid import GRID_BITS, bernoulli, grid_step, laplace_epsilon_reserve, round_to_grid
from .selection import gumbel, sample_exponential, sample_exponential_many

__all__ = [
    "GRID_BITS",
    "bernoulli",
    "discrete_gaussian",
    "exact_discrete_gaussian",
    "exact_discrete_laplace",
    "exact_discrete_laplace_many",
    "exact_grid_gaussian",
    "exact_grid_laplace",
    "gaussian_grid_calibration",
    "grid_gaussian",
    "grid_gaussian_scalar",
    "grid_laplace",
    "grid_laplace_noise",
    "grid_laplace_scalar",
    "grid_step",
    "gumbel",
    "laplace_epsilon_reserve",
    "laplace_grid",
    "one_two_sided_geometric",
    "round_to_grid",
    "sample_exponential",
    "sample_exponential_many",
    "two_sided_geometric",
]
