"""Error bars for releases, at their documented path: each mechanism computes its own (``DPMech.half_width``).

:func:`half_width` validates α, applies the simultaneous (Bonferroni) level and asks the mechanism; everything is a
function of public quantities only, so computing an error bar is post-processing: it costs no privacy budget.
"""

from ._validation import check_alpha
from .mechanisms.geometric import discrete_laplace_half_width
from .mechanisms.response import half_width

__all__ = ["check_alpha", "discrete_laplace_half_width", "half_width"]
