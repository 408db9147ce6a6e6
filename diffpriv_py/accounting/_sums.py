"""An exact running sum: O(1) amortised per term, and the correctly rounded total of every term ever added.

The accountant's bounds are sums over the whole ledger (Σεᵢ, Σεᵢ², Σδᵢ, …). Re-summing them with ``math.fsum`` on
every charge costs O(k); keeping Shewchuk's non-overlapping partials costs O(1) per term (there are at most a few
dozen partials for doubles) and gives *the same* correctly rounded value as ``math.fsum`` over all the terms, so
the accountant's numbers do not change by a single bit, and it knows when a sum is exact (one partial).
"""

from __future__ import annotations

import math

__all__ = ["ExactSum"]


class ExactSum:
    """The exact sum of finite floats, kept as non-overlapping partials (Shewchuk 1997; Python's ``math.fsum``).

    Infinite terms, and partial sums that overflow, are kept apart as ``±inf``: the total is then infinite, which
    for the accountant's upper bounds is the conservative answer. ``add`` mutates; ``copy`` is O(#partials).
    """

    __slots__ = ("_partials", "_special", "_value")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self._special = 0.0  # the sum of infinite terms (0.0 while every term and partial sum is finite)
        self._value: float | None = 0.0  # the rounded total, computed when first read after an add

    def copy(self) -> ExactSum:
        out = ExactSum()
        out._partials = list(self._partials)
        out._special = self._special
        out._value = self._value
        return out

    def add(self, x: float) -> None:
        """Add one term exactly (Shewchuk's grow-expansion with zero elimination)."""
        x = float(x)
        self._value = None
        if not math.isfinite(x):
            self._special += x
            return
        partials = self._partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            if math.isinf(hi):  # the exact sum is beyond the largest double: it can only be reported as ±inf
                self._special += hi
                self._partials = []
                return
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    @property
    def value(self) -> float:
        """The correctly rounded total (bit-identical to ``math.fsum`` of every term added)."""
        if self._value is None:
            if self._special or math.isnan(self._special):
                self._value = self._special
            else:
                try:
                    self._value = math.fsum(self._partials)
                except OverflowError:  # pragma: no cover - the partials' sum was checked finite when they were made
                    self._value = math.inf
        return self._value

    @property
    def exact(self) -> bool:
        """Whether ``value`` is the exact sum (no rounding happened: at most one partial)."""
        return self._special == 0.0 and len(self._partials) <= 1

    def upper(self) -> float:
        """An upper bound on the exact sum: ``value`` itself when exact, else the next float up."""
        v = self.value
        return v if self.exact or not (-math.inf < v < math.inf) else math.nextafter(v, math.inf)
