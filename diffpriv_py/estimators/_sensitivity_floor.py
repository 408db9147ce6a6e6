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
    label). A larger value is allowed (more noise, still private). A sensitivity set by the sensitivity sampler
    (the mechanism then records ``sampled_n``) is accepted: its guarantee is the sampler's random DP, reported as
    such in the ``Response``. Validators run after every field is set, so the floor may read other fields.
    """

    def validate(instance: Any, attribute: attrs.Attribute[float], value: float) -> None:
        if getattr(instance, "sampled_n", None) is not None:
            return
        bound = float(floor(instance) if callable(floor) else floor)
        if not value >= bound:  # NaN fails too
            source = f" ({why})" if why else ""
            raise ValueError(
                f"{type(instance).__name__} has the derived replace-one sensitivity {bound:.6g}{source}; "
                f"sensitivity={value!r} is below it and would under-protect (0 releases the exact non-private "
                "answer). Leave sensitivity unset, pass a value >= the derived one, or estimate it with "
                "sensitivity_sampler (whose random-DP guarantee the release then reports)."
            )

    return validate
