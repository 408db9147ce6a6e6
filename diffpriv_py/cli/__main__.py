"""``python -m diffpriv_py.cli``: the same command line as ``diffpriv-py``."""

from . import main

raise SystemExit(main())
