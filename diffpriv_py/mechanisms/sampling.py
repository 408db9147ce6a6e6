"""The record a sensitivity sampler leaves on the mechanism it returns, and the only way it gets there.

A mechanism whose sensitivity the library derives (the estimators, group-by) may carry a sampled sensitivity below
the derived one only when the sampler itself set it, for a configuration where sampling is sound. Public fields
cannot say that (anyone can pass ``gamma_sensitivity=`` and ``sampled_n=``), so the sampler attaches a
:class:`SensitivitySampling` record while it builds the new mechanism. The record is not a constructor argument:
``attrs.evolve`` and hand-built mechanisms never carry one, so changing any setting of a sampled mechanism drops it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import attrs

__all__ = ["SensitivitySampling", "attached_to", "pending_sampling"]


@attrs.frozen
class SensitivitySampling:
    """How a mechanism's sensitivity was sampled: read-only, set by the sensitivity sampler only.

    Attributes
    ----------
    n : int
        The number of records the sensitivity holds for (the mechanism's ``sampled_n``).
    m : int
        The number of sampled neighbouring pairs.
    k : int
        The order statistic used: the sensitivity is the ``k``-th smallest of the ``m`` sampled distances.
    gamma : float or None
        The random-DP γ the release reports (``None`` for :meth:`~diffpriv_py.DPMech.sensitivity_sampler_manual`,
        whose guarantee the caller states).
    sensitivity : float
        The sampled sensitivity.
    """

    n: int
    m: int
    k: int
    gamma: float | None
    sensitivity: float

    def describes(self, mech: Any) -> bool:
        """Whether ``mech``'s sensitivity fields are the ones this sampling produced."""
        return bool(
            mech.sensitivity == self.sensitivity and mech.gamma_sensitivity == self.gamma and mech.sampled_n == self.n
        )


_PENDING: ContextVar[list[Any] | None] = ContextVar("diffpriv_py_sampling", default=None)


@contextlib.contextmanager
def attached_to(kind: type, record: SensitivitySampling) -> Iterator[None]:
    """While active, the first mechanism of exactly type ``kind`` built takes ``record`` (used by the sampler only)."""
    token = _PENDING.set([kind, record])
    try:
        yield
    finally:
        _PENDING.reset(token)


def pending_sampling(mech: Any) -> SensitivitySampling | None:
    """The record for ``mech`` under construction: the sampler's, once, if it is building this type; else None."""
    pending = _PENDING.get()
    if pending is None or type(mech) is not pending[0] or pending[1] is None:
        return None
    record: SensitivitySampling = pending[1]
    pending[1] = None
    return record
