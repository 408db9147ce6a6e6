"""What a release carries, read structurally: its layout (types, shapes, dtypes, number of outputs), the keys it
names (mapping keys, index and column labels, released groups and classes) and its numbers in a fixed order.

The auditor turns these into events ("the output has key K", "the output's layout is L", "the release raised E
after the charge") whose probabilities under two neighbouring datasets bound ε and δ like any value event. A
release whose structure depends on the private data (a key present only when some record has it, a length equal to
the number of distinct values, a failure only on an extreme record) is refuted by such an event, often exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Number
from typing import Any

import attrs
import numpy as np

__all__ = ["Layout", "Raised", "describe"]

# Fields and attributes whose entries name things (groups, classes, labels) rather than carry released numbers.
_KEY_FIELDS = frozenset({"keys", "classes", "classes_", "labels", "index", "columns"})
_MAX_KEYS = 10_000


@attrs.frozen(eq=False)
class Raised:
    """A release that raised after the budget was charged; ``name`` is the exception's type, ``error`` the error."""

    name: str
    error: BaseException


@attrs.frozen(eq=False)
class Layout:
    """One release read structurally.

    Attributes
    ----------
    signature : str
        Types, shapes, dtypes and the number of outputs, nested; ``"raised <Error>"`` for a failure after the charge.
    keys : tuple of str
        The keys the output names, each with its path (e.g. ``"[0] has key 'a'"``); in a fixed order.
    values : ndarray or None
        Every released number, flattened in a fixed order (None if the output carries none).
    """

    signature: str
    keys: tuple[str, ...]
    values: np.ndarray | None

    @property
    def form(self) -> tuple[str, tuple[str, ...]]:
        """Signature and keys together: releases of one form have their numbers in the same places."""
        return self.signature, self.keys


def describe(output: Any) -> Layout:
    """Read one release (or a :class:`Raised` failure) structurally; see :class:`Layout`."""
    if isinstance(output, Raised):
        return Layout(f"raised {output.name}", (), None)
    keys: list[str] = []
    values: list[np.ndarray] = []
    signature = _walk(output, "", keys, values)
    flat = np.concatenate(values) if values else None
    return Layout(signature, tuple(keys[:_MAX_KEYS]), flat)


def _numeric(array: np.ndarray) -> bool:
    return array.dtype.kind in "biuf"


def _label(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def _names(path: str, labels: Any, keys: list[str], what: str = "has key") -> None:
    keys.extend(f"{path} {what} {_label(v)}".lstrip() for v in list(labels)[:_MAX_KEYS])


def _walk(output: Any, path: str, keys: list[str], values: list[np.ndarray]) -> str:
    if output is None:
        return "None"
    if isinstance(output, bool | np.bool_ | Number | np.generic) and not isinstance(output, str | bytes):
        array = np.asarray(output)
        if _numeric(array):
            values.append(array.astype(np.float64).ravel())
            return f"scalar {array.dtype.name}"
    if isinstance(output, str | bytes):
        keys.append(f"{path} = {output!r}".lstrip())
        return type(output).__name__
    if isinstance(output, np.ndarray):
        if _numeric(output):
            values.append(output.astype(np.float64).ravel())
        else:
            _names(path, output.ravel(), keys, "holds")
        return f"ndarray{output.shape} {output.dtype.name}"
    pandas = _pandas(output, path, keys, values)
    if pandas is not None:
        return pandas
    if isinstance(output, Mapping):
        items = sorted(output.items(), key=lambda kv: _label(kv[0]))
        _names(path, [k for k, _ in items], keys)
        inner = [_walk(v, f"{path}[{_label(k)}]", keys, values) for k, v in items]
        return f"{type(output).__name__}[{len(items)}]({', '.join(_common(inner))})"
    if isinstance(output, tuple | list):
        numbers = _as_array(output)
        if numbers is not None:
            values.append(numbers.ravel())
            return f"{type(output).__name__}{numbers.shape}"
        inner = [_walk(v, f"{path}[{i}]", keys, values) for i, v in enumerate(output)]
        return f"{type(output).__name__}[{len(output)}]({', '.join(inner)})"
    if attrs.has(type(output)):
        inner = []
        for field in attrs.fields(type(output)):
            value = getattr(output, field.name)
            if field.name in _KEY_FIELDS and value is not None:
                labels = np.asarray(value).ravel()
                _names(f"{path}.{field.name}", labels, keys, "holds")
                inner.append(f"{field.name}[{labels.size}]")
            elif callable(value) and not isinstance(value, np.ndarray):
                inner.append(f"{field.name}: callable")
            else:
                inner.append(f"{field.name}: {_walk(value, f'{path}.{field.name}', keys, values)}")
        return f"{type(output).__name__}({', '.join(inner)})"
    if callable(output):
        return f"callable {type(output).__name__}"
    keys.append(f"{path} = {output!r}".lstrip())
    return type(output).__name__


def _common(signatures: list[str]) -> list[str]:
    """The distinct inner signatures, in order (a mapping of 40 noisy counts is not 40 signatures long)."""
    return list(dict.fromkeys(signatures))


def _as_array(items: tuple[Any, ...] | list[Any]) -> np.ndarray | None:
    if not items or not all(isinstance(v, Number | np.generic) and not isinstance(v, str) for v in items):
        return None
    array = np.asarray(items)
    return array.astype(np.float64) if _numeric(array) else None


def _pandas(output: Any, path: str, keys: list[str], values: list[np.ndarray]) -> str | None:
    """Series and DataFrames: the index (and columns) are keys, the numeric columns are values."""
    kind = type(output).__name__
    if kind not in ("Series", "DataFrame") or not type(output).__module__.startswith("pandas"):
        return None
    _names(path, output.index, keys, "has index label")
    if kind == "Series":
        array = output.to_numpy()
        if _numeric(array):
            values.append(array.astype(np.float64))
        else:
            _names(path, array, keys, "holds")
        return f"Series[{len(output)}] {output.dtype} name={output.name!r}"
    _names(path, output.columns, keys, "has column")
    dtypes = []
    for column in output.columns:
        array = output[column].to_numpy()
        dtypes.append(str(array.dtype))
        if _numeric(array):
            values.append(array.astype(np.float64))
        else:
            _names(f"{path}[{_label(column)}]", array, keys, "holds")
    return f"DataFrame{output.shape} ({', '.join(_common(dtypes))})"
