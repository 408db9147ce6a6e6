"""The library's argument checks, for code built on it (new mechanisms, applications): the same rules and messages.

Each check returns the value as a Python number or raises ``TypeError``/``ValueError`` naming the parameter, the
rule, the value and (where given) the fix, as every function of the library does.

Examples
--------
>>> from diffpriv_py.validation import check_in_range
>>> check_in_range(0.5, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="my_study")
0.5
>>> check_in_range(2.0, "delta", 0.0, 1.0, low_closed=False, high_closed=False, owner="my_study")
Traceback (most recent call last):
...
ValueError: The 'delta' parameter of my_study must be in (0, 1). Got 2.0.
"""

from ._validation import check_in_range, check_int, check_real

__all__ = ["check_in_range", "check_int", "check_real"]
