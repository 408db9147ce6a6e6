"""Error bars of the DP moment statistics: public maps from the noise's half-widths to the reported statistic's.

Each bar covers the exact statistic of the clipped data, so it adds the fixed-point grid's quantisation and the
target's one rounding (:mod:`diffpriv_py._fixed_point`) to the noise's half-width; the proofs are in the docstrings.

:class:`_CastError` and :func:`_finished_error` carry a bar through ``dtype=`` and into the reported shape.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from .._fixed_point import GRID_SLACK, GRID_TINY
from ._common import finish


@attrs.frozen(eq=False)
class _LinearError:
    """Error bar of a sum or mean reported as clip(shift + v·unit) (v the noised target in widths, |v| ≤ top + h).

    With |noise| ≤ h (probability ≥ 1 − α) the reported value is within

        (h + allowance)·|unit|·(1 + 2⁻⁴⁰) + 2⁻⁴⁰·(|shift| + (top + h)·|unit|)

    of the exact statistic of the clipped data. Proof: the exact value is shift + W·Y (W the exact width, Y ∈
    [0, top] the exact mean or sum of positions in widths) and the target t satisfies |t − Y| ≤ allowance (the grid's
    quantisation and the target's rounding, see :func:`_raise_plan`). So shift + v·unit is within
    (h + allowance)·|unit| + top·|unit − W| of it, with |unit − W| ≤ 3.0001u·W; forming shift + v·unit in float64
    costs at most 2.0001u·(|shift| + (top + h)·|unit|), evaluating this bar a few u more; every such u-term is
    inside the 2⁻⁴⁰ terms (and 2⁻¹⁰⁷² covers their underflow). Clipping into a range that holds the exact value
    never moves the estimate further from it.
    """

    unit: Any
    allowance: float
    top: float
    shift: Any

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        with np.errstate(over="ignore"):  # bounds near ±1e308: an infinite bar, like the statistic's range
            noise = (h + self.allowance) * self.unit * (1.0 + GRID_SLACK)
            result: np.ndarray = noise + GRID_SLACK * (self.shift + (self.top + h) * self.unit) + GRID_TINY
        return result


@attrs.frozen(eq=False)
class _VarianceError:
    """Error bar of a variance reported as clip(v, 0, cap)·unit², or of its root √clip(v, 0, cap)·|unit|.

    Quantisation: with k_i = y_i + ε_i (|ε_i| ≤ e index steps, :class:`~diffpriv_py._fixed_point.Grid`) the sum of
    squared deviations moves by ΔSS = 2Σ(y_i − ȳ)ε_i + Σ(ε_i − ε̄)², and Cauchy–Schwarz gives
    |ΔSS| ≤ 2e·√(m·SS_y) + m·e². In widths² (V = SS_y/((m − ddof)·4ᵇ)) the quantised variance is therefore within
    ``slope``·√V + ``floor`` of the exact variance V of the clipped data, with slope = 2e·√(m/(m − ddof))·2⁻ᵇ and
    floor = m/(m − ddof)·e²·4⁻ᵇ + u·cap (the latter for the target's one correctly rounded division).

    Given |noise| ≤ h the clipped noisy value c satisfies |c − V| ≤ h + slope·√V + floor (V ∈ [0, cap], so clipping
    only helps). √V is unknown but V ≤ c + h + slope·√V + floor, a quadratic inequality: √V ≤ s⁺ =
    (slope + √(slope² + 4(c + h + floor)))/2 (and ≤ √cap). Hence |c − V| ≤ E = h + slope·min(s⁺, √cap) + floor —
    a public function of the released value, so low-variance data get the small allowance they deserve, and the
    worst case (V = cap) is e·2⁻ᵇ·m/(m − ddof) + … . The variance bar is E·unit² and the std bar the larger distance
    from √c to √max(c − E, 0) and √(c + E), both computed in a cancellation-free form; c is recovered from the
    reported value within a relative 2⁻⁴⁰, and the roundings of unit² against W², of the post-processing and of
    this bar are covered by the 2⁻⁴⁰ terms, their underflow (values within 1e-300 of each other) by 2⁻¹⁰⁷².
    """

    unit: Any
    cap: float
    slope: float
    floor: float
    root: bool

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        unit = self.unit
        v = np.asarray(value, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            r = v / unit  # the reported std in widths
            # c from the reported value: a variance may have underflowed (GRID_TINY covers that); a std only when c is
            # so small that its error is far inside the floor term.
            c_hi = (r * r if self.root else (v + GRID_TINY) / unit / unit) * (1.0 + GRID_SLACK)
            c_up = np.where(np.isnan(c_hi), self.cap, np.minimum(c_hi, self.cap))
            s_max = np.minimum((self.slope + np.sqrt(self.slope**2 + 4.0 * (c_up + h + self.floor))) / 2.0,
                               math.sqrt(self.cap))  # fmt: skip
            spread = h + self.slope * s_max + self.floor
            if not self.root:
                result: np.ndarray = (spread * (1.0 + GRID_SLACK) + GRID_SLACK * self.cap) * unit * unit + GRID_TINY
                return result
            # √(c_hi + E) − r and r − √max(c_lo − E, 0) (c_lo = r²(1 − 2⁻⁴⁰)) without cancellation.
            excess = GRID_SLACK * r * r + spread
            c_lo = r * r * (1.0 - GRID_SLACK) - spread
            up = excess / (np.sqrt(c_hi + spread) + r)
            down = np.where(c_lo > 0.0, excess / (r + np.sqrt(np.maximum(c_lo, 0.0))), r)
            result = (np.maximum(up, down) * (1.0 + GRID_SLACK) + GRID_SLACK * math.sqrt(self.cap)) * unit + GRID_TINY
            return result


def _count_error(h: np.ndarray, value: Any) -> np.ndarray:
    """The exact count c is an integer: |v − c| ≤ h implies |rint(v) − c| ≤ ⌊h + ½⌋ (h itself for integer noise)."""
    return np.floor(h + 0.5)


def _integer_range(dtype: np.dtype) -> tuple[float, float]:
    """The float64 range an integer dtype's results are clipped to (float(2⁶³ − 1) rounds up to 2⁶³: one below)."""
    info = np.iinfo(dtype)
    top = float(info.max)
    if int(top) > info.max:
        top = float(np.nextafter(top, -np.inf))
    return float(info.min), top


@attrs.frozen(eq=False)
class _CastError:
    """The error bar after ``dtype=``: rounding to an integer adds ½; a value clipped to an integer dtype's end may
    hide an exact value beyond it (infinite bar there; elsewhere the clip did nothing); a float dtype's cast adds
    its relative precision and its smallest subnormal (an overflow to ±inf gives an infinite bar)."""

    inner: Any
    dtype: np.dtype

    def __call__(self, h: np.ndarray, value: Any) -> np.ndarray:
        v = np.asarray(value, dtype=np.float64)
        bar = np.asarray(self.inner(h, v), dtype=np.float64)
        if self.dtype.kind in "iu":
            low, high = _integer_range(self.dtype)
            result: np.ndarray = np.where((v <= low) | (v >= high), np.inf, bar + 0.5)
            return result
        fine = np.finfo(self.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            result = bar + float(fine.eps) * (np.abs(v) + bar) + float(fine.smallest_subnormal)
        return result


def _finished_error(error: Any, kept: tuple[int, ...] | None, scalar: bool, h: np.ndarray, value: Any) -> Any:
    """The half-widths in the shape of the reported value: numpy's keepdims shape, a Python float, or the array."""
    out = np.asarray(error(h, np.asarray(value, dtype=np.float64).reshape(np.shape(h)) if kept else value), dtype=float)
    if kept is not None:
        return out.reshape(kept)
    return finish(out, scalar)
