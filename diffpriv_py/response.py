"""The result of one release: the private answer together with the guarantee actually given."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from .privacy import Eps

if TYPE_CHECKING:
    from .mechanisms.base import DPMech

__all__ = ["Response"]


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
        side), and the exact integer quantile for the discrete Laplace mechanism; see
        :func:`diffpriv_py.accuracy.half_width`. The error measured is against the target's exact value, i.e. after
        clipping to public bounds (clipping bias is not noise and is not included).
        """
        from .accuracy import check_alpha, half_width  # deferred: accuracy builds on the mechanisms

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
        if getattr(self.mechanism, "accuracy_units", "value") != "value" or np.ndim(width) not in (0, value.ndim):
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
            + (f", assumptions={self.assumptions!r})" if self.assumptions else ")")
        )
