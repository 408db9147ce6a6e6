"""
Tutorial: datasets and utility-vs-ε studies
===========================================

How much accuracy does privacy cost? The bundled datasets (UCI Adult ships with the package; scikit-learn's
sets come with scikit-learn) and the engine behind ``diffpriv-py evaluate``: the PyPryvacy study's input
perturbation and this library's DP estimators, repeated with mean ± sd, written to CSV and plotted.

Run it with ``python examples/tutorial_evaluation.py`` or open it as a notebook with
``jupytext --to notebook examples/tutorial_evaluation.py``. The figure goes to ``$DIFFPRIV_PY_OUTPUT``.
"""

# %%
import math
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from diffpriv_py import datasets, evaluation

QUICK = os.environ.get("DIFFPRIV_PY_QUICK") == "1"
OUTPUT = Path(os.environ.get("DIFFPRIV_PY_OUTPUT") or Path(__file__).parent / "output")
OUTPUT.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# The bundled datasets
# --------------------
# ``load_dataset(name)`` returns a ``Dataset`` with ``data`` (one record per row), ``target``, the feature and
# class names and the task. Nothing is downloaded.

# %%
for name in sorted(datasets.DATASETS):
    try:
        print(datasets.load_dataset(name))
    except ImportError as err:
        print(f"{name}: {err}")
adult = datasets.load_adult()
print(adult.description)

# %% [markdown]
# Input perturbation, as in the PyPryvacy study
# ---------------------------------------------
# Laplace noise with sensitivity 1 is added to every training value; kNN, SVM, random forest and logistic
# regression train on the noisy data and are scored on the clean test split. Each point is repeated.

# %%
cancer = datasets.load_dataset("breast_cancer")
epsilons = [0.5, 2, 9, math.inf] if QUICK else list(evaluation.PYPRYVACY_EPSILONS)
study = evaluation.evaluate(
    cancer,
    privatisation="laplace",
    models=["knn", "linear"] if QUICK else None,
    epsilons=epsilons,
    repeats=2 if QUICK else 3,
    scale="minmax",
    rng=0,
)
for row in study.summary():
    if row["metric"] == "accuracy":
        print(f"{row['model']:7s} epsilon {row['epsilon']:>5}: {row['mean']:.3f} ± {row['sd']:.3f}")

# %% [markdown]
# CSV files and the plot
# ----------------------
# ``to_csv`` writes every run (or the summary); ``plot`` draws the metric against ε, one line per model.

# %%
study.to_csv(OUTPUT / "tutorial_evaluation_summary.csv", summary=True)
fig = study.plot("accuracy")  # a matplotlib Figure (drawn below in the built documentation)
fig.savefig(OUTPUT / "tutorial_evaluation_accuracy.png", dpi=100)
print("wrote", OUTPUT / "tutorial_evaluation_accuracy.png")

# %% [markdown]
# DP estimators instead of noisy inputs
# -------------------------------------
# ``privatisation="estimators"`` trains the library's DP models on the clean split (privacy inside the
# training), with their non-private counterparts at ε = ∞.

# %%
private_models = evaluation.evaluate(
    cancer,
    privatisation="estimators",
    models=["dp-logreg"],
    epsilons=[0.5, 2, math.inf],
    repeats=2 if QUICK else 5,
    rng=0,
)
for row in private_models.summary():
    if row["metric"] == "accuracy":
        print(f"{row['model']:9s} epsilon {row['epsilon']:>5}: {row['mean']:.3f} ± {row['sd']:.3f}")
