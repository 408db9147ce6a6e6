"""The composed release: a mechanism made of several randomised parts whose guarantee is their composition.

The estimators, group-by, the scalers and the quantiles are not "a target plus one sensitivity": each release runs
several randomised steps (a partition selection and noised sums, K one-vs-rest problems, T noisy gradient steps, a
mean and a variance), each with its own share of the budget and its own sensitivity. :class:`ComposedMech` declares
that shape once, so that the accountant, the error bars and the auditor read a composition the same way:

* :meth:`ComposedMech.composed_of` lists the parts a release at given privacy parameters is composed of, with the
  parameters each one runs at (the budget split) and, where the part's noise is described exactly, its privacy
  events;
* :meth:`ComposedMech.privacy_events` is what the accountant charges: the concatenation of the parts' events when
  every part describes its noise, else the guarantee itself, the basic composition of the parts' (ε, δ);
* a composition has no single norm, so the sensitivity sampler is refused (``_norm`` and ``_check_samplable``)
  unless a subclass calibrates all its parts to one sensitivity it declares, and the inherited ``sensitivity``
  field is kept for the :class:`~diffpriv_py.DPMech` interface only.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, SupportsFloat

import attrs

from ..events import Event
from ..privacy import Eps
from .base import DPMech, as_sensitivity

__all__ = ["ComposedMech", "Part"]


def _events(value: Any) -> tuple[Event, ...] | None:
    if value is None:
        return None
    events = tuple(value)
    for e in events:
        if not isinstance(e, Event):
            raise TypeError(f"The events of a Part must be diffpriv_py.accounting events; got {e!r}.")
    return events


@attrs.frozen(kw_only=True)
class Part:
    """One randomised step of a composed release.

    Parameters
    ----------
    name : str
        What the step releases (e.g. ``"selection"``, ``"count"``, ``"steps"``).
    privacy_params : Eps
        The privacy parameters the step runs at: its share of the release's budget.
    events : sequence of Event or None, default None
        The step's noise described exactly (e.g. a subsampled Gaussian per step), for an accountant that composes
        tightly; ``None`` when only its (ε, δ) is known.
    """

    name: str
    privacy_params: Eps
    events: tuple[Event, ...] | None = attrs.field(default=None, converter=_events)


def _unused_sensitivity(value: SupportsFloat) -> float:
    checked = as_sensitivity(value)
    if checked != 1.0:
        warnings.warn(
            f"sensitivity={checked!r} is not used: a composed release calibrates every part to its own sensitivity, "
            "derived from its public settings. The argument is deprecated and will be removed; leave it unset.",
            DeprecationWarning,
            stacklevel=3,
        )
    return checked


@attrs.frozen(kw_only=True)
class ComposedMech(DPMech):
    """Abstract mechanism whose release is a sequential composition of randomised parts.

    Parameters
    ----------
    sensitivity : float, default 1
        Deprecated and unused unless a subclass redeclares it: every part has its own sensitivity, derived from the
        public settings (a value other than 1 warns). Subclasses that calibrate all their noise to one declared
        sensitivity (the estimators) redeclare the field with their derived floor.

    Notes
    -----
    **Guarantee.** The parts run one after the other, each possibly chosen from the earlier parts' outputs, at the
    privacy parameters :meth:`composed_of` gives them; by adaptive sequential composition the release is
    (Σεᵢ, Σδᵢ)-DP, and a subclass's split makes that sum the privacy parameters it is given (its class Notes prove
    the parts' own guarantees). Parts that are analysed jointly (one proof for the whole release, as for a single
    joint Gaussian) are one part, the default.

    **Events.** :meth:`privacy_events` is what an :class:`~diffpriv_py.Accountant` is charged: the parts' own events
    in order when every part describes its noise exactly, otherwise one approximate-DP event at the guarantee (the
    basic composition of the parts' (ε, δ), or the random-DP (ε, δ) of a sampled sensitivity). A release under the
    add/remove relation (:attr:`~diffpriv_py.mechanisms.DPMech.relation`) is charged its guarantee converted to
    replace-one terms, :func:`~diffpriv_py.events.guarantee_event`.

    A subclass supplies :meth:`composed_of` (when it has more than one part) and, as every mechanism, ``_evaluate``
    and ``_release``. The sensitivity sampler is refused unless it declares a single norm (``_norm``) that every part
    is calibrated to (with its sensitivity as a field: the estimators whose noise scales with one multiplier).
    """

    sensitivity: float = attrs.field(default=1.0, converter=_unused_sensitivity)

    sensitivity_is_derived: ClassVar[bool] = True

    _no_single_sensitivity: ClassVar[str] = "every part has its own sensitivity, derived from the public settings"
    """Why the sampler has nothing to sample here (said by ``_norm`` and ``_check_samplable``)."""

    def composed_of(self, privacy_params: Eps) -> tuple[Part, ...]:
        """The parts of a release at ``privacy_params``, in the order they run, with their privacy parameters.

        The default is one part, the whole release analysed jointly, at its guarantee.
        """
        return (Part(name="release", privacy_params=self.privacy_guarantee(privacy_params)),)

    def privacy_events(self, privacy_params: Eps) -> tuple[Event, ...]:
        """What a release at ``privacy_params`` costs: the parts' events, or the guarantee (see Notes)."""
        parts = self.composed_of(privacy_params)
        if (
            self.relation == "replace_one"
            and self.gamma_sensitivity is None
            and all(p.events is not None for p in parts)
        ):
            return tuple(e for part in parts for e in part.events or ())
        return super().privacy_events(privacy_params)

    def _norm(self, value1: Any, value2: Any) -> float:
        raise TypeError(
            f"{type(self).__name__} is a composed release: {self._no_single_sensitivity}. It has no single norm, so "
            "there is nothing to sample."
        )

    def _check_samplable(self) -> None:
        """Refused unless the subclass declares a single norm (overrides ``_norm``) that all its parts are calibrated
        to; a subclass adds its own refusals by overriding this."""
        if type(self)._norm is not ComposedMech._norm:
            return
        raise TypeError(
            f"{type(self).__name__} is a composed release: {self._no_single_sensitivity}, so there is nothing to "
            "sample. Release it directly with release_response."
        )
