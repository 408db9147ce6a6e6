"""What every command shares: the program name, exit statuses, the one-line error, and plain-text output."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from diffpriv_py import Gam

PROG = "diffpriv-py"

EXIT_OK, EXIT_REFUTED, EXIT_ERROR = 0, 1, 2


class CLIError(Exception):
    """A user error the command line reports as one line (bad path, unknown name, invalid value)."""


def _can_print(text: str, stream: Any = None) -> bool:
    encoding = getattr(stream or sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _symbols() -> dict[str, str]:
    fancy = _can_print("εδγΔ∞±")
    return {
        "Delta": "Δ" if fancy else "Delta",
        "eps": "ε" if fancy else "eps",
        "delta": "δ" if fancy else "delta",
        "gamma": "γ" if fancy else "gamma",
        "inf": "∞" if fancy else "inf",
        "pm": "±" if fancy else "+/-",
    }


def _fmt_number(value: float, digits: int = 4) -> str:
    if value == math.inf:
        return _symbols()["inf"]
    return f"{value:.{digits}g}"


def describe_guarantee(params: Any) -> str:
    """A short human-readable form of a privacy-parameter object, e.g. ``(ε=1, γ=0.1)-random DP``."""
    sym = _symbols()
    parts = [f"{sym['eps']}={_fmt_number(params.epsilon)}"]
    if params.delta:
        parts.append(f"{sym['delta']}={_fmt_number(params.delta)}")
    if isinstance(params, Gam):
        parts.append(f"{sym['gamma']}={_fmt_number(params.gamma)}")
        return f"({', '.join(parts)})-random DP"
    return f"({', '.join(parts)})-DP"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Render rows as a plain-text table with a rule under the header."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip(), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(out)
