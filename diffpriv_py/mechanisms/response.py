"""The result of one release: the private answer together with the guarantee actually given."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from .._validation import check_alpha
from ..privacy import Eps

if TYPE_CHECKING:
    from .base import DPMech

__all__ = ["Response", "half_width"]


@attrs.frozen(eq=False)
class Response:
    """One private release (R: the list returned by ``releaseResponse``).

    Attributes
    ----------
    response : object
        The private answer: an array for numeric mechanisms, one element of the response set for the
        exponential mechanism, a callable for the Bernstein mechanism, a model for the estimators.
    privacy_params : Eps
        The guarantee actually given. It is a :class:`~diffpriv_py.Gam` when the mechanism's sensitivity was
        sampled (random DP), and it includes any δ the mechanism had to charge.
    mechanism : DPMech
        The (frozen) mechanism that produced the release: its target, sensitivity and settings.
    sensitivity : float
        The sensitivity the noise was calibrated to.
    error_bound : callable or None
        Set when ``response`` is a public post-processing of the mechanism's noised vector (the ``dp.stats``
        functions): ``error_bound(alpha, simultaneous)`` gives the half-width in the units of ``response``. ``None``
        means ``response`` is the mechanism's own output and the bar comes from the mechanism's calibration.
    assumptions : tuple of str
        Public facts the user declared that the guarantee relies on, beyond the mechanism's public settings (e.g.
        ``classes="observed"``: the set of labels present in ``y`` is public). Empty when the guarantee needs no
        such declaration. The guarantee in :attr:`privacy_params` holds for neighbouring datasets that agree on
        every fact listed here.
    """

    response: Any
    privacy_params: Eps
    mechanism: DPMech
    sensitivity: float
    error_bound: Callable[[float, bool], Any] | None = attrs.field(default=None, kw_only=True)
    assumptions: tuple[str, ...] = attrs.field(default=(), kw_only=True)

    @property
    def relation(self) -> str:
        """The neighbouring relation :attr:`privacy_params` is stated for: ``"replace_one"`` (datasets of equal size
        differing in one record or person; the library's default) or ``"add_remove"`` (one added or removed). An
        accountant is charged an add/remove guarantee (ε, δ) as replace-one (2ε, (1 + e^ε)δ), see
        :func:`diffpriv_py.events.guarantee_event`."""
        return self.mechanism.relation

    def accuracy(self, alpha: float = 0.05, *, simultaneous: bool = False) -> Any:
        """Half-width h such that the released value is within h of the exact (non-private) target value with
        probability at least 1 − ``alpha``.

        Parameters
        ----------
        alpha : float, default 0.05
            Probability that the error exceeds the bar (0.05 gives 95% error bars).
        simultaneous : bool, default False
            For a vector release, ``False`` covers each coordinate with probability ≥ 1 − α; ``True`` covers all of
            them at once (Bonferroni over the noised coordinates).

        Returns
        -------
        float or ndarray
            The half-width, in the units (and shape) of :attr:`response`.

        Raises
        ------
        NotImplementedError
            For releases without a closed-form error bar (estimators, Bernstein, a generic exponential mechanism).

        Notes
        -----
        The bar depends only on the mechanism's public calibration, α and the released value, so computing it is
        post-processing and costs no privacy budget. It is exact (the 1 − α quantile of the noise's magnitude) for
        Laplace and Gaussian noise, up to the safe samplers' grid step (2⁻⁴⁰ of the noise scale, added on the safe
        side), and the exact integer quantile for the discrete Laplace mechanism: each mechanism computes its own
        (:meth:`DPMech.half_width <diffpriv_py.mechanisms.DPMech.half_width>`). The error measured is against the
        target's exact value, i.e. after clipping to public bounds (clipping bias is not noise and is not included).
        """
        alpha = check_alpha(alpha, owner="Response.accuracy")
        if not isinstance(simultaneous, (bool, np.bool_)):
            raise TypeError(
                f"The 'simultaneous' parameter of Response.accuracy must be True or False. Got {simultaneous!r}."
            )
        if self.error_bound is not None:
            return self.error_bound(alpha, bool(simultaneous))
        return half_width(self.mechanism, self.privacy_params, self.response, alpha, simultaneous=bool(simultaneous))

    def confidence_interval(self, alpha: float = 0.05, *, simultaneous: bool = False) -> tuple[Any, Any]:
        """Interval ``(low, high)`` that contains the exact (non-private) target value with probability ≥ 1 − α.

        It is ``response ∓ accuracy(alpha)``: computed from public quantities only, so it costs no budget. See
        :meth:`accuracy` for ``simultaneous`` and what is covered.
        """
        width = self.accuracy(alpha, simultaneous=simultaneous)
        value = np.asarray(self.response, dtype=np.float64)
        if self.mechanism.accuracy_units != "value" or np.ndim(width) not in (0, value.ndim):
            raise NotImplementedError(
                "This release's error bar is not in the units of its value (e.g. quantiles: rank units), so no "
                "confidence interval for the value follows from it. Use accuracy(alpha) and read it as documented."
            )
        low, high = value - width, value + width
        if value.ndim == 0:
            return float(low), float(high)
        return low, high

    def __repr__(self) -> str:
        return (
            f"Response(response={self.response!r}, privacy_params={self.privacy_params!r}, "
            f"mechanism={type(self.mechanism).__name__}, sensitivity={self.sensitivity!r}"
            + (f", relation={self.relation!r}" if self.relation != "replace_one" else "")
            + (f", assumptions={self.assumptions!r})" if self.assumptions else ")")
        )


def half_width(mechanism: DPMech, privacy_params: Eps, noised: Any, alpha: float, *, simultaneous: bool = False) -> Any:
    """Half-width h with P(|released − exact target| ≤ h) ≥ 1 − α, per coordinate of a numeric release.

    Parameters
    ----------
    mechanism : DPMech
        The mechanism that released ``noised``.
    privacy_params : Eps
        The privacy parameters of the release (the noise is calibrated from their ε and δ).
    noised : float or ndarray
        The released vector, as the mechanism returned it (its magnitude enters the floating-point allowance).
    alpha : float
        Miss probability in (0, 1).
    simultaneous : bool, default False
        ``False``: each coordinate is covered with probability ≥ 1 − α. ``True``: all coordinates at once
        (Bonferroni: each at level α/d).

    Returns
    -------
    float or ndarray
        The half-width, with the shape of ``noised``.

    Raises
    ------
    NotImplementedError
        If the mechanism has no closed-form error bar (:meth:`DPMech.half_width`'s default).

    Notes
    -----
    This validates α, divides it by the number of coordinates for a simultaneous bar, and asks the mechanism:
    ``mechanism.half_width(privacy_params, noised, alpha)``. Each mechanism documents its bound there (Laplace and
    Gaussian: the exact 1 − α quantile of the noise's magnitude plus the safe samplers' grid and float allowances;
    DiscreteLaplace: the exact integer quantile; quantiles: rank units). The bound is about the noise around the
    target *as computed* (in floating point, on the clipped data if the target clips): any rounding or bias inside
    the target is the caller's, and so are clipping to public bounds and the sensitivity. (The ``dp.stats``
    functions add their own target's allowance on top.) Everything here is a function of public quantities only,
    so computing an error bar is post-processing: it costs no privacy budget.
    """
    alpha = check_alpha(alpha)
    if simultaneous:  # the number of coordinates, without converting a release that is no vector (a label, a model)
        size = int(np.size(noised))
        if size > 1:
            alpha = alpha / size
    return mechanism.half_width(privacy_params, noised, alpha)
