"""Optional dependencies (the package's extras) for code built on the library: one check, one message.

The core (``pip install diffpriv-py``) needs only numpy, scipy, attrs, joblib, tqdm and randomgen. An application or
extension that needs more calls :func:`require` before it does any work, so a missing extra is reported the same way
as the library reports it: the package, the extra of ``diffpriv-py`` that installs it, and the install command.

Examples
--------
>>> from diffpriv_py.extras import EXTRAS, install_hint
>>> EXTRAS["sklearn"]
('scikit-learn', 'sklearn')
>>> install_hint("plot")
'pip install "diffpriv-py[plot]" (from a checkout: pip install ".[plot]")'
"""

from ._extras import EXTRAS, MissingExtraError, install_hint, require

__all__ = ["EXTRAS", "MissingExtraError", "install_hint", "require"]
