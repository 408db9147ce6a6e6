"""What an accountant becomes in another process: a stand-in that refuses every charge, with the reason and the fix.

An :class:`~diffpriv_py.Accountant` is one ledger in one process (its lock makes it safe to share between threads).
A copy in another process would spend the same budget a second time without the original knowing, so an accountant
is never pickled. An object that holds one (a scikit-learn facade sent to a joblib worker by
``GridSearchCV(n_jobs=2)``, or saved with ``joblib.dump``) is pickled with a :class:`DetachedAccountant` in its
place: in the copy, the first release raises :class:`~diffpriv_py.exceptions.AccountantProcessError` before anything
is charged, in the worker's own code, so joblib and scikit-learn report it to the caller with its message.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..exceptions import AccountantProcessError

__all__ = ["CROSS_PROCESS", "DetachedAccountant"]

CROSS_PROCESS = (
    "An accountant's ledger lives in the process that created it: a copy in another process (a joblib or "
    "multiprocessing worker, e.g. GridSearchCV(n_jobs=2) or cross_val_score(n_jobs=2) with joblib's default "
    "process backend) would spend the same budget again without the original knowing. Run in one process "
    "(n_jobs=1), or in threads, which share the one accountant: "
    'with joblib.parallel_backend("threading"): search.fit(X, y)'
)


class DetachedAccountant:
    """Stands in for an accountant in a copy of its holder made in another process (or loaded from a file).

    It refuses every charge and every report (every attribute of the :class:`~diffpriv_py.Accountant` interface), so
    a release through it fails before anything is computed, and says why and how to fix it. It pickles and copies
    freely (it holds no budget).

    Parameters
    ----------
    holder : str
        What was copied, e.g. ``"LogisticRegression"``: the first words of the message.
    budget : str
        The original accountant's budget, as text (for the message only).

    Notes
    -----
    Privacy: the budget is spent in one ledger only. A copy holds no ledger and can charge nothing, and every
    release is charged before its target is evaluated (``DPMech.release_response``), so a release through this
    stand-in raises before it reads the data: no copy can release anything the original's budget did not pay for.
    """

    def __init__(self, holder: str, budget: str) -> None:
        self.holder = holder
        self.budget_text = budget

    def _refuse(self) -> NoReturn:
        raise AccountantProcessError(
            f"This {self.holder} is a copy made in another process (or loaded from a file), and its accountant "
            f"(budget {self.budget_text}) was not copied with it: nothing was charged and nothing was released. "
            f"{CROSS_PROCESS}. To fit a model loaded from a file, give it an accountant of this process: "
            "model.set_params(accountant=acc)."
        )

    def spend(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refuse: this process holds no ledger to charge."""
        self._refuse()

    def __getattr__(self, name: str) -> Any:
        # Every other part of the Accountant's interface (check, spent, remaining, ledger, summary, scope, ...)
        # refuses with the same message; anything else is an ordinary missing attribute (so copy, pickle and
        # scikit-learn's hasattr probes work as for any object).
        from ._accountant import Accountant

        if not name.startswith("_") and hasattr(Accountant, name):
            self._refuse()
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"DetachedAccountant(holder={self.holder!r}, budget={self.budget_text})"
