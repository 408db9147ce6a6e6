"""
Tutorial: privacy parameters and mechanisms
===========================================

The building blocks: privacy parameters (``Eps``, ``Del``, ``Gam``), the mechanisms that privatise a target
function (Laplace, Gaussian, discrete Laplace, exponential), the ``Response`` that carries the guarantee, and a
mechanism of your own checked by the auditor.

Run it with ``python examples/tutorial_mechanisms.py`` or open it as a notebook with
``jupytext --to notebook examples/tutorial_mechanisms.py``.
"""

# %%
import numpy as np

import diffpriv_py as dp

rng = np.random.default_rng(2017)  # seeds make a tutorial reproducible; real releases use rng=None

# %% [markdown]
# Privacy parameters
# ------------------
# ``Eps`` is pure ε-DP, ``Del`` adds δ, ``Gam`` adds the γ of random DP. They are frozen and validated: NaN,
# infinities, booleans and out-of-range values are refused with a message that says how to fix them.

# %%
print(dp.Eps(1.0), dp.Del(1.0, 1e-6), dp.Gam(1.0, 0.0, 0.05), sep="\n")
try:
    dp.Eps(float("nan"))
except ValueError as err:
    print("refused:", err)

# %% [markdown]
# The Laplace mechanism
# ---------------------
# A target maps the dataset to the non-private answer. The mean of n values in [0, 1] moves by at most 1/n
# when one value is replaced: that is its L1 sensitivity, and the Laplace noise has scale (1/n)/ε.

# %%
n = 1000
ages = rng.uniform(0, 1, size=n)  # private data, already scaled into [0, 1]
mean_mech = dp.Laplace(target=np.mean, sensitivity=1 / n, dims=1)
r = mean_mech.release_response(dp.Eps(0.5), ages, rng=rng)
print(f"non-private {ages.mean():.4f}  private {r.response:.4f}")
print("guarantee:", r.privacy_params, " noise scale:", mean_mech.noise_scale(dp.Eps(0.5)))

# %% [markdown]
# Smaller ε, more noise: the spread of many private answers grows as 1/ε.

# %%
draws = {}
for epsilon in (0.1, 1.0, 10.0):
    draws[epsilon] = [mean_mech.release_response(dp.Eps(epsilon), ages, rng=rng).response for _ in range(200)]
    print(f"epsilon {epsilon:5}: sd of 200 private means {np.std(draws[epsilon]):.5f}")

# %% [markdown]
# The same draws as histograms of their error (matplotlib, the ``plot`` extra): each private mean is the true
# mean plus Laplace noise of scale (1/n)/ε, so on a log axis the error moves a decade left for each tenfold ε.

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 3.2))
bins = np.logspace(-7, -0.5, 53)
for epsilon, values in draws.items():
    ax.hist(np.abs(np.asarray(values) - ages.mean()), bins=bins, histtype="step", linewidth=1.5, label=f"ε = {epsilon}")
ax.set_xscale("log")
ax.set_xlabel("|private mean − non-private mean| (200 releases per ε)")
ax.set_ylabel("releases")
ax.legend()
fig.tight_layout()

# %% [markdown]
# The Gaussian mechanism
# ----------------------
# It measures sensitivity in the L2 norm and needs (ε, δ). For a vector of d means, the L2 sensitivity is
# √d/n against d/n in L1, so Gaussian noise wins in high dimension.

# %%
d = 50
table = rng.uniform(0, 1, size=(n, d))
col_means = dp.Gaussian(target=lambda X: X.mean(axis=0), sensitivity=np.sqrt(d) / n, dims=d)
g = col_means.release_response(dp.Del(1.0, 1e-6), table, rng=rng)
l1 = dp.Laplace(target=lambda X: X.mean(axis=0), sensitivity=d / n, dims=d)
lap = l1.release_response(dp.Eps(1.0), table, rng=rng)
truth = table.mean(axis=0)
print(f"max error, Gaussian (1, 1e-6): {np.max(np.abs(g.response - truth)):.4f}")
print(f"max error, Laplace  (1, 0)   : {np.max(np.abs(lap.response - truth)):.4f}")

# %% [markdown]
# Integer answers: the discrete Laplace mechanism
# ------------------------------------------------
# Counts and histograms stay integers. A histogram changes in two bins when one record moves, so its L1
# sensitivity is 2.

# %%
years = rng.integers(18, 90, size=n)
histogram = dp.DiscreteLaplace(target=lambda x: np.histogram(x, bins=6, range=(18, 90))[0], sensitivity=2)
counts = histogram.release_response(dp.Eps(1.0), years, rng=rng).response
print("private histogram:", counts, counts.dtype)

# %% [markdown]
# Choosing among candidates: the exponential mechanism
# ----------------------------------------------------
# The target returns a *score function*. Here, the most common favourite colour: one person changes each
# count by at most 1, so the score sensitivity is 1.

# %%
colours = ["red", "green", "blue", "yellow"]
votes = rng.choice(colours, size=300, p=[0.2, 0.3, 0.4, 0.1])


def colour_scores(data):
    values, counts = np.unique(data, return_counts=True)
    tally = dict(zip(values.tolist(), counts.tolist(), strict=True))
    return lambda colour: tally.get(colour, 0)


pick = dp.Exponential(target=colour_scores, response_set=colours, sensitivity=1.0)
print("private favourite colour:", pick.release_response(dp.Eps(1.0), votes, rng=rng).response)

# %% [markdown]
# Budgets: the accountant
# -----------------------
# Releases about the same people add up. An ``Accountant`` is charged before any noise is drawn and refuses
# the release that would overspend.

# %%
acc = dp.Accountant(budget=dp.Eps(1.0))
for _ in range(4):
    mean_mech.release_response(dp.Eps(0.25), ages, rng=rng, accountant=acc)
print("spent:", acc.spent)
try:
    mean_mech.release_response(dp.Eps(0.25), ages, rng=rng, accountant=acc)
except dp.exceptions.BudgetExceededError as err:
    print("refused:", str(err).splitlines()[0][:100], "...")

# %% [markdown]
# Checking a calibration with the auditor
# ---------------------------------------
# The auditor releases a mechanism many times on two neighbouring datasets and computes a statistical lower
# bound on its ε. A classic bug is an understated sensitivity: the sum of values in [0, 1] moves by up to 1,
# but here it is declared as 0.5, so the noise is half what ε = 1 needs, and the audit refutes the claim.
# (The Mechanisms page of the documentation shows how to write a new mechanism class; ``diffpriv-py audit``
# does the same from a shell.)

# %%
from diffpriv_py.testing import audit

X = np.zeros(10)
X_neighbour = X.copy()
X_neighbour[-1] = 1.0  # one record replaced: the sum moves by exactly 1, the true sensitivity
for declared in (1.0, 0.5):
    mech = dp.Laplace(target=np.sum, sensitivity=declared, dims=1)
    report = audit(mech, X, X_neighbour, dp.Eps(1.0), rng=1)
    verdict = "not refuted" if report.passed else "REFUTED"
    print(f"declared sensitivity {declared}: epsilon lower bound {report.epsilon_lower_bound:.3f} -> {verdict}")
