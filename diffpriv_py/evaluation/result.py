"""The report of a study: its records, the mean ± sd summary, CSV files and the utility-vs-ε figure."""

from __future__ import annotations

import csv
import math
import os
from typing import Any

import attrs
import numpy as np

from diffpriv_py.extras import require

METRICS = {"classification": ("accuracy", "f1"), "regression": ("rmse", "r2")}


def _epsilon_label(epsilon: float) -> str:
    return "inf" if epsilon == math.inf else f"{epsilon:g}"


@attrs.frozen(eq=False)
class EvaluationResult:
    """The scores of one utility-vs-ε study.

    Attributes
    ----------
    records : list of dict
        One row per (split, ε, model, metric): keys ``dataset``, ``privatisation``, ``model``, ``private`` (whether
        that model's ε is a guarantee), ``epsilon``, ``split``, ``metric``, ``value`` and ``params`` (the
        hyper-parameters it used, ``"name=value; ..."``). The constant baseline (:attr:`baseline`) has rows too.
    dataset, privatisation, task : str
        What was studied.
    epsilons : tuple of float
        The ε grid (``inf`` = no privacy).
    models : tuple of str
        Model names in order (the constant baseline is not one of them).
    labels : dict
        Model name -> readable label.
    settings : dict
        The other settings (δ, sensitivity, repeats, cv, test size, seed, scaling, records used).
    private : bool
        Whether every model of the study is an ε-DP (or (ε, δ)-DP) release of its training split, per record
        under replace-one neighbours. When no model is, the ε of a row is only the level of the noise: files and
        plots then call it ``noise_epsilon`` and never label it as a privacy guarantee.
    privacy_note : str
        One sentence: why the study is private, or why it is not.
    model_private : dict
        Model name -> whether that model's ε is a guarantee. A model that reads the clean data marks its own row
        only; a reason that holds for the whole study (e.g. scaling read from the data) marks every row.
    utility_note : str
        Why the models' utility is what it is when that needs saying (input perturbation), else empty.
    baseline : str
        The constant baseline's model name in :attr:`records`: ``"majority"`` or ``"mean"``.
    """

    records: list[dict[str, Any]]
    dataset: str
    privatisation: str
    task: str
    epsilons: tuple[float, ...]
    models: tuple[str, ...]
    labels: dict[str, str]
    settings: dict[str, Any]
    private: bool = False
    privacy_note: str = ""
    model_private: dict[str, bool] = attrs.field(factory=dict)
    utility_note: str = ""
    baseline: str = "majority"

    @property
    def epsilon_label(self) -> str:
        """``"epsilon"`` when some model's ε is a guarantee, ``"noise_epsilon"`` when ε is only the noise level."""
        return "epsilon" if self.private or any(self.model_private.values()) else "noise_epsilon"

    def hyperparameters(self) -> dict[str, dict[float, str]]:
        """Model name -> ε -> the hyper-parameters it used in the first split (``"name=value; ..."``)."""
        first = min((r["split"] for r in self.records), default=0)
        chosen: dict[str, dict[float, str]] = {}
        for row in self.records:
            if row["split"] == first and row["model"] in self.models:
                chosen.setdefault(row["model"], {})[row["epsilon"]] = row.get("params", "")
        return chosen

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics recorded (accuracy and F1, or RMSE and R²)."""
        return METRICS[self.task]

    def summary(self) -> list[dict[str, Any]]:
        """Mean, standard deviation (ddof=1; 0 for a single run) and count per (model, ε, metric)."""
        groups: dict[tuple[str, float, str], list[float]] = {}
        for row in self.records:
            groups.setdefault((row["model"], row["epsilon"], row["metric"]), []).append(row["value"])
        rows = []
        for model in (*self.models, self.baseline):
            for epsilon in self.epsilons:
                for metric in self.metrics:
                    values = np.asarray(groups.get((model, epsilon, metric), []), dtype=float)
                    if values.size == 0:
                        continue
                    rows.append(
                        {
                            "dataset": self.dataset,
                            "privatisation": self.privatisation,
                            "model": model,
                            "private": self.model_private.get(model, False),
                            "epsilon": epsilon,
                            "metric": metric,
                            "mean": float(values.mean()),
                            "sd": float(values.std(ddof=1)) if values.size > 1 else 0.0,
                            "n": int(values.size),
                        }
                    )
        return rows

    def to_csv(self, path: str | os.PathLike[str], *, summary: bool = False) -> str:
        """Write the raw records (or the summary) as CSV; ε = ∞ is written ``inf``. Returns the path.

        The ε column is called ``epsilon`` only when the study is private (:attr:`private`), else ``noise_epsilon``.
        """
        rows = self.summary() if summary else self.records
        path = os.fspath(path)
        column = self.epsilon_label
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=[column if k == "epsilon" else k for k in rows[0]])
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {(column if k == "epsilon" else k): v for k, v in row.items()}
                    | {column: _epsilon_label(row["epsilon"])}
                )
        return path

    def plot(self, metric: str, path: str | os.PathLike[str] | None = None) -> Any:
        """Plot ``metric`` (mean ± sd) against ε, one line per model, as in the PyPryvacy figures.

        ε is on a categorical axis (equally spaced, ∞ last) because the grid mixes 0.01 and ∞. Two horizontal lines
        frame the curves: the constant baseline (majority class or mean, dashed) and, when ∞ is on the grid, the
        best non-private model (dotted). A model whose ε is not a guarantee says so in the legend. Returns the
        matplotlib Figure; with ``path`` it is also saved as PNG (dpi 100) and closed.
        """
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {', '.join(self.metrics)} for this {self.task} study.")
        matplotlib = require("matplotlib", feature="EvaluationResult.plot")
        if path is not None and not os.environ.get("MPLBACKEND"):
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        table = {(r["model"], r["epsilon"]): r for r in self.summary() if r["metric"] == metric}
        positions = np.arange(len(self.epsilons))
        fig, ax = plt.subplots(figsize=(7.0, 4.2))
        offsets = (np.arange(len(self.models)) - (len(self.models) - 1) / 2) * 0.06  # keep error bars apart
        for offset, model in zip(offsets, self.models, strict=True):
            means = np.array([table[(model, e)]["mean"] if (model, e) in table else np.nan for e in self.epsilons])
            sds = np.array([table[(model, e)]["sd"] if (model, e) in table else np.nan for e in self.epsilons])
            label = self.labels[model] + ("" if self.model_private.get(model, False) else " (not private)")
            ax.errorbar(positions + offset, means, yerr=sds, marker="o", markersize=4, capsize=3, label=label)
        constant = [table[(self.baseline, e)]["mean"] for e in self.epsilons if (self.baseline, e) in table]
        if constant:
            name = "majority class" if self.baseline == "majority" else "mean of the training labels"
            ax.axhline(float(np.mean(constant)), color="grey", linestyle="--", linewidth=1, label=f"{name} (constant)")
        best = [table[(m, math.inf)]["mean"] for m in self.models if (m, math.inf) in table]
        if best:
            top = max(best) if metric in ("accuracy", "f1", "r2") else min(best)
            ax.axhline(top, color="black", linestyle=":", linewidth=1, label="best non-private model (ε = ∞)")
        ax.set_xticks(positions, ["∞" if e == math.inf else f"{e:g}" for e in self.epsilons])
        names = {"accuracy": "Accuracy", "f1": "F1 score", "rmse": "RMSE", "r2": "R²"}
        if self.epsilon_label == "epsilon":
            ax.set_xlabel("ε per record (privacy loss; ∞ = no noise)")
        else:
            ax.set_xlabel("noise level ε′ (NOT a privacy guarantee; ∞ = no noise)")
        ax.set_ylabel(f"{names[metric]} on the test split")
        how = {
            "laplace": "Laplace input perturbation",
            "gaussian": f"Gaussian input perturbation (δ={self.settings['delta']:g})",
            "estimators": "DP estimators",
        }[self.privatisation]
        runs = self.records and len({r["split"] for r in self.records})
        what = "ε" if self.epsilon_label == "epsilon" else "noise level (not private)"
        ax.set_title(f"{names[metric]} vs {what} — {self.dataset}, {how} (mean ± sd of {runs} runs)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        if path is not None:
            fig.savefig(os.fspath(path), dpi=100)
            plt.close(fig)
        return fig
