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
    label). A larger value is allowed (more noise, still private). A sensitivity set by
    :meth:`~diffpriv_py.mechanisms.DPMech.sensitivity_sampler` (the mechanism then records both ``sampled_n`` and
    ``gamma_sensitivity``) is accepted: its guarantee is the sampler's random DP, and the ``Response`` reports it as
    a ``Gam``. Without ``gamma_sensitivity`` (``sensitivity_sampler_manual``, or ``sampled_n`` set by hand) the
    release would report a plain ε-DP guarantee, so the floor applies. Validators run after every field is set, so
    the floor may read other fields.
    """

    def validate(instance: Any, attribute: attrs.Attribute[float], value: float) -> None:
        if (
            getattr(instance, "sampled_n", None) is not None
            and getattr(instance, "gamma_sensitivity", None) is not None
        ):
            return  # the release reports the sampler's random-DP guarantee, not the derived ε-DP one
        bound = float(floor(instance) if callable(floor) else floor)
        if not value >= bound:  # NaN fails too
            source = f" ({why})" if why else ""
            raise ValueError(
                f"{type(instance).__name__} has the derived replace-one sensitivity {bound:.6g}{source}; "
                f"sensitivity={value!r} is below it and would under-protect (0 releases the exact non-private "
                "answer). Leave sensitivity unset, pass a value >= the derived one, or estimate it with "
                "sensitivity_sampler (whose random-DP guarantee the release then reports; sensitivity_sampler_manual "
                "sets no guarantee and so cannot go below the derived value)."
            )

    return validate
