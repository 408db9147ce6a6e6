"""Errors and warnings raised by diffpriv_py.

Every error also subclasses the matching builtin, so ``except ValueError`` keeps working::

    DiffprivError
    ├── SensitivityError (ValueError)      sensitivity unset, non-finite, or sampled badly
    ├── TargetOutputError (TypeError, ValueError)   target returned the wrong kind or shape of value
    ├── BudgetExceededError (ValueError)   a release would overspend an Accountant's budget
    ├── AccountantProcessError (RuntimeError)   an accountant's holder was copied to another process
    └── CertificationError (ArithmeticError)   a solver could not prove its floating-point answer accurate enough

    DiffprivWarning (UserWarning)
"""

from __future__ import annotations


class DiffprivError(Exception):
    """Root of the errors raised by diffpriv_py for privacy-relevant failures."""


class SensitivityError(DiffprivError, ValueError):
    """The sensitivity is unset, non-finite, or could not be sampled."""


class TargetOutputError(DiffprivError, TypeError, ValueError):
    """The non-private target returned a value of the wrong type or shape."""


class BudgetExceededError(DiffprivError, ValueError):
    """A release would exceed the privacy budget of an accountant; nothing was charged."""


class AccountantProcessError(DiffprivError, RuntimeError):
    """A release in another process than its accountant's (e.g. a joblib worker); nothing was charged."""


class CertificationError(DiffprivError, ArithmeticError):
    """A solver could not certify, for the floats it computed, the accuracy the privacy proof needs; nothing
    unproven was released (raised after the charge: whether it happens can depend on the data)."""


class DiffprivWarning(UserWarning):
    """Root of the warnings emitted by diffpriv_py."""
