"""One rule for every estimator with a derived sensitivity: a user-set value may raise it, never lower it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["not_below"]


def not_below(
    floor: float | Callable[[Any], float], why: str = ""
) -> Callable[[Any, attrs.Attribute[float], float], None]:
    """An attrs validator refusing a ``sensitivity`` below the estimator's derived (proven) one.

    Parameters
    ----------
    floor : float or callable
        The derived replace-one sensitivity, or a function of the instance returning it (e.g. the clipping norm).
    why : str, optional
        Where the derived value comes from, for the error message.

    Notes
    -----
    The noise of an estimator is calibrated to its ``sensitivity``; a value below the proven bound releases less
    noise than the privacy claim needs (``sensitivity=0`` releases the exact non-private answer under an ε-DP
    label). A larger value is allowed (more noise, still private). The one exception is a sensitivity that
    :meth:`~diffpriv_py.mechanisms.DPMech.sensitivity_sampler` set, for a configuration whose ``_check_samplable``
    allowed it: the mechanism then carries the sampler's record (``sampling``, never a constructor argument and
    dropped by ``attrs.evolve``) with a γ, and the ``Response`` reports the sampler's random DP as a ``Gam``.
    Public fields cannot forge that record, so ``gamma_sensitivity`` and ``sampled_n`` set by hand never lower the
    floor (and are refused on their own, see ``DPMech.sampling``); nor does ``sensitivity_sampler_manual``, which
    gives no γ. Validators run after every field is set, so the floor may read other fields.
    """

    def validate(instance: Any, attribute: attrs.Attribute[float], value: float) -> None:
        record = getattr(instance, "sampling", None)
        if record is not None and record.gamma is not None and record.describes(instance):
            return  # the release reports the sampler's random-DP guarantee, not the derived ε-DP one
        bound = float(floor(instance) if callable(floor) else floor)
        if not value >= bound:  # NaN fails too
            source = f" ({why})" if why else ""
            raise ValueError(
                f"{type(instance).__name__} has the derived replace-one sensitivity {bound:.6g}{source}; "
                f"sensitivity={value!r} is below it and would under-protect (0 releases the exact non-private "
                "answer), whatever gamma_sensitivity or sampled_n say. Leave sensitivity unset, pass a value >= the "
                "derived one, or estimate it with est.sensitivity_sampler(oracle, n=...) where the estimator allows "
                "sampling (its random-DP guarantee is then reported; sensitivity_sampler_manual sets no guarantee "
                "and so cannot go below the derived value)."
            )

    return validate
