"""The Bernstein mechanism: private release of a whole function (Aldà & Rubinstein 2017; R: ``DPMechBernstein``)."""

from __future__ import annotations

from typing import Any, Literal

import attrs
import numpy as np

from .._validation import check_int, one_of
from ..approximation import (
    BernsteinApproximation,
    Bounds,
    check_lattice_size,
    check_order,
    evaluate_on_lattice,
    lattice_points,
    normalize_bounds,
)
from ..exceptions import TargetOutputError
from ..privacy import Eps
from .base import DPMech
from .laplace import Laplace

__all__ = ["Bernstein"]


def _lattice_k(value: Any) -> int:
    return check_int(value, "lattice_k", minimum=1, owner="Bernstein")


def _dims(value: Any) -> int:
    return check_int(value, "dims", minimum=1, owner="Bernstein")


def _order(value: Any) -> int:
    return check_order(value, "Bernstein")


def _bounds(value: Any, self_: Any) -> Bounds:
    check_lattice_size(
        self_.dims, self_.lattice_k, "Bernstein", "lattice_k"
    )  # fail at construction, not at the first release
    return normalize_bounds(value, self_.dims, "Bernstein")


@attrs.frozen(kw_only=True)
class Bernstein(DPMech):
    """Release a function on [0, 1]^dims (or a box) privately by perturbing its Bernstein lattice values.

    Parameters
    ----------
    target : callable
        Maps a dataset to a real function g on the domain (e.g. a fitted regression function or a density
        estimate). g is called per lattice point with a float (``dims == 1``) or a length-``dims`` array, as in R,
        or once with all points when ``vectorized=True``.
    lattice_k : int
        Degree k per axis: g is evaluated on the (k + 1)^dims lattice {0, 1/k, …, 1}^dims (R: ``latticeK``).
    dims : int
        Dimension d of the function's domain.
    sensitivity : float
        Δ = sup over replace-one neighbours D, D′ of max over lattice points ν/k of |g_D(ν/k) − g_D′(ν/k)|: the
        L∞ distance on the lattice, which is also what :meth:`sensitivity_norm` measures, so
        :meth:`sensitivity_sampler` can estimate it. Default ``inf`` (unset: releases are refused).
    order : int, default 1
        Order h of the iterated Bernstein operator I − (I − B_k)^h applied per axis when the released function is
        evaluated. 1 is R's plain operator. The same lattice values are perturbed with the same noise, so the
        privacy cost does not depend on h; smooth targets are approximated with error O(k^-h) instead of O(1/k).
    bounds : (lower, upper), optional
        The public box [lower, upper] the function lives on (numbers or length-``dims`` sequences). The lattice is
        mapped into the box and the released function takes original coordinates. Default: the unit cube.
    vectorized : bool, default False
        Call the target's function once with all lattice points (a 1-D array for ``dims == 1``, an (M, dims) array
        otherwise) instead of once per point.
    noise : {"safe", "exact", "float"}, default "safe"
        How the Laplace noise on the lattice values is drawn; passed to :class:`~diffpriv_py.Laplace` (see there).
        ``"safe"`` and ``"exact"`` are floating-point safe; ``"float"`` is textbook numpy noise, for comparisons only.

    Notes
    -----
    The release is ε-DP under the replace-one neighbouring relation (datasets of equal size differing in one
    record) when Δ bounds the per-point change above. The (k + 1)^d lattice values c_ν = g(ν/k) form a vector whose
    L1 sensitivity is at most (k + 1)^d·Δ, so the Laplace mechanism adds i.i.d. Lap(b) noise with
    b = Δ·(k + 1)^d/ε to each of them (Aldà & Rubinstein 2017, Thm. 1; R's ``DPMechBernstein``). The noise is drawn
    by :class:`~diffpriv_py.Laplace` on the whole lattice vector, so it inherits its floating-point-safe samplers
    and their calibration (which pays for rounding all (k + 1)^d coordinates to the grid). The released object is a
    :class:`~diffpriv_py.approximation.BernsteinApproximation` holding the noisy lattice values; evaluating it
    anywhere, any number of times, and with any ``order``, is post-processing. Any δ in the privacy parameters is
    reported unchanged; with a sampled sensitivity the guarantee is (ε, δ, γ)-random DP.

    The noise grows as (k + 1)^d: use small d (<= 3) and pick k to balance the approximation error (falling in
    k) against the noise (rising in k); the best k grows with ε.

    Divergences from R: evaluation is vectorised; ``order`` > 1 (the iterated mechanism of the paper) and
    ``bounds`` are additions; the response is a frozen, picklable object rather than a closure.

    References
    ----------
    Aldà, F. & Rubinstein, B. I. P. (2017). The Bernstein mechanism: function release under differential privacy.
    AAAI, 1705–1711. arXiv:1507.04499.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> def target(X):
    ...     return lambda y: np.mean(np.exp(-((y - X) ** 2) / 0.02))
    >>> mech = dp.Bernstein(target=target, lattice_k=10, dims=1, sensitivity=1 / 100)
    >>> X = np.random.default_rng(0).uniform(size=100)
    >>> private = mech.release_response(dp.Eps(1.0), X, rng=42).response
    >>> private([0.25, 0.5]).shape
    (2,)
    """

    lattice_k: int = attrs.field(converter=_lattice_k)
    dims: int = attrs.field(converter=_dims)
    order: int = attrs.field(default=1, converter=_order)
    bounds: Bounds = attrs.field(
        default=None,
        # mypy's attrs plugin does not read attrs.Converter (takes_self); the constructor argument is typed Any.
        converter=attrs.Converter(_bounds, takes_self=True),  # type: ignore[misc]
    )
    vectorized: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    noise: Literal["safe", "exact", "float"] = attrs.field(default="safe", validator=one_of("safe", "exact", "float"))

    @property
    def n_coefficients(self) -> int:
        """Number of lattice values, (k + 1)^dims."""
        result: int = (self.lattice_k + 1) ** self.dims
        return result

    @property
    def lattice_points(self) -> np.ndarray:
        """The lattice the target's function is evaluated on, shape ((k + 1)^dims, dims), R's order."""
        return lattice_points(self.dims, self.lattice_k, self.bounds)

    def noise_scale(self, privacy_params: Eps) -> float:
        """The Laplace scale b = Δ·(k + 1)^dims/ε of the noise on each lattice value."""
        return self.sensitivity * self.n_coefficients / privacy_params.epsilon

    def _coefficient_mechanism(self) -> Laplace:
        # The lattice vector has L1 sensitivity (k + 1)^d·Δ; reusing Laplace keeps one noise path for the library.
        return Laplace(
            target=self.target,
            sensitivity=self.sensitivity * self.n_coefficients,
            dims=self.n_coefficients,
            noise=self.noise,
        )

    def _evaluate(self, output: Any) -> np.ndarray:
        if not callable(output):
            raise TargetOutputError(
                "Non-private target output is not a function: the target of Bernstein must return a function on "
                f"the domain (e.g. lambda y: ...). Got {type(output).__name__}."
            )
        return evaluate_on_lattice(
            output,
            self.dims,
            self.lattice_k,
            self.bounds,
            vectorized=self.vectorized,
            error=TargetOutputError,
            type_error=TargetOutputError,
            what="The function returned by the target",
        )

    def _norm(self, value1: np.ndarray, value2: np.ndarray) -> float:
        return float(np.max(np.abs(value1 - value2)))

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> BernsteinApproximation:
        noisy = self._coefficient_mechanism()._release(value, privacy_params, rng)
        return BernsteinApproximation(
            dims=self.dims, k=self.lattice_k, coeffs=noisy, order=self.order, bounds=self.bounds
        )

    def _sample_many(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` noisy lattice vectors at once, shape (n, (k + 1)^dims), for auditing (not a release path).

        A release is a fixed, injective post-processing of one such vector, so auditing the vectors audits the
        release (with an adversary who sees at least as much).
        """
        return self._coefficient_mechanism()._sample_many(value, privacy_params, rng, n)
