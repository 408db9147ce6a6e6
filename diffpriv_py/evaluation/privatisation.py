"""How a study protects its training data, and whether its ε is a guarantee (the privacy verdict per model)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from diffpriv_py import Del, Eps, Gaussian, Laplace

from .models import ModelSpec

PRIVATISATIONS = ("laplace", "gaussian", "estimators")
"""How the training data are protected: input perturbation with Laplace or Gaussian noise, or DP estimators."""


def _perturb(
    X: np.ndarray, privatisation: str, epsilon: float, delta: float, sensitivity: float, rng: np.random.Generator
) -> np.ndarray:
    """Input perturbation: release the whole training matrix through the library's Laplace or Gaussian mechanism."""
    if epsilon == math.inf:
        return X

    def identity(data: np.ndarray) -> np.ndarray:
        return data

    if privatisation == "laplace":
        release = Laplace(target=identity, sensitivity=sensitivity).release_response(Eps(epsilon), X, rng=rng)
    else:
        release = Gaussian(target=identity, sensitivity=sensitivity).release_response(Del(epsilon, delta), X, rng=rng)
    return np.asarray(release.response)


def _public_scale(X: np.ndarray, bounds: Any) -> np.ndarray:
    """Clip to public bounds and rescale to [0, 1]: reads nothing from the data."""
    low, high = (np.asarray(b, dtype=np.float64) for b in bounds)
    result: np.ndarray = (np.clip(X, low, high) - low) / (high - low)
    return result


def _privacy(
    specs: Sequence[ModelSpec], privatisation: str, scale: str, sensitivity: float, d: int, task: str
) -> tuple[tuple[bool, ...], str]:
    """Which models' releases are DP per record under replace-one neighbours, and why (or why not).

    A reason that holds for the whole study (scaling read from the data, a per-value sensitivity, labels rescaled
    from the data) marks every model; a model that reads the clean data itself (``ModelSpec.private`` False) marks
    only its own row.
    """
    nobody = tuple(False for _ in specs)
    if scale != "public":
        how = "with ranges read from the data" if scale == "minmax" else "not at all"
        return nobody, (
            f"the features are scaled {how}, not into public bounds, so the noise level is not a privacy guarantee "
            "(use a dataset with public bounds and scale='public')"
        )
    if privatisation == "estimators":
        if task == "regression":
            return nobody, "the labels are rescaled with the training split's range, which is read from the data"
        note = (
            "each private model is an ε-DP (or (ε, δ)-DP) release per record (replace-one), features in public bounds"
        )
    else:
        per_record = d if privatisation == "laplace" else math.sqrt(d)
        if sensitivity < per_record * (1 - 1e-12):
            norm = "L1" if privatisation == "laplace" else "L2"
            return nobody, (
                f"sensitivity={sensitivity:g} covers one value, not a whole record: a record of {d} features in "
                f"[0, 1] moves by up to {per_record:g} in {norm} (leave sensitivity unset for the per-record value)"
            )
        note = "every record of the training split is protected at ε (replace-one), features in public bounds"
    flags = tuple(spec.private for spec in specs)
    leaky = [spec.name for spec in specs if not spec.private]
    if leaky:
        note += f"; but {', '.join(leaky)} read the clean training data outside the DP release (only those rows)"
    return flags, note


def _utility_note(privatisation: str, sensitivity: float) -> str:
    """Why input perturbation's models fall to the majority class at every useful ε (empty for estimators)."""
    if privatisation == "estimators":
        return ""
    return (
        f"input perturbation noises every value of every training record: at a per-record sensitivity of "
        f"{sensitivity:.3g}, each feature in [0, 1] gets noise of scale at least {sensitivity:.3g}/ε ({sensitivity:.3g}"
        " at ε = 1), so the models learn from noise and mostly predict the majority class. That is the honest price "
        "of privatising the inputs; the DP estimators (privatisation='estimators', the default) add noise once, to "
        "the model, and keep their utility"
    )


def _minmax(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    low, high = train.min(axis=0), train.max(axis=0)
    width = np.where(high > low, high - low, 1.0)
    return [np.clip((part - low) / width, 0.0, 1.0) for part in (train, *others)]
