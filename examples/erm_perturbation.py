"""Private logistic regression and Huber SVM: objective versus output perturbation, test error against ε.

Reproduces the message of Chaudhuri, Monteleoni & Sarwate (JMLR 2011, §6): objective
perturbation (Algorithm 2) reaches the non-private error by ε ≈ 0.5–1 at n ≈ 4·10⁴, while output perturbation
(Algorithm 1) lags behind, most at small ε.

* **synthetic-easy**, an Adult-scale synthetic task: ``make_classification(n=60000, d=20,
  n_informative=10, n_redundant=5, flip_y=0.02, class_sep=2, random_state=0)``, 70/30 stratified split. Features are
  clipped to the *public* range [−8, 8] and divided by 8√20, so every row has ‖x‖ ≤ 1 (``data_norm=1``); our
  earlier reference runs min-max scaled with the training data instead, a non-private step.
* **UCI Adult** (shipped with diffpriv_py): official train/test files, one-hot categoricals, numeric columns clipped
  to public ranges and mapped to [−1, 1] (capital gain/loss on a log scale), rows divided by √14 (‖x‖ ≤ 1).

Λ is the best of a small grid on the test set (a non-private choice, made only to compare the two algorithms;
``reg_lambda="private"`` runs CMS'11 Algorithm 3 instead), picked on 2 releases and reported on 3 fresh ones.
Writes ``erm_perturbation.png`` and ``erm_perturbation.csv`` into ``$DIFFPRIV_PY_OUTPUT`` (default
``examples/output/``).
Run: ``python examples/erm_perturbation.py``
"""

# %%
import csv
import math
import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

import diffpriv_py as dp
from diffpriv_py.datasets import load_adult
from diffpriv_py.estimators import SVM, LogisticRegression

QUICK = os.environ.get("DIFFPRIV_PY_QUICK") == "1"
OUTPUT = Path(os.environ.get("DIFFPRIV_PY_OUTPUT", Path(__file__).parent / "output"))
OUTPUT.mkdir(parents=True, exist_ok=True)
START = time.perf_counter()

# Quick mode (CI): a 10 000-row subsample of the synthetic training set, one Λ and one run per cell.
RUNS = 1 if QUICK else 3
TUNE_RUNS = 1 if QUICK else 2
N_TRAIN = 10_000 if QUICK else None
SYNTHETIC_EPSILONS = [0.05, 0.2, 1.0] if QUICK else [0.01, 0.05, 0.1, 0.2, 0.5, 1.0]
ADULT_EPSILONS = [0.5] if QUICK else [0.1, 0.5, 1.0, 2.0]
LAMBDAS = [1e-3] if QUICK else [1e-4, 1e-3, 1e-2]
METHODS = [
    ("LR objective", LogisticRegression, "objective"),
    ("LR output", LogisticRegression, "output"),
    ("Huber SVM objective", SVM, "objective"),
    ("Huber SVM output", SVM, "output"),
]
# Our earlier reference run, synthetic-easy (min-max preprocessing, 5 runs): mean test error per ε.
REFERENCE = {
    "LR objective": {0.01: 0.350, 0.05: 0.249, 0.1: 0.212, 0.2: 0.162, 0.5: 0.117, 1.0: 0.110},
    "LR output": {0.01: 0.496, 0.05: 0.435, 0.1: 0.351, 0.2: 0.262, 0.5: 0.194, 1.0: 0.158},
    "Huber SVM objective": {0.01: 0.446, 0.05: 0.220, 0.1: 0.168, 0.2: 0.135, 0.5: 0.134, 1.0: 0.105},
    "Huber SVM output": {0.01: 0.454, 0.05: 0.413, 0.1: 0.308, 0.2: 0.162, 0.5: 0.150, 1.0: 0.146},
}

# %% [markdown]
# ## Data: every row inside the unit ball, by public bounds only

# %%
X, y = make_classification(
    n_samples=60_000, n_features=20, n_informative=10, n_redundant=5, flip_y=0.02, class_sep=2.0, random_state=0
)
Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
Xtr, ytr = Xtr[:N_TRAIN], ytr[:N_TRAIN]
synthetic = (np.clip(Xtr, -8, 8) / (8 * math.sqrt(20)), ytr, np.clip(Xte, -8, 8) / (8 * math.sqrt(20)), yte)

ADULT_RANGES = {  # public: from the census schema, not from the data
    "age": (17.0, 90.0, False),
    "fnlwgt": (0.0, 1.5e6, False),
    "education-num": (1.0, 16.0, False),
    "capital-gain": (0.0, 1e5, True),
    "capital-loss": (0.0, 5e3, True),
    "hours-per-week": (1.0, 99.0, False),
}


def adult_features(dataset):
    """Numeric columns to [−1, 1] by public ranges; 6 numeric + 8 one-hot groups, so ‖x‖ ≤ √14 before scaling."""
    A = dataset.data.copy()
    for j, name in enumerate(dataset.feature_names):
        if name in ADULT_RANGES:
            lo, hi, log = ADULT_RANGES[name]
            col = np.clip(A[:, j], lo, hi) - lo
            A[:, j] = 2 * (np.log1p(col) / math.log1p(hi - lo) if log else col / (hi - lo)) - 1
    return A / math.sqrt(14)


train, test = load_adult(subset="train"), load_adult(subset="test")
adult = (adult_features(train), train.target, adult_features(test), test.target)

# %% [markdown]
# ## Test error of each method at each ε (Λ picked on TUNE_RUNS releases, error of RUNS fresh ones)

# %%


def test_errors(data, mech, eps, seeds):
    Xtr, ytr, Xte, yte = data
    return [np.mean(mech.release_response(dp.Eps(eps), (Xtr, ytr), rng=s).response.predict(Xte) != yte) for s in seeds]


def error_curve(data, cls, perturbation, epsilons):
    """Per ε: pick Λ on TUNE_RUNS releases, then report the mean (sd) test error of RUNS *fresh* releases.

    Reusing the tuning releases for the report would favour the noisier method (the best of several noisy means
    is biased low), which is output perturbation at small ε.
    """
    curve = []
    for eps in epsilons:
        mechs = {lam: cls(lam, perturbation=perturbation, data_norm=1.0, classes=[0, 1]) for lam in LAMBDAS}
        lam = LAMBDAS[0]
        if len(LAMBDAS) > 1:
            lam = min(LAMBDAS, key=lambda la: np.mean(test_errors(data, mechs[la], eps, range(TUNE_RUNS))))
        errors = test_errors(data, mechs[lam], eps, range(TUNE_RUNS, TUNE_RUNS + RUNS))
        curve.append((float(np.mean(errors)), float(np.std(errors)), lam))
    return curve


def non_private_error(data, loss):
    """The exact non-private minimiser (ε → ∞) at the best Λ of the grid."""
    Xtr, ytr, Xte, yte = data
    errors = []
    for lam in LAMBDAS:
        model = (LogisticRegression if loss == "logistic" else SVM)(lam, data_norm=1.0, classes=[0, 1])
        errors.append(np.mean(model.release_response(dp.Eps(1e9), (Xtr, ytr), rng=0).response.predict(Xte) != yte))
    return float(min(errors))


rows = []
curves = {"synthetic-easy": {}, "adult": {}}
for name, cls, pert in METHODS:
    curves["synthetic-easy"][name] = error_curve(synthetic, cls, pert, SYNTHETIC_EPSILONS)
    for eps, (err, sd, lam) in zip(SYNTHETIC_EPSILONS, curves["synthetic-easy"][name], strict=True):
        rows.append({"dataset": "synthetic-easy", "method": name, "epsilon": eps, "error": err, "sd": sd, "lam": lam})
for name, cls, pert in METHODS[:2]:
    curves["adult"][name] = error_curve(adult, cls, pert, ADULT_EPSILONS)
    for eps, (err, sd, lam) in zip(ADULT_EPSILONS, curves["adult"][name], strict=True):
        rows.append({"dataset": "adult", "method": name, "epsilon": eps, "error": err, "sd": sd, "lam": lam})
baselines = {
    "synthetic-easy": (non_private_error(synthetic, "logistic"), float(np.mean(yte != np.bincount(ytr).argmax()))),
    "adult": (non_private_error(adult, "logistic"), float(np.mean(adult[3] != np.bincount(adult[1]).argmax()))),
}

with open(OUTPUT / "erm_perturbation.csv", "w", newline="") as fh:
    writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)

print(f"synthetic-easy: n_train={len(ytr)}, d=20; non-private LR {baselines['synthetic-easy'][0]:.3f}; {RUNS} runs")
print(f"{'method':<22}" + "".join(f"{'ε=' + format(e, 'g'):>15}" for e in SYNTHETIC_EPSILONS))
for name, _, _ in METHODS:
    cells = "".join(
        f"{err:>7.3f} ({REFERENCE[name][eps]:.3f})"
        for eps, (err, _, _) in zip(SYNTHETIC_EPSILONS, curves["synthetic-easy"][name], strict=True)
    )
    print(f"{name:<22}{cells}")
print("(in brackets: our earlier reference run" + ("; quick mode uses 10 000 rows, not comparable)" if QUICK else ")"))
# Best-of-grid means over few runs favour the noisier method (output perturbation), so compare within 2 s.e.
obj = dict(zip(SYNTHETIC_EPSILONS, curves["synthetic-easy"]["LR objective"], strict=True))
out = dict(zip(SYNTHETIC_EPSILONS, curves["synthetic-easy"]["LR output"], strict=True))
within = [obj[e][0] <= out[e][0] + 2 * math.hypot(obj[e][1], out[e][1]) / math.sqrt(RUNS) for e in obj if e >= 0.05]
print("LR: objective ≤ output (within 2 s.e.) at every ε ≥ 0.05:", all(within))
non_private, majority = baselines["adult"]
print(f"adult: n_train={len(adult[1])}, d=105; non-private LR {non_private:.3f}, majority {majority:.3f}")
for name in curves["adult"]:
    print(f"{name:<22}" + "".join(f"{c[0]:>8.3f}" for c in curves["adult"][name]), f"at ε = {ADULT_EPSILONS}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), dpi=100)
styles = {
    "LR objective": ("tab:blue", "-"),
    "LR output": ("tab:blue", "--"),
    "Huber SVM objective": ("tab:orange", "-"),
    "Huber SVM output": ("tab:orange", "--"),
}
for ax, (dataset, epsilons) in zip(
    axes, [("synthetic-easy", SYNTHETIC_EPSILONS), ("adult", ADULT_EPSILONS)], strict=True
):
    for name, curve in curves[dataset].items():
        color, style = styles[name]
        errs, sds = np.array([c[0] for c in curve]), np.array([c[1] for c in curve])
        ax.errorbar(epsilons, errs, yerr=sds, fmt=style, marker="o", ms=4, color=color, capsize=2, label=name)
    non_private, majority = baselines[dataset]
    ax.axhline(non_private, color="k", lw=1, label="non-private LR")
    ax.axhline(majority, color="grey", lw=1, ls=":", label="majority class")
    ax.set(xscale="log", xlabel="ε", ylabel="test misclassification", title=f"{dataset}: objective vs output")
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(OUTPUT / "erm_perturbation.png")
elapsed = time.perf_counter() - START
print(f"wrote {OUTPUT / 'erm_perturbation.png'} and {OUTPUT / 'erm_perturbation.csv'} in {elapsed:.0f} s")
