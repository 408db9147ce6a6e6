"""The argument parser of ``diffpriv-py``: the top level here, each command's options in its own module."""

from __future__ import annotations

import argparse

from diffpriv_py import __version__

from . import audit, demo, evaluate
from ._args import _Parser
from ._output import PROG


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``diffpriv-py`` (one sub-parser per command)."""
    parser = _Parser(
        prog=PROG,
        description="Differential privacy from the command line: a demo, utility-vs-epsilon evaluations, and a "
        "privacy auditor.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", parser_class=_Parser)
    demo.add_parser(commands)
    evaluate.add_parser(commands)
    audit.add_parser(commands)
    return parser
