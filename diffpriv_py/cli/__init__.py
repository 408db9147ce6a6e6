"""The ``diffpriv-py`` command line: a guided demo, utility-vs-ε evaluations, and the privacy auditor.

Run ``diffpriv-py --help`` (or ``python -m diffpriv_py --help``) for the commands. Every command has ``--help``.
Errors print one line to stderr and exit with status 2; ``DIFFPRIV_PY_DEBUG=1`` shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ._output import EXIT_ERROR, EXIT_OK, PROG, CLIError
from ._output import EXIT_REFUTED as EXIT_REFUTED  # these stay reachable at diffpriv_py.cli.<name>, outside __all__
from ._output import describe_guarantee as describe_guarantee
from ._output import format_table as format_table
from ._parser import build_parser
from .audit import DEFAULT_SEARCH_SECONDS as DEFAULT_SEARCH_SECONDS
from .demo import DEMO_STEPS as DEMO_STEPS

__all__ = ["CLIError", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``diffpriv-py`` command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 when ``audit`` refutes the claimed guarantee, 2 on an error (printed as one line).
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # io.TextIOWrapper's; typing.TextIO does not declare it
        if reconfigure is not None:  # never crash on a terminal that cannot show a symbol
            reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if os.environ.get("DIFFPRIV_PY_DEBUG"):
            raise
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if not isinstance(err, (CLIError, ValueError, TypeError, OSError, ImportError, LookupError)):
            message = f"internal error ({type(err).__name__}): {message}; rerun with DIFFPRIV_PY_DEBUG=1 for details"
        print(f"{PROG} {args.command}: error: {message}", file=sys.stderr)
        return EXIT_ERROR
