"""Helpers shared by the group-by test modules: an audit adapter (a group-by release as one flat vector over fixed
labels) and a spy on the bounding."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from diffpriv_py import _contribution
from diffpriv_py.mechanisms.base import DPMech
from diffpriv_py.stats._groupby import GroupBy


def spy_on_bounding(monkeypatch: Any) -> list[np.ndarray]:
    """Record the kept rows of every bounding (grey-box: which rows of the table the release kept)."""
    masks: list[np.ndarray] = []
    real = _contribution.bound_table

    def spy(*args: Any) -> Any:
        bounding = real(*args)
        masks.append(bounding.row_group >= 0)
        return bounding

    monkeypatch.setattr("diffpriv_py.stats._groupby.bound_table", spy)
    return masks


@attrs.frozen(kw_only=True)
class Flattened(DPMech):
    """Audit adapter: the group-by's values over a fixed list of labels, −1000 for a group not released."""

    inner: GroupBy
    labels: tuple[str, ...]
    target: Any = attrs.field(default=lambda data: data)
    sensitivity: float = 1.0

    @property
    def relation(self):
        return self.inner.relation

    def _check_dataset(self, X):
        return self.inner._check_dataset(X)

    def _evaluate(self, output):
        return self.inner._evaluate(output)

    def _norm(self, a, b):
        raise NotImplementedError

    def _release(self, value, params, rng):
        return self._flatten(self.inner._release(value, params, rng))

    def _flatten(self, res):
        stats = list(res.values)
        out = np.full((len(self.labels), len(stats)), -1000.0)
        pos = {k: i for i, k in enumerate(res.keys.tolist())}
        for j, lab in enumerate(self.labels):
            if lab in pos:
                out[j] = [res.values[s][pos[lab]] for s in stats]
        return out.ravel()


@attrs.frozen(kw_only=True)
class WithUnlisted(Flattened):
    """:class:`Flattened` plus a last coordinate: how many released groups are not in ``labels`` (the structure
    that the fixed-label vector alone cannot see, e.g. labels of one person that should never be candidates)."""

    def _release(self, value, params, rng):
        res = self.inner._release(value, params, rng)
        unlisted = np.count_nonzero(~np.isin(res.keys, np.asarray(self.labels)))
        return np.append(self._flatten(res), float(unlisted))
