"""The result of one release, at its documented path: it lives in :mod:`diffpriv_py.mechanisms.response`."""

from .mechanisms.response import Response

__all__ = ["Response"]
