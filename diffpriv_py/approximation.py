"""Bernstein polynomial approximation of functions on a box (R: ``bernstein()`` and ``predict.bernstein``).

A function f on [0, 1]^d is represented by its values on the lattice {0, 1/k, …, 1}^d; the degree-k tensor-product
Bernstein operator turns those (k + 1)^d numbers back into a polynomial that can be evaluated anywhere. The Bernstein
mechanism (:class:`diffpriv_py.Bernstein`) perturbs exactly these lattice values, so every evaluation of the released
function is post-processing.

Evaluation is vectorised: one basis matrix per axis and a tensor contraction, in blocks of points whose size only
bounds memory. Iterated Bernstein operators of order h (Micchelli 1973; Aldà & Rubinstein 2017) and boxes other than
the unit cube are supported on top of R's behaviour.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from ._validation import check_int, check_log_size, check_real

__all__ = ["BernsteinApproximation", "bernstein", "bernstein_basis", "bernstein_lattice"]

MAX_LATTICE_SIZE = 10**8
"""Largest lattice (k + 1)^d accepted: its values alone take 800 MB."""

_BLOCK_ELEMENTS = 2**21
"""Points are evaluated in blocks whose intermediate tensors hold about this many floats (16 MB)."""

_PRODUCT_MAX_K = 1000
"""Up to this degree the basis is computed from products of powers; C(k, k/2) overflows float64 near k = 1030."""

Bounds = tuple[tuple[float, ...], tuple[float, ...]]


# ---- lattice and basis -----------------------------------------------------------------------------------------


def check_lattice_size(dims: int, k: int, owner: str, k_name: str = "k") -> int:
    # In log space first: (k + 1)^dims with dims = 2**70 would never finish as a Python integer.
    return check_log_size(
        k + 1, dims, f"lattice ({k_name} + 1)^dims for {k_name}={k}, dims={dims}", maximum=MAX_LATTICE_SIZE, owner=owner
    )


def bernstein_lattice(dims: int, k: int) -> np.ndarray:
    """All points of {0, …, k}^dims as rows, in R's order (the first coordinate varies fastest).

    Parameters
    ----------
    dims : int
        Dimension d >= 1.
    k : int
        Largest lattice index, k >= 1.

    Returns
    -------
    numpy.ndarray of int, shape ((k + 1)^dims, dims)
        Row ``i`` holds the multi-index ν with i = ν_1 + (k + 1)·ν_2 + (k + 1)^2·ν_3 + …, the order of R's
        ``expand.grid`` (R's internal ``.bernstein_lattice``). Divide by ``k`` for the points of [0, 1]^dims.

    Examples
    --------
    >>> bernstein_lattice(2, 1)
    array([[0, 0],
           [1, 0],
           [0, 1],
           [1, 1]])
    """
    dims = check_int(dims, "dims", minimum=1, owner="bernstein_lattice()")
    k = check_int(k, "k", minimum=1, owner="bernstein_lattice()")
    size = check_lattice_size(dims, k, "bernstein_lattice()")
    index = np.arange(size)
    return np.stack([(index // (k + 1) ** j) % (k + 1) for j in range(dims)], axis=1)


def _basis_t(t: np.ndarray, k: int) -> np.ndarray:
    """Basis values transposed: row ν holds b_{ν,k}(t) for every t (points along the contiguous axis)."""
    if k > _PRODUCT_MAX_K:
        degrees = np.arange(k + 1)[:, None]
        from scipy import stats  # lazy: scipy.stats costs ~0.5 s at import

        result: np.ndarray = stats.binom.pmf(degrees, k, t[None, :])
        return result
    # b_{ν,k}(t) = C(k, ν) t^ν (1 − t)^(k − ν). Running products give all powers in k multiplications per point
    # (relative error <= k ulp); t^0 = 1 also at t = 0, which is what makes b_{0,k}(0) = 1 exact.
    powers = np.empty((k + 1, t.size))
    co_powers = np.empty_like(powers)
    powers[0] = 1.0
    co_powers[0] = 1.0
    co_t = 1.0 - t
    for nu in range(1, k + 1):  # over the degree, each step vectorised over all points
        np.multiply(powers[nu - 1], t, out=powers[nu])
        np.multiply(co_powers[nu - 1], co_t, out=co_powers[nu])
    powers *= co_powers[::-1]
    from scipy.special import comb  # lazy: scipy.special costs ~0.25 s at import

    powers *= comb(k, np.arange(k + 1))[:, None]
    return powers


def bernstein_basis(t: Any, k: int) -> np.ndarray:
    """Degree-``k`` Bernstein basis b_{ν,k}(t) = C(k, ν) t^ν (1 − t)^(k − ν) at points ``t`` of [0, 1].

    Parameters
    ----------
    t : array_like of float
        Points in [0, 1], any shape.
    k : int
        Degree, k >= 1.

    Returns
    -------
    numpy.ndarray, shape ``t.shape + (k + 1,)``
        ``out[..., ν]`` is the Binomial(k, t) probability of ν, R's ``dbinom(ν, k, t)``.
    """
    k = check_int(k, "k", minimum=1, owner="bernstein_basis()")
    values = np.asarray(t, dtype=np.float64)
    if not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError("bernstein_basis() needs points in the unit interval [0, 1] (NaN is refused).")
    return np.moveaxis(_basis_t(values.reshape(-1), k), 0, -1).reshape((*values.shape, k + 1))


def _iteration_matrix(k: int, order: int) -> np.ndarray | None:
    """M_h with B^(h) f(y) = b(y)ᵀ M_h c in one dimension; ``None`` for the plain operator (h = 1).

    B^(h) = I − (I − B_k)^h = Σ_{i=1}^{h} C(h, i) (−1)^{i−1} B_k^i and B_k^i f(y) = b(y)ᵀ P^{i−1} c with
    P[v, u] = b_{u,k}(v/k), so M_h = Σ_i C(h, i) (−1)^{i−1} P^{i−1}. The telescoping form
    I − (I − P)^h = P Σ_{j<h} (I − P)^j gives M_h = Σ_{j=0}^{h−1} (I − P)^j, which avoids the alternating binomial
    sum and its cancellation.
    """
    if order == 1:
        return None
    p = _basis_t(np.arange(k + 1) / k, k).T
    q = np.eye(k + 1) - p
    term = np.eye(k + 1)
    total = term.copy()
    for _ in range(order - 1):
        term = q @ term
        total += term
    result: np.ndarray | None = total
    return result


# ---- argument normalisation ------------------------------------------------------------------------------------


def _as_box_side(value: Any, side_name: str, dims: int, owner: str) -> tuple[float, ...]:
    """One side ("lower" or "upper") of ``bounds``; messages name the 'bounds' parameter and the side."""
    name = f"bounds {side_name}"  # as dp.stats names the sides: the parameter, then which of its two entries
    if isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.ndim == 0):
        side = (check_real(value, name, owner=owner),) * dims
    else:
        if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
            raise TypeError(
                f"The {side_name} bound in the 'bounds' of {owner} must be a number or a sequence of {dims} numbers. "
                f"Got {value!r} (type {type(value).__name__})."
            )
        side = tuple(check_real(v, name, owner=owner) for v in value)
        if len(side) != dims:
            raise ValueError(
                f"The {side_name} bound in the 'bounds' of {owner} must have one entry per dimension (dims={dims}); "
                f"got {len(side)} entries."
            )
    if not all(math.isfinite(v) for v in side):
        raise ValueError(
            f"The {side_name} bound in the 'bounds' of {owner} must be finite; got {side}. Pass the public box of the "
            "domain."
        )
    return side


def normalize_bounds(bounds: Any, dims: int, owner: str) -> Bounds:
    """Turn ``None`` or ``(lower, upper)`` (numbers or length-``dims`` sequences) into two tuples of floats."""
    if bounds is None:
        return (0.0,) * dims, (1.0,) * dims
    if (
        isinstance(bounds, (str, bytes))
        or not isinstance(bounds, (Sequence, np.ndarray))
        or (isinstance(bounds, np.ndarray) and bounds.ndim == 0)
        or len(bounds) != 2
    ):
        raise TypeError(
            f"The 'bounds' of {owner} must be a pair (lower, upper) of numbers or of length-{dims} sequences, e.g. "
            f"bounds=(0.0, 10.0); None means the unit cube. Got {bounds!r}."
        )
    lower = _as_box_side(bounds[0], "lower", dims, owner)
    upper = _as_box_side(bounds[1], "upper", dims, owner)
    for j, (lo, hi) in enumerate(zip(lower, upper, strict=True)):
        if not (lo < hi and math.isfinite(hi - lo)):
            raise ValueError(
                f"The 'bounds' of {owner} must have lower < upper in every dimension; dimension {j} has "
                f"[{lo!r}, {hi!r}]. Pass a non-empty box."
            )
    return lower, upper


def _convert_bounds(value: Any, self_: Any) -> Bounds:
    return normalize_bounds(value, self_.dims, type(self_).__name__)


def _box_text(bounds: Bounds) -> str:
    lower, upper = bounds
    if all(v == 0.0 for v in lower) and all(v == 1.0 for v in upper):
        return "unit interval [0,1]"
    if len(set(lower)) == 1 and len(set(upper)) == 1:
        return f"interval [{lower[0]:g}, {upper[0]:g}] (the approximation's bounds)"
    return f"box with lower corner {lower} and upper corner {upper} (the approximation's bounds)"


def lattice_points(dims: int, k: int, bounds: Bounds) -> np.ndarray:
    """The lattice ν/k mapped into the box, shape ((k + 1)^dims, dims), R's order; the top index lands on ``upper``."""
    nu = bernstein_lattice(dims, k)
    lower = np.asarray(bounds[0])
    upper = np.asarray(bounds[1])
    if np.all(lower == 0.0) and np.all(upper == 1.0):
        return nu / k  # exactly R's lattice
    return np.where(nu == k, upper, lower + (upper - lower) * (nu / k))


def evaluate_on_lattice(
    f: Callable[..., Any],
    dims: int,
    k: int,
    bounds: Bounds,
    *,
    vectorized: bool,
    error: type[Exception] = ValueError,
    type_error: type[Exception] = TypeError,
    what: str = "The function",
) -> np.ndarray:
    """Values of ``f`` at every lattice point, as a float vector in lattice order (the Bernstein coefficients).

    Per point, ``f`` receives a float when ``dims == 1`` and a length-``dims`` array otherwise (as in R); with
    ``vectorized=True`` it is called once with all points, a 1-D array (``dims == 1``) or an (M, dims) array.
    """
    points = lattice_points(dims, k, bounds)
    size = points.shape[0]
    if vectorized:
        arg = points[:, 0].copy() if dims == 1 else points.copy()
        raw = f(arg)
        values = np.asarray(raw)
        if values.dtype.kind not in "iuf":
            raise type_error(f"{what} must return real numbers, got {type(raw).__name__} with dtype {values.dtype}.")
        if values.shape not in ((size,), (size, 1)):
            shape = "a 1-D array" if dims == 1 else f"an ({size}, {dims}) array"
            raise error(
                f"{what} was called with vectorized=True on {shape} of {size} lattice points and must return {size} "
                f"values (one per point); it returned shape {values.shape}. Fix it or set vectorized=False."
            )
        values = values.reshape(size)
    else:
        if dims == 1:
            outputs = [f(float(y)) for y in points[:, 0]]
        else:
            outputs = []
            for row in points:  # a black-box function of one point: R's apply(lattice, 1, f)
                row.flags.writeable = False
                outputs.append(f(row))
        try:
            values = np.asarray(outputs)
        except ValueError:
            values = np.asarray(outputs, dtype=object)
        if values.dtype.kind not in "iuf" or values.shape not in ((size,), (size, 1)):
            bad = next(
                (o for o in outputs if np.asarray(o).dtype.kind not in "iuf" or np.asarray(o).size != 1), outputs[0]
            )
            raise type_error(
                f"{what} must return one real number per point of [0,1]^{dims}; it returned {bad!r} "
                f"(type {type(bad).__name__}). With dims > 1 it receives a length-{dims} array."
            )
        values = values.reshape(size)
    values = values.astype(np.float64)
    if not np.all(np.isfinite(values)):
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise error(
            f"{what} returned the non-finite value {values[i]} at the lattice point {tuple(points[i].tolist())}; "
            "Bernstein approximation needs finite values everywhere on the lattice."
        )
    result: np.ndarray = values
    return result


# ---- the approximation -----------------------------------------------------------------------------------------


def _dims(value: Any) -> int:
    return check_int(value, "dims", minimum=1, owner="BernsteinApproximation")


def _k(value: Any) -> int:
    return check_int(value, "k", minimum=1, owner="BernsteinApproximation")


MAX_ORDER = 1000
"""Largest order of the iterated Bernstein operator: building M_h takes h − 1 products of (k + 1)×(k + 1) matrices,
and beyond a few orders the bias no longer shrinks while M_h amplifies the noise on the coefficients."""


def check_order(value: Any, owner: str) -> int:
    """The order h of the iterated operator: an integer in [1, MAX_ORDER] (checked before any work is done)."""
    order = check_int(value, "order", minimum=1, owner=owner)
    if order > MAX_ORDER:
        raise ValueError(
            f"The 'order' parameter of {owner} must be at most {MAX_ORDER} (the iterated operator costs one matrix "
            f"product per order, and higher orders only amplify the noise). Got {order}. Use a small order such "
            "as 1 (R's operator) to 5."
        )
    return order


def _order(value: Any) -> int:
    return check_order(value, "BernsteinApproximation")


def _coeffs(value: Any, self_: Any) -> np.ndarray:
    size = check_lattice_size(self_.dims, self_.k, "BernsteinApproximation")
    values = np.asarray(value)
    if values.dtype.kind not in "iuf":
        raise TypeError(f"The 'coeffs' of BernsteinApproximation must be real numbers; got dtype {values.dtype}.")
    if values.shape != (size,):
        raise ValueError(
            f"The 'coeffs' of BernsteinApproximation must be a vector of (k + 1)^dims = {size} lattice values in "
            f"lattice order; got shape {values.shape}."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("The 'coeffs' of BernsteinApproximation must be finite; got NaN or infinite values.")
    out = np.array(values, dtype=np.float64)  # a private copy: the caller's array is never aliased or mutated
    out.flags.writeable = False
    return out


@attrs.frozen(kw_only=True)
class BernsteinApproximation:
    """A tensor-product Bernstein polynomial on a box, given by its lattice values (R: S3 class ``bernstein``).

    Built by :func:`bernstein` (non-private) or released by :class:`diffpriv_py.Bernstein` (private). Calling it, or
    :meth:`predict`, evaluates it at many points at once.

    Parameters
    ----------
    dims : int
        Domain dimension d >= 1.
    k : int
        Degree per axis (lattice resolution), k >= 1.
    coeffs : array_like, shape ((k + 1)^dims,)
        The lattice values c_ν = f(ν/k) in lattice order (:func:`bernstein_lattice`: first coordinate fastest),
        R's ``$coeffs``. Stored as a read-only copy.
    order : int, default 1
        Order h of the iterated Bernstein operator B^(h) = I − (I − B_k)^h, applied per axis. 1 is the plain
        operator (R).
    bounds : (lower, upper), optional
        The box [lower, upper] the function lives on: numbers or length-``dims`` sequences. Default: the unit cube.

    Notes
    -----
    The value at y is f̃(y) = Σ_ν w_ν Π_j b_{ν_j,k}(u_j) with u = (y − lower)/(upper − lower) and
    b_{ν,k}(t) = C(k, ν) t^ν (1 − t)^(k − ν) (R's ``dbinom``). For ``order=1`` the weights are the lattice values,
    w = c; for order h they are w = (M_h ⊗ … ⊗ M_h) c with M_h = Σ_{j<h} (I − P)^j and P[v, u] = b_{u,k}(v/k)
    (:attr:`effective_coeffs`). Either way f̃ is a fixed linear function of the lattice values, so an approximation
    whose ``coeffs`` were released privately can be evaluated any number of times at no privacy cost.

    For a function with bounded second derivatives the plain operator errs by O(1/k); the iterated operator of
    order h errs by O(k^-h) for functions with 2h bounded derivatives (Micchelli 1973), at the price of a larger
    operator norm (at most 2^h − 1 per axis), which amplifies noise in the lattice values.

    References
    ----------
    Aldà, F. & Rubinstein, B. I. P. (2017). The Bernstein mechanism: function release under differential privacy.
    AAAI, 1705–1711. Micchelli, C. (1973). The saturation class and iterates of the Bernstein polynomials.
    J. Approx. Theory 8, 1–18.

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> approx = dp.bernstein(lambda x: x * np.sin(10 * x), dims=1, k=25)
    >>> round(approx(0.2), 7)
    0.1101786
    >>> approx([0.0, 0.5, 1.0]).shape
    (3,)
    """

    dims: int = attrs.field(converter=_dims)
    k: int = attrs.field(converter=_k)
    coeffs: np.ndarray = attrs.field(
        # mypy's attrs plugin does not read attrs.Converter (takes_self); the constructor argument is typed Any.
        converter=attrs.Converter(_coeffs, takes_self=True),  # type: ignore[misc]
        eq=attrs.cmp_using(eq=np.array_equal),
        hash=False,
    )
    order: int = attrs.field(default=1, converter=_order)
    bounds: Bounds = attrs.field(
        default=None,
        converter=attrs.Converter(_convert_bounds, takes_self=True),  # type: ignore[misc]  # attrs.Converter: see coeffs
    )
    _weights: np.ndarray = attrs.field(init=False, eq=False, repr=False, hash=False)

    def __attrs_post_init__(self) -> None:
        weights = self.coeffs
        matrix = _iteration_matrix(self.k, self.order)
        if matrix is not None:
            # Lattice order has the first coordinate fastest, so a C-order reshape puts axis j at position d−1−j.
            tensor = weights.reshape((self.k + 1,) * self.dims)
            for axis in range(self.dims):
                tensor = np.moveaxis(np.tensordot(matrix, tensor, axes=([1], [axis])), 0, axis)
            weights = np.ascontiguousarray(tensor).reshape(-1)
            weights.flags.writeable = False
        object.__setattr__(self, "_weights", weights)

    # ---- derived views -----------------------------------------------------------------------------------------

    @property
    def effective_coeffs(self) -> np.ndarray:
        """The weights of the Bernstein basis (lattice order): ``coeffs`` for order 1, M_h-transformed otherwise."""
        return self._weights

    @property
    def lattice_points(self) -> np.ndarray:
        """The (k + 1)^dims lattice points in the original coordinates, shape ((k + 1)^dims, dims), lattice order."""
        return lattice_points(self.dims, self.k, self.bounds)

    # ---- evaluation --------------------------------------------------------------------------------------------

    def __call__(self, y: Any) -> float | np.ndarray:
        """Evaluate at ``y``; see :meth:`predict`."""
        return self.predict(y)

    def predict(self, y: Any) -> float | np.ndarray:
        """Evaluate the approximation at one or many points (R: ``predict.bernstein``).

        Parameters
        ----------
        y : float or array_like
            Points inside the bounds (default [0, 1]^dims). With ``dims == 1``: a number (one point), a 1-D array
            of points, or an (N, 1) array. With ``dims > 1``: a length-``dims`` vector (one point) or an array of
            shape (..., dims) with one point per row.

        Returns
        -------
        float or numpy.ndarray
            A float for one point; otherwise one value per point (shape ``y.shape[:-1]``, or ``y.shape`` for a 1-D
            input with ``dims == 1``).

        Raises
        ------
        TypeError
            If ``y`` is not numeric (strings, bools, objects).
        ValueError
            If a value is NaN or outside the bounds, or the shape does not match ``dims``.
        """
        points, out_shape = self._points(y)
        values = self._evaluate_unit(points)
        return float(values[0]) if out_shape == () else values.reshape(out_shape)

    def _points(self, y: Any) -> tuple[np.ndarray, tuple[int, ...]]:
        box = _box_text(self.bounds)
        try:
            arr = np.asarray(y)
        except ValueError:
            arr = np.asarray(y, dtype=object)
        if arr.dtype.kind not in "iuf":
            raise TypeError(
                f"Expected numeric data in the {box}; got {type(y).__name__} with dtype {arr.dtype}. Pass float "
                "coordinates."
            )
        arr = arr.astype(np.float64, copy=False)
        d = self.dims
        if d == 1:
            if arr.ndim == 0:
                points, shape = arr.reshape(1, 1), ()
            elif arr.ndim == 1:
                points, shape = arr.reshape(-1, 1), arr.shape
            elif arr.shape[-1] == 1:
                points, shape = arr.reshape(-1, 1), arr.shape[:-1]
            else:
                raise ValueError(
                    f"Expected 1 column (dims=1) in a matrix of points; got shape {arr.shape}. Pass a 1-D array of "
                    "points or an (N, 1) array."
                )
        elif arr.ndim == 0 or (arr.ndim == 1 and arr.size != d):
            raise ValueError(
                f"Expected a point of length dims={d} (or an (N, {d}) array of points); got shape {arr.shape}."
            )
        elif arr.ndim == 1:
            points, shape = arr.reshape(1, d), ()
        elif arr.shape[-1] != d:
            raise ValueError(
                f"Expected dims={d} columns in the matrix of points (one point per row); got shape {arr.shape}."
            )
        else:
            points, shape = arr.reshape(-1, d), arr.shape[:-1]
        lower, upper = (np.asarray(side) for side in self.bounds)
        inside = (points >= lower) & (points <= upper)  # False for NaN
        if not np.all(inside):
            bad = points[~inside]
            raise ValueError(
                f"Expected numeric data in the {box}; got {bad.size} value(s) outside it (first: {bad.flat[0]!r}). "
                "Rescale or clip the points, or build the approximation with matching bounds=."
            )
        if not (np.all(lower == 0.0) and np.all(upper == 1.0)):
            points = (points - lower) / (upper - lower)  # in [0, 1]: rounding is monotone and x / x == 1
        return points, shape

    def _evaluate_unit(self, points: np.ndarray) -> np.ndarray:
        """Σ_ν w_ν Π_j b_{ν_j,k}(u_j) for rows u of ``points`` in [0, 1]^d: per-axis bases and a contraction."""
        n, d = points.shape
        k1 = self.k + 1
        # Weights as [ν_d, …, ν_2] × ν_1; each step contracts the fastest remaining axis with that axis's basis.
        first = self._weights.reshape(-1, k1)
        out = np.empty(n)
        block = max(1, _BLOCK_ELEMENTS // k1 ** (d - 1))
        for start in range(0, n, block):  # blocks of points only bound the memory of the intermediate tensors
            u = points[start : start + block]
            partial = first @ _basis_t(np.ascontiguousarray(u[:, 0]), self.k)  # (k1^(d−1), m)
            for j in range(1, d):
                basis = _basis_t(np.ascontiguousarray(u[:, j]), self.k)
                partial = np.einsum("rvm,vm->rm", partial.reshape(-1, k1, u.shape[0]), basis)
            out[start : start + block] = partial[0]
        return out


def bernstein(
    f: Callable[..., Any],
    dims: int,
    k: int = 10,
    *,
    order: int = 1,
    bounds: Any = None,
    vectorized: bool = False,
) -> BernsteinApproximation:
    """Bernstein polynomial approximation of ``f`` on [0, 1]^dims, or on a box (R: ``bernstein(f, dims, k)``).

    Parameters
    ----------
    f : callable
        The function to approximate. Called once per lattice point with a float (``dims == 1``) or a
        length-``dims`` numpy array (``dims > 1``), as R does, and must return a real number.
    dims : int
        Domain dimension d >= 1.
    k : int, default 10
        Degree per axis: ``f`` is evaluated on the (k + 1)^dims lattice {0, 1/k, …, 1}^dims.
    order : int, default 1
        Order h of the iterated Bernstein operator I − (I − B_k)^h (per axis). 1 reproduces R. Higher orders use
        the same lattice values and approximate smooth functions with error O(k^-h) instead of O(1/k).
    bounds : (lower, upper), optional
        Approximate ``f`` on the box [lower, upper] (numbers or length-``dims`` sequences) instead of the unit cube;
        ``f`` is evaluated, and the result is evaluated, in these original coordinates.
    vectorized : bool, default False
        Call ``f`` once with all lattice points: a 1-D array when ``dims == 1``, an (M, dims) array otherwise; it
        must return M values. Much faster for numpy functions.

    Returns
    -------
    BernsteinApproximation
        Callable: ``approx(y)`` or ``approx.predict(y)``.

    Raises
    ------
    TypeError
        If ``f`` is not callable, ``dims``/``k``/``order`` are not integers, or ``f`` returns non-numbers.
    ValueError
        If ``dims``, ``k`` or ``order`` is below 1, the bounds are invalid, or ``f`` returns non-finite values.

    Notes
    -----
    This is a deterministic approximation and gives no privacy by itself; :class:`diffpriv_py.Bernstein` releases
    it under ε-DP by perturbing the lattice values. The lattice order and the coefficients f(ν/k) are R's, so
    ``approx.coeffs`` equals R's ``$coeffs`` and evaluation equals ``predict.bernstein`` (to rounding).

    Examples
    --------
    >>> import numpy as np, diffpriv_py as dp
    >>> approx = dp.bernstein(lambda x: x * np.sin(10 * x), dims=1, k=25)
    >>> np.round(approx.coeffs[:3], 8)
    array([0.        , 0.01557673, 0.05738849])
    >>> f2 = lambda y: y[0] * np.sin(10 * y[1])
    >>> approx2 = dp.bernstein(f2, dims=2, k=5)
    >>> approx2.coeffs.shape
    (36,)
    """
    if not callable(f):
        raise TypeError(
            f"Expected f a function: bernstein() approximates a callable. Got {f!r} (type {type(f).__name__})."
        )
    dims = check_int(dims, "dims", minimum=1, owner="bernstein()")
    k = check_int(k, "k", minimum=1, owner="bernstein()")
    order = check_order(order, "bernstein()")
    if not isinstance(vectorized, bool):
        raise TypeError(f"The 'vectorized' parameter of bernstein() must be True or False. Got {vectorized!r}.")
    check_lattice_size(dims, k, "bernstein()")
    box = normalize_bounds(bounds, dims, "bernstein()")
    values = evaluate_on_lattice(f, dims, k, box, vectorized=vectorized)
    return BernsteinApproximation(dims=dims, k=k, coeffs=values, order=order, bounds=box)
