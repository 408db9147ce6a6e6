"""
Tutorial: DP estimators
=======================

Private models, each a mechanism whose release is the model: logistic regression and a linear SVM
(Chaudhuri, Monteleoni & Sarwate 2011) and principal components (PPCA, Analyze Gauss) on UCI Adult, k-means
(DPLloyd), linear regression (AdaSSP) and DP-SGD,
both as mechanisms and through their scikit-learn style facades. Public bounds (``data_norm=``, ``bounds=``,
``label_bound=``) are constructor arguments, never read from the data.

Run it with ``python examples/tutorial_estimators.py`` or open it as a notebook with
``jupytext --to notebook examples/tutorial_estimators.py``.
"""

# %%
import math
import os

import numpy as np

import diffpriv_py as dp
import diffpriv_py.estimators  # makes dp.estimators available
from diffpriv_py.datasets import load_adult

QUICK = os.environ.get("DIFFPRIV_PY_QUICK") == "1"
rng = np.random.default_rng(2011)

# %% [markdown]
# Logistic regression on UCI Adult
# --------------------------------
# ``load_adult(bounded=True)`` scales every feature into [0, 1] with public bounds, so each row has L2 norm at
# most √13: a public ``data_norm``. The mechanism's release is a model with ``predict``.

# %%
train, test = load_adult(bounded=True), load_adult(subset="test", bounded=True)
X, y = train.as_tuple()
if QUICK:
    keep = rng.choice(len(y), size=16_000, replace=False)
    X, y = X[keep], y[keep]
norm = math.sqrt(13)
for epsilon in (0.1, 1.0):
    mech = dp.estimators.LogisticRegression(1e-3, perturbation="objective", data_norm=norm, classes=[0, 1])
    r = mech.release_response(dp.Eps(epsilon), (X, y), rng=rng)
    accuracy = np.mean(r.response.predict(test.data) == test.target)
    print(f"logistic regression, epsilon {epsilon}: test accuracy {accuracy:.4f}  ({r.privacy_params})")

# %% [markdown]
# The same through the scikit-learn style facade
# ----------------------------------------------
# Parameters go to ``__init__``; each ``fit`` is one release that spends ``epsilon``.

# %%
from diffpriv_py.sklearn import SVM

svm = SVM(epsilon=1.0, data_norm=norm, reg_lambda=1e-3, classes=[0, 1], rng=rng).fit(X, y)
print(f"Huber SVM, epsilon 1: test accuracy {svm.score(test.data, test.target):.4f}")

# %% [markdown]
# Principal components
# --------------------
# The default adds two-sided Wishart noise to the second-moment matrix (pure ε, also releases the eigenvalues);
# PPCA (Chaudhuri, Sarwate & Sinha 2012) samples a subspace with the exponential mechanism, pure ε; Analyze
# Gauss (the dp-stats poster's method) adds Gaussian noise, (ε, δ). ``q_f`` measures the energy a subspace
# captures (an evaluation helper that reads the data, so it is not private).

# %%
from diffpriv_py.estimators import PCA, q_f

unit = X / norm  # rows in the unit ball
top = float(np.linalg.eigvalsh(unit.T @ unit / len(unit))[-1])
wishart = PCA(1, data_norm=1.0).release_response(dp.Eps(1.0), unit, rng=rng).response
ppca = PCA(1, method="ppca", data_norm=1.0).release_response(dp.Eps(1.0), unit, rng=rng).response
gauss = PCA(1, method="analyze_gauss", data_norm=1.0).release_response(dp.Del(1.0, 1e-6), unit, rng=rng).response
print(f"top eigenvalue {top:.4f}; captured by the default {q_f(wishart, unit):.4f}, by PPCA {q_f(ppca, unit):.4f}")
noisy_top = wishart.explained_variance[0]  # the default also releases noisy eigenvalues (post-processing)
print(f"and by Analyze Gauss {q_f(gauss, unit):.4f}; the default's noisy top eigenvalue: {noisy_top:.4f}")

# %% [markdown]
# k-means
# -------
# DPLloyd: Lloyd's iterations with noisy counts and sums, the features clipped to a public box.

# %%
blobs = np.concatenate([rng.normal(c, 0.4, size=(700, 2)) for c in ((-2, -2), (0, 2), (2, -1))])
km = dp.estimators.KMeans(3, bounds=(-4, 4))
centres = km.release_response(dp.Eps(1.0), blobs, rng=rng).response.centroids
print("private centres:\n", np.round(centres[np.argsort(centres[:, 0])], 2))

# %% [markdown]
# Linear regression
# -----------------
# AdaSSP releases noisy sufficient statistics (XᵀX, Xᵀy) with an adaptive ridge; it needs (ε, δ), a row norm
# bound and a label bound.

# %%
Xr = rng.uniform(-1, 1, size=(20_000, 3))
yr = Xr @ [0.5, -0.25, 0.1] + 0.3 + rng.normal(0, 0.1, size=20_000)
lin = dp.estimators.LinearRegression(data_norm=math.sqrt(3), label_bound=2.0)
model = lin.release_response(dp.Del(1.0, 1e-6), (Xr, yr), rng=rng).response
print(
    "coefficients", np.round(model.coef, 3), "intercept", round(float(model.intercept), 3), "(true 0.5 -0.25 0.1, 0.3)"
)

# %% [markdown]
# DP-SGD
# ------
# Per-example gradient clipping plus Gaussian noise, with the privacy accounted over all steps. With no hidden
# layer it is a logistic model.

# %%
from diffpriv_py.sklearn import DPSGDClassifier

Xs = rng.normal(size=(3000, 4))
ys = (Xs[:, 0] + Xs[:, 1] > 0).astype(int)
clf = DPSGDClassifier((), epsilon=2.0, delta=1e-5, epochs=2 if QUICK else 5, classes=[0, 1], rng=0).fit(Xs, ys)
print(f"DP-SGD, (2, 1e-5): training accuracy {clf.score(Xs, ys):.3f}")
